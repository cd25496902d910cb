// The CUDA runtime against a mock driver (mock_libcuda.cpp, loaded through WEFT_LIBCUDA):
// this binary also runs the device tests of tests/cuda_runtime (driver, device buffers, PTX
// kernels), which the mock computes on the host, so the GPU code paths are exercised on
// every machine. Here: what only the mock can show (the launch configuration, every
// allocation and stream released, the module cache) and the driver errors.
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <new>
#include <string>

#include "allocation_counter.hpp"
#include "cuda_mock/mock_access.hpp"
#include "cuda_runtime/ptx_kernels.hpp"
#include "weft/runtime/cuda/launch.hpp"

using namespace weft;

namespace {

// Before any test: the runtime loads its driver at first use, from WEFT_LIBCUDA.
const bool g_use_mock = weft_mock::use_mock();

using weft_mock::last_launch;
using weft_mock::live_allocations;
using weft_mock::mock_function;
int live_streams() { return mock_function<int (*)()>("weft_mock_live_streams")(); }
int live_events() { return mock_function<int (*)()>("weft_mock_live_events")(); }
int module_loads() { return mock_function<int (*)()>("weft_mock_module_loads")(); }

// The axpy kernel of ptx_kernels.hpp with its device code edited (same signature variables).
template <class Edit>
Kernel axpy_with(Edit&& edit) {
    Kernel base = test::make_axpy();
    DeviceCode code = *base.module()->device_code();
    edit(code);
    return Kernel(std::make_shared<test::PtxModule>(std::move(code)), base.signature());
}

}  // namespace

TEST_CASE("the mock driver is the one in use") {
    REQUIRE(g_use_mock);
    REQUIRE(cuda::device_count() == 2);
    CHECK(cuda::unavailable_reason().empty());
    CHECK(cuda::properties(Device::cuda(1)).name == "weft mock GPU 1");
    CHECK(cuda::properties().arch() == "sm_90");
}

TEST_CASE("launches get the configuration evaluated from the arguments and the current stream") {
    Kernel axpy = test::make_axpy();
    Buffer<float> x({1000}, Device::cuda(0)), y({1000}, Device::cuda(0));
    axpy(x, y, 1.f, int64_t(1000));
    CHECK(last_launch() == "weft_axpy grid 4,1,1 block 256,1,1 smem 0 stream default device 0");
    cuda::Stream s = cuda::Stream::create(Device::cuda(0));
    {
        cuda::StreamGuard on(s);
        axpy(x, y, 1.f, int64_t(1000));
        CHECK(last_launch() == "weft_axpy grid 4,1,1 block 256,1,1 smem 0 stream created device 0");
        // A guard for device 0 leaves device 1 on its default stream.
        Buffer<float> x1({300}, Device::cuda(1)), y1({300}, Device::cuda(1));
        axpy(x1, y1, 1.f, int64_t(300));
        CHECK(last_launch() == "weft_axpy grid 2,1,1 block 256,1,1 smem 0 stream default device 1");
    }
    axpy(x, y, 1.f, int64_t(1000));
    CHECK(last_launch() == "weft_axpy grid 4,1,1 block 256,1,1 smem 0 stream default device 0");
    Kernel reverse = test::make_block_reverse(512, 256);
    Buffer<float> out({512}, Device::cuda(0)), in({512}, Device::cuda(0));
    reverse(out, in);
    CHECK(last_launch() == "weft_block_reverse grid 2,1,1 block 256,1,1 smem 65536 stream default device 0");
}

TEST_CASE("device memory and streams are all released") {
    const size_t allocations = live_allocations();
    const int streams = live_streams();
    {
        Buffer<float> a({100}, Device::cuda(0));
        Buffer<float> b = a.copy_to(Device::cuda(1));
        BufferRef shared = b;
        cuda::Stream s = cuda::Stream::create(Device::cuda(1));
        cuda::Stream copy = s;
        CHECK(live_allocations() == allocations + 2);
        CHECK(live_streams() == streams + 1);
    }
    CHECK(live_allocations() == allocations);
    CHECK(live_streams() == streams);
}

