// Kernels from CUDA C: a hand-written CUDA C kernel compiled with NVRTC, and a kernel built
// for Target::cuda(), launched through Kernel and checked against a CPU reference on random
// data. The NVRTC compile and the argument checks run everywhere; the launches need a GPU
// (without one: "skipped: no CUDA device").
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "cuda_runtime/ptx_kernels.hpp"
#include "weft/codegen/cuda/codegen_cuda.hpp"
#include "weft/weft.hpp"

using namespace weft;

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
