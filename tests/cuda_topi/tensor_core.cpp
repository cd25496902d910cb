// Tensor cores: a float16 / bfloat16 matmul whose 16x8x16 steps are tensorized onto the
// per-lane mma.sync intrinsic (topi::cuda::mma_m16n8k16). The CUDA C carries the inline PTX
// and compiles for sm_90; with a GPU, the product matches a float64 reference on random
// inputs that float16 and bfloat16 represent exactly (multiples of 1/8 in [-2, 2]), so the
// float32 result is exact too.
#include <cstring>
#include <random>

#include "cuda_topi_util.hpp"

using namespace cuda_topi_test;

namespace {

// The 16-bit pattern of x, which must be exactly representable (small multiples of 1/8).
uint16_t bits_of(float x, DataType t) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if (t == bf16) return uint16_t(u >> 16);
    if (x == 0) return uint16_t((u >> 16) & 0x8000);
    uint32_t sign = (u >> 16) & 0x8000, exp = (u >> 23) & 0xff, mant = u & 0x7fffff;
    return uint16_t(sign | ((exp - 127 + 15) << 10) | (mant >> 13));
}

void check_tensorcore_matmul(int64_t M, int64_t N, int64_t K, DataType t) {
    INFO("tensor-core matmul " << M << " x " << N << " x " << K << " " << t.str());
    Tensor a = placeholder({M, K}, t, "A"), b = placeholder({K, N}, t, "B");
    Tensor c = topi::cuda::matmul_tensorcore(a, b);
    Schedule s = create_schedule(c);
    topi::cuda::schedule_matmul_tensorcore(s, c);
    Compiled k = compile(s, {a, b, c});
    const std::string type = t == f16 ? "f16" : "bf16";
    CHECK(count(k.source, "mma.sync.aligned.m16n8k16.row.col.f32." + type + "." + type + ".f32") >= 1);
    CHECK(count(k.source, "__shared__") == 2);
    CHECK(count(k.source, "__syncthreads()") >= 1);
    CHECK(count(k.ptx, "mma.sync.aligned.m16n8k16") >= 1);
    if (!have_gpu()) return report_no_gpu();  // (the emulator runs no float16 or mma)
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> eighths(-16, 16);
    std::vector<float> av(size_t(M * K)), bv(size_t(K * N));
    for (auto& v : av) v = float(eighths(rng)) / 8;
    for (auto& v : bv) v = float(eighths(rng)) / 8;
    BufferRef ah = BufferRef::allocate(t, {M, K}), bh = BufferRef::allocate(t, {K, N});
    for (size_t i = 0; i < av.size(); ++i) static_cast<uint16_t*>(ah.data())[i] = bits_of(av[i], t);
    for (size_t i = 0; i < bv.size(); ++i) static_cast<uint16_t*>(bh.data())[i] = bits_of(bv[i], t);
    BufferRef ad = ah.copy_to(Device::cuda(0)), bd = bh.copy_to(Device::cuda(0));
    BufferRef cd = BufferRef::allocate(f32, {M, N}, Device::cuda(0));
    k.kernel(ad, bd, cd);
    Buffer<float> got({M, N});
    got.copy_from(cd);
    int64_t bad = 0;
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double want = 0;
            for (int64_t kk = 0; kk < K; ++kk) want += double(av[size_t(i * K + kk)]) * double(bv[size_t(kk * N + j)]);
            bad += got(i, j) != float(want);
        }
    CHECK(bad == 0);
}

}  // namespace

TEST_CASE("tensor cores: float16 matmul tensorized onto mma.sync m16n8k16") {
    check_tensorcore_matmul(64, 32, 64, f16);
    check_tensorcore_matmul(128, 64, 96, f16);
    check_tensorcore_matmul(16, 8, 16, f16);
    check_tensorcore_matmul(256, 256, 64, f16);  // blocks of 2 x 2 warps of 4 x 8 mma tiles
}

TEST_CASE("tensor cores: bfloat16 matmul tensorized onto mma.sync m16n8k16") {
    check_tensorcore_matmul(64, 32, 64, bf16);
}
