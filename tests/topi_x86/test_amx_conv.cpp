// Convolutions on Intel AMX tiles (schedule_conv2d_nchwc_bf16 / _u8s8 for a target with
// amx-bf16 / amx-int8): the tile program's machine code on any CPU, built for an AMX target;
// results against a double (bfloat16) or exact (int8) reference where this CPU has AMX
// ("skipped: no AMX" elsewhere): padded and strided windows, tiles of fewer than 16 pixels,
// odd heights, one and two 16-channel columns, steps of 64 and 32 bytes, a fused epilogue.
#include <doctest/doctest.h>

#include <cmath>

#include "amx_target.hpp"
#include "weft/weft.hpp"

using namespace weft;
using weft::test::amx_target;
using weft::test::skip_without_amx;

namespace {

struct Shape {
    int64_t C, ib, O, ob, H, W, K, stride;
    topi::Pad2d pad;
};

struct AmxConv {
    Tensor X, Wt, Wp, bias, Y;
    int64_t OH, OW;
};

// relu(conv(X, W) + bias) (int8: the int32 sum scaled by 1/64 first), the weight packed from
// conv2d_nchwc's float32 (bfloat16) or int8 blocks with the data's block, padding read from a
// copy (the zero point's value for int8).
AmxConv amx_conv(const Shape& sh, bool int8, int64_t zero_point) {
    Tensor X = placeholder({1, sh.C / sh.ib, sh.H, sh.W, sh.ib}, int8 ? u8 : bf16, "X");
    Tensor Wt = placeholder({sh.O / sh.ob, sh.C / sh.ib, sh.K, sh.K, sh.ib, sh.ob}, int8 ? i8 : f32, "W");
    Tensor bias = placeholder({sh.O / sh.ob, sh.ob}, f32, "bias");
    topi::Conv2dParams p;
    p.stride = {sh.stride, sh.stride};
    p.padding = sh.pad;
    Tensor Wp = int8 ? topi::pack_conv2d_nchwc_u8s8_weight(Wt, sh.ib) : topi::pack_conv2d_nchwc_bf16_weight(Wt, sh.ib);
    Tensor acc = int8 ? topi::conv2d_nchwc_u8s8(X, Wp, p, zero_point, "conv", true) : topi::conv2d_nchwc_bf16(X, Wp, p, "conv", true);
    Tensor Y = compute(acc.shape(), [&](const std::vector<Expr>& i) {
        Expr v = int8 ? cast(f32, acc.at(i)) * (1.f / 64) : acc.at(i);
        return max(v + bias(i[1], i[4]), ir::make_const(f32, 0.0));
    }, "y");
    int64_t OH = 0, OW = 0;
    ir::as_const_int(Y.shape()[2], &OH);
    ir::as_const_int(Y.shape()[3], &OW);
    return {X, Wt, Wp, bias, Y, OH, OW};
}

Schedule schedule_for(const AmxConv& c, bool int8, const Target& target) {
    Schedule s = create_schedule(c.Y);
    Tensor acc = c.Y.op().input_tensors()[0];
    if (acc.name() != "conv") acc = c.Y.op().input_tensors()[1];
    s[c.Wp].compute_root();  // (a graph constant)
    if (int8) topi::schedule_conv2d_nchwc_u8s8(s, acc, c.Y, target);
    else topi::schedule_conv2d_nchwc_bf16(s, acc, c.Y, target);
    return s;
}

const Shape kShapes[] = {
    {64, 64, 64, 32, 14, 14, 3, 1, topi::Pad2d::all(1)},    // 3x3 padded: tiles of 14, two rows, two columns
    {128, 64, 32, 16, 13, 13, 1, 2, topi::Pad2d{}},         // 1x1 strided: its 7x7 pixels copied, one column
    {64, 64, 64, 64, 9, 20, 3, 2, topi::Pad2d{1, 0, 1, 2}}, // uneven padding, stride 2, two blocks of two columns
    {64, 32, 32, 32, 8, 12, 3, 1, topi::Pad2d::all(1)},     // int8 blocks of 32 bytes: steps of half a tile
    {32, 16, 16, 16, 6, 6, 3, 1, topi::Pad2d::all(1)},      // bfloat16 blocks of 32 bytes; int8's 16 bytes: no tiles
    {128, 64, 64, 32, 7, 7, 3, 1, topi::Pad2d::all(1)},     // narrow: tiles of 16 over the padded-width plane
    {64, 64, 32, 32, 5, 5, 1, 1, topi::Pad2d{}},            // the same, 1x1
    {64, 64, 32, 32, 40, 40, 1, 2, topi::Pad2d{}},          // 1x1 strided, wide: rows of a copy of its pixels
};

// Whether the tiles take a block of ib channels (32 or a multiple of 64 bytes).
bool tiles_take(const Shape& sh, bool int8) { return sh.ib * (int8 ? 1 : 2) % 32 == 0; }

}  // namespace

