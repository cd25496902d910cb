// Device memory for BufferRef (runtime/buffer.hpp): allocation and copies between host and
// CUDA devices. Users go through Buffer (allocate on a Device, copy_to, copy_from); these
// are the calls behind it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "weft/runtime/device.hpp"

namespace weft::cuda::detail {

// `bytes` of zero-filled memory on CUDA device `device`; the returned pointer (a
// CUdeviceptr) is freed with cuMemFree when the last copy of the shared_ptr goes.
// `what` says what the memory is for (for the error message when there is no device or
// not enough memory).
std::shared_ptr<void> allocate(Device device, int64_t bytes, const std::string& what);

// Copies `bytes` from src (on src_device) to dst (on dst_device); at least one is a CUDA
// device. Ordered with the device's default stream, as cuMemcpy is: a copy to the host
// returns when the data is there, and waits for kernels launched before it.
void copy(void* dst, Device dst_device, const void* src, Device src_device, int64_t bytes);

}  // namespace weft::cuda::detail
