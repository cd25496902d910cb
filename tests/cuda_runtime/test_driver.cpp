// The driver loaded at run time: what device_count() and the first use say on a machine
// without a GPU (this one: no libcuda.so.1, the toolkit's stub), and the device queries on
// one with a GPU.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "cuda_runtime/ptx_kernels.hpp"
#include "weft/runtime/cuda/impl/driver_api.hpp"

using namespace weft;

TEST_CASE("device_count answers without throwing and unavailable_reason says why it is 0") {
    const int count = cuda::device_count();
    CHECK(count >= 0);
    CHECK(cuda::device_count() == count);  // loaded once, same answer
    if (count == 0) {
        const std::string why = cuda::unavailable_reason();
        INFO(why);
        CHECK(!why.empty());
        CHECK((why.find("libcuda.so.1") != std::string::npos || why.find("no CUDA") != std::string::npos ||
               why.find("CUDA_ERROR_") != std::string::npos));
    } else {
        CHECK(cuda::unavailable_reason().empty());
    }
}

TEST_CASE("a missing driver library is reported as not found") {
    cuda::device_count();  // the process-wide driver first: the probes below must not replace it
    cuda::detail::DriverLoad load = cuda::detail::load_driver("libweft-no-such-cuda-driver.so.1");
    CHECK(load.api == nullptr);
    CHECK(load.device_count == 0);
    CHECK(load.why.find("libweft-no-such-cuda-driver.so.1 not found") != std::string::npos);
}

TEST_CASE("the toolkit's stub driver is reported as CUDA_ERROR_STUB_LIBRARY") {
    // Only where no driver is in use: the stub carries the real driver's soname.
    if (cuda::device_count() > 0) {
        MESSAGE("skipped: this machine has a CUDA device");
        return;
    }
    const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
    if (!std::filesystem::exists(stub)) {
        MESSAGE("skipped: no CUDA toolkit stub at " << stub);
        return;
    }
    cuda::detail::DriverLoad load = cuda::detail::load_driver(stub);
    INFO(load.why);
    CHECK(load.api == nullptr);
    CHECK(load.why.find("CUDA_ERROR_STUB_LIBRARY") != std::string::npos);
    CHECK(load.why.find("stub library, not an NVIDIA driver") != std::string::npos);
}

TEST_CASE("without a device every CUDA operation throws no CUDA device") {
    if (cuda::device_count() > 0) {
        MESSAGE("skipped: this machine has a CUDA device");
        return;
    }
    const std::string why = cuda::unavailable_reason();
    for (const std::string& message :
         {test::error_of([] { cuda::properties(); }), test::error_of([] { cuda::memory_info(); }),
          test::error_of([] { cuda::Stream::create(Device::cuda(0)); }), test::error_of([] { cuda::synchronize(); }),
          test::error_of([] { Buffer<float> b({16}, Device::cuda(0)); }),
          test::error_of([] { BufferRef::allocate(f32, {2, 3}, Device::cuda(1)); }),
          test::error_of([] { Buffer<float>::random({8}, 0.f, 1.f, 3).copy_to(Device::cuda(0)); })}) {
        INFO(message);
        CHECK(message.find("weft: no CUDA device: ") == 0);
        CHECK(message.find(why) != std::string::npos);
    }
    // The allocation says what it was for.
    CHECK(test::error_of([] { Buffer<float> b({16, 2}, Device::cuda(0)); }).find("a float32 buffer of shape {16, 2}") !=
          std::string::npos);
}

TEST_CASE("a CUDA kernel call without a device throws no CUDA device and names the kernel") {
    if (cuda::device_count() > 0) {
        MESSAGE("skipped: this machine has a CUDA device");
        return;
    }
    // Buffers that claim to be on the device pass every argument check; the launch needs the driver.
    Kernel axpy = test::make_axpy();
    auto x = test::fake_device_buffer<float>({100});
    auto y = test::fake_device_buffer<float>({100});
    const std::string message = test::error_of([&] { axpy(x, y, 2.0f, int64_t(100)); });
    INFO(message);
    CHECK(message.find("weft: no CUDA device: ") == 0);
    CHECK(message.find("launching CUDA kernel 'axpy'") != std::string::npos);
}

TEST_CASE("Device names and compares the host and CUDA devices") {
    CHECK(Device::cpu().is_cpu());
    CHECK(Device::cuda(1).is_cuda());
    CHECK(Device::cuda(1).index == 1);
    CHECK(Device::cuda() == Device::cuda(0));
    CHECK(Device::cuda(0) != Device::cuda(1));
    CHECK(Device::cpu() != Device::cuda(0));
    CHECK(Device::cpu().str() == "cpu");
    CHECK(Device::cuda(3).str() == "cuda(3)");
    CHECK(Buffer<float>({2}).device() == Device::cpu());
    CHECK(BufferRef::allocate(f64, {3}).device() == Device::cpu());
}

TEST_CASE("properties and memory_info describe the device") {
    if (!test::have_cuda_device()) return;
    for (int d = 0; d < cuda::device_count(); ++d) {
        cuda::DeviceProperties p = cuda::properties(Device::cuda(d));
        MESSAGE("cuda(" << d << "): " << p.name << ", " << p.arch() << ", " << p.multiprocessors << " SMs, "
                        << (p.total_memory_bytes >> 20) << " MiB");
        CHECK(!p.name.empty());
        CHECK(p.compute_major >= 7);
        CHECK(p.multiprocessors > 0);
        CHECK(p.max_threads_per_block >= 1024);
        CHECK(p.max_shared_bytes_per_block >= 48 * 1024);
        CHECK(p.total_memory_bytes > 0);
        cuda::MemoryInfo m = cuda::memory_info(Device::cuda(d));
        CHECK(m.total_bytes == p.total_memory_bytes);
        CHECK(m.free_bytes > 0);
        CHECK(m.free_bytes <= m.total_bytes);
    }
    const std::string message = test::error_of([] { cuda::properties(Device::cuda(cuda::device_count())); });
    CHECK(message.find("does not exist") != std::string::npos);
}
