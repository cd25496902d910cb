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

bench::Runner weft_bf16_gemm(Shape g) {
    using namespace weft;
    Tensor A = placeholder({g.M, g.K}, bf16, "A"), B = placeholder({g.K, g.N}, bf16, "B");
    Tensor Bp = topi::pack_bf16_weight(B);
    Tensor Bpi = placeholder({g.N / 16, g.K / 2, 16, 2}, bf16, "Bp");
    Tensor C = topi::matmul_bf16(A, Bpi);
    Schedule s = create_schedule(C);
    topi::schedule_matmul_bf16(s, C);
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

const bool registered = [] {
    if (!weft::topi::host_has_avx512_bf16()) return false;
    // Square GEMMs, and ResNet-50's first 3x3 stage as a GEMM (3136 pixels x 64 x 576).
    for (Shape g : {Shape{256, 256, 256}, Shape{1024, 1024, 1024}, Shape{3136, 64, 576}}) {
        bench::Case c{"bf16_gemm/" + g.name(), bench::Unit::Flops, 2.0 * double(g.M) * double(g.N) * double(g.K)};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [g] { return weft_bf16_gemm(g); });
            bench::add(c, "onednn", t, [g] { return onednn_bf16_gemm(g); });
            bench::add(c, "weft_f32", t, [g] { return weft_f32_gemm(g); });
        }
    }
    return true;
}();

}  // namespace
