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
    return Stream(device, std::shared_ptr<void>(stream, [state = &state](void* s) noexcept {
                      detail::release_in_context(state, [&](const detail::DriverApi& a) {
                          a.cuStreamDestroy_v2(static_cast<detail::CUstream>(s));
                      });
                  }));
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

namespace weft::cuda {

namespace {

detail::CUevent event_handle(const std::shared_ptr<void>& handle, const char* what) {
    WEFT_CHECK(handle != nullptr, what, " of an empty cuda::Event; make one with cuda::Event::create()");
    return static_cast<detail::CUevent>(handle.get());
}

}  // namespace

Event Event::create(Device device) {
    const char* what = "weft::cuda::Event::create";
    detail::DeviceState& state = detail::device_state(device, what);
    const detail::DriverApi& api = detail::enter(state, what);
    detail::CUevent event = nullptr;
    detail::check(api, api.cuEventCreate(&event, detail::CU_EVENT_DEFAULT),
                  [&] { return "creating an event on CUDA device " + device.str(); });
    return Event(device, std::shared_ptr<void>(event, [state = &state](void* e) noexcept {
                     detail::release_in_context(state, [&](const detail::DriverApi& a) {
                         a.cuEventDestroy_v2(static_cast<detail::CUevent>(e));
                     });
                 }));
}

void Event::record(const Stream& stream) {
    const char* what = "weft::cuda::Event::record";
    detail::CUevent event = event_handle(handle_, what);
    WEFT_CHECK(stream.device() == device_, "cuda::Event::record: the event is on ", device_.str(),
               " but the stream on ", stream.device().str(), "; record it on a stream of its own device");
    detail::DeviceState& state = detail::device_state(device_, what);
    const detail::DriverApi& api = detail::enter(state, what);
    detail::check(api, api.cuEventRecord(event, static_cast<detail::CUstream>(stream.handle())),
                  [&] { return "recording an event on CUDA device " + device_.str(); });
}

void Event::record() {
    const char* what = "weft::cuda::Event::record";
    detail::CUevent event = event_handle(handle_, what);
    detail::DeviceState& state = detail::device_state(device_, what);
    const detail::DriverApi& api = detail::enter(state, what);
    detail::check(api, api.cuEventRecord(event, static_cast<detail::CUstream>(detail::current_stream_handle(device_.index))),
                  [&] { return "recording an event on CUDA device " + device_.str(); });
}

void Event::synchronize() const {
    const char* what = "weft::cuda::Event::synchronize";
    detail::CUevent event = event_handle(handle_, what);
    detail::DeviceState& state = detail::device_state(device_, what);
    const detail::DriverApi& api = detail::enter(state, what);
    detail::check(api, api.cuEventSynchronize(event), [&] {
        return "waiting for an event on CUDA device " + device_.str() + detail::last_kernel_note(state);
    });
}

double Event::elapsed_ms(const Event& start, const Event& end) {
    const char* what = "weft::cuda::Event::elapsed_ms";
    detail::CUevent from = event_handle(start.handle_, what), to = event_handle(end.handle_, what);
    WEFT_CHECK(start.device_ == end.device_, "cuda::Event::elapsed_ms: the events are on ", start.device_.str(), " and ",
               end.device_.str(), "; time events of one device");
    end.synchronize();
    detail::DeviceState& state = detail::device_state(end.device_, what);
    const detail::DriverApi& api = detail::enter(state, what);
    float ms = 0;
    detail::check(api, api.cuEventElapsedTime(&ms, from, to), [&] {
        return "reading the time between two events on CUDA device " + end.device_.str() +
               " (were both recorded?)";
    });
    return ms;
}

}  // namespace weft::cuda
