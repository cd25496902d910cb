// SGEMM, C[M, N] = A[M, K] * B[K, N], all row-major float32: weft's topi::matmul with its
// default schedule (B packed inside the kernel, as the peers pack it inside their calls)
// against OpenBLAS (cblas_sgemm), oneDNN (the matmul primitive), Eigen (for 2 threads,
// rows split over 2 std::threads: Eigen is built without OpenMP) and Halide 14 (JIT, a
// hand-written schedule: B packed into column panels, register tiles, parallel panels).
// Every set-up allocates and fills its own operands and compiles outside the timing.
#include <Halide.h>
#include <cblas.h>

#include <Eigen/Core>
#include <cstdlib>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <thread>
#include <vector>
#include <weft/topi/linalg.hpp>
#include <weft/weft.hpp>

#include "halide_gemm.hpp"
#include "harness.hpp"
#include "onednn_util.hpp"

namespace {

struct Gemm {
    int64_t M, N, K;
    std::string name() const {
        return "sgemm/" + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
    }
    double flops() const { return 2.0 * double(M) * double(N) * double(K); }
};

// The square sizes, the FC layer of a ResNet head (batch 1, 2048 -> 1000), a BERT-base
// feed-forward layer (128 tokens, 768 -> 3072), a 1x1 convolution of ResNet as a GEMM
// (56 x 56 pixels, 576 -> 64), and small squares (0.26 M, 0.88 M and 2.1 M multiply-adds),
// where a second thread costs about as much as it brings (the thread pool's work threshold).
const Gemm kShapes[] = {{256, 256, 256},   {512, 512, 512},   {1024, 1024, 1024}, {2048, 2048, 2048},
                        {1, 1000, 2048},   {128, 3072, 768},  {3136, 64, 576},    {64, 64, 64},
                        {96, 96, 96},      {128, 128, 128}};

// 64-byte aligned float storage (a cache line; what weft's own buffers get).
struct AlignedFloats {
    explicit AlignedFloats(int64_t n)
        : p(static_cast<float*>(std::aligned_alloc(64, size_t(n * 4 + 63) / 64 * 64)), std::free), size(size_t(n)) {}
    float* data() const { return p.get(); }
    std::unique_ptr<float, void (*)(void*)> p;
    size_t size;
};

// The operands, row-major, filled once per set-up; every peer gets the same alignment.
struct Operands {
    AlignedFloats a, b, c;
    explicit Operands(const Gemm& g) : a(g.M * g.K), b(g.K * g.N), c(g.M * g.N) {
        bench::fill_random(a.data(), a.size, -1.f, 1.f, 1);
        bench::fill_random(b.data(), b.size, -1.f, 1.f, 2);
    }
};

// ---- weft -----------------------------------------------------------------------------

bench::Runner weft_gemm(const Gemm& g) {
    using namespace weft;
    Tensor A = placeholder({g.M, g.K}, f32, "A"), B = placeholder({g.K, g.N}, f32, "B");
    Tensor C = topi::matmul(A, B);
    Schedule s = create_schedule(C);
    topi::schedule_matmul(s, C);
    auto kernel = std::make_shared<Kernel>(build(s, {A, B, C}));
    auto ops = std::make_shared<Operands>(g);
    auto a = std::make_shared<Buffer<float>>(ops->a.data(), std::vector<int64_t>{g.M, g.K});
    auto b = std::make_shared<Buffer<float>>(ops->b.data(), std::vector<int64_t>{g.K, g.N});
    auto c = std::make_shared<Buffer<float>>(ops->c.data(), std::vector<int64_t>{g.M, g.N});
    return [kernel, ops, a, b, c] { (*kernel)(*a, *b, *c); };  // ops owns the memory
}

// ---- OpenBLAS -------------------------------------------------------------------------

bench::Runner openblas_gemm(const Gemm& g) {
    auto ops = std::make_shared<Operands>(g);
    return [g, ops] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(g.M), int(g.N), int(g.K), 1.f, ops->a.data(),
                    int(g.K), ops->b.data(), int(g.N), 0.f, ops->c.data(), int(g.N));
    };
}

// ---- oneDNN ---------------------------------------------------------------------------

bench::Runner onednn_gemm(const Gemm& g) {
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    auto ctx = std::make_shared<bench::OneDnn>();
    memory::desc a_md({g.M, g.K}, dt::f32, tag::ab), b_md({g.K, g.N}, dt::f32, tag::ab), c_md({g.M, g.N}, dt::f32, tag::ab);
    matmul::primitive_desc pd(matmul::desc(a_md, b_md, c_md), ctx->engine);
    auto ops = std::make_shared<Operands>(g);
    memory a(a_md, ctx->engine, ops->a.data()), b(b_md, ctx->engine, ops->b.data()), c(c_md, ctx->engine, ops->c.data());
    return bench::onednn_runner(ctx, matmul(pd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}}, ops);
}

// ---- Eigen ----------------------------------------------------------------------------

bench::Runner eigen_gemm(const Gemm& g, int threads) {
    using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using Map = Eigen::Map<Matrix>;
    auto ops = std::make_shared<Operands>(g);
    // One part per thread: row blocks, or column blocks for a single row.
    auto part = [g, ops, threads](int t) {
        Map a(ops->a.data(), g.M, g.K), b(ops->b.data(), g.K, g.N), c(ops->c.data(), g.M, g.N);
        if (g.M >= threads) {
            int64_t lo = g.M * t / threads, hi = g.M * (t + 1) / threads;
            c.middleRows(lo, hi - lo).noalias() = a.middleRows(lo, hi - lo) * b;
        } else {
            int64_t lo = g.N * t / threads, hi = g.N * (t + 1) / threads;
            c.middleCols(lo, hi - lo).noalias() = a * b.middleCols(lo, hi - lo);
        }
    };
    if (threads == 1) return [part] { part(0); };
    return [part, threads] {
        std::vector<std::thread> others;
        for (int t = 1; t < threads; ++t) others.emplace_back(part, t);
        part(0);
        for (auto& th : others) th.join();
    };
}

// ---- Halide ---------------------------------------------------------------------------

// The pipeline and its schedule: halide_gemm.hpp.
bench::Runner halide_gemm(const Gemm& g, int threads) {
    using namespace Halide;
    const int M = int(g.M), N = int(g.N), K = int(g.K);
    auto a = std::make_shared<Buffer<float>>(K, M);
    auto b = std::make_shared<Buffer<float>>(N, K);
    auto c = std::make_shared<Buffer<float>>(N, M);
    bench::fill_random(a->data(), size_t(a->number_of_elements()), -1.f, 1.f, 1);
    bench::fill_random(b->data(), size_t(b->number_of_elements()), -1.f, 1.f, 2);
    Func out = bench::halide_gemm_pipeline(*a, *b, threads);
    out.compile_jit(get_jit_target_from_environment());
    bench::set_halide_threads(threads);
    auto fn = std::make_shared<Func>(out);
    return [fn, c] { fn->realize(*c); };
}

void register_gemms() {
    for (const Gemm& g : kShapes) {
        bench::Case c{g.name(), bench::Unit::Flops, g.flops()};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [g] { return weft_gemm(g); });
            bench::add(c, "openblas", t, [g] { return openblas_gemm(g); });
            bench::add(c, "onednn", t, [g] { return onednn_gemm(g); });
            bench::add(c, "eigen", t, [g, t] { return eigen_gemm(g, t); });
            bench::add(c, "halide", t, [g, t] { return halide_gemm(g, t); });
        }
    }
}

const bool registered = (register_gemms(), true);

}  // namespace
