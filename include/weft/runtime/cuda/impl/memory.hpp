// Definitions for runtime/cuda/memory.hpp: device allocations and copies.
#pragma once
#include "weft/runtime/cuda/impl/context.hpp"
#include "weft/runtime/cuda/memory.hpp"

namespace weft::cuda::detail {

namespace {

CUdeviceptr device_ptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace

std::shared_ptr<void> allocate(Device device, int64_t bytes, const std::string& what) {
    DeviceState& state = device_state(device, what.c_str());
    const DriverApi& api = enter(state, what.c_str());
    WEFT_ICHECK(bytes > 0, "device allocation of ", bytes, " bytes");
    CUdeviceptr p = 0;
    CUresult rc = api.cuMemAlloc_v2(&p, static_cast<size_t>(bytes));
    check(api, rc, [&] {
        return ::weft::detail::concat("allocating ", bytes, " bytes on CUDA device ", device.str(), " (",
                                      state.properties.name, ", ", state.properties.total_memory_bytes >> 20,
                                      " MiB) for ", what);
    });
    // Freed when the last BufferRef sharing it goes.
    std::shared_ptr<void> memory(reinterpret_cast<void*>(p), [state = &state](void* m) noexcept {
        release_in_context(state, [&](const DriverApi& a) { a.cuMemFree_v2(reinterpret_cast<CUdeviceptr>(m)); });
    });
    // Zero-filled, like a host Buffer: a kernel that reads what it did not write sees 0.
    check(api, api.cuMemsetD8_v2(p, 0, static_cast<size_t>(bytes)),
          [&] { return ::weft::detail::concat("zero-filling ", bytes, " bytes on ", device.str(), " for ", what); });
    return memory;
}

void copy(void* dst, Device dst_device, const void* src, Device src_device, int64_t bytes) {
    const char* what = "a buffer copy";
    auto context = [&] {
        return ::weft::detail::concat("copying ", bytes, " bytes from ", src_device.str(), " to ", dst_device.str());
    };
    if (src_device.is_cpu()) {
        DeviceState& state = device_state(dst_device, what);
        const DriverApi& api = enter(state, what);
        check(api, api.cuMemcpyHtoD_v2(device_ptr(dst), src, static_cast<size_t>(bytes)),
              [&] { return context() + last_kernel_note(state); });
    } else if (dst_device.is_cpu()) {
        DeviceState& state = device_state(src_device, what);
        const DriverApi& api = enter(state, what);
        check(api, api.cuMemcpyDtoH_v2(dst, device_ptr(src), static_cast<size_t>(bytes)),
              [&] { return context() + last_kernel_note(state); });
    } else if (src_device == dst_device) {
        DeviceState& state = device_state(dst_device, what);
        const DriverApi& api = enter(state, what);
        check(api, api.cuMemcpyDtoD_v2(device_ptr(dst), device_ptr(src), static_cast<size_t>(bytes)),
              [&] { return context() + last_kernel_note(state); });
    } else {
        DeviceState& from = device_state(src_device, what);
        DeviceState& to = device_state(dst_device, what);
        const DriverApi& api = enter(to, what);
        check(api, api.cuMemcpyPeer(device_ptr(dst), to.context, device_ptr(src), from.context, static_cast<size_t>(bytes)),
              context);
    }
}

}  // namespace weft::cuda::detail