TEST_CASE("AMX convolutions: built for an AMX target, the tiles take them") {
    for (bool int8 : {false, true}) {
        CAPTURE(int8);
        AmxConv c = amx_conv(kShapes[0], int8, 0);
        const std::string assembly = build(schedule_for(c, int8, amx_target()), {c.X, c.Wt, c.bias, c.Y}, amx_target()).assembly();
        CHECK(assembly.find(int8 ? "tdpbusd" : "tdpbf16ps") != std::string::npos);
        CHECK(assembly.find("ldtilecfg") != std::string::npos);
    }
    // Taps left out of the sum in place (rows wider than 16 read without a copy): no tiles.
    Tensor X = placeholder({1, 2, 20, 20, 32}, bf16, "X");
    Tensor Wt = placeholder({2, 2, 3, 3, 32, 32}, f32, "W");
    topi::Conv2dParams p;
    p.padding = topi::Pad2d::all(1);
    Tensor Y = topi::conv2d_nchwc_bf16(X, topi::pack_conv2d_nchwc_bf16_weight(Wt, 32), p);
    Schedule s = create_schedule(Y);
    topi::schedule_conv2d_nchwc_bf16(s, Y, Y, amx_target());
    CHECK(build(s, {X, Wt, Y}, amx_target()).assembly().find("tdpbf16ps") == std::string::npos);
}

// Runs conv `sh` (bfloat16 or int8) built for `target` against a double (bfloat16) or exact
// (int8) reference; `tiles`: whether its code must use AMX's tile products.
void check_against_reference(const Shape& sh, bool int8, const Target& target, bool tiles) {
    const int64_t zero_point = int8 ? 9 : 0;
    AmxConv c = amx_conv(sh, int8, zero_point);
    Kernel f = build(schedule_for(c, int8, target), {c.X, c.Wt, c.bias, c.Y}, target);
    CHECK((f.assembly().find(int8 ? "tdpbusd" : "tdpbf16ps") != std::string::npos) == tiles);
    const std::vector<int64_t> xs{1, sh.C / sh.ib, sh.H, sh.W, sh.ib}, ws{sh.O / sh.ob, sh.C / sh.ib, sh.K, sh.K, sh.ib, sh.ob};
    auto bias = Buffer<float>::random({sh.O / sh.ob, sh.ob}, -1.f, 1.f, 3);
    Buffer<float> y({1, sh.O / sh.ob, c.OH, c.OW, sh.ob});
    Buffer<bfloat16> xb = Buffer<bfloat16>::random(xs, bfloat16(-1.f), bfloat16(1.f), 1);
    Buffer<float> wf = Buffer<float>::random(ws, -0.5f, 0.5f, 2);
    Buffer<uint8_t> xq = Buffer<uint8_t>::random(xs, 0, 255, 1);
    Buffer<int8_t> wq = Buffer<int8_t>::random(ws, -128, 127, 2);
    if (int8) f(xq, wq, bias, y);
    else f(xb, wf, bias, y);
    auto input = [&](int64_t ch, int64_t yy, int64_t xx) -> double {
        if (yy < 0 || yy >= sh.H || xx < 0 || xx >= sh.W) return double(zero_point);
        return int8 ? double(xq(0, ch / sh.ib, yy, xx, ch % sh.ib)) : double(float(xb(0, ch / sh.ib, yy, xx, ch % sh.ib)));
    };
    auto weight = [&](int64_t o, int64_t ch, int64_t kh, int64_t kw) -> double {
        const int64_t a = o / sh.ob, b = ch / sh.ib, i = ch % sh.ib, j = o % sh.ob;
        return int8 ? double(wq(a, b, kh, kw, i, j)) : double(float(bfloat16(wf(a, b, kh, kw, i, j))));
    };
    int64_t wrong = 0;
    for (int64_t o = 0; o < sh.O; ++o)
        for (int64_t oy = 0; oy < c.OH; ++oy)
            for (int64_t ox = 0; ox < c.OW; ++ox) {
                double sum = 0, scale = 0;
                for (int64_t ch = 0; ch < sh.C; ++ch)
                    for (int64_t kh = 0; kh < sh.K; ++kh)
                        for (int64_t kw = 0; kw < sh.K; ++kw) {
                            const double v =
                                input(ch, oy * sh.stride + kh - sh.pad.top, ox * sh.stride + kw - sh.pad.left) * weight(o, ch, kh, kw);
                            sum += v;
                            scale += std::abs(v);
                        }
                const double want = std::max((int8 ? sum / 64 : sum) + double(bias(o / sh.ob, o % sh.ob)), 0.0);
                const double tol = int8 ? 1e-6 * std::abs(want) + 1e-6 : 1e-5 * scale + 1e-5;
                wrong += std::abs(y(0, o / sh.ob, oy, ox, o % sh.ob) - want) > tol;
            }
    CHECK(wrong == 0);
}

TEST_CASE("AMX convolutions match a double (bfloat16) and an exact (int8) reference") {
    if (skip_without_amx()) return;
    for (bool int8 : {false, true})
        for (const Shape& sh : kShapes) {
            CAPTURE(int8);
            CAPTURE(sh.K);
            CAPTURE(sh.W);
            check_against_reference(sh, int8, Target::host(), tiles_take(sh, int8));
        }
}

TEST_CASE("a convolution laid out for AMX tiles runs without them too (a target that lacks them)") {
    Target plain = Target::host();
    plain.features += ",-amx-tile,-amx-bf16,-amx-int8";
    for (bool int8 : {false, true})
        for (const Shape& sh : kShapes) {
            CAPTURE(int8);
            CAPTURE(sh.K);
            CAPTURE(sh.W);
            check_against_reference(sh, int8, plain, false);
        }
}
