// bfloat16 GEMM and convolution: weft's kernels tensorized onto AVX512_BF16's vdpbf16ps (and,
// on AMX CPUs, the GEMM on AMX tiles; topi/x86.hpp) against oneDNN's bf16 primitives (bf16 x
// bf16 -> f32, the cases in dot_cases.hpp) and weft's own float32 matmul of the same shape.
// Rates count 2 flops per multiply-add; vdpbf16ps does twice an FMA's work per instruction.
// Registered only on CPUs with AVX512_BF16.

#include <memory>

#include "dot_cases.hpp"
#include "harness.hpp"
#include <weft/weft.hpp>

namespace {

using namespace bench;

struct Shape {
    int64_t M, N, K;
    std::string name() const { return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K); }
};

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

const bool registered = [] {
    if (!weft::topi::host_has_avx512_bf16()) return false;
    // Square GEMMs, and ResNet-50's first 3x3 stage as a GEMM (3136 pixels x 64 x 576).
    for (Shape g : {Shape{256, 256, 256}, Shape{1024, 1024, 1024}, Shape{3136, 64, 576}}) {
        bench::Case c{"bf16_gemm/" + g.name(), bench::Unit::Flops, 2.0 * double(g.M) * double(g.N) * double(g.K)};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [g] { return dot::weft_gemm(dot::kBf16, g.M, g.N, g.K); });
            if (weft::topi::has_amx_bf16(weft::Target::host()))
                bench::add(c, "weft_amx", t, [g] { return dot::weft_gemm(dot::kBf16, g.M, g.N, g.K, true); });
            bench::add(c, "onednn", t, [g] { return dot::onednn_gemm(dot::kBf16, g.M, g.N, g.K); });
            bench::add(c, "weft_f32", t, [g] { return weft_f32_gemm(g); });
        }
    }
    // ResNet-50's 3x3 layers at 56, 28, 14 and 7 pixels, and a 1x1 at 56.
    using dot::Conv;
    for (Conv cv : {Conv{"64x56x56_3x3", 64, 64, 56, 3, 1, 1}, Conv{"128x28x28_3x3", 128, 128, 28, 3, 1, 1},
                    Conv{"256x14x14_3x3", 256, 256, 14, 3, 1, 1}, Conv{"512x7x7_3x3", 512, 512, 7, 3, 1, 1},
                    Conv{"256x56x56_1x1_to64", 256, 64, 56, 1, 1, 0}}) {
        bench::Case c{std::string("bf16_conv2d/") + cv.name, bench::Unit::Flops, cv.ops()};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [cv] { return dot::weft_blocked_conv(dot::kBf16, cv, true); });
            bench::add(c, "onednn", t, [cv] { return dot::onednn_conv(dot::kBf16, cv); });
        }
    }
    return true;
}();

}  // namespace
