// A direct conv2d (NCHW, 3x3, padding 1) for CUDA: blocks over 8x8 output tiles of one
// output channel, one thread per output pixel accumulating in a register, and per step of
// 4 input channels the padded input tile (4x10x10, computed from the input with the
// padding inlined) and the filter slice in shared memory, fetched by all 64 threads.
#include "cuda_emulator.hpp"
#include "cuda_schedules.hpp"
#include "cuda_test_util.hpp"

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
    double worst = 0;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t f = 0; f < K; ++f)
            for (int64_t i = 0; i < H; ++i)
                for (int64_t j = 0; j < W; ++j) {
                    double want = 0;
                    for (int64_t c = 0; c < C; ++c)
                        for (int64_t dy = 0; dy < R; ++dy)
                            for (int64_t dx = 0; dx < R; ++dx) {
                                int64_t yy = i + dy - 1, xx = j + dx - 1;
                                if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                                want += double(x.data()[((n * C + c) * H + yy) * W + xx]) * w.data()[((f * C + c) * R + dy) * R + dx];
                            }
                    worst = std::max(worst, std::abs(y.data()[((n * K + f) * H + i) * W + j] - want));
                }
    CHECK(worst < 1e-4);
}