TEST_CASE("PTX is loaded once per module and device and unloaded after its module goes") {
    const int loads = module_loads();
    const size_t loaded = cuda::detail::loaded_module_count();
    {
        Kernel axpy = test::make_axpy();
        Buffer<float> x({10}, Device::cuda(0)), y({10}, Device::cuda(0));
        axpy(x, y, 1.f, int64_t(10));
        axpy(x, y, 2.f, int64_t(10));
        CHECK(module_loads() == loads + 1);
        Buffer<float> x1({10}, Device::cuda(1)), y1({10}, Device::cuda(1));
        axpy(x1, y1, 1.f, int64_t(10));
        CHECK(module_loads() == loads + 2);
        CHECK(cuda::detail::loaded_module_count() == loaded + 2);
    }
    CHECK(cuda::detail::loaded_module_count() == loaded);  // the module is gone: not counted
    Kernel again = test::make_axpy();                      // a new module: loaded anew
    Buffer<float> x({10}, Device::cuda(0)), y({10}, Device::cuda(0));
    again(x, y, 1.f, int64_t(10));
    CHECK(module_loads() == loads + 3);
}

TEST_CASE("driver errors carry the CUDA error name and what was being done") {
    // Out of memory (the mock devices have 1 GiB).
    std::string message = test::error_of([] { Buffer<float> big({int64_t(1) << 29}, Device::cuda(1)); });
    CHECK(message.find("allocating 2147483648 bytes on CUDA device cuda(1) (weft mock GPU 1, 1024 MiB) for a float32 "
                       "buffer of shape {536870912}: CUDA_ERROR_OUT_OF_MEMORY: out of memory (mock)") !=
          std::string::npos);
    Buffer<float> x({8}, Device::cuda(0)), y({8}, Device::cuda(0));
    // PTX the driver rejects: its JIT log is in the message.
    Kernel bad = axpy_with([](DeviceCode& c) { c.ptx.replace(c.ptx.find("fma.rn.f32"), 10, "fma.rn.q32"); });
    message = test::error_of([&] { bad(x, y, 1.f, int64_t(8)); });
    INFO(message);
    CHECK(message.find("loading the PTX of kernel 'axpy' (sm_75) on CUDA device cuda(0) (weft mock GPU 0, sm_90) failed; "
                       "the driver's JIT log:\nptxas application ptx input, line 1; error   : mock: not a PTX the mock "
                       "accepts\n: CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed (mock)") != std::string::npos);
    // A kernel name the PTX does not define.
    Kernel renamed = axpy_with([](DeviceCode& c) { c.kernel_name = "weft_no_such_kernel"; });
    message = test::error_of([&] { renamed(x, y, 1.f, int64_t(8)); });
    CHECK(message.find("kernel 'axpy': its PTX has no kernel named 'weft_no_such_kernel': CUDA_ERROR_NOT_FOUND") !=
          std::string::npos);
    // A launch the driver refuses (the mock wants the grid to cover n), with the kernel's name.
    Kernel one_block = axpy_with([](DeviceCode& c) { c.grid = {ir::make_int(1), ir::make_int(1), ir::make_int(1)}; });
    message = test::error_of([&] { one_block(x, y, 1.f, int64_t(8)); });
    CHECK(message == "(no error)");
    Buffer<float> x9({1000}, Device::cuda(0)), y9({1000}, Device::cuda(0));
    message = test::error_of([&] { one_block(x9, y9, 1.f, int64_t(1000)); });
    CHECK(message.find("launching kernel 'axpy' on CUDA device cuda(0) with grid (1, 1, 1), block (256, 1, 1) and 0 "
                       "bytes of dynamic shared memory failed (the last kernel launched on cuda(0) was 'axpy'") !=
          std::string::npos);
    CHECK(message.find(": CUDA_ERROR_INVALID_VALUE") != std::string::npos);
}

