// int8 matmul and conv2d tensorized onto AVX-512 VNNI (vpdpbusd), against naive int32
// references on random bytes; the intrinsic really is in the machine code; tensorize
// refuses nests that do not match. Kernels only run where the CPU has VNNI.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "host_without.hpp"
#include "matmul_reference.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

template <class T>
Buffer<T> random_bytes(std::vector<int64_t> shape, unsigned seed) {
    Buffer<T> b(shape);
    std::mt19937 rng(seed);
    for (int64_t i = 0; i < b.size(); ++i) b.data()[i] = T(int(rng() % 256) - (std::is_signed_v<T> ? 128 : 0));
    return b;
}

bool skip_without_vnni() {
    if (topi::host_has_vnni()) return false;
    MESSAGE("skipped: this CPU has no AVX-512 VNNI");
    return true;
}

}  // namespace

TEST_CASE("int8 matmul tensorized with vpdpbusd matches an int32 reference") {
    // K / 4 of 1, 5, 16, 9 and 24: steps of 4 unrolled by 1, 5, 8, 3 and 8 (3 times).
    for (auto [M, N, K] :
         {std::tuple<int64_t, int64_t, int64_t>{1, 16, 4}, {7, 48, 20}, {13, 64, 64}, {97, 128, 36}, {5, 32, 96}}) {
        Tensor A = placeholder({M, K}, u8, "A"), B = placeholder({K, N}, i8, "B");
        Tensor Bp = topi::pack_vnni_weight(B);
        Tensor C = topi::matmul_u8s8(A, Bp);
        Schedule s = create_schedule(C);
        s[Bp].compute_root();
        topi::schedule_matmul_u8s8(s, C);
        CAPTURE(M);
        CAPTURE(N);
        CAPTURE(K);
        std::string ir = ir::to_string(lower(s, {A, B, C}).body);
        CHECK(ir.find("llvm.x86.avx512.vpdpbusd.512") != std::string::npos);
        // The loop over steps of 4 k runs K / 32 times (8 steps unrolled in it) where 8 divide.
        if (K % 32 == 0) CHECK(ir.find("for (k.outer.outer, 0, " + std::to_string(K / 32) + ")") != std::string::npos);
        if (skip_without_vnni()) return;
        Kernel f = build(s, {A, B, C});
        CHECK(f.assembly().find("vpdpbusd") != std::string::npos);
        auto a = random_bytes<uint8_t>({M, K}, 1);
        auto b = random_bytes<int8_t>({K, N}, 2);
        Buffer<int32_t> c({M, N});
        f(a, b, c);
        CHECK(weft::test::u8s8_matmul_mismatches(a, b, c) == 0);
    }
}

