// bfloat16: the host types' conversions against independent ones (the compiler's _Float16,
// weft's kernels' float -> bfloat16 cast), and the matmul tensorized onto AVX512_BF16's
// vdpbf16ps against a double reference of the same bfloat16 inputs. Kernels run only where
// the CPU has AVX512_BF16.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "weft/weft.hpp"

using namespace weft;

namespace {

bool skip_without_avx512_bf16() {
    if (topi::host_has_avx512_bf16()) return false;
    MESSAGE("skipped: this CPU has no AVX512_BF16");
    return true;
}

// Floats that probe rounding: random bit patterns (every exponent), ties, the edges of
// float16's range, signed zeros, infinities and NaNs.
std::vector<float> probe_floats() {
    std::vector<float> v{0.f, -0.f, 1.f, -1.f, 0.1f, 65504.f, 65519.f, 65520.f, 65536.f, 1e-8f, -1e-8f,
                         0x1p-14f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-26f, 1.f + 0x1p-11f, 1.f + 0x3p-11f,
                         1.f + 0x1p-8f, 1.f + 0x3p-8f, 3.4e38f, std::numeric_limits<float>::infinity(),
                         -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::denorm_min()};
    std::mt19937 rng(7);
    for (int i = 0; i < 200000; ++i) v.push_back(std::bit_cast<float>(uint32_t(rng())));
    for (int i = 0; i < 20000; ++i) v.push_back(std::uniform_real_distribution<float>(-70000.f, 70000.f)(rng));
    return v;
}

}  // namespace

TEST_CASE("float16 converts as the compiler's _Float16 does, both ways") {
    int64_t wrong = 0;
    for (float f : probe_floats()) {
        const float16 h(f);
        const _Float16 want = static_cast<_Float16>(f);
        if (std::isnan(f)) {
            wrong += !std::isnan(float(h));
            continue;
        }
        wrong += h.bits != std::bit_cast<uint16_t>(want);
    }
    CHECK(wrong == 0);
    for (uint32_t bits = 0; bits < 65536; ++bits) {  // every float16 back to float, exactly
        const float16 h = float16::from_bits(uint16_t(bits));
        const float want = float(std::bit_cast<_Float16>(uint16_t(bits)));
        if (std::isnan(want)) wrong += !std::isnan(float(h));
        else wrong += std::bit_cast<uint32_t>(float(h)) != std::bit_cast<uint32_t>(want);
    }
    CHECK(wrong == 0);
}

TEST_CASE("bfloat16 rounds as weft's kernels' cast does, and widens exactly") {
    const std::vector<float> floats = probe_floats();
    const int64_t n = int64_t(floats.size());
    Tensor x = placeholder({n}, f32, "x");
    Tensor y = compute({n}, [&](Expr i) { return cast(bf16, x(i)); }, "y");
    Kernel cast_kernel = build(create_schedule(y), {x, y});
    Buffer<float> in({n});
    std::copy(floats.begin(), floats.end(), in.data());
    Buffer<bfloat16> out({n});
    cast_kernel(in, out);
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
        const bfloat16 h(floats[size_t(i)]);
        if (std::isnan(floats[size_t(i)])) wrong += !std::isnan(float(h)) || !std::isnan(float(out.data()[i]));
        else wrong += h.bits != out.data()[i].bits;
    }
    CHECK(wrong == 0);
    // Widening is the bits shifted up: every bfloat16 that is not a NaN round-trips.
    for (uint32_t bits = 0; bits < 65536; ++bits) {
        const bfloat16 h = bfloat16::from_bits(uint16_t(bits));
        if (!std::isnan(float(h))) wrong += bfloat16(float(h)).bits != h.bits;
    }
    CHECK(wrong == 0);
    CHECK(float(bfloat16(0.1f)) == 0.10009765625f);
    CHECK(bfloat16(-0.f) == bfloat16(0.f));
    CHECK_FALSE(bfloat16(std::nanf("")) == bfloat16(std::nanf("")));
    auto r = Buffer<bfloat16>::random({1000}, bfloat16(-2.f), bfloat16(2.f), 3);
    for (bfloat16 v : r) wrong += !(float(v) >= -2.f && float(v) <= 2.f);
    CHECK(wrong == 0);
    CHECK_THROWS_WITH_AS(Buffer<bfloat16>(BufferRef(in)), doctest::Contains("as a Buffer<bfloat16>"), Error);
}

TEST_CASE("bfloat16 matmul tensorized with vdpbf16ps matches a double reference") {
    // K / 2 of 1, 5, 16, 9 and 24: steps of 2 unrolled by 1, 5, 8, 3 and 8 (3 times).
    for (auto [M, N, K] :
         {std::tuple<int64_t, int64_t, int64_t>{1, 16, 2}, {7, 48, 10}, {13, 64, 32}, {97, 128, 18}, {5, 32, 48}}) {
        Tensor A = placeholder({M, K}, bf16, "A"), B = placeholder({K, N}, bf16, "B");
        Tensor Bp = topi::pack_bf16_weight(B);
        Tensor C = topi::matmul_bf16(A, Bp);
        Schedule s = create_schedule(C);
        s[Bp].compute_root();
        topi::schedule_matmul_bf16(s, C);
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(K);
        std::string ir = ir::to_string(lower(s, {A, B, C}).body);
        CHECK(ir.find("llvm.x86.avx512bf16.dpbf16ps.512") != std::string::npos);
        if (K % 16 == 0) CHECK(ir.find("for (k.outer.outer, 0, " + std::to_string(K / 16) + ")") != std::string::npos);
        if (skip_without_avx512_bf16()) return;
        Kernel f = build(s, {A, B, C});
        CHECK(f.assembly().find("vdpbf16ps") != std::string::npos);
        auto a = Buffer<bfloat16>::random({M, K}, bfloat16(-1.f), bfloat16(1.f), 1);
        auto b = Buffer<bfloat16>::random({K, N}, bfloat16(-1.f), bfloat16(1.f), 2);
        Buffer<float> c({M, N});
        f(a, b, c);
        int64_t wrong = 0;
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
                double want = 0, scale = 0;
                for (int64_t k = 0; k < K; ++k) {
                    const double p = double(float(a(i, k))) * double(float(b(k, j)));
                    want += p;
                    scale += std::abs(p);
                }
                // float32 sums of K products (one rounding per pair and per step)
                wrong += std::abs(c(i, j) - want) > 1e-6 * double(K) * scale + 1e-30;
            }
        CHECK(wrong == 0);
    }
}

TEST_CASE("matmul_bf16 names what does not fit it") {
    Tensor A = placeholder({4, 6}, bf16, "A"), B = placeholder({6, 24}, bf16, "B"), F = placeholder({6, 32}, f32, "F");
    CHECK_THROWS_WITH_AS(topi::pack_bf16_weight(B), doctest::Contains("N of 16"), Error);
    CHECK_THROWS_WITH_AS(topi::pack_bf16_weight(F), doctest::Contains("bfloat16"), Error);
    Tensor B2 = placeholder({8, 32}, bf16, "B2");
    CHECK_THROWS_WITH_AS(topi::matmul_bf16(A, topi::pack_bf16_weight(B2)), doctest::Contains("K = 6"), Error);
}
