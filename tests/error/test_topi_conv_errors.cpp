// topi conv and pooling: each mistake in shapes or attributes is a weft::Error that names
// the operator and what did not fit.
#include <doctest/doctest.h>

#include "weft/topi/conv.hpp"
#include "weft/weft.hpp"

using namespace weft;
using doctest::Contains;
using topi::Conv2dParams;

TEST_CASE("conv2d_nchw: ranks and channel counts are checked") {
    Tensor X = placeholder({1, 6, 8, 8}, f32, "X");
    CHECK_THROWS_WITH_AS(topi::conv2d_nchw(placeholder({6, 8, 8}, f32, "X3"), placeholder({4, 6, 3, 3}, f32, "W")),
                         Contains("conv2d_nchw 'conv2d_nchw': data [N, C, H, W] must have 4 dimensions but 'X3' has 3"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchw(X, placeholder({4, 5, 3, 3}, f32, "W")),
                         Contains("dimension 1 (C/groups) of 'W' must be 6 (input channels / groups) but is 5"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchw(X, placeholder({4, 6, 3, 3}, f64, "W")),
                         Contains("'X' is float32 but 'W' is float64"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchw(placeholder({1, 6, 8, 8}, i32, "Xi"), placeholder({4, 6, 3, 3}, i32, "W")),
                         Contains("'Xi' must have a float dtype, got int32"), weft::Error);
    Var h("h");
    CHECK_THROWS_WITH_AS(topi::conv2d_nchw(placeholder({1, 6, h, 8}, f32, "Xs"), placeholder({4, 6, 3, 3}, f32, "W")),
                         Contains("dimension 2 of 'Xs' must be a constant"), weft::Error);
}

TEST_CASE("conv2d_nchw: groups stride dilation and padding are checked") {
    Tensor X = placeholder({1, 6, 8, 8}, f32, "X");
    Tensor W = placeholder({4, 6, 3, 3}, f32, "W");
    CHECK_THROWS_WITH_AS(topi::conv2d_nchw(X, placeholder({5, 2, 3, 3}, f32, "Wg"), {.groups = 3}),
                         Contains("groups (3) must divide the input channels (6) and the output channels (5)"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchw(X, W, {.groups = 0}), Contains("groups must be positive, got 0"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchw(X, W, {.stride = {0, 1}}), Contains("stride must be positive, got 0x1"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchw(X, W, {.dilation = {1, -2}}), Contains("dilation must be positive"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchw(X, W, {.padding = {0, -1, 0, 0}}),
                         Contains("padding must not be negative, got top 0 left -1 bottom 0 right 0"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchw(X, W, {.dilation = {4, 1}}),
                         Contains("the height window (3 taps, dilation 4, so 9 wide) does not fit in the padded input (8 + 0 + 0)"),
                         weft::Error);
}

TEST_CASE("depthwise and bias_add: weight and bias shapes are checked") {
    Tensor X = placeholder({1, 6, 8, 8}, f32, "X");
    CHECK_THROWS_WITH_AS(topi::depthwise_conv2d_nchw(X, placeholder({6, 2, 3, 3}, f32, "W")),
                         Contains("dimension 1 of 'W' must be 1 (one input channel per group) but is 2"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::depthwise_conv2d_nchw(X, placeholder({9, 1, 3, 3}, f32, "W")),
                         Contains("dimension 0 of 'W' (9) must be a multiple of the input channels (6)"), weft::Error);
    Tensor conv = topi::conv2d_nchw(X, placeholder({4, 6, 3, 3}, f32, "W"));
    CHECK_THROWS_WITH_AS(topi::bias_add_nchw(conv, placeholder({5}, f32, "B")),
                         Contains("bias_add_nchw 'bias_add': dimension 0 of 'B' must be 4 (the output channels) but is 5"),
                         weft::Error);
}

TEST_CASE("conv2d_nchwc: blocks and groups are checked") {
    Tensor X = placeholder({1, 2, 8, 8, 8}, f32, "X");
    CHECK_THROWS_WITH_AS(topi::conv2d_nchwc(X, placeholder({2, 3, 3, 3, 8, 16}, f32, "W")),
                         Contains("dimension 1 (C/weight_ic_bn) of 'W' must be 2 (the data's 16 input channels in "
                                  "blocks of 8) but is 3"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchwc(X, placeholder({2, 2, 3, 3, 16, 16}, f32, "W")),
                         Contains("dimension 1 (C/weight_ic_bn) of 'W' must be 1 (the data's 16 input channels in "
                                  "blocks of 16) but is 2"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchwc(X, placeholder({2, 2, 3, 3, 4, 16}, f32, "W")),
                         Contains("dimension 4 (weight_ic_bn) of 'W' must be a multiple of 8 (the input channel block "
                                  "of the data) but is 4"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchwc_weight_ic_bn(0, 16, 7, {}), Contains("must be positive"), weft::Error);
    // Groups of whole blocks: 2 groups of one input block each (weights [O/16, 1, ...]).
    CHECK_NOTHROW(topi::conv2d_nchwc(X, placeholder({2, 1, 3, 3, 8, 16}, f32, "W"), {.groups = 2}));
    CHECK_THROWS_WITH_AS(topi::conv2d_nchwc(X, placeholder({2, 2, 3, 3, 8, 16}, f32, "W"), {.groups = 2}),
                         Contains("dimension 1 (C/weight_ic_bn per group) of 'W' must be 1"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchwc(X, placeholder({3, 1, 3, 3, 8, 16}, f32, "W"), {.groups = 3}),
                         Contains("3 groups need the data's 2 input blocks and the weight's 3 output blocks in whole "
                                  "groups"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_nchwc(X, placeholder({2, 1, 3, 3, 8, 16}, f32, "W"), {.groups = 0}),
                         Contains("groups must be positive"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::depthwise_conv2d_nchwc(X, placeholder({2, 1, 3, 3, 1, 4}, f32, "W")),
                         Contains("dimension 5 (bn) of 'W' must be 8"), weft::Error);
    Tensor conv = topi::conv2d_nchwc(X, placeholder({2, 2, 3, 3, 8, 16}, f32, "W"));
    CHECK_THROWS_WITH_AS(topi::bias_add_nchwc(conv, placeholder({2, 8}, f32, "B")),
                         Contains("dimension 1 of 'B' must be 16 (the output channel block) but is 8"), weft::Error);
}

TEST_CASE("layout transforms: block sizes and channel counts are checked") {
    Tensor X = placeholder({1, 6, 8, 8}, f32, "X");
    CHECK_THROWS_WITH_AS(topi::layout_transform_nchw_to_nchwc(X, 0), Contains("the channel block size must be positive, got 0"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::pack_conv2d_weight_nchwc(placeholder({4, 6, 3, 3}, f32, "W"), 4, -1),
                         Contains("the output channel block size must be positive, got -1"), weft::Error);
    Tensor Xc = placeholder({1, 2, 8, 8, 4}, f32, "Xc");
    CHECK_THROWS_WITH_AS(topi::layout_transform_nchwc_to_nchw(Xc, 9),
                         Contains("channels must be in [1, 8] (the blocks of 'Xc' hold 8), got 9"), weft::Error);
}

TEST_CASE("pooling: kernel and padding are checked") {
    Tensor X = placeholder({1, 3, 8, 8}, f32, "X");
    CHECK_THROWS_WITH_AS(topi::max_pool2d(X, {.kernel = {0, 2}}), Contains("max_pool2d 'max_pool2d': the kernel must be at least 1x1, got 0x2"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::avg_pool2d(X, {.kernel = {2, 2}, .padding = {2, 0, 0, 0}}),
                         Contains("padding must be smaller than the window (2x2)"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::max_pool2d(X, {.kernel = {9, 2}}), Contains("does not fit in the padded input (8 + 0 + 0)"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::global_avg_pool2d(placeholder({3, 8, 8}, f32, "X3")),
                         Contains("data [N, C, H, W] must have 4 dimensions but 'X3' has 3"), weft::Error);
}

TEST_CASE("schedules: out must be the operator or an element-wise epilogue of its shape") {
    Tensor X = placeholder({1, 6, 8, 8}, f32, "X");
    Tensor conv = topi::conv2d_nchw(X, placeholder({4, 6, 3, 3}, f32, "W"));
    Tensor other = compute({1, 4, 3, 3}, [&](Expr n, Expr c, Expr y, Expr x) { return conv(n, c, y, x); }, "crop");
    Schedule s = create_schedule(other);
    CHECK_THROWS_WITH_AS(topi::schedule_conv2d_nchw(s, conv, other),
                         Contains("the epilogue 'crop' must have the shape of 'conv2d_nchw' (dimension 2 is 3, not 6)"),
                         weft::Error);
    Schedule s2 = create_schedule(conv);
    CHECK_THROWS_WITH_AS(topi::schedule_pool2d(s2, conv), Contains("schedule_pool2d: 'conv2d_nchw' is not the output of max_pool2d"), weft::Error);
}