TEST_CASE("int8 conv2d NCHW4c tensorized with vpdpbusd matches an int32 reference") {
    struct Shape { int64_t C, O, H, W, KH, stride, pad; };
    // 3x3 and 1x1 windows unrolled whole, 5x5 along kw only. The input is read in place,
    // the taps in the padding left out: in a 5x5 window over 13 columns, the tiles at the
    // borders keep a loop over the columns of taps that lie inside (its bounds depend on
    // the tile), the others are unrolled.
    for (auto sh : {Shape{4, 16, 5, 7, 3, 1, 1}, Shape{8, 32, 9, 9, 3, 2, 1}, Shape{12, 16, 6, 11, 1, 1, 0},
                    Shape{8, 32, 11, 13, 5, 1, 2}}) {
        Tensor X = placeholder({1, sh.C, sh.H, sh.W}, u8, "X"), Wt = placeholder({sh.O, sh.C, sh.KH, sh.KH}, i8, "W");
        Tensor Xb = topi::layout_nchw_to_nchw4c(X), Wp = topi::pack_conv2d_vnni_weight(Wt);
        Tensor Y = topi::conv2d_nchwc_u8s8(Xb, Wp, sh.stride, sh.pad);
        Schedule s = create_schedule(Y);
        s[Xb].compute_root();
        s[Wp].compute_root();
        topi::schedule_conv2d_nchwc_u8s8(s, Y);
        CAPTURE(sh.C);
        CAPTURE(sh.stride);
        CAPTURE(sh.KH);
        std::string ir = ir::to_string(lower(s, {X, Wt, Y}).body);
        for (size_t at = ir.find("for (kw"); at != std::string::npos; at = ir.find("for (kw", at + 1)) {
            const std::string loop = ir.substr(at, ir.find('\n', at) - at);
            CAPTURE(loop);
            CHECK(loop.find("i3.outer") != std::string::npos);
        }
        CHECK(ir.find(".pad") == std::string::npos);
        CHECK((ir.find("for (kh") == std::string::npos) == (sh.KH <= 3));
        if (skip_without_vnni()) return;
        Kernel f = build(s, {X, Wt, Y});
        auto x = random_bytes<uint8_t>({1, sh.C, sh.H, sh.W}, 3);
        auto w = random_bytes<int8_t>({sh.O, sh.C, sh.KH, sh.KH}, 4);
        const int64_t OH = (sh.H + 2 * sh.pad - sh.KH) / sh.stride + 1, OW = (sh.W + 2 * sh.pad - sh.KH) / sh.stride + 1;
        Buffer<int32_t> y({1, sh.O / 16, OH, OW, 16});
        f(x, w, y);
        int64_t wrong = 0;
        for (int64_t o = 0; o < sh.O; ++o)
            for (int64_t oy = 0; oy < OH; ++oy)
                for (int64_t ox = 0; ox < OW; ++ox) {
                    int32_t want = 0;
                    for (int64_t c = 0; c < sh.C; ++c)
                        for (int64_t dy = 0; dy < sh.KH; ++dy)
                            for (int64_t dx = 0; dx < sh.KH; ++dx) {
                                int64_t iy = oy * sh.stride + dy - sh.pad, ix = ox * sh.stride + dx - sh.pad;
                                if (iy < 0 || iy >= sh.H || ix < 0 || ix >= sh.W) continue;
                                want += int32_t(x(0, c, iy, ix)) * int32_t(w(o, c, dy, dx));
                            }
                    wrong += y(0, o / 16, oy, ox, o % 16) != want;
                }
        CHECK(wrong == 0);
    }
}

TEST_CASE("tensorize names what differs when the loop nest does not match the intrinsic") {
    const int64_t M = 6, N = 32, K = 16;
    Tensor A = placeholder({M, K}, u8, "A"), Bp = placeholder({N / 16, K / 4, 16, 4}, i8, "Bp");
    IterVar k = reduce_axis(0, K, "k");
    // `weight`: the second input the body reads.
    auto build_with = [&](auto body, int64_t jsplit, int64_t ksplit, const Tensor& weight) {
        Tensor C = compute({M, N}, body(k), "C");
        Schedule s = create_schedule(C);
        auto [jo, ji] = s[C].split(C.axis(1), jsplit);
        auto [ko, ki] = s[C].split(k, ksplit);
        s[C].reorder({C.axis(0), jo, ko, ji, ki});
        s[C].tensorize(ji, topi::vnni_dot_16x4());
        return lower(s, {A, weight, C});
    };
    auto vnni_body = [&](IterVar kk) {
        return [&, kk](Expr i, Expr j) { return sum(cast(i32, A(i, kk)) * cast(i32, Bp(j / 16, kk / 4, j % 16, kk % 4)), {kk}); };
    };
    CHECK_NOTHROW(build_with(vnni_body, 16, 4, Bp));
    // Wrong extents: 8 columns where the intrinsic does 16.
    CHECK_THROWS_WITH_AS(build_with(vnni_body, 8, 4, Bp), doctest::Contains("runs 8 iterations, the intrinsic's axis 'j' 16"),
                         Error);
    // The weight's rows and columns swapped (a weight of that layout, so every read is in
    // bounds): indices move differently.
    Tensor Bs = placeholder({N / 16, K / 4, 4, 16}, i8, "Bs");
    auto swapped = [&](IterVar kk) {
        return [&, kk](Expr i, Expr j) { return sum(cast(i32, A(i, kk)) * cast(i32, Bs(j / 16, kk / 4, kk % 4, j % 16)), {kk}); };
    };
    CHECK_THROWS_WITH_AS(build_with(swapped, 16, 4, Bs), doctest::Contains("moves as"), Error);
    // Another expression: a product of the wrong widths.
    auto plus = [&](IterVar kk) {
        return [&, kk](Expr i, Expr j) { return sum(cast(i32, A(i, kk)) + cast(i32, Bp(j / 16, kk / 4, j % 16, kk % 4)), {kk}); };
    };
    CHECK_THROWS_WITH_AS(build_with(plus, 16, 4, Bp), doctest::Contains("where the intrinsic computes"), Error);
    // Wrong loop kinds at the primitive itself.
    Tensor C = compute({M, N}, vnni_body(k), "C");
    Schedule s = create_schedule(C);
    CHECK_THROWS_WITH_AS(s[C].tensorize(C.axis(0), topi::vnni_dot_16x4()),
                         doctest::Contains("2 data-parallel and 1 reduce loops, but intrinsic 'x86.vnni_dot_16x4' has 1"),
                         Error);
}

