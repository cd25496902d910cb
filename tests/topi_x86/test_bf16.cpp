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

#include "matmul_reference.hpp"
#include "host_without.hpp"
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
        CHECK(weft::test::bf16_matmul_mismatches(a, b, c, 1e-6) == 0);
    }
}

TEST_CASE("matmul_bf16 names what does not fit it") {
    Tensor A = placeholder({4, 6}, bf16, "A"), B = placeholder({6, 24}, bf16, "B"), F = placeholder({6, 32}, f32, "F");
    CHECK_THROWS_WITH_AS(topi::pack_bf16_weight(B), doctest::Contains("N of 16"), Error);
    CHECK_THROWS_WITH_AS(topi::pack_bf16_weight(F), doctest::Contains("bfloat16"), Error);
    Tensor B2 = placeholder({8, 32}, bf16, "B2");
    CHECK_THROWS_WITH_AS(topi::matmul_bf16(A, topi::pack_bf16_weight(B2)), doctest::Contains("K = 6"), Error);
}

TEST_CASE("bfloat16 conv2d in the blocked layout matches a double reference, with and without AVX512_BF16") {
    struct Shape { int64_t C, ib, wib, O, ob, H, W, K, stride; topi::Pad2d pad; };
    // 3x3 padded on every side; 1x1 strided with a weight block of 2 data blocks and 4
    // vectors of output channels; 5x5 with uneven padding over 8-channel data blocks.
    for (auto sh : {Shape{32, 16, 16, 32, 16, 9, 9, 3, 1, topi::Pad2d::all(1)},
                    Shape{32, 16, 32, 64, 64, 7, 11, 1, 2, topi::Pad2d{}},
                    Shape{16, 8, 16, 32, 32, 8, 10, 5, 1, topi::Pad2d{2, 1, 1, 2}}}) {
        CAPTURE(sh.C);
        CAPTURE(sh.K);
        Tensor X = placeholder({1, sh.C / sh.ib, sh.H, sh.W, sh.ib}, bf16, "X");
        Tensor Wt = placeholder({sh.O / sh.ob, sh.C / sh.wib, sh.K, sh.K, sh.wib, sh.ob}, f32, "W");
        Tensor Wp = topi::pack_conv2d_nchwc_bf16_weight(Wt, sh.ib);
        topi::Conv2dParams p;
        p.stride = {sh.stride, sh.stride};
        p.padding = sh.pad;
        Tensor Y = topi::conv2d_nchwc_bf16(X, Wp, p);
        int64_t OH = 0, OW = 0;
        REQUIRE(ir::as_const_int(Y.shape()[2], &OH));
        REQUIRE(ir::as_const_int(Y.shape()[3], &OW));
        auto x = Buffer<bfloat16>::random({1, sh.C / sh.ib, sh.H, sh.W, sh.ib}, bfloat16(-1.f), bfloat16(1.f), 4);
        auto w = Buffer<float>::random({sh.O / sh.ob, sh.C / sh.wib, sh.K, sh.K, sh.wib, sh.ob}, -0.5f, 0.5f, 5);
        // The reference: every weight rounded to bfloat16, products and sums in double.
        std::vector<double> want(size_t(sh.O * OH * OW));
        for (int64_t o = 0; o < sh.O; ++o)
            for (int64_t oy = 0; oy < OH; ++oy)
                for (int64_t ox = 0; ox < OW; ++ox) {
                    double sum = 0;
                    for (int64_t c = 0; c < sh.C; ++c)
                        for (int64_t kh = 0; kh < sh.K; ++kh)
                            for (int64_t kw = 0; kw < sh.K; ++kw) {
                                const int64_t y = oy * sh.stride + kh - sh.pad.top, xx = ox * sh.stride + kw - sh.pad.left;
                                if (y < 0 || y >= sh.H || xx < 0 || xx >= sh.W) continue;
                                const double in = float(x(0, c / sh.ib, y, xx, c % sh.ib));
                                const double wt = float(bfloat16(w(o / sh.ob, c / sh.wib, kh, kw, c % sh.wib, o % sh.ob)));
                                sum += in * wt;
                            }
                    want[size_t((o * OH + oy) * OW + ox)] = sum;
                }
        // (Without AMX's tiles, which test_amx_conv.cpp checks: the vector instruction's path.)
        const Target with = weft::test::host_without("amx-bf16");
        Target without = weft::test::host_without("avx512bf16");
        without.features += ",-amx-bf16";
        for (const Target& target : {with, without}) {
            if (target.has_feature("avx512bf16") && skip_without_avx512_bf16()) continue;
            CAPTURE(target.has_feature("avx512bf16"));
            Schedule s = create_schedule(Y);
            topi::schedule_conv2d_nchwc_bf16(s, Y, Y, target);
            Kernel f = build(s, {X, Wt, Y}, target);
            CHECK((f.assembly().find("vdpbf16ps") != std::string::npos) == target.has_feature("avx512bf16"));
            Buffer<float> y({1, sh.O / sh.ob, OH, OW, sh.ob});
            f(x, w, y);
            int64_t wrong = 0;
            for (int64_t o = 0; o < sh.O; ++o)
                for (int64_t oy = 0; oy < OH; ++oy)
                    for (int64_t ox = 0; ox < OW; ++ox) {
                        const double got = y(0, o / sh.ob, oy, ox, o % sh.ob), ref = want[size_t((o * OH + oy) * OW + ox)];
                        wrong += std::abs(got - ref) > 2e-6 * double(sh.C * sh.K * sh.K) + 1e-5 * std::abs(ref);
                    }
            CHECK(wrong == 0);
        }
    }
}

TEST_CASE("a select of bfloat16 values links and runs on a CPU without AVX512_BF16") {
    // LLVM legalizes a bfloat select with a constant through float32, calling __truncsfbf2,
    // which the JIT cannot link; codegen selects the bits instead.
    Tensor X = placeholder({64}, bf16, "X");
    Tensor Y = compute({64}, [&](Expr i) { return if_then_else(i % 3 == 0, X(i), ir::make_zero(bf16)); }, "y");
    const Target without = weft::test::host_without("avx512bf16");
    for (bool vector : {false, true}) {
        CAPTURE(vector);
        Schedule s = create_schedule(Y);
        if (vector) s[Y].vectorize(Y.axis(0));
        Kernel k = build(s, {X, Y}, without);
        auto x = Buffer<bfloat16>::random({64}, bfloat16(-4.f), bfloat16(4.f), 8);
        Buffer<bfloat16> y({64});
        k(x, y);
        for (int64_t i = 0; i < 64; ++i) CHECK(y.data()[i].bits == (i % 3 == 0 ? x.data()[i].bits : 0));
    }
}
