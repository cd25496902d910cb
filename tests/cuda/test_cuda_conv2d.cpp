// A direct conv2d (NCHW, 3x3, padding 1) for CUDA: blocks over 8x8 output tiles of one
// output channel, one thread per output pixel accumulating in a register, and per step of
// 4 input channels the padded input tile (4x10x10, computed from the input with the
// padding inlined) and the filter slice in shared memory, fetched by all 64 threads.
#include "cuda_emulator.hpp"
#include "cuda_test_util.hpp"

using namespace weft;
using namespace weft_cuda_test;

namespace {

struct Conv2d {
    Tensor X, Wt, Y;
    Schedule s;
};

// Y[N, K, H, W] = conv2d(X[N, C, H, W], W[K, C, 3, 3]), padding 1, stride 1.
Conv2d conv2d_schedule(int64_t N, int64_t C, int64_t H, int64_t W, int64_t K) {
    const int64_t R = 3;
    Tensor X = placeholder({N, C, H, W}, f32, "X");
    Tensor Wt = placeholder({K, C, R, R}, f32, "W");
    Tensor P = compute({N, C, H + 2, W + 2}, [&](Expr n, Expr c, Expr y, Expr x) {
        return if_then_else(y >= 1 && y < H + 1 && x >= 1 && x < W + 1, X(n, c, y - 1, x - 1), Expr(0.0f));
    }, "P");
    IterVar rc = reduce_axis(0, C, "rc"), ry = reduce_axis(0, R, "ry"), rx = reduce_axis(0, R, "rx");
    Tensor Y = compute({N, K, H, W}, [&](Expr n, Expr f, Expr y, Expr x) {
        return sum(P(n, rc, y + ry, x + rx) * Wt(f, rc, ry, rx), {rc, ry, rx});
    }, "Y");
    Schedule s = create_schedule(Y);
    Tensor PS = s.cache_read(P, "shared", {Y});
    Tensor WS = s.cache_read(Wt, "shared", {Y});
    s[P].compute_inline();
    Tensor YL = s.cache_write(Y, "local");
    // Output: blockIdx.z over (n, f), blockIdx.y/x over 8x8 tiles, one thread per pixel.
    IterVar nf = s[Y].fuse(Y.axis(0), Y.axis(1));
    auto [yo, yi] = s[Y].split(Y.axis(2), 8);
    auto [xo, xi] = s[Y].split(Y.axis(3), 8);
    s[Y].reorder({nf, yo, xo, yi, xi});
    s[Y].bind(nf, block_z());
    s[Y].bind(yo, block_y());
    s[Y].bind(xo, block_x());
    s[Y].bind(yi, thread_y());
    s[Y].bind(xi, thread_x());
    // The accumulator: per thread, channels in steps of 4.
    s[YL].compute_at(s[Y], xi);
    auto& red = s[YL].op()->reduce_axis;
    auto [rco, rci] = s[YL].split(red.at(0), 4);
    s[YL].reorder({rco, rci, red.at(1), red.at(2)});
    // The tiles, fetched cooperatively by the 8x8 threads (the input tile's 400 elements in
    // 7 rounds, the last one guarded).
    for (Tensor t : {PS, WS}) {
        s[t].compute_at(s[YL], rco);
        auto& ax = t.op()->axis;
        IterVar f = s[t].fuse(s[t].fuse(s[t].fuse(ax[0], ax[1]), ax[2]), ax[3]);
        auto [rest, fx] = s[t].split(f, 8);
        auto [outer, fy] = s[t].split(rest, 8);
        s[t].bind(fy, thread_y());
        s[t].bind(fx, thread_x());
    }
    return {X, Wt, Y, s};
}

}  // namespace

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
