// Kernel's CUDA branch: hand-written PTX kernels (ptx_kernels.hpp), a hand-written CUDA C
// kernel compiled with NVRTC and a kernel built for Target::cuda(), launched through Kernel
// and checked against a CPU reference on random data. Needs a GPU; without one each test
// reports "skipped: no CUDA device" (after the parts that need none: NVRTC, the checks).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "cuda_runtime/ptx_kernels.hpp"
#include "weft/codegen/cuda/codegen_cuda.hpp"
#include "weft/weft.hpp"
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

namespace {

// A CUDA C kernel written by hand, compiled with NVRTC (codegen/cuda), with int32, int64
// and double parameters: C[i, j] = float(A[i, j] * beta + B[j]) over an m x n grid of
// 16 x 16 blocks.
const char* scale_add_source = R"(
extern "C" __global__ void weft_scale_add(const float* __restrict__ A, const double* __restrict__ B,
                                          float* __restrict__ C, double beta, int m, long long n) {
    long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < m && j < n) C[i * n + j] = (float)(A[i * n + j] * beta + B[j]);
}
)";

bool have_nvrtc() {
    std::string why;
    if (codegen::nvrtc_available(&why)) return true;
    MESSAGE("skipped: " << why);
    return false;
}

Kernel make_scale_add(const std::string& ptx) {
    ir::Var m("m", i32), n("n", i64);
    ir::PrimFunc f;
    f.name = "scale_add";
    f.args = {test::tensor_arg("A", f32, {m, n}), test::tensor_arg("B", f64, {n}), test::tensor_arg("C", f32, {m, n}),
              test::scalar_arg(ir::Var("beta", f64), f64), test::scalar_arg(m, i32), test::scalar_arg(n, i64)};
    DeviceCode code;
    code.kernel_name = "weft_scale_add";
    code.source = scale_add_source;
    code.ptx = ptx;
    code.arch = "sm_75";
    code.grid = {(ir::Expr(n) + 15) / 16, (ir::Expr(m) + 15) / 16, ir::make_int(1)};
    code.block = {ir::make_int(16), ir::make_int(16), ir::make_int(1)};
    return Kernel(std::make_shared<test::PtxModule>(std::move(code)), f);
}

}  // namespace

TEST_CASE("a CUDA C kernel compiled with NVRTC takes int32 int64 and double parameters") {
    if (!have_nvrtc()) return;
    const std::string ptx = codegen::nvrtc_compile_to_ptx(scale_add_source, "weft_scale_add", "sm_75");
    CHECK(ptx.find(".entry weft_scale_add") != std::string::npos);
    Kernel k = make_scale_add(ptx);
    if (!test::have_cuda_device()) return;
    for (auto [m, n] : {std::pair<int32_t, int64_t>{37, 50}, {16, 16}, {1, 300}, {129, 7}}) {
        auto a = Buffer<float>::random({m, n}, -3.f, 3.f, uint64_t(m * 1000 + n));
        auto b = Buffer<double>::random({n}, -1.0, 1.0, uint64_t(n));
        const double beta = -0.625;
        Buffer<float> c_dev({m, n}, Device::cuda(0));
        k(a.copy_to(Device::cuda(0)), b.copy_to(Device::cuda(0)), c_dev, beta, m, n);
        Buffer<float> c = c_dev.copy_to(Device::cpu());
        int wrong = 0;
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) wrong += c(i, j) != static_cast<float>(a(i, j) * beta + b(j));
        CHECK_MESSAGE(wrong == 0, "m = " << m << ", n = " << n);
    }
}

TEST_CASE("a kernel built for Target::cuda() runs and matches the CPU kernel") {
    if (!have_nvrtc()) return;
    Var n("n");
    Tensor A = placeholder({n}, f32, "A");
    Tensor B = compute({n}, [&](Expr i) { return A(i) * 3.0f - 1.0f; }, "B");
    Schedule gpu = create_schedule(B);
    auto [bx, tx] = gpu[B].split(B.axis(0), 128);
    gpu[B].bind(bx, block_x());
    gpu[B].bind(tx, thread_x());
    Kernel on_gpu = build(gpu, {A, B, n}, Target::cuda());
    REQUIRE(on_gpu.module()->device_code() != nullptr);
    Kernel on_cpu = build(create_schedule(B), {A, B, n});
    // Host buffers are refused before anything needs a device.
    Buffer<float> ha({10}), hb({10});
    CHECK_THROWS_WITH_AS(on_gpu(ha, hb, 10), doctest::Contains("copy_to(Device::cuda(0))"), Error);
    if (!test::have_cuda_device()) return;
    for (int64_t size : {int64_t(1000), int64_t(128), int64_t(5)}) {
        auto a = Buffer<float>::random({size}, -4.f, 4.f, uint64_t(size));
        Buffer<float> want({size}), got_dev({size}, Device::cuda(0));
        on_cpu(a, want, size);
        on_gpu(a.copy_to(Device::cuda(0)), got_dev, size);
        Buffer<float> got = got_dev.copy_to(Device::cpu());
        for (int64_t i = 0; i < size; ++i) CHECK(got(i) == doctest::Approx(want(i)).epsilon(1e-6));
    }
}
