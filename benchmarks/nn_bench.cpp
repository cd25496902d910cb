// Element-wise and row-normalization operators: weft's topi ops with their default schedules
// next to a hand-written loop, Eigen, oneDNN and Halide 14 (hand schedules), at 1 and 2
// threads.
//
//   fused_chain/16M         y = max(a * x + b, 0) + c over 16M floats (a, b, c scalars);
//                           memory-bound: bytes = x read + y written. weft_unfused runs the
//                           three steps as three kernels (two temporaries) for comparison.
//   fused_chain/16K, /256K  the same in L1 / L2, where a second thread costs about what it
//                           brings (the thread pool's work threshold); weft, Eigen (1 thread)
//                           and Halide, whose own pool threads its parallel loop.
//   softmax/4096x1024       along rows; bytes = x read + y written.
//   layer_norm/4096x1024    over rows, with gamma and beta; bytes = x read + y written.
#include "harness.hpp"

#include <Halide.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <Eigen/Core>
#include <memory>
#include <thread>
#include <vector>

#include <weft/topi/topi.hpp>
#include <weft/weft.hpp>

namespace {

constexpr int64_t kChainN = int64_t(16) << 20;
constexpr int64_t kRows = 4096, kCols = 1024;
constexpr float kA = 1.5f, kB = -0.25f, kC = 0.5f, kEps = 1e-5f;

using FloatBuf = std::shared_ptr<weft::Buffer<float>>;

FloatBuf random_buf(std::vector<int64_t> shape, unsigned seed) {
    auto b = std::make_shared<weft::Buffer<float>>(std::move(shape));
    bench::fill_random(b->data(), size_t(b->size()), -1.f, 1.f, seed);
    return b;
}

// Runs f(lo, hi) over [0, n) split into `threads` contiguous ranges (the peers that do not
// thread element-wise work themselves: the plain loop and Eigen).
template <class F>
void split_range(int threads, int64_t n, const F& f) {
    if (threads == 1) return f(int64_t(0), n);
    std::vector<std::thread> others;
    for (int t = 1; t < threads; ++t) others.emplace_back([&, t] { f(n * t / threads, n * (t + 1) / threads); });
    f(int64_t(0), n / threads);
    for (auto& th : others) th.join();
}

bench::Runner halide_runner(Halide::Func out, std::shared_ptr<Halide::Buffer<float>> dst, int threads) {
    out.compile_jit(Halide::get_jit_target_from_environment());
    bench::set_halide_threads(threads);
    auto fn = std::make_shared<Halide::Func>(out);
    return [fn, dst] { fn->realize(*dst); };
}

// ---- fused chain --------------------------------------------------------------------------

bench::Runner weft_chain(int64_t n) {
    using namespace weft;
    Tensor X = placeholder({n}, f32, "x");
    Var a("a", f32), b("b", f32), c("c", f32);
    Tensor Y = topi::add(topi::relu(topi::add(topi::mul(X, a), b)), c);
    Schedule s = create_schedule(Y);
    topi::schedule_injective(s, Y);
    Kernel k = build(s, {X, a, b, c, Y}, Target::host(), {.name = "fused_chain"});
    auto x = random_buf({n}, 1), y = std::make_shared<Buffer<float>>(std::vector<int64_t>{n});
    return [k, x, y] { k(*x, kA, kB, kC, *y); };
}

bench::Runner weft_chain_unfused() {
    using namespace weft;
    auto kernel_of = [](const Tensor& in, const Tensor& out, std::vector<Argument> scalars) {
        Schedule s = create_schedule(out);
        topi::schedule_injective(s, out);
        std::vector<Argument> args{in};
        args.insert(args.end(), scalars.begin(), scalars.end());
        args.push_back(out);
        return build(s, args);
    };
    Var a("a", f32), b("b", f32), c("c", f32);
    Tensor X = placeholder({kChainN}, f32, "x"), T1 = placeholder({kChainN}, f32, "t1"),
           T2 = placeholder({kChainN}, f32, "t2");
    Kernel k1 = kernel_of(X, topi::add(topi::mul(X, a), b), {a, b});
    Kernel k2 = kernel_of(T1, topi::relu(T1), {});
    Kernel k3 = kernel_of(T2, topi::add(T2, c), {c});
    auto x = random_buf({kChainN}, 1);
    auto t1 = std::make_shared<Buffer<float>>(std::vector<int64_t>{kChainN});
    auto t2 = std::make_shared<Buffer<float>>(std::vector<int64_t>{kChainN});
    auto y = std::make_shared<Buffer<float>>(std::vector<int64_t>{kChainN});
    return [=] {
        k1(*x, kA, kB, *t1);
        k2(*t1, *t2);
        k3(*t2, kC, *y);
    };
}

bench::Runner loop_chain(int threads) {
    auto x = random_buf({kChainN}, 1), y = std::make_shared<weft::Buffer<float>>(std::vector<int64_t>{kChainN});
    return [=] {
        const float* __restrict xp = x->data();
        float* __restrict yp = y->data();
        split_range(threads, kChainN, [&](int64_t lo, int64_t hi) {
            for (int64_t i = lo; i < hi; ++i) yp[i] = std::max(kA * xp[i] + kB, 0.f) + kC;
        });
    };
}

bench::Runner eigen_chain(int threads, int64_t n) {
    auto x = random_buf({n}, 1), y = std::make_shared<weft::Buffer<float>>(std::vector<int64_t>{n});
    return [=] {
        split_range(threads, n, [&](int64_t lo, int64_t hi) {
            Eigen::Map<const Eigen::ArrayXf> xs(x->data() + lo, hi - lo);
            Eigen::Map<Eigen::ArrayXf> ys(y->data() + lo, hi - lo);
            ys = (xs * kA + kB).max(0.f) + kC;
        });
    };
}

bench::Runner halide_chain(int threads, int64_t n) {
    using namespace Halide;
    auto in = std::make_shared<Buffer<float>>(int(n));
    auto out = std::make_shared<Buffer<float>>(int(n));
    bench::fill_random(in->data(), size_t(n), -1.f, 1.f, 1);
    Var i("i"), io("io"), ii("ii");
    Func f("chain");
    f(i) = max(kA * (*in)(i) + kB, 0.f) + kC;
    f.split(i, io, ii, 16 * 1024).vectorize(ii, 16);
    if (threads > 1) f.parallel(io);  // at 1 thread no task system at all
    return halide_runner(f, out, threads);
}

// ---- softmax ------------------------------------------------------------------------------

bench::Runner weft_softmax() {
    using namespace weft;
    Tensor X = placeholder({kRows, kCols}, f32, "x");
    Tensor Y = topi::softmax(X);
    Schedule s = create_schedule(Y);
    topi::schedule_softmax(s, Y);
    Kernel k = build(s, {X, Y});
    auto x = random_buf({kRows, kCols}, 2), y = std::make_shared<Buffer<float>>(std::vector<int64_t>{kRows, kCols});
    return [k, x, y] { k(*x, *y); };
}

using RowMajor = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

bench::Runner eigen_softmax(int threads) {
    auto x = random_buf({kRows, kCols}, 2), y = random_buf({kRows, kCols}, 3);
    return [=] {
        split_range(threads, kRows, [&](int64_t lo, int64_t hi) {
            for (int64_t r = lo; r < hi; ++r) {
                Eigen::Map<const Eigen::ArrayXf> xr(x->data() + r * kCols, kCols);
                Eigen::Map<Eigen::ArrayXf> yr(y->data() + r * kCols, kCols);
                yr = (xr - xr.maxCoeff()).exp();
                yr *= 1.f / yr.sum();
            }
        });
    };
}

struct OneDnn {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
};

bench::Runner onednn_softmax() {
    using namespace dnnl;
    auto ctx = std::make_shared<OneDnn>();
    memory::desc md({kRows, kCols}, memory::data_type::f32, memory::format_tag::ab);
    softmax_v2_forward::primitive_desc pd(
        softmax_v2_forward::desc(prop_kind::forward_inference, algorithm::softmax_accurate, md, md, 1), ctx->engine);
    auto prim = std::make_shared<softmax_v2_forward>(pd);
    auto src = std::make_shared<memory>(md, ctx->engine), dst = std::make_shared<memory>(md, ctx->engine);
    bench::fill_random(static_cast<float*>(src->get_data_handle()), size_t(kRows * kCols), -1.f, 1.f, 2);
    return [=] {
        prim->execute(ctx->stream, {{DNNL_ARG_SRC, *src}, {DNNL_ARG_DST, *dst}});
        ctx->stream.wait();
    };
}

// A row statistic in Halide without reassociating across lanes: 16 partial results per
// row (lane v combines columns v, v + 16, ...) computed as one vector per row, then the 16
// combined. `at` computes both inside the row loop r of the consumer.
struct HalideRowStat {
    Halide::Func part, total;
    void compute_at(const Halide::Func& consumer, const Halide::Var& r) {
        part.compute_at(consumer, r).vectorize(v);
        part.update().reorder(v, k).vectorize(v);
        total.compute_at(consumer, r);
    }
    Halide::Var v{"v"};
    Halide::RDom k;
};

HalideRowStat halide_row_stat(const Halide::Func& in, bool is_max, const std::string& name) {
    using namespace Halide;
    HalideRowStat st{Func(name + "_part"), Func(name)};
    Var r("r");
    st.k = RDom(0, int(kCols) / 16, name + "_k");
    st.part(st.v, r) = is_max ? Expr(-INFINITY) : Expr(0.f);
    Expr elem = in(st.k * 16 + st.v, r);
    st.part(st.v, r) = is_max ? max(st.part(st.v, r), elem) : st.part(st.v, r) + elem;
    RDom l(0, 16, name + "_l");
    if (is_max) st.total(r) = maximum(st.part(l, r));
    else st.total(r) = sum(st.part(l, r));
    return st;
}

bench::Runner halide_softmax(int threads) {
    using namespace Halide;
    auto in = std::make_shared<Buffer<float>>(int(kCols), int(kRows));
    auto out = std::make_shared<Buffer<float>>(int(kCols), int(kRows));
    bench::fill_random(in->data(), size_t(kRows * kCols), -1.f, 1.f, 2);
    Var c("c"), r("r"), v("v");
    Func x("x");
    x(c, r) = (*in)(c, r);
    HalideRowStat mx = halide_row_stat(x, true, "mx");
    Func e("e");
    e(c, r) = exp(x(c, r) - mx.total(r));
    HalideRowStat total = halide_row_stat(e, false, "total");
    Func inv("inv"), y("softmax");
    inv(r) = 1.f / total.total(r);
    y(c, r) = e(c, r) * inv(r);
    y.vectorize(c, 16);
    if (threads > 1) y.parallel(r);
    mx.compute_at(y, r);
    total.compute_at(y, r);
    e.compute_at(y, r).vectorize(c, 16);
    inv.compute_at(y, r);
    return halide_runner(y, out, threads);
}

// ---- layer_norm ---------------------------------------------------------------------------

bench::Runner weft_layer_norm() {
    using namespace weft;
    Tensor X = placeholder({kRows, kCols}, f32, "x");
    Tensor G = placeholder({kCols}, f32, "gamma"), B = placeholder({kCols}, f32, "beta");
    Tensor Y = topi::layer_norm(X, G, B, kEps);
    Schedule s = create_schedule(Y);
    topi::schedule_layer_norm(s, Y);
    Kernel k = build(s, {X, G, B, Y});
    auto x = random_buf({kRows, kCols}, 2), g = random_buf({kCols}, 4), b = random_buf({kCols}, 5);
    auto y = std::make_shared<Buffer<float>>(std::vector<int64_t>{kRows, kCols});
    return [=] { k(*x, *g, *b, *y); };
}

bench::Runner eigen_layer_norm(int threads) {
    auto x = random_buf({kRows, kCols}, 2), g = random_buf({kCols}, 4), b = random_buf({kCols}, 5);
    auto y = random_buf({kRows, kCols}, 3);
    return [=] {
        Eigen::Map<const Eigen::ArrayXf> gs(g->data(), kCols), bs(b->data(), kCols);
        split_range(threads, kRows, [&](int64_t lo, int64_t hi) {
            for (int64_t r = lo; r < hi; ++r) {
                Eigen::Map<const Eigen::ArrayXf> xr(x->data() + r * kCols, kCols);
                Eigen::Map<Eigen::ArrayXf> yr(y->data() + r * kCols, kCols);
                float mean = xr.mean();
                float var = (xr - mean).square().mean();
                yr = (xr - mean) * (1.f / std::sqrt(var + kEps)) * gs + bs;
            }
        });
    };
}

bench::Runner onednn_layer_norm() {
    using namespace dnnl;
    auto ctx = std::make_shared<OneDnn>();
    memory::desc md({kRows, kCols}, memory::data_type::f32, memory::format_tag::ab);
    memory::desc wd({kCols}, memory::data_type::f32, memory::format_tag::a);
    layer_normalization_forward::primitive_desc pd(
        layer_normalization_forward::desc(prop_kind::forward_inference, md, kEps,
                                          normalization_flags::use_scale | normalization_flags::use_shift),
        ctx->engine);
    auto prim = std::make_shared<layer_normalization_forward>(pd);
    auto src = std::make_shared<memory>(md, ctx->engine), dst = std::make_shared<memory>(md, ctx->engine);
    auto scale = std::make_shared<memory>(wd, ctx->engine), shift = std::make_shared<memory>(wd, ctx->engine);
    bench::fill_random(static_cast<float*>(src->get_data_handle()), size_t(kRows * kCols), -1.f, 1.f, 2);
    bench::fill_random(static_cast<float*>(scale->get_data_handle()), size_t(kCols), -1.f, 1.f, 4);
    bench::fill_random(static_cast<float*>(shift->get_data_handle()), size_t(kCols), -1.f, 1.f, 5);
    auto mean = std::make_shared<memory>(pd.mean_desc(), ctx->engine);
    auto var = std::make_shared<memory>(pd.variance_desc(), ctx->engine);
    return [=] {
        prim->execute(ctx->stream, {{DNNL_ARG_SRC, *src},
                                    {DNNL_ARG_DST, *dst},
                                    {DNNL_ARG_SCALE, *scale},
                                    {DNNL_ARG_SHIFT, *shift},
                                    {DNNL_ARG_MEAN, *mean},
                                    {DNNL_ARG_VARIANCE, *var}});
        ctx->stream.wait();
    };
}

bench::Runner halide_layer_norm(int threads) {
    using namespace Halide;
    auto in = std::make_shared<Buffer<float>>(int(kCols), int(kRows));
    auto gamma = std::make_shared<Buffer<float>>(int(kCols)), beta = std::make_shared<Buffer<float>>(int(kCols));
    auto out = std::make_shared<Buffer<float>>(int(kCols), int(kRows));
    bench::fill_random(in->data(), size_t(kRows * kCols), -1.f, 1.f, 2);
    bench::fill_random(gamma->data(), size_t(kCols), -1.f, 1.f, 4);
    bench::fill_random(beta->data(), size_t(kCols), -1.f, 1.f, 5);
    Var c("c"), r("r");
    Func x("x");
    x(c, r) = (*in)(c, r);
    HalideRowStat total = halide_row_stat(x, false, "total");
    Func mean("mean"), dev2("dev2"), rstd("rstd"), y("layer_norm");
    mean(r) = total.total(r) * (1.f / float(kCols));
    dev2(c, r) = (x(c, r) - mean(r)) * (x(c, r) - mean(r));
    HalideRowStat var_sum = halide_row_stat(dev2, false, "var_sum");
    rstd(r) = 1.f / sqrt(var_sum.total(r) * (1.f / float(kCols)) + kEps);
    y(c, r) = (x(c, r) - mean(r)) * rstd(r) * (*gamma)(c) + (*beta)(c);
    y.vectorize(c, 16);
    if (threads > 1) y.parallel(r);
    total.compute_at(y, r);
    var_sum.compute_at(y, r);
    mean.compute_at(y, r);
    rstd.compute_at(y, r);
    return halide_runner(y, out, threads);
}

void register_cases() {
    const double chain_bytes = 2.0 * double(kChainN) * sizeof(float);
    const double row_bytes = 2.0 * double(kRows * kCols) * sizeof(float);
    bench::Case chain{"fused_chain/16M", bench::Unit::Bytes, chain_bytes};
    bench::Case softmax{"softmax/4096x1024", bench::Unit::Bytes, row_bytes};
    bench::Case layer_norm{"layer_norm/4096x1024", bench::Unit::Bytes, row_bytes};
    for (int t : {1, 2}) {
        bench::add(chain, "weft", t, [] { return weft_chain(kChainN); });
        bench::add(chain, "weft_unfused", t, [] { return weft_chain_unfused(); });
        bench::add(chain, "loop", t, [t] { return loop_chain(t); });
        bench::add(chain, "eigen", t, [t] { return eigen_chain(t, kChainN); });
        bench::add(chain, "halide", t, [t] { return halide_chain(t, kChainN); });
        for (int64_t n : {int64_t(16) << 10, int64_t(256) << 10}) {
            bench::Case small{"fused_chain/" + std::to_string(n >> 10) + "K", bench::Unit::Bytes, 2.0 * double(n) * sizeof(float)};
            bench::add(small, "weft", t, [n] { return weft_chain(n); });
            // Eigen at 2 threads would start a std::thread per call (split_range).
            if (t == 1) bench::add(small, "eigen", t, [n] { return eigen_chain(1, n); });
            bench::add(small, "halide", t, [t, n] { return halide_chain(t, n); });
        }
        bench::add(softmax, "weft", t, [] { return weft_softmax(); });
        bench::add(softmax, "eigen", t, [t] { return eigen_softmax(t); });
        bench::add(softmax, "onednn", t, [] { return onednn_softmax(); });
        bench::add(softmax, "halide", t, [t] { return halide_softmax(t); });
        bench::add(layer_norm, "weft", t, [] { return weft_layer_norm(); });
        bench::add(layer_norm, "eigen", t, [t] { return eigen_layer_norm(t); });
        bench::add(layer_norm, "onednn", t, [] { return onednn_layer_norm(); });
        bench::add(layer_norm, "halide", t, [t] { return halide_layer_norm(t); });
    }
}

const bool registered = (register_cases(), true);

}  // namespace
