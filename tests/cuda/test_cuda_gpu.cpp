// The example kernels on a real GPU: each runs on CUDA device 0 and must match the same
// computation built for the CPU with a plain schedule (an independent reference). Without a
// GPU every test here reports "skipped: no CUDA device: <why>".
#include "cuda_schedules.hpp"
#include "cuda_test_util.hpp"
#include "weft/runtime/cuda/cuda.hpp"

using namespace weft;
using namespace weft_cuda_test;

namespace {

bool have_gpu() {
    if (!have_nvrtc()) return false;
    if (cuda::device_count() > 0) return true;
    MESSAGE("skipped: no CUDA device: " << cuda::unavailable_reason());
    return false;
}

// Runs `gpu` on device 0 and `cpu` on the host with the same random inputs (`inputs`
// tensors first, then the output), and returns the largest difference of the outputs
// relative to max(1, |cpu|).
double gpu_vs_cpu(const Kernel& gpu, const Kernel& cpu, const std::vector<std::vector<int64_t>>& input_shapes,
                  const std::vector<int64_t>& output_shape) {
    std::vector<Buffer<float>> in;
    for (size_t i = 0; i < input_shapes.size(); ++i) in.push_back(Buffer<float>::random(input_shapes[i], -1, 1, 100 + i));
    Buffer<float> want(output_shape), out_gpu(output_shape, Device::cuda(0));
    std::vector<Buffer<float>> in_gpu;
    for (auto& b : in) in_gpu.push_back(b.copy_to(Device::cuda(0)));
    if (in.size() == 1) {
        cpu(in[0], want);
        gpu(in_gpu[0], out_gpu);
    } else if (in.size() == 2) {
        cpu(in[0], in[1], want);
        gpu(in_gpu[0], in_gpu[1], out_gpu);
    } else {
        FAIL("gpu_vs_cpu: " << in.size() << " inputs");
    }
    Buffer<float> got = out_gpu.copy_to(Device::cpu());
    double worst = 0;
    for (int64_t i = 0; i < want.size(); ++i)
        worst = std::max(worst, std::abs(double(got.data()[i]) - want.data()[i]) / std::max(1.0, std::abs(double(want.data()[i]))));
    return worst;
}

}  // namespace

TEST_CASE("cuda gpu tiled matmul with and without double buffering matches the CPU") {
    if (!have_gpu()) return;
    const int64_t M = 256, N = 192, K = 128;
    for (bool double_buffer : {false, true}) {
        CAPTURE(double_buffer);
        TiledMatmul m = tiled_matmul(M, N, K, double_buffer);
        Kernel gpu = build(m.s, {m.A, m.B, m.C}, Target::cuda(cuda::properties(Device::cuda(0)).arch()));
        Kernel cpu = build(create_schedule(m.C), {m.A, m.B, m.C});
        CHECK(gpu_vs_cpu(gpu, cpu, {{M, K}, {K, N}}, {M, N}) < 1e-4);
    }
}

TEST_CASE("cuda gpu conv2d with shared tiles matches the CPU") {
    if (!have_gpu()) return;
    const int64_t N = 2, C = 8, H = 16, W = 16, K = 4;
    Conv2d c = conv2d_schedule(N, C, H, W, K);
    Kernel gpu = build(c.s, {c.X, c.Wt, c.Y}, Target::cuda(cuda::properties(Device::cuda(0)).arch()));
    Kernel cpu = build(create_schedule(c.Y), {c.X, c.Wt, c.Y});
    CHECK(gpu_vs_cpu(gpu, cpu, {{N, C, H, W}, {K, C, 3, 3}}, {N, K, H, W}) < 1e-4);
}

TEST_CASE("cuda gpu row sum and softmax split over a block's threads match the CPU") {
    if (!have_gpu()) return;
    const int64_t rows = 48, cols = 512, threads = 128;
    std::string arch = cuda::properties(Device::cuda(0)).arch();
    RowSum r = row_sum_schedule(rows, cols, threads);
    Kernel gpu_sum = build(r.s, {r.A, r.B}, Target::cuda(arch));
    Kernel cpu_sum = build(create_schedule(r.B), {r.A, r.B});
    CHECK(gpu_vs_cpu(gpu_sum, cpu_sum, {{rows, cols}}, {rows}) < 1e-4);
    Softmax sm = softmax_schedule(rows, cols, threads);
    Kernel gpu_sm = build(sm.s, {sm.X, sm.Y}, Target::cuda(arch));
    Kernel cpu_sm = build(create_schedule(sm.Y), {sm.X, sm.Y});
    CHECK(gpu_vs_cpu(gpu_sm, cpu_sm, {{rows, cols}}, {rows, cols}) < 1e-5);
}
