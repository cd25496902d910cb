// The CUDA backend: a lowered GPU kernel (lower() with LowerOptions::target = Target::cuda(),
// or build(s, args, Target::cuda())) -> readable CUDA C -> NVRTC -> PTX.
//
// Nothing here needs a GPU: NVRTC (libnvrtc, opened with dlopen at the first compile)
// compiles on any machine with the CUDA toolkit. Running the kernel is the runtime's job
// (runtime/cuda, through KernelModule::device_code()).
#pragma once
#include <memory>
#include <string>

#include "weft/ir/function.hpp"
#include "weft/ir/target.hpp"
#include "weft/runtime/module.hpp"

namespace weft::codegen {

// The CUDA C of a lowered kernel and its launch shape (DeviceCode without ptx): the
// extern "C" __global__ function `kernel_name` with one parameter per argument of `func`.
DeviceCode generate_cuda(const ir::PrimFunc& func, const Target& target);

// NVRTC: `source` to PTX for `arch` ("sm_90": compiled as compute_90). A compile error is
// a weft::Error carrying NVRTC's log and `kernel_name`; a missing libnvrtc is a weft::Error
// saying where it was looked for.
std::string nvrtc_compile_to_ptx(const std::string& source, const std::string& kernel_name, const std::string& arch);

// Whether this build can compile CUDA kernels: built with WEFT_CUDA and libnvrtc loads
// (why not in *why otherwise). Tests use it to skip.
bool nvrtc_available(std::string* why = nullptr);

// generate_cuda + nvrtc_compile_to_ptx: a module whose device_code() is filled and whose
// entry() is null (there is no host entry point). compile_ms() covers both steps.
std::shared_ptr<const KernelModule> compile_cuda(const ir::PrimFunc& func, const Target& target);

}  // namespace weft::codegen
