// A compiled kernel's code, independent of the backend that produced it. The LLVM backend
// (codegen/llvm) and the CUDA backend implement this; runtime/kernel.hpp calls through it.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "weft/ir/abi.hpp"
#include "weft/ir/function.hpp"
#include "weft/ir/target.hpp"

namespace weft {

class KernelArgValue;  // runtime/kernel.hpp

// A kernel's machine code as a relocatable object file (ELF on Linux) and the symbol of its
// entry point in it: what graph/artifact.hpp saves, and codegen::load_llvm_object loads
// back without compiling.
struct ObjectCode {
    std::string symbol;
    std::string bytes;
};

// A GPU kernel: its device code and how to launch it. The CUDA backend (codegen/cuda) fills it;
// the runtime (Kernel's call) loads the code with the driver API and launches it.
// The kernel's parameters are the PrimFunc's arguments in order: a tensor argument is its
// element pointer (`float* __restrict__`), a scalar argument its value in its own type.
struct DeviceCode {
    std::string kernel_name;            // the extern "C" __global__ function's name in `source`
    std::string source;                 // the generated CUDA C
    std::string ptx;                    // NVRTC's output for `arch` (PTX text)
    std::string arch;                   // "sm_90"
    std::array<ir::Expr, 3> grid;       // gridDim x, y, z: constants, or expressions of the kernel's scalar arguments
    std::array<ir::Expr, 3> block;      // blockDim x, y, z: likewise
    int64_t dynamic_shared_bytes = 0;   // extern __shared__ bytes (0 when all shared memory is static)
};

class KernelModule {
public:
    virtual ~KernelModule() = default;
    // The generated entry point (see ir/abi.hpp for its convention).
    virtual WeftKernelFn entry() const = 0;
    // The same entry without the argument checks (count, kinds, ranks, dtypes, shapes,
    // strides, alignment) that entry() does first for callers of the C ABI: Kernel::call runs
    // it after checking the same in C++. Backends without one return entry().
    virtual WeftKernelFn unchecked_entry() const { return entry(); }
    // The optimized LLVM IR / assembly of the kernel, for users who want to see it.
    virtual std::string llvm_ir() const { return {}; }
    virtual std::string assembly() const { return {}; }
    // Milliseconds spent generating code for this module, when it was compiled (a kernel
    // served from the cache shares the module, and reports that original time).
    virtual double compile_ms() const { return 0; }
    // The object code the entry came from, when the backend keeps it (the LLVM backend
    // does); empty otherwise.
    virtual ObjectCode object_code() const { return {}; }
    // The device code of a GPU kernel; null for CPU kernels (whose code is entry()). A CUDA
    // module's entry() returns nullptr: there is no host entry.
    virtual const DeviceCode* device_code() const { return nullptr; }
    // The memory the module holds (code, the text kept for llvm_ir(), the JIT's pages), an
    // estimate for the kernel cache's budget; 0 when the backend does not say.
    virtual int64_t memory_bytes() const { return 0; }
    // A kernel computed by host code, not generated code (a graph's loop, which runs a module
    // per iteration): entry() is null, and Kernel::call checks the arguments against the
    // signature and then passes them to call_host.
    virtual bool runs_on_host() const { return false; }
    virtual void call_host(std::span<const KernelArgValue> args) const;
};

inline void KernelModule::call_host(std::span<const KernelArgValue>) const {
    WEFT_ICHECK(false, "KernelModule::call_host on a module of generated code");
}

}  // namespace weft
