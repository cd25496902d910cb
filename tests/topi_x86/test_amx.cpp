// Intel AMX tiles (topi::amx_bf16_tile / amx_u8s8_tile, schedule_matmul_bf16_amx /
// schedule_matmul_u8s8_amx): the tensorized matmuls' lowering and machine code (ldtilecfg,
// tileloadd, tdpbf16ps / tdpbusd, tilestored) on any CPU, built for an AMX target; their
// results against a double (bfloat16) or exact (int8) reference where this CPU has AMX
// ("skipped: no AMX" elsewhere).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "amx_target.hpp"
#include "matmul_reference.hpp"
#include "weft/weft.hpp"

using namespace weft;
using weft::test::amx_target;
using weft::test::skip_without_amx;

namespace {

struct AmxMatmul {
    Tensor A, B, C;
    Schedule s;
};

// C = A x B on AMX tiles: bfloat16 (float32 sums), or with `int8` u8 x s8 (int32 sums).
AmxMatmul amx_matmul(int64_t M, int64_t N, int64_t K, bool int8 = false) {
    Tensor A = placeholder({M, K}, int8 ? u8 : bf16, "A"), B = placeholder({K, N}, int8 ? i8 : bf16, "B");
    Tensor Bp = int8 ? topi::pack_vnni_weight(B) : topi::pack_bf16_weight(B);
    Tensor C = int8 ? topi::matmul_u8s8(A, Bp) : topi::matmul_bf16(A, Bp);
    Schedule s = create_schedule(C);
    s[Bp].compute_root();
    if (int8) topi::schedule_matmul_u8s8_amx(s, C);
    else topi::schedule_matmul_bf16_amx(s, C);
    return {A, B, C, s};
}

}  // namespace

TEST_CASE("AMX: bfloat16 matmul tensorized onto tdpbf16ps tiles, and its machine code") {
    AmxMatmul m = amx_matmul(32, 48, 64);
    const std::string ir = ir::to_string(lower(m.s, {m.A, m.B, m.C}).body);
    CHECK(ir.find("weft.amx_tdpbf16ps") != std::string::npos);
    Kernel f = build(m.s, {m.A, m.B, m.C}, amx_target());
    const std::string assembly = f.assembly();
    for (const char* instruction : {"ldtilecfg", "tileloadd", "tdpbf16ps", "tilestored", "tilerelease"}) {
        CAPTURE(instruction);
        CHECK(assembly.find(instruction) != std::string::npos);
    }
}

TEST_CASE("AMX: int8 matmul tensorized onto tdpbusd tiles, and its machine code") {
    AmxMatmul m = amx_matmul(32, 32, 128, true);
    CHECK(ir::to_string(lower(m.s, {m.A, m.B, m.C}).body).find("weft.amx_tdpbusd") != std::string::npos);
    const std::string assembly = build(m.s, {m.A, m.B, m.C}, amx_target()).assembly();
    CHECK(assembly.find("tdpbusd") != std::string::npos);
    CHECK(assembly.find("ldtilecfg") != std::string::npos);
}

TEST_CASE("AMX: int8 matmul on tiles equals the exact int32 products") {
    if (skip_without_amx()) return;
    for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{16, 16, 64}, {48, 32, 192}, {64, 80, 1024}}) {
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(K);
        AmxMatmul m = amx_matmul(M, N, K, true);
        Kernel f = build(m.s, {m.A, m.B, m.C});
        auto a = Buffer<uint8_t>::random({M, K}, 0, 255, uint64_t(M));
        auto b = Buffer<int8_t>::random({K, N}, -128, 127, uint64_t(N));
        Buffer<int32_t> c({M, N});
        c.fill(777);
        f(a, b, c);
        CHECK(weft::test::u8s8_matmul_mismatches(a, b, c) == 0);
    }
}

TEST_CASE("AMX: bfloat16 matmul on tiles matches a double reference") {
    if (skip_without_amx()) return;
    for (auto [M, N, K] : {std::tuple<int64_t, int64_t, int64_t>{16, 16, 32}, {48, 32, 96}, {128, 80, 512}}) {
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(K);
        AmxMatmul m = amx_matmul(M, N, K);
        Kernel f = build(m.s, {m.A, m.B, m.C});
        auto a = Buffer<bfloat16>::random({M, K}, bfloat16(-1.f), bfloat16(1.f), uint64_t(M));
        auto b = Buffer<bfloat16>::random({K, N}, bfloat16(-1.f), bfloat16(1.f), uint64_t(N));
        Buffer<float> c({M, N});
        c.fill(12345.f);  // the kernel's initialization must clear it
        f(a, b, c);
        CHECK(weft::test::bf16_matmul_mismatches(a, b, c, 1e-5) == 0);
    }
}

