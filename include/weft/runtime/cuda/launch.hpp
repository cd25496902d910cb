// Launching a CUDA kernel (Kernel's call, runtime/impl/kernel.hpp, checks the arguments and
// evaluates the launch dimensions, then calls this).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "weft/runtime/device.hpp"
#include "weft/runtime/module.hpp"

namespace weft::cuda::detail {

struct LaunchDims {
    std::array<int64_t, 3> grid{1, 1, 1};
    std::array<int64_t, 3> block{1, 1, 1};
};

// Loads module's PTX on `device` (once per module and device: cached), and launches its
// kernel on the device's current stream with `params` (cuLaunchKernel's kernelParams: one
// pointer per kernel parameter, to a value of the parameter's type). Errors name
// `kernel_name` (the PrimFunc's name, as Kernel's messages do).
void launch(const std::shared_ptr<const KernelModule>& module, Device device, const LaunchDims& dims,
            void** params, const std::string& kernel_name);

// How many (module, device) pairs have their code loaded, for tests of the cache.
size_t loaded_module_count();

}  // namespace weft::cuda::detail
