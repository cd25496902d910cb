// A direct conv2d (NCHW, 3x3, padding 1) for CUDA: blocks over 8x8 output tiles of one
// output channel, one thread per output pixel accumulating in a register, and per step of
// 4 input channels the padded input tile (4x10x10, computed from the input with the
// padding inlined) and the filter slice in shared memory, fetched by all 64 threads.
#include "cuda_emulator.hpp"
#include "cuda_schedules.hpp"
#include "cuda_test_util.hpp"
#include "e2e/reference.hpp"

using namespace weft;
using namespace weft_cuda_test;

TEST_CASE("cuda conv2d with shared input and filter tiles compiles for sm_90") {
    if (!have_nvrtc()) return;
    const int64_t N = 1, C = 16, H = 32, W = 32, K = 32;
    auto [X, Wt, Y, s] = conv2d_schedule(N, C, H, W, K);
    Kernel kern;
    const DeviceCode& dc = build_cuda(kern, s, {X, Wt, Y});
    const std::string& src = dc.source;
    CHECK(contains(src, "__launch_bounds__(64)"));
    CHECK(contains(src, "__shared__ __align__(16) float P_shared[400]"));
    CHECK(contains(src, "__shared__ __align__(16) float W_shared[36]"));
    CHECK(contains(src, "float Y_local[1]"));
    CHECK(count(src, "__syncthreads();") == 2);
    CHECK(contains(src, "blockIdx.z"));
    CHECK(const_of(dc.grid[2]) == N * K);
    CHECK(const_of(dc.grid[1]) == H / 8);
    CHECK(const_of(dc.block[1]) == 8);
}

TEST_CASE("cuda conv2d computes the convolution on the CPU emulation of CUDA threads") {
    if (!have_nvrtc()) return;
    const int64_t N = 2, C = 8, H = 16, W = 8, K = 3, R = 3;
    auto [X, Wt, Y, s] = conv2d_schedule(N, C, H, W, K);
    Kernel kern;
    build_cuda(kern, s, {X, Wt, Y});
    auto emu = emulate(kern);
    if (!emu) return;
    auto x = Buffer<float>::random({N, C, H, W}, -1, 1, 21), w = Buffer<float>::random({K, C, R, R}, -1, 1, 22);
    Buffer<float> y({N, K, H, W});
    emu->run({x.data(), w.data(), y.data()});
    std::vector<float> want = weft_test::ref_conv2d_nchw(x, w, (R - 1) / 2);  // "same" padding
    REQUIRE(int64_t(want.size()) == y.size());
    double worst = 0;
    for (int64_t i = 0; i < y.size(); ++i) worst = std::max(worst, double(std::abs(y.data()[i] - want[size_t(i)])));
    CHECK(worst < 1e-4);
}
