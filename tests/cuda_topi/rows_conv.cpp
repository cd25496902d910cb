// topi::cuda::schedule_softmax / log_softmax / layer_norm (one block per row, statistics
// split across the threads through shared memory) and schedule_conv2d_nchw (shared tiles of
// the padded input and the weights): compile for sm_90; with a GPU, match the CPU build.
#include "cuda_topi_util.hpp"

using namespace cuda_topi_test;

TEST_CASE("softmax and log_softmax: a block per row, shared partial results, barriers") {
    Tensor x = placeholder({50, 1000}, f32, "x");
    Tensor y = topi::softmax(x);
    Schedule s = create_schedule(y);
    topi::cuda::schedule_softmax(s, y);
    Compiled k = check_float_kernel(s, {x}, y, 1e-5, 1e-7);
    CHECK(count(k.source, "__shared__") >= 1);
    CHECK(count(k.source, "__syncthreads()") >= 2);
    CHECK(count(k.source, "blockIdx.x") >= 1);

    Tensor z = topi::log_softmax(x);
    Schedule s2 = create_schedule(z);
    topi::cuda::schedule(s2, z);
    check_float_kernel(s2, {x}, z, 1e-5, 1e-5);
}

TEST_CASE("softmax along a middle axis of odd length") {
    Tensor x = placeholder({3, 37, 5}, f32, "x");
    Tensor y = topi::softmax(x, 1);
    Schedule s = create_schedule(y);
    topi::cuda::schedule(s, y);
    check_float_kernel(s, {x}, y, 1e-5, 1e-7);
}

TEST_CASE("layer_norm over the last axis") {
    Tensor x = placeholder({24, 768}, f32, "x"), g = placeholder({768}, f32, "g"), b = placeholder({768}, f32, "b");
    Tensor y = topi::layer_norm(x, g, b);
    Schedule s = create_schedule(y);
    topi::cuda::schedule(s, y);
    Compiled k = check_float_kernel(s, {x, g, b}, y, 1e-4, 1e-5);
    CHECK(count(k.source, "__syncthreads()") >= 2);
}

TEST_CASE("layer_norm over the last two axes with a ReLU epilogue") {
    Tensor x = placeholder({6, 12, 40}, f32, "x"), g = placeholder({12, 40}, f32, "g"), b = placeholder({12, 40}, f32, "b");
    Tensor y = topi::layer_norm(x, g, b);
    Tensor out = topi::relu(y);
    Schedule s = create_schedule(out);
    topi::cuda::schedule(s, y, out);
    check_float_kernel(s, {x, g, b}, out, 1e-4, 1e-5);
}

namespace {

Compiled check_conv(int64_t N, int64_t C, int64_t H, int64_t W, int64_t O, int64_t KH, topi::Conv2dParams p, bool relu) {
    INFO("conv2d " << N << "x" << C << "x" << H << "x" << W << " -> " << O << " k" << KH << " stride " << p.stride.h
                   << " groups " << p.groups);
    Tensor x = placeholder({N, C, H, W}, f32, "x"), w = placeholder({O, C / p.groups, KH, KH}, f32, "w");
    Tensor y = topi::conv2d_nchw(x, w, p);
    Tensor out = relu ? topi::relu(y) : y;
    Schedule s = create_schedule(out);
    topi::cuda::schedule(s, y, out);
    return check_float_kernel(s, {x, w}, out, 1e-4, 1e-4);
}

}  // namespace

TEST_CASE("conv2d NCHW: shared tiles of input and weights, 3-D thread blocks") {
    topi::Conv2dParams p;
    p.padding = topi::Pad2d::all(1);
    Compiled k = check_conv(1, 16, 14, 14, 32, 3, p, true);
    CHECK(count(k.source, "__shared__") == 2);
    CHECK(count(k.source, "threadIdx.z") >= 1);
    CHECK(count(k.source, "__syncthreads()") >= 1);
}

TEST_CASE("conv2d NCHW: 8 channels of several pixels per thread where the blocks fill the GPU") {
    topi::Conv2dParams p;
    p.padding = topi::Pad2d::all(1);
    // 3x3 over 28 rows: 4 rows per thread (8 x 4 accumulators), 4 groups of 8 channels.
    Compiled rows = check_conv(4, 4, 28, 28, 160, 3, p, true);
    CHECK(count(rows.source, "float conv2d_nchw[32]") == 1);  // (with the ReLU the conv is the local stage)
    // 1x1 over rows 14 wide: 2 columns per thread (8 x 2), steps of 16 input channels.
    Compiled cols = check_conv(2, 16, 14, 14, 1024, 1, {}, false);
    CHECK(count(cols.source, "float conv2d_nchw_local[16]") == 1);
    CHECK(count(cols.source, "float x_shared[") == 1);
    // A convolution too small for that many blocks (batch 1, 7 x 7 pixels) takes small tiles.
    Compiled small = check_conv(1, 16, 7, 7, 64, 1, {}, false);
    CHECK(count(small.source, "float conv2d_nchw_local[2]") == 1);
    // The window steps are read off the compute: a 3x3 window dilated by 2 with stride 2
    // fetches patches with those gaps and still matches the CPU.
    topi::Conv2dParams sd;
    sd.stride = {2, 2};
    sd.dilation = {2, 2};
    sd.padding = topi::Pad2d::all(2);
    check_conv(2, 16, 56, 56, 16, 3, sd, false);
}

TEST_CASE("conv2d NCHW: stride, dilation, groups, depthwise, odd sizes") {
    topi::Conv2dParams p;
    p.stride = {2, 2};
    p.padding = {3, 3, 3, 3};
    check_conv(2, 3, 23, 19, 8, 7, p, false);
    topi::Conv2dParams d;
    d.dilation = {2, 2};
    d.padding = topi::Pad2d::all(2);
    check_conv(1, 8, 11, 13, 12, 3, d, false);
    topi::Conv2dParams g;
    g.groups = 4;
    g.padding = topi::Pad2d::all(1);
    check_conv(1, 8, 9, 9, 12, 3, g, true);
    // ResNet's strided convolutions: 3x3 stride 2 and the 1x1 stride-2 downsample, whose
    // output width is one block of threads (a block loop that runs once).
    topi::Conv2dParams s2;
    s2.stride = {2, 2};
    s2.padding = topi::Pad2d::all(1);
    check_conv(1, 16, 28, 28, 16, 3, s2, true);
    topi::Conv2dParams ds;
    ds.stride = {2, 2};
    check_conv(2, 16, 28, 28, 32, 1, ds, false);
    topi::Conv2dParams dw;
    dw.groups = 16;
    dw.padding = topi::Pad2d::all(1);
    check_conv(1, 16, 17, 17, 16, 3, dw, false);
}