TEST_CASE("AMX: schedule_matmul_bf16 / u8s8 for an AMX target take the tiles, an epilogue after them") {
    const int64_t M = 64, N = 48, K = 128;
    for (bool int8 : {false, true}) {
        CAPTURE(int8);
        Tensor A = placeholder({M, K}, int8 ? u8 : bf16, "A"), B = placeholder({K, N}, int8 ? i8 : bf16, "B");
        Tensor bias = placeholder({N}, f32, "bias");
        Tensor Bp = int8 ? topi::pack_vnni_weight(B) : topi::pack_bf16_weight(B);
        Tensor C = int8 ? topi::matmul_u8s8(A, Bp) : topi::matmul_bf16(A, Bp);
        // A bias and a ReLU (after a scale, for int8): what BuildOptions::precision fuses.
        Tensor Y = compute({M, N}, [&](Expr i, Expr j) {
            Expr v = int8 ? cast(f32, C(i, j)) * 0.001f : C(i, j);
            return max(v + bias(j), ir::make_const(f32, 0.0));
        }, "y");
        auto schedule_for = [&](const Target& target) {
            Schedule s = create_schedule(Y);
            s[Bp].compute_root();
            if (int8) topi::schedule_matmul_u8s8(s, C, Y, target);
            else topi::schedule_matmul_bf16(s, C, Y, target);
            return s;
        };
        Schedule s = schedule_for(amx_target());
        const std::string assembly = build(s, {A, B, bias, Y}, amx_target()).assembly();
        CHECK(assembly.find(int8 ? "tdpbusd" : "tdpbf16ps") != std::string::npos);
        if (skip_without_amx()) continue;
        // On this AMX CPU: the tiles' result against the same schedule without AMX.
        Kernel amx = build(schedule_for(Target::host()), {A, B, bias, Y});
        Kernel plain = build(schedule_for(Target::x86_avx512()), {A, B, bias, Y}, Target::x86_avx512());
        auto bias_v = Buffer<float>::random({N}, -1.f, 1.f, 3);
        Buffer<float> y1({M, N}), y2({M, N});
        if (int8) {
            auto a = Buffer<uint8_t>::random({M, K}, 0, 255, 1);
            auto b = Buffer<int8_t>::random({K, N}, -128, 127, 2);
            amx(a, b, bias_v, y1);
            plain(a, b, bias_v, y2);
        } else {
            auto a = Buffer<bfloat16>::random({M, K}, bfloat16(-1.f), bfloat16(1.f), 1);
            auto b = Buffer<bfloat16>::random({K, N}, bfloat16(-1.f), bfloat16(1.f), 2);
            amx(a, b, bias_v, y1);
            plain(a, b, bias_v, y2);
        }
        double worst = 0;
        for (int64_t i = 0; i < M * N; ++i) worst = std::max(worst, double(std::abs(y1.data()[i] - y2.data()[i])));
        CHECK(worst < 1e-3);
    }
}

TEST_CASE("AMX: a target without AMX is refused by name, not left to LLVM") {
    AmxMatmul m = amx_matmul(16, 16, 32);
    Target plain = Target::x86_avx512();
    CHECK_THROWS_WITH_AS(build(m.s, {m.A, m.B, m.C}, plain), doctest::Contains("uses AMX tiles"), Error);
}

TEST_CASE("AMX: shapes the tiles do not fit are named") {
    Tensor A = placeholder({20, 64}, bf16, "A"), B = placeholder({64, 32}, bf16, "B");
    Tensor C = topi::matmul_bf16(A, topi::pack_bf16_weight(B));
    Schedule s = create_schedule(C);
    CHECK_THROWS_WITH_AS(topi::schedule_matmul_bf16_amx(s, C), doctest::Contains("M and N multiples of 16"), Error);
    CHECK_THROWS_WITH_AS(topi::amx_bf16_tile(48), doctest::Contains("multiple of 32"), Error);
    CHECK_THROWS_WITH_AS(topi::amx_u8s8_tile(96), doctest::Contains("multiple of 64"), Error);
}
