// bfloat16 GEMM: weft's matmul tensorized onto AVX512_BF16's vdpbf16ps (topi/x86.hpp) against
// oneDNN's bf16 matmul (bf16 x bf16 -> f32) and weft's own float32 matmul of the same shape.
// Weights are in each library's preferred layout, packed in the set-up, outside the timing.
// Rates count 2 flops per multiply-add; vdpbf16ps does twice an FMA's work per instruction.
// Registered only on CPUs with AVX512_BF16.

#include <memory>
#include <random>

#include "harness.hpp"
#include "onednn_util.hpp"
#include <weft/weft.hpp>

namespace {

void fill_bf16(weft::bfloat16* p, int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    for (int64_t i = 0; i < n; ++i) p[i] = weft::bfloat16(d(rng));
}

struct Shape {
    int64_t M, N, K;
    std::string name() const { return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K); }
};

// `amx`: on AMX tiles (topi::schedule_matmul_bf16_amx), on CPUs with AMX; else vdpbf16ps.
bench::Runner weft_bf16_gemm(Shape g, bool amx = false) {
    using namespace weft;
    Tensor A = placeholder({g.M, g.K}, bf16, "A"), B = placeholder({g.K, g.N}, bf16, "B");
    Tensor Bp = topi::pack_bf16_weight(B);
    Tensor Bpi = placeholder({g.N / 16, g.K / 2, 16, 2}, bf16, "Bp");
    Tensor C = topi::matmul_bf16(A, Bpi);
    Schedule s = create_schedule(C);
    if (amx) topi::schedule_matmul_bf16_amx(s, C);
    else topi::schedule_matmul_bf16(s, C);
    Kernel gemm = build(s, {A, Bpi, C});
    Kernel pack = build(create_schedule(Bp), {B, Bp});
    auto a = std::make_shared<Buffer<bfloat16>>(std::vector<int64_t>{g.M, g.K});
    auto b = std::make_shared<Buffer<bfloat16>>(std::vector<int64_t>{g.K, g.N});
    auto bp = std::make_shared<Buffer<bfloat16>>(std::vector<int64_t>{g.N / 16, g.K / 2, 16, 2});
    auto c = std::make_shared<Buffer<float>>(std::vector<int64_t>{g.M, g.N});
    fill_bf16(a->data(), a->size(), 1);
    fill_bf16(b->data(), b->size(), 2);
    pack(*b, *bp);  // weights packed once, like oneDNN's reorder
    return [=] { gemm(*a, *bp, *c); };
}

bench::Runner weft_f32_gemm(Shape g) {
    using namespace weft;
    Tensor A = placeholder({g.M, g.K}, f32, "A"), B = placeholder({g.K, g.N}, f32, "B");
    Tensor C = topi::matmul(A, B);
    Schedule s = create_schedule(C);
    topi::schedule_matmul(s, C);
    auto gemm = std::make_shared<Kernel>(build(s, {A, B, C}));
    auto a = std::make_shared<Buffer<float>>(Buffer<float>::random({g.M, g.K}, -1.f, 1.f, 1));
    auto b = std::make_shared<Buffer<float>>(Buffer<float>::random({g.K, g.N}, -1.f, 1.f, 2));
    auto c = std::make_shared<Buffer<float>>(std::vector<int64_t>{g.M, g.N});
    return [=] { (*gemm)(*a, *b, *c); };
}

