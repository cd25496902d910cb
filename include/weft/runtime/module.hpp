// A compiled kernel's code, independent of the backend that produced it. The LLVM backend
// (codegen/llvm) and the CUDA backend implement this; runtime/kernel.hpp calls through it.
#pragma once
#include <memory>
#include <string>

#include "weft/ir/abi.hpp"
#include "weft/ir/function.hpp"
#include "weft/ir/target.hpp"

namespace weft {

class KernelModule {
public:
    virtual ~KernelModule() = default;
    // The generated entry point (see ir/abi.hpp for its convention).
    virtual WeftKernelFn entry() const = 0;
    // The optimized LLVM IR / assembly of the kernel, for users who want to see it.
    virtual std::string llvm_ir() const { return {}; }
    virtual std::string assembly() const { return {}; }
    // Milliseconds spent generating code for this module, when it was compiled (a kernel
    // served from the cache shares the module, and reports that original time).
    virtual double compile_ms() const { return 0; }
};

}  // namespace weft
