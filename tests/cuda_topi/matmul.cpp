// topi::cuda::schedule_matmul / dense / batch_matmul: the tiled kernels (shared tiles of A
// and B fetched by all threads, double-buffered, register tiles) compile for sm_90, and
// shapes no tile divides (primes, 1) fall back to a kernel that is correct for any shape.
// With a GPU, every kernel matches the CPU build on random data.
#include "cuda_topi_util.hpp"

using namespace cuda_topi_test;

namespace {

Compiled check_matmul(int64_t M, int64_t N, int64_t K) {
    INFO("matmul " << M << " x " << N << " x " << K);
    Tensor a = placeholder({M, K}, f32, "A"), b = placeholder({K, N}, f32, "B");
    Tensor c = topi::matmul(a, b);
    Schedule s = create_schedule(c);
    topi::cuda::schedule_matmul(s, c);
    return check_float_kernel(s, {a, b}, c, 1e-4, 1e-4);
}

}  // namespace

TEST_CASE("matmul 64x192x256: block tiles of 64 rows and whole CPU panels in shared memory, double-buffered, 4x4 per thread") {
    // (The CPU compute packs B in panels of 64 columns, or of 48 where its register tile of
    // 8 rows then divides M, as here with AVX-512: the GPU's column tile holds whole panels.)
    Compiled k = check_matmul(64, 192, 256);
    CHECK(count(k.source, "__shared__") == 2);
    CHECK(count(k.source, "__syncthreads()") >= 1);
    CHECK(count(k.source, "threadIdx.y") >= 1);
    CHECK(count(k.source, "blockIdx.y") == 1);
    CHECK(count(k.source, "float4") >= 2);         // vectorized fetch of A and store of C
    CHECK(count(k.source, "% 2) * ") >= 2);        // the double buffer's two halves
    CHECK(count(k.source, "float matmul_local[16]") == 1);
}

TEST_CASE("matmul 512x256x64: 64x64 tiles of 128 threads with 8x4 per thread in steps of 16") {
    Compiled k = check_matmul(512, 256, 64);
    CHECK(count(k.source, "float matmul_local[32]") == 1);
    CHECK(count(k.source, "__launch_bounds__(128)") == 1);
    CHECK(count(k.source, "float A_shared[2048]") == 1);  // 64 x 16, twice (double-buffered)
}

TEST_CASE("matmul shapes a tile does not divide: primes and 1") {
    check_matmul(37, 53, 29);
    check_matmul(1, 1, 1);
    check_matmul(1, 64, 128);   // one row (GEMV): one thread per output
    check_matmul(97, 1, 31);
    Compiled k = check_matmul(48, 128, 24);  // 16 x 64 tiles, K in steps of 8
    CHECK(count(k.source, "__shared__") == 2);
}

TEST_CASE("dense with bias and batch_matmul") {
    // N = 128: whole panels of the CPU's packed weight (its width is 32 or 64 by the host).
    Tensor x = placeholder({64, 48}, f32, "x"), w = placeholder({128, 48}, f32, "w"), bias = placeholder({128}, f32, "bias");
    Tensor d = topi::dense(x, w, bias);
    Tensor out = topi::relu(d);
    Schedule s = create_schedule(out);
    topi::cuda::schedule(s, d, out);
    Compiled k = check_float_kernel(s, {x, w, bias}, out, 1e-4, 1e-4);
    CHECK(count(k.source, "__shared__") == 2);

    Tensor a = placeholder({3, 32, 48}, f32, "a"), b = placeholder({3, 48, 64}, f32, "b");
    Tensor c = topi::batch_matmul(a, b);
    Schedule s2 = create_schedule(c);
    topi::cuda::schedule_batch_matmul(s2, c);
    Compiled k2 = check_float_kernel(s2, {a, b}, c, 1e-4, 1e-4);
    CHECK(count(k2.source, "blockIdx.z") >= 1);

    // A dense whose N is not whole panels: the untiled kernel, with the epilogue.
    Tensor w5 = placeholder({37, 48}, f32, "w5"), b5 = placeholder({37}, f32, "b5");
    Tensor d5 = topi::dense(x, w5, b5);
    Tensor o5 = topi::relu(d5);
    Schedule s5 = create_schedule(o5);
    topi::cuda::schedule_dense(s5, d5, o5);
    check_float_kernel(s5, {x, w5, b5}, o5, 1e-4, 1e-4);

    Tensor a3 = placeholder({2, 33, 17}, f32, "a3"), b3 = placeholder({2, 17, 5}, f32, "b3");
    Tensor c3 = topi::batch_matmul(a3, b3);
    Schedule s3 = create_schedule(c3);
    topi::cuda::schedule(s3, c3);
    check_float_kernel(s3, {a3, b3}, c3, 1e-4, 1e-4);
}
