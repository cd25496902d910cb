// Kernel's CUDA branch: hand-written PTX kernels (ptx_kernels.hpp) launched through Kernel
// and checked against a CPU reference on random data. Needs a GPU; without one each test
// reports "skipped: no CUDA device". (tests/cuda_mock runs these against a mock driver.)
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "cuda_runtime/ptx_kernels.hpp"
#include "weft/runtime/cuda/launch.hpp"

using namespace weft;

TEST_CASE("a hand-written PTX kernel launched through Kernel matches the CPU reference") {
    if (!test::have_cuda_device()) return;
    Kernel axpy = test::make_axpy();
    const size_t loaded_before = cuda::detail::loaded_module_count();
    // n not a multiple of the block: the grid (n + 255) / 256 is evaluated per call.
    for (int64_t n : {int64_t(1000), int64_t(37), int64_t(256), int64_t(100003)}) {
        auto x = Buffer<float>::random({n}, -2.f, 2.f, uint64_t(n));
        auto y = Buffer<float>::random({n}, -2.f, 2.f, uint64_t(n) + 1);
        const float alpha = 1.75f;
        Buffer<float> xd = x.copy_to(Device::cuda(0)), yd = y.copy_to(Device::cuda(0));
        axpy(xd, yd, alpha, n);
        Buffer<float> got = yd.copy_to(Device::cpu());
        for (int64_t i = 0; i < n; ++i) {
            const float want = std::fmaf(alpha, x(i), y(i));
            if (got(i) != want) {
                FAIL_CHECK("n = " << n << ", element " << i << ": got " << got(i) << ", want " << want);
                break;
            }
        }
        // X is only read.
        CHECK(std::memcmp(xd.copy_to(Device::cpu()).data(), x.data(), size_t(n) * 4) == 0);
    }
    // The PTX was loaded once for the four calls, and a copy of the Kernel shares it.
    CHECK(cuda::detail::loaded_module_count() == loaded_before + 1);
    Kernel copy = axpy;
    Buffer<float> a({5}, Device::cuda(0)), b({5}, Device::cuda(0));
    copy(a, b, 1.f, int64_t(5));
    CHECK(cuda::detail::loaded_module_count() == loaded_before + 1);
    // An integer alpha converts to the float parameter; a 32-bit n is widened.
    auto x = Buffer<float>::random({300}, -1.f, 1.f, 9), y = Buffer<float>::random({300}, -1.f, 1.f, 10);
    Buffer<float> xd = x.copy_to(Device::cuda(0)), yd = y.copy_to(Device::cuda(0));
    axpy(xd, yd, 3, 300);
    Buffer<float> got = yd.copy_to(Device::cpu());
    for (int64_t i = 0; i < 300; ++i) CHECK(got(i) == std::fmaf(3.f, x(i), y(i)));
    cuda::synchronize();
}

TEST_CASE("a kernel with more than 48 KiB of dynamic shared memory launches") {
    if (!test::have_cuda_device()) return;
    const int64_t n = 256 * 40, block = 256;
    Kernel reverse = test::make_block_reverse(n, block);
    auto in = Buffer<float>::random({n}, -1.f, 1.f, 12);
    Buffer<float> out_d({n}, Device::cuda(0));
    reverse(out_d, in.copy_to(Device::cuda(0)));
    Buffer<float> out = out_d.copy_to(Device::cpu());
    for (int64_t b = 0; b < n / block; ++b)
        for (int64_t t = 0; t < block; ++t) CHECK(out(b * block + t) == in(b * block + block - 1 - t));
}

TEST_CASE("each CUDA device gets its own copy of a kernel's code") {
    if (!test::have_cuda_device()) return;
    if (cuda::device_count() < 2) {
        MESSAGE("skipped: needs two CUDA devices");
        return;
    }
    Kernel axpy = test::make_axpy();
    for (int d = 0; d < 2; ++d) {
        auto x = Buffer<float>::random({500}, -1.f, 1.f, 20 + d), y = Buffer<float>::random({500}, -1.f, 1.f, 30 + d);
        Buffer<float> xd = x.copy_to(Device::cuda(d)), yd = y.copy_to(Device::cuda(d));
        axpy(xd, yd, 0.5f, int64_t(500));
        Buffer<float> got = yd.copy_to(Device::cpu());
        for (int64_t i = 0; i < 500; ++i) CHECK(got(i) == std::fmaf(0.5f, x(i), y(i)));
    }
}