TEST_CASE("a tensorized schedule replays from JSON through the intrinsic registry") {
    Tensor A = placeholder({6, 8}, u8, "A"), B = placeholder({8, 32}, i8, "B");
    Tensor C = topi::matmul_u8s8(A, topi::pack_vnni_weight(B));
    Schedule s = create_schedule(C);
    topi::schedule_matmul_u8s8(s, C);
    Schedule replayed = Schedule::from_json(s.to_json(), {C});
    CHECK(replayed == s);
    CHECK(ir::to_string(lower(replayed, {A, B, C}).body) == ir::to_string(lower(s, {A, B, C}).body));
    CHECK_THROWS_WITH_AS(lookup_tensor_intrin("no.such"), doctest::Contains("no tensor intrinsic named 'no.such'"), Error);
}

TEST_CASE("int8 conv2d in conv2d_nchwc's blocked layout pads with the zero point, with and without VNNI") {
    struct Shape { int64_t C, ib, wib, O, ob, H, W, K, stride; topi::Pad2d pad; int64_t zero_point; };
    // 3x3 padded with a zero point (a padded copy), 1x1 strided with a weight block of 2 data
    // blocks and 2 vectors of output channels, 5x5 with uneven zero padding over 8-channel
    // blocks on a 20-wide row (read in place), 3x3 on a wide row padded with a zero point.
    for (auto sh : {Shape{32, 16, 16, 32, 16, 9, 9, 3, 1, topi::Pad2d::all(1), 131},
                    Shape{32, 16, 32, 64, 32, 7, 11, 1, 2, topi::Pad2d{}, 7},
                    Shape{16, 8, 16, 32, 32, 8, 20, 5, 1, topi::Pad2d{2, 1, 1, 2}, 0},
                    Shape{8, 4, 8, 16, 16, 5, 19, 3, 1, topi::Pad2d::all(1), 255}}) {
        CAPTURE(sh.C);
        CAPTURE(sh.K);
        CAPTURE(sh.zero_point);
        Tensor X = placeholder({1, sh.C / sh.ib, sh.H, sh.W, sh.ib}, u8, "X");
        Tensor Wt = placeholder({sh.O / sh.ob, sh.C / sh.wib, sh.K, sh.K, sh.wib, sh.ob}, i8, "W");
        Tensor Wp = topi::pack_conv2d_nchwc_u8s8_weight(Wt, sh.ib);
        topi::Conv2dParams p;
        p.stride = {sh.stride, sh.stride};
        p.padding = sh.pad;
        Tensor Y = topi::conv2d_nchwc_u8s8(X, Wp, p, sh.zero_point);
        int64_t OH = 0, OW = 0;
        REQUIRE(ir::as_const_int(Y.shape()[2], &OH));
        REQUIRE(ir::as_const_int(Y.shape()[3], &OW));
        auto x = random_bytes<uint8_t>({1, sh.C / sh.ib, sh.H, sh.W, sh.ib}, 8);
        auto w = random_bytes<int8_t>({sh.O / sh.ob, sh.C / sh.wib, sh.K, sh.K, sh.wib, sh.ob}, 9);
        // The reference: the padding holds the zero point, sums in int64.
        std::vector<int64_t> want(size_t(sh.O * OH * OW));
        for (int64_t o = 0; o < sh.O; ++o)
            for (int64_t oy = 0; oy < OH; ++oy)
                for (int64_t ox = 0; ox < OW; ++ox) {
                    int64_t sum = 0;
                    for (int64_t c = 0; c < sh.C; ++c)
                        for (int64_t kh = 0; kh < sh.K; ++kh)
                            for (int64_t kw = 0; kw < sh.K; ++kw) {
                                const int64_t y = oy * sh.stride + kh - sh.pad.top, xx = ox * sh.stride + kw - sh.pad.left;
                                const bool inside = y >= 0 && y < sh.H && xx >= 0 && xx < sh.W;
                                const int64_t in = inside ? int64_t(x(0, c / sh.ib, y, xx, c % sh.ib)) : sh.zero_point;
                                sum += in * int64_t(w(o / sh.ob, c / sh.wib, kh, kw, c % sh.wib, o % sh.ob));
                            }
                    want[size_t((o * OH + oy) * OW + ox)] = sum;
                }
        // (Without AMX's tiles, which test_amx_conv.cpp checks: the vector instruction's path.)
        const Target with = weft::test::host_without("amx-int8");
        Target without = weft::test::host_without("avx512vnni");
        without.features += ",-amx-int8";
        for (const Target& target : {with, without}) {
            if (target.has_feature("avx512vnni") && skip_without_vnni()) continue;
            CAPTURE(target.has_feature("avx512vnni"));
            Schedule s = create_schedule(Y);
            topi::schedule_conv2d_nchwc_u8s8(s, Y, Y, target);
            Kernel f = build(s, {X, Wt, Y}, target);
            CHECK((f.assembly().find("vpdpbusd") != std::string::npos) == target.has_feature("avx512vnni"));
            Buffer<int32_t> y({1, sh.O / sh.ob, OH, OW, sh.ob});
            f(x, w, y);
            int64_t wrong = 0;
            for (int64_t o = 0; o < sh.O; ++o)
                for (int64_t oy = 0; oy < OH; ++oy)
                    for (int64_t ox = 0; ox < OW; ++ox)
                        wrong += y(0, o / sh.ob, oy, ox, o % sh.ob) != want[size_t((o * OH + oy) * OW + ox)];
            CHECK(wrong == 0);
        }
    }
}

TEST_CASE("conv2d_nchwc_u8s8 names what does not fit it") {
    Tensor X = placeholder({1, 2, 6, 6, 8}, u8, "X");
    Tensor W6 = placeholder({1, 2, 3, 3, 8, 16}, i8, "W");
    CHECK_THROWS_WITH_AS(topi::pack_conv2d_nchwc_u8s8_weight(W6, 6), doctest::Contains("multiple of 4"), Error);
    CHECK_THROWS_WITH_AS(topi::pack_conv2d_nchwc_u8s8_weight(placeholder({1, 2, 3, 3, 8, 16}, f32, "F"), 8),
                         doctest::Contains("int8"), Error);
    Tensor Wp = topi::pack_conv2d_nchwc_u8s8_weight(W6, 8);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchwc_u8s8(X, Wp, topi::Conv2dParams{}, 256), doctest::Contains("zero point"), Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchwc_u8s8(placeholder({1, 2, 6, 6, 8}, i8, "S"), Wp, topi::Conv2dParams{}), doctest::Contains("uint8"),
                         Error);
}