bench::Runner onednn_bf16_gemm(Shape g) {
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    auto ctx = std::make_shared<bench::OneDnn>();
    memory::desc a_md({g.M, g.K}, dt::bf16, tag::ab), b_any({g.K, g.N}, dt::bf16, tag::any),
        c_md({g.M, g.N}, dt::f32, tag::ab);
    matmul::primitive_desc pd(matmul::desc(a_md, b_any, c_md), ctx->engine);
    memory a(a_md, ctx->engine), c(c_md, ctx->engine), b_user({{g.K, g.N}, dt::bf16, tag::ab}, ctx->engine);
    fill_bf16(static_cast<weft::bfloat16*>(a.get_data_handle()), g.M * g.K, 1);
    fill_bf16(static_cast<weft::bfloat16*>(b_user.get_data_handle()), g.K * g.N, 2);
    memory b = ctx->reordered(b_user, pd.weights_desc());
    return bench::onednn_runner(ctx, matmul(pd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
}

// ---- conv2d ---------------------------------------------------------------------------

struct Conv {
    const char* name;
    int64_t C, O, H, K, stride, pad;
    int64_t out() const { return (H + 2 * pad - K) / stride + 1; }
    double flops() const { return 2.0 * double(O) * double(out() * out()) * double(C * K * K); }
};

// In the graph's blocked layout (conv2d_nchwc_blocking's blocks for this CPU), as
// BuildOptions::precision = bf16 runs it: data bf16 [1, C/ib, H, W, ib].
bench::Runner weft_bf16_conv(const Conv& cv) {
    using namespace weft;
    const Target target = Target::host();
    const topi::Pad2d pad = topi::Pad2d::all(cv.pad);
    const topi::Conv2dBlocking b = topi::conv2d_nchwc_blocking(cv.C, cv.O, cv.out(), pad, cv.K, target);
    Tensor X = placeholder({1, cv.C / b.ic_bn, cv.H, cv.H, b.ic_bn}, bf16, "X");
    Tensor W = placeholder({cv.O / b.oc_bn, cv.C / b.weight_ic_bn, cv.K, cv.K, b.weight_ic_bn, b.oc_bn}, f32, "W");
    Tensor Wp = topi::pack_conv2d_nchwc_bf16_weight(W, b.ic_bn);
    Tensor Wpi = placeholder(Wp.shape(), bf16, "Wp");
    topi::Conv2dParams p;
    p.stride = {cv.stride, cv.stride};
    p.padding = pad;
    Tensor Y = topi::conv2d_nchwc_bf16(X, Wpi, p);
    Schedule s = create_schedule(Y);
    topi::schedule_conv2d_nchwc_bf16(s, Y, Y, target);
    Kernel conv = build(s, {X, Wpi, Y});
    Kernel pack = build(create_schedule(Wp), {W, Wp});
    auto x = std::make_shared<Buffer<bfloat16>>(std::vector<int64_t>{1, cv.C / b.ic_bn, cv.H, cv.H, b.ic_bn});
    auto w = std::make_shared<Buffer<float>>(
        Buffer<float>::random({cv.O / b.oc_bn, cv.C / b.weight_ic_bn, cv.K, cv.K, b.weight_ic_bn, b.oc_bn}, -1.f, 1.f, 4));
    auto wp = std::make_shared<Buffer<bfloat16>>(
        std::vector<int64_t>{cv.O / b.oc_bn, cv.C / b.ic_bn, cv.K, cv.K, b.ic_bn / 2, b.oc_bn, 2});
    auto y = std::make_shared<Buffer<float>>(std::vector<int64_t>{1, cv.O / b.oc_bn, cv.out(), cv.out(), b.oc_bn});
    fill_bf16(x->data(), x->size(), 3);
    pack(*w, *wp);
    return [=] { conv(*x, *wp, *y); };
}

bench::Runner onednn_bf16_conv(const Conv& cv) {
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    auto ctx = std::make_shared<bench::OneDnn>();
    memory::dims src{1, cv.C, cv.H, cv.H}, wei{cv.O, cv.C, cv.K, cv.K}, dst{1, cv.O, cv.out(), cv.out()};
    memory::desc src_any(src, dt::bf16, tag::any), wei_any(wei, dt::bf16, tag::any), dst_any(dst, dt::f32, tag::any);
    convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct, src_any, wei_any, dst_any,
                                {cv.stride, cv.stride}, {cv.pad, cv.pad}, {cv.pad, cv.pad});
    convolution_forward::primitive_desc pd(d, ctx->engine);
    memory src_user({src, dt::bf16, tag::nchw}, ctx->engine), wei_user({wei, dt::bf16, tag::oihw}, ctx->engine);
    fill_bf16(static_cast<weft::bfloat16*>(src_user.get_data_handle()), cv.C * cv.H * cv.H, 3);
    fill_bf16(static_cast<weft::bfloat16*>(wei_user.get_data_handle()), cv.O * cv.C * cv.K * cv.K, 4);
    memory sm = ctx->reordered(src_user, pd.src_desc()), wm = ctx->reordered(wei_user, pd.weights_desc());
    memory o(pd.dst_desc(), ctx->engine);
    return bench::onednn_runner(ctx, convolution_forward(pd), {{DNNL_ARG_SRC, sm}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, o}});
}

const bool registered = [] {
    if (!weft::topi::host_has_avx512_bf16()) return false;
    // Square GEMMs, and ResNet-50's first 3x3 stage as a GEMM (3136 pixels x 64 x 576).
    for (Shape g : {Shape{256, 256, 256}, Shape{1024, 1024, 1024}, Shape{3136, 64, 576}}) {
        bench::Case c{"bf16_gemm/" + g.name(), bench::Unit::Flops, 2.0 * double(g.M) * double(g.N) * double(g.K)};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [g] { return weft_bf16_gemm(g); });
            if (weft::topi::has_amx_bf16(weft::Target::host()))
                bench::add(c, "weft_amx", t, [g] { return weft_bf16_gemm(g, true); });
            bench::add(c, "onednn", t, [g] { return onednn_bf16_gemm(g); });
            bench::add(c, "weft_f32", t, [g] { return weft_f32_gemm(g); });
        }
    }
    // ResNet-50's 3x3 layers at 56, 28, 14 and 7 pixels, and a 1x1 at 56.
    for (Conv cv : {Conv{"64x56x56_3x3", 64, 64, 56, 3, 1, 1}, Conv{"128x28x28_3x3", 128, 128, 28, 3, 1, 1},
                    Conv{"256x14x14_3x3", 256, 256, 14, 3, 1, 1}, Conv{"512x7x7_3x3", 512, 512, 7, 3, 1, 1},
                    Conv{"256x56x56_1x1_to64", 256, 64, 56, 1, 1, 0}}) {
        bench::Case c{std::string("bf16_conv2d/") + cv.name, bench::Unit::Flops, cv.flops()};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [cv] { return weft_bf16_conv(cv); });
            bench::add(c, "onednn", t, [cv] { return onednn_bf16_conv(cv); });
        }
    }
    return true;
}();

}  // namespace
