// Definitions of runtime/cuda/cuda.hpp's streams: creation, the per-thread current stream.
#pragma once
#include <utility>
#include <vector>

#include "weft/runtime/cuda/impl/context.hpp"

namespace weft::cuda {

namespace {

// This thread's current stream per device ordinal, set by StreamGuard (absent: default).
std::vector<std::pair<int, Stream>>& current_streams() {
    thread_local std::vector<std::pair<int, Stream>> streams;
    return streams;
}

// Destroys a stream made by Stream::create; never throws (see DeviceFree in impl/memory.hpp).
struct StreamDestroy {
    detail::DeviceState* state;
    void operator()(void* stream) const noexcept {
        const detail::DriverLoad& load = detail::global_driver();
        if (!load.api || load.api->cuCtxSetCurrent(state->context) != detail::CUDA_SUCCESS) return;
        load.api->cuStreamDestroy_v2(static_cast<detail::CUstream>(stream));
    }
};

}  // namespace

Stream Stream::default_stream(Device device) {
    detail::device_state(device, "weft::cuda::Stream::default_stream");  // the device must exist
    return Stream(device, nullptr);
}

Stream Stream::create(Device device) {
    const char* what = "weft::cuda::Stream::create";
    detail::DeviceState& state = detail::device_state(device, what);
    const detail::DriverApi& api = detail::enter(state, what);
    detail::CUstream stream = nullptr;
    // CU_STREAM_DEFAULT, not NON_BLOCKING: the stream waits for (and is waited for by) the
    // default stream, which buffer copies use, so a copy after a launch sees its results.
    detail::check(api, api.cuStreamCreate(&stream, detail::CU_STREAM_DEFAULT),
                  [&] { return "creating a stream on CUDA device " + device.str(); });
    return Stream(device, std::shared_ptr<void>(stream, StreamDestroy{&state}));
}

void Stream::synchronize() const {
    const char* what = "weft::cuda::Stream::synchronize";
    detail::DeviceState& state = detail::device_state(device_, what);
    const detail::DriverApi& api = detail::enter(state, what);
    detail::check(api, api.cuStreamSynchronize(static_cast<detail::CUstream>(handle())), [&] {
        return ::weft::detail::concat("synchronizing a", is_default() ? " default" : "", " stream of CUDA device ",
                                      device_.str(), detail::last_kernel_note(state));
    });
}

Stream current_stream(Device device) {
    for (const auto& [ordinal, stream] : current_streams())
        if (ordinal == device.index) return stream;
    return Stream::default_stream(device);
}

StreamGuard::StreamGuard(const Stream& stream) {
    auto& streams = current_streams();
    for (auto& [ordinal, current] : streams)
        if (ordinal == stream.device().index) {
            previous_ = std::exchange(current, stream);
            return;
        }
    previous_ = Stream(stream.device(), nullptr);  // the default stream (no device query: it was checked)
    streams.emplace_back(stream.device().index, stream);
}

StreamGuard::~StreamGuard() {
    for (auto& [ordinal, current] : current_streams())
        if (ordinal == previous_.device().index) current = previous_;
}

void* detail::current_stream_handle(int ordinal) {
    for (const auto& [o, stream] : current_streams())
        if (o == ordinal) return stream.handle();
    return nullptr;
}

}  // namespace weft::cuda
