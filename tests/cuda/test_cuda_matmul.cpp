// A tiled matmul for CUDA, TVM style: 64x64 tiles of C per block, 16x16 threads computing
// 4x4 each in registers (cache_write "local"), the A and B tiles of each step of k in
// shared memory (cache_read "shared"), fetched cooperatively by all threads of the block
// with float4 loads. Checks the generated CUDA C compiles with NVRTC for sm_90 and has the
// expected structure; running it needs a GPU (tests/cuda/*_gpu.cpp).
#include "cuda_emulator.hpp"
#include "cuda_schedules.hpp"
#include "cuda_test_util.hpp"

using namespace weft;
using namespace weft_cuda_test;

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
