// conv2d_nchw and depthwise_conv2d_nchw with their default schedules against the naive
// reference: random shapes and attributes (odd sizes, stride, dilation, groups, asymmetric
// padding) and the fused bias + relu epilogue.
#include "conv_reference.hpp"

using namespace weft;
using namespace conv_test;

namespace {

struct ConvCase {
    int64_t N, C, H, W, O, KH, KW;
    Conv2dParams p;
};

// Runs conv2d_nchw (with bias + relu fused when `epilogue`) and compares with the reference.
void check_conv2d_nchw(const ConvCase& k, bool epilogue, uint64_t seed) {
    CAPTURE(k.N); CAPTURE(k.C); CAPTURE(k.H); CAPTURE(k.W); CAPTURE(k.O); CAPTURE(k.KH); CAPTURE(k.KW);
    CAPTURE(k.p.stride.h); CAPTURE(k.p.stride.w); CAPTURE(k.p.dilation.h); CAPTURE(k.p.dilation.w);
    CAPTURE(k.p.padding.top); CAPTURE(k.p.padding.left); CAPTURE(k.p.padding.bottom); CAPTURE(k.p.padding.right);
    CAPTURE(k.p.groups);
    Tensor X = placeholder({k.N, k.C, k.H, k.W}, f32, "X");
    Tensor Wt = placeholder({k.O, k.C / k.p.groups, k.KH, k.KW}, f32, "W");
    Tensor B = placeholder({k.O}, f32, "B");
    Tensor conv = topi::conv2d_nchw(X, Wt, k.p);
    Tensor out = epilogue ? topi::bias_add_nchw(conv, B, true) : conv;
    Schedule s = create_schedule(out);
    topi::schedule_conv2d_nchw(s, conv, out);
    Kernel kern = epilogue ? build(s, {X, Wt, B, out}) : build(s, {X, Wt, out});

    auto x = random_buffer({k.N, k.C, k.H, k.W}, seed), w = random_buffer({k.O, k.C / k.p.groups, k.KH, k.KW}, seed + 1);
    auto b = random_buffer({k.O}, seed + 2);
    Buffer<float> y(shape_of(out));
    if (epilogue) kern(x, w, b, y);
    else kern(x, w, y);
    auto want = ref_conv2d(x, w, k.p, epilogue ? b.data() : nullptr, epilogue);
    REQUIRE(int64_t(want.size()) == y.size());
    CHECK(max_rel_error(y.data(), want) < 1e-4);
}

}  // namespace

TEST_CASE("conv2d_nchw: ResNet-like 3x3 pad 1 and 1x1") {
    check_conv2d_nchw({1, 8, 9, 9, 16, 3, 3, {.padding = topi::Pad2d::all(1)}}, false, 1);
    check_conv2d_nchw({2, 5, 7, 37, 6, 1, 1, {}}, false, 2);
}

TEST_CASE("conv2d_nchw: random shapes and attributes") {
    Dice dice(7);
    for (int i = 0; i < 8; ++i) {
        ConvCase k{};
        k.p.groups = dice(1, 3);
        k.N = dice(1, 2);
        k.C = k.p.groups * dice(1, 4);
        k.O = k.p.groups * dice(1, 5);
        k.KH = dice(1, 3);
        k.KW = dice(1, 3);
        k.p.stride = {dice(1, 2), dice(1, 2)};
        k.p.dilation = {dice(1, 2), dice(1, 2)};
        k.p.padding = {dice(0, 2), dice(0, 2), dice(0, 2), dice(0, 1)};
        k.H = dice(1, 11) + (k.KH - 1) * k.p.dilation.h;
        k.W = dice(1, 23) + (k.KW - 1) * k.p.dilation.w;
        check_conv2d_nchw(k, i % 3 == 0, 100 + uint64_t(i));
    }
}

TEST_CASE("depthwise_conv2d_nchw: pad 1 stride 1 and 2 with a channel multiplier") {
    for (int64_t stride : {1, 2}) {
        for (int64_t mult : {1, 2}) {
            const int64_t N = 1, C = 3, H = 13, W = 19;
            Conv2dParams p{.stride = {stride, stride}, .padding = topi::Pad2d::all(1)};
            Tensor X = placeholder({N, C, H, W}, f32, "X");
            Tensor Wt = placeholder({C * mult, 1, 3, 3}, f32, "W");
            Tensor out = topi::depthwise_conv2d_nchw(X, Wt, p);
            Schedule s = create_schedule(out);
            topi::schedule_depthwise_conv2d_nchw(s, out);
            Kernel kern = build(s, {X, Wt, out});
            auto x = random_buffer({N, C, H, W}, 11), w = random_buffer({C * mult, 1, 3, 3}, 12);
            const int64_t OH = out_extent(H, 3, stride, 1, 1, 1), OW = out_extent(W, 3, stride, 1, 1, 1);
            Buffer<float> y({N, C * mult, OH, OW});
            kern(x, w, y);
            p.groups = C;
            CHECK(max_rel_error(y.data(), ref_conv2d(x, w, p)) < 1e-4);
        }
    }
}
