// The CUDA runtime's public face: is there a device, what is it, streams, synchronization.
//
// The NVIDIA driver (libcuda.so.1) is loaded with dlopen on first use, so a program built
// with weft runs on a machine without a GPU; there, device_count() is 0 and anything that
// needs a device (a buffer on Device::cuda(n), a CUDA kernel's call) throws weft::Error
// "no CUDA device: <why>". No CUDA header is included here (see impl/driver_api.hpp).
//
//   if (weft::cuda::device_count() == 0) { ... CPU only ... }
//   weft::cuda::Stream s = weft::cuda::Stream::create(Device::cuda(0));
//   { weft::cuda::StreamGuard on(s); kernel(a, b, c); }   // launched on s
//   s.synchronize();
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "weft/runtime/device.hpp"

namespace weft::cuda {

// The number of CUDA devices; 0 (never an exception) when there is no driver, only the
// toolkit's stub driver, or no device.
int device_count();
// Why there is no device ("libcuda.so.1 not found ...", "CUDA_ERROR_STUB_LIBRARY ...",
// "the driver reports no CUDA device"); empty when device_count() > 0.
std::string unavailable_reason();

// Whether a child process forked now can use CUDA: true until this process loads the driver
// (anything above does, as does running on a device) or compiles a CUDA kernel (NVRTC
// initializes the driver too); after that only a driver whose state is the process's own
// memory (the tests' mock, which exports weft_driver_survives_fork) survives fork.
// graph::tune for a CUDA target measures in children: it must run before.
bool fork_safe();

struct DeviceProperties {
    std::string name;                          // "NVIDIA H100 80GB HBM3"
    int compute_major = 0, compute_minor = 0;  // 9, 0 for sm_90
    int multiprocessors = 0;
    int max_threads_per_block = 0;
    int64_t max_shared_bytes_per_block = 0;    // with the opt-in (above 48 KiB)
    int64_t total_memory_bytes = 0;
    // "sm_90": the arch to give Target::cuda() for this device.
    std::string arch() const { return "sm_" + std::to_string(compute_major * 10 + compute_minor); }
};
// Throws weft::Error when `device` is not a CUDA device that exists.
DeviceProperties properties(Device device = Device::cuda(0));

struct MemoryInfo {
    int64_t free_bytes = 0;
    int64_t total_bytes = 0;
};
// The device's free and total memory now (cuMemGetInfo), for every user of the device.
MemoryInfo memory_info(Device device = Device::cuda(0));

// A CUDA stream: work launched on it runs in order. A default-constructed Stream (and
// Stream::default_stream) is the device's default stream, which weft uses unless told
// otherwise; streams from create() are ordinary (blocking) streams, so buffer copies, which
// go through the default stream, wait for the kernels launched on them. Copies of a
// Stream share it; the last one destroys it.
class Stream {
public:
    Stream() = default;
    static Stream default_stream(Device device = Device::cuda(0));
    static Stream create(Device device = Device::cuda(0));

    Device device() const { return device_; }
    bool is_default() const { return handle_ == nullptr; }
    // The CUstream (nullptr for the default stream), for interoperating with other CUDA code.
    void* handle() const { return handle_.get(); }
    // Waits until everything launched on this stream has finished; reports errors of
    // kernels that ran on it (an out-of-bounds access shows up here, not at launch).
    void synchronize() const;

private:
    friend class StreamGuard;
    Stream(Device device, std::shared_ptr<void> handle) : device_(device), handle_(std::move(handle)) {}
    Device device_ = Device::cuda(0);
    std::shared_ptr<void> handle_;
};

// A point in a stream's work, for timing it on the GPU's clock:
//
//   cuda::Event start = cuda::Event::create(), end = cuda::Event::create();
//   start.record();  kernel(a, b, c);  end.record();       // on the current stream
//   double ms = cuda::Event::elapsed_ms(start, end);      // waits for `end`
class Event {
public:
    Event() = default;  // no event: record() and the others throw
    static Event create(Device device = Device::cuda(0));

    Device device() const { return device_; }
    // Records the event on `stream` (a stream of the event's device), or on the current
    // stream of the event's device.
    void record(const Stream& stream);
    void record();
    // Waits until the work recorded before the event has finished.
    void synchronize() const;
    // Milliseconds (about 0.5 us resolution) between two recorded events of one device;
    // waits for `end`.
    static double elapsed_ms(const Event& start, const Event& end);

private:
    Event(Device device, std::shared_ptr<void> handle) : device_(device), handle_(std::move(handle)) {}
    Device device_ = Device::cuda(0);
    std::shared_ptr<void> handle_;
};

// The stream this thread launches CUDA kernels on for `device`: the innermost StreamGuard's,
// else the default stream.
Stream current_stream(Device device = Device::cuda(0));

// Makes `stream` the current stream of its device on this thread until the guard goes.
class StreamGuard {
public:
    explicit StreamGuard(const Stream& stream);
    ~StreamGuard();
    StreamGuard(const StreamGuard&) = delete;
    StreamGuard& operator=(const StreamGuard&) = delete;

private:
    Stream previous_;
};

// Waits until all work on `device` has finished (every stream); reports errors of kernels
// that ran there, naming the last kernel launched on the device.
void synchronize(Device device = Device::cuda(0));

namespace detail {
// The current stream's CUstream for a device ordinal, without copying a Stream (the launch path).
void* current_stream_handle(int ordinal);
}  // namespace detail

}  // namespace weft::cuda
