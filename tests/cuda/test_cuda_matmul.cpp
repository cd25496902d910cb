// A tiled matmul for CUDA, TVM style: 64x64 tiles of C per block, 16x16 threads computing
// 4x4 each in registers (cache_write "local"), the A and B tiles of each step of k in
// shared memory (cache_read "shared"), fetched cooperatively by all threads of the block
// with float4 loads. Checks the generated CUDA C compiles with NVRTC for sm_90 and has the
// expected structure; running it needs a GPU (tests/cuda/*_gpu.cpp).
#include "cuda_emulator.hpp"
#include "cuda_test_util.hpp"

using namespace weft;
using namespace weft_cuda_test;

namespace {

struct TiledMatmul {
    Tensor A, B, C, AA, BB, CL;
    Schedule s;
};

// C[M, N] = A[M, K] * B[K, N] with 64x64 block tiles, 4x4 per thread, k steps of 16.
TiledMatmul tiled_matmul(int64_t M, int64_t N, int64_t K, bool double_buffer) {
    TiledMatmul m;
    m.A = placeholder({M, K}, f32, "A");
    m.B = placeholder({K, N}, f32, "B");
    IterVar k = reduce_axis(0, K, "k");
    m.C = compute({M, N}, [&](Expr i, Expr j) { return sum(m.A(i, k) * m.B(k, j), {k}); }, "C");
    Schedule& s = m.s;
    s = create_schedule(m.C);
    m.AA = s.cache_read(m.A, "shared", {m.C});
    m.BB = s.cache_read(m.B, "shared", {m.C});
    m.CL = s.cache_write(m.C, "local");
    // The output: blocks over 64x64 tiles, threads over 4x4 sub-tiles.
    auto [by, yi] = s[m.C].split(m.C.axis(0), 64);
    auto [bx, xi] = s[m.C].split(m.C.axis(1), 64);
    auto [ty, yii] = s[m.C].split(yi, 4);
    auto [tx, xii] = s[m.C].split(xi, 4);
    s[m.C].reorder({by, bx, ty, tx, yii, xii});
    s[m.C].bind(by, block_y());
    s[m.C].bind(bx, block_x());
    s[m.C].bind(ty, thread_y());
    s[m.C].bind(tx, thread_x());
    s[m.C].vectorize(xii);
    // The accumulator: per thread, over k in steps of 16.
    s[m.CL].compute_at(s[m.C], tx);
    IterVar kk = s[m.CL].op()->reduce_axis.at(0);
    auto [ko, ki] = s[m.CL].split(kk, 16);
    s[m.CL].reorder({ko, ki, s[m.CL].op()->axis[0], s[m.CL].op()->axis[1]});
    // The shared tiles, per step of k, fetched by all 256 threads, 4 floats each.
    for (Tensor t : {m.AA, m.BB}) {
        s[t].compute_at(s[m.CL], ko);
        IterVar fused = s[t].fuse(t.axis(0), t.axis(1));
        auto [rest, vec] = s[t].split(fused, 4);
        auto [rest2, fx] = s[t].split(rest, 16);
        auto [outer, fy] = s[t].split(rest2, 16);
        s[t].bind(fy, thread_y());
        s[t].bind(fx, thread_x());
        s[t].vectorize(vec);
        if (double_buffer) s[t].double_buffer();
    }
    return m;
}

}  // namespace

TEST_CASE("cuda matmul with shared tiles and a local accumulator compiles for sm_90") {
    if (!have_nvrtc()) return;
    TiledMatmul m = tiled_matmul(256, 512, 128, false);
    Kernel k;
    const DeviceCode& dc = build_cuda(k, m.s, {m.A, m.B, m.C});
    const std::string& src = dc.source;
    CHECK(contains(src, "extern \"C\" __global__ void __launch_bounds__(256) C("));
    CHECK(contains(src, "float* __restrict__ A"));
    CHECK(contains(src, "__shared__ __align__(16) float A_shared[1024]"));
    CHECK(contains(src, "__shared__ __align__(16) float B_shared[1024]"));
    CHECK(contains(src, "float C_local[16]"));
    // One barrier before the fetch (the previous step's reads) and one before the compute.
    CHECK(count(src, "__syncthreads();") == 2);
    CHECK(contains(src, "threadIdx.x"));
    CHECK(contains(src, "threadIdx.y"));
    CHECK(contains(src, "blockIdx.x"));
    CHECK(contains(src, "blockIdx.y"));
    CHECK(contains(src, "float4"));  // the fetches and the output store
    CHECK(const_of(dc.grid[0]) == 512 / 64);
    CHECK(const_of(dc.grid[1]) == 256 / 64);
    CHECK(const_of(dc.block[0]) == 16);
    CHECK(const_of(dc.block[1]) == 16);
    CHECK(const_of(dc.block[2]) == 1);
    CHECK(dc.dynamic_shared_bytes == 0);
    CHECK(k.compile_ms() > 0);
}

TEST_CASE("cuda matmul with double-buffered shared tiles has one barrier per step of k") {
    if (!have_nvrtc()) return;
    TiledMatmul m = tiled_matmul(256, 256, 128, true);
    Kernel k;
    const DeviceCode& dc = build_cuda(k, m.s, {m.A, m.B, m.C});
    const std::string& src = dc.source;
    CHECK(contains(src, "__shared__ __align__(16) float A_shared[2048]"));
    CHECK(contains(src, "__shared__ __align__(16) float B_shared[2048]"));
    // One barrier in the k loop and one after the first tiles' fetch.
    CHECK(count(src, "__syncthreads();") == 2);
    CHECK(contains(src, "double buffer"));
}

TEST_CASE("cuda matmul kernels compute the matrix product on the CPU emulation of CUDA threads") {
    if (!have_nvrtc()) return;
    const int64_t M = 128, N = 64, K = 48;
    auto a = Buffer<float>::random({M, K}, -1, 1, 11), b = Buffer<float>::random({K, N}, -1, 1, 12);
    std::vector<double> want(size_t(M * N), 0.0);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k)
            for (int64_t j = 0; j < N; ++j) want[size_t(i * N + j)] += double(a.data()[i * K + k]) * b.data()[k * N + j];
    for (bool double_buffer : {false, true}) {
        CAPTURE(double_buffer);
        TiledMatmul m = tiled_matmul(M, N, K, double_buffer);
        Kernel k;
        build_cuda(k, m.s, {m.A, m.B, m.C});
        auto emu = emulate(k);
        if (!emu) return;
        Buffer<float> c({M, N});
        emu->run({a.data(), b.data(), c.data()});
        double worst = 0;
        for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(c.data()[i] - want[i]));
        CHECK(worst < 1e-4);
    }
}
