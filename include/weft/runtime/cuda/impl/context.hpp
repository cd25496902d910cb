// Per-device state: the device's primary context (the one the CUDA runtime API and other
// libraries share, so weft's buffers are usable by them), its properties, and the name of
// the last kernel launched on it (for errors that surface later, at a synchronize).
// Also the definitions of the device queries of runtime/cuda/cuda.hpp.
#pragma once
#include <deque>
#include <mutex>
#include <vector>

#include "weft/runtime/cuda/cuda.hpp"
#include "weft/runtime/cuda/impl/driver_api.hpp"

namespace weft::cuda::detail {

struct DeviceState {
    int ordinal = 0;
    CUdevice device = 0;
    CUcontext context = nullptr;
    DeviceProperties properties;
    // Written at every launch without allocating (a fixed buffer): read only for messages.
    std::mutex last_kernel_mutex;
    char last_kernel[128] = {};
    bool launched = false;
};

// The state of CUDA device `device`, its primary context retained on first use. Throws
// "no CUDA device" without a driver, and a user error for an ordinal that does not exist.
// `what` says what needed the device (for the messages).
inline DeviceState& device_state(Device device, const char* what) {
    const DriverApi& api = driver(what);
    WEFT_CHECK(device.is_cuda(), what, " needs a CUDA device, but Device::", device.str(), " was given");
    const int count = global_driver().device_count;
    WEFT_CHECK(device.index >= 0 && device.index < count, "Device::", device.str(), " does not exist: this machine has ",
               count, " CUDA device", count == 1 ? "" : "s", " (cuda(0)", count > 1 ? " .. cuda(" : "",
               count > 1 ? std::to_string(count - 1) + ")" : "", "); needed for ", what);
    static std::mutex mutex;
    static std::deque<DeviceState> states;  // a deque: references stay valid as it grows
    static std::vector<DeviceState*> by_ordinal;
    std::lock_guard lock(mutex);
    if (by_ordinal.empty()) by_ordinal.assign(static_cast<size_t>(count), nullptr);
    if (DeviceState* s = by_ordinal[static_cast<size_t>(device.index)]) return *s;

    DeviceState& s = states.emplace_back();
    s.ordinal = device.index;
    auto where = [&] { return ::weft::detail::concat("setting up CUDA device ", device.str(), " for ", what); };
    check(api, api.cuDeviceGet(&s.device, device.index), where);
    check(api, api.cuDevicePrimaryCtxRetain(&s.context, s.device), where);
    char name[256] = {};
    check(api, api.cuDeviceGetName(name, sizeof(name) - 1, s.device), where);
    s.properties.name = name;
    auto attribute = [&](int attr) {
        int value = 0;
        check(api, api.cuDeviceGetAttribute(&value, attr, s.device), where);
        return value;
    };
    s.properties.compute_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    s.properties.compute_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    s.properties.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    s.properties.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    s.properties.max_shared_bytes_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    size_t total = 0;
    check(api, api.cuDeviceTotalMem_v2(&total, s.device), where);
    s.properties.total_memory_bytes = static_cast<int64_t>(total);
    by_ordinal[static_cast<size_t>(device.index)] = &s;
    return s;
}

// Runs release(api) with the device's context current, ignoring errors: for the deleters
// of device memory, streams and events, which must never throw and may run during static
// destruction, after the driver has shut down (CUDA_ERROR_DEINITIALIZED), when the
// resource is gone anyway.
template <class F>
void release_in_context(DeviceState* state, F&& release) noexcept {
    const DriverLoad& load = global_driver();
    if (!load.api || load.api->cuCtxSetCurrent(state->context) != CUDA_SUCCESS) return;
    release(*load.api);
}

// Makes the device's context current on this thread (driver calls act on the current one).
inline const DriverApi& enter(DeviceState& state, const char* what) {
    const DriverApi& api = driver(what);
    check(api, api.cuCtxSetCurrent(state.context),
          [&] { return ::weft::detail::concat("making CUDA device cuda(", state.ordinal, ") current for ", what); });
    return api;
}

// " (the last kernel launched on cuda(0) was 'mm')", or "" before any launch: errors of a
// running kernel are reported by whatever driver call comes next.
inline std::string last_kernel_note(DeviceState& state) {
    std::lock_guard lock(state.last_kernel_mutex);
    if (!state.launched) return {};
    return ::weft::detail::concat(" (the last kernel launched on cuda(", state.ordinal, ") was '", state.last_kernel,
                                  "'; errors of a running kernel surface at the next synchronize or copy)");
}

}  // namespace weft::cuda::detail

namespace weft::cuda {

int device_count() { return detail::global_driver().device_count; }

std::string unavailable_reason() { return detail::global_driver().why; }
bool fork_safe() {
    // A driver whose state is this process's memory (the tests' mock) survives fork whoever
    // loaded it; the real one does not once weft or NVRTC has initialized it.
    if (detail::driver_loaded()) return detail::global_driver().survives_fork;
    return !detail::driver_used_by_nvrtc();
}

DeviceProperties properties(Device device) {
    return detail::device_state(device, "weft::cuda::properties").properties;
}

MemoryInfo memory_info(Device device) {
    const char* what = "weft::cuda::memory_info";
    detail::DeviceState& state = detail::device_state(device, what);
    const detail::DriverApi& api = detail::enter(state, what);
    size_t free = 0, total = 0;
    detail::check(api, api.cuMemGetInfo_v2(&free, &total),
                  [&] { return "querying the memory of CUDA device " + device.str(); });
    return MemoryInfo{static_cast<int64_t>(free), static_cast<int64_t>(total)};
}

void synchronize(Device device) {
    detail::DeviceState& state = detail::device_state(device, "weft::cuda::synchronize");
    const detail::DriverApi& api = detail::enter(state, "weft::cuda::synchronize");
    detail::check(api, api.cuCtxSynchronize(), [&] {
        return ::weft::detail::concat("synchronizing CUDA device ", device.str(), detail::last_kernel_note(state));
    });
}

}  // namespace weft::cuda