TEST_CASE("kernels the device cannot run are refused with the device's limits") {
    Buffer<float> x({8}, Device::cuda(0)), y({8}, Device::cuda(0));
    Kernel newer = axpy_with([](DeviceCode& c) { c.arch = "sm_100"; });
    CHECK_THROWS_WITH_AS(newer(x, y, 1.f, int64_t(8)),
                         doctest::Contains("kernel 'axpy' was compiled for sm_100 but CUDA device cuda(0) (weft mock GPU "
                                           "0) is sm_90: build it with Target::cuda(\"sm_90\")"),
                         Error);
    Kernel shared = axpy_with([](DeviceCode& c) { c.dynamic_shared_bytes = 300 * 1024; });
    CHECK_THROWS_WITH_AS(shared(x, y, 1.f, int64_t(8)),
                         doctest::Contains("kernel 'axpy' needs 307200 bytes of dynamic shared memory but CUDA device "
                                           "cuda(0) (weft mock GPU 0) allows at most 232448 per block"),
                         Error);
    Kernel wide = axpy_with([](DeviceCode& c) { c.block = {ir::make_int(64), ir::make_int(32), ir::make_int(1)}; });
    CHECK_THROWS_WITH_AS(wide(x, y, 1.f, int64_t(8)),
                         doctest::Contains("launch grid (1, 1, 1), block (64, 32, 1) has 2048 threads per block but "
                                           "CUDA device cuda(0) (weft mock GPU 0) allows at most 1024"),
                         Error);
    CHECK_THROWS_WITH_AS(cuda::properties(Device::cuda(2)),
                         doctest::Contains("Device::cuda(2) does not exist: this machine has 2 CUDA devices (cuda(0) .. "
                                           "cuda(1))"),
                         Error);
}

TEST_CASE("events time work on a stream and are released") {
    const int events = live_events();
    {
        cuda::Event start = cuda::Event::create(), end = cuda::Event::create();
        CHECK(live_events() == events + 2);
        Kernel axpy = test::make_axpy();
        Buffer<float> x({1 << 16}, Device::cuda(0)), y({1 << 16}, Device::cuda(0));
        start.record();
        for (int k = 0; k < 20; ++k) axpy(x, y, 1.f, int64_t(1 << 16));  // the mock computes on the host
        end.record();
        const double ms = cuda::Event::elapsed_ms(start, end);
        CHECK(ms > 0);
        CHECK(ms < 10000);
        cuda::Stream s = cuda::Stream::create();
        start.record(s);
        end.record(s);
        CHECK(cuda::Event::elapsed_ms(start, end) >= 0);
        cuda::Event other = cuda::Event::create(Device::cuda(1));
        CHECK_THROWS_WITH_AS(other.record(s), doctest::Contains("the event is on cuda(1) but the stream on cuda(0)"),
                             Error);
        CHECK_THROWS_WITH_AS(cuda::Event::elapsed_ms(start, other), doctest::Contains("time events of one device"),
                             Error);
        cuda::Event never = cuda::Event::create();
        CHECK_THROWS_WITH_AS(cuda::Event::elapsed_ms(start, never),
                             doctest::Contains("reading the time between two events on CUDA device cuda(0) (were both "
                                               "recorded?): CUDA_ERROR_INVALID_VALUE"),
                             Error);
        CHECK_THROWS_WITH_AS(cuda::Event().record(), doctest::Contains("an empty cuda::Event"), Error);
    }
    CHECK(live_events() == events);
}

#if WEFT_TEST_COUNT_ALLOCATIONS
TEST_CASE("a CUDA kernel call with constant launch dimensions allocates nothing on the heap") {
    Kernel reverse = test::make_block_reverse(512, 256);
    Buffer<float> out({512}, Device::cuda(0)), in({512}, Device::cuda(0));
    reverse(out, in);  // loads the code
    weft_test_alloc::allocations = 0;
    weft_test_alloc::counting = true;
    reverse(out, in);
    weft_test_alloc::counting = false;
    CHECK(weft_test_alloc::allocations == 0);
}
#endif
