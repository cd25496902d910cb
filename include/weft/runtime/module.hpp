// A compiled kernel's code, independent of the backend that produced it. The LLVM backend
// (codegen/llvm) and the CUDA backend implement this; runtime/kernel.hpp calls through it.
#pragma once
#include <memory>
#include <string>

#include "weft/ir/abi.hpp"
#include "weft/ir/function.hpp"
#include "weft/ir/target.hpp"

namespace weft {

// A kernel's machine code as a relocatable object file (ELF on Linux) and the symbol of its
// entry point in it: what graph/artifact.hpp saves, and codegen::load_llvm_object loads
// back without compiling.
struct ObjectCode {
    std::string symbol;
    std::string bytes;
};

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
    // The object code the entry came from, when the backend keeps it (the LLVM backend
    // does); empty otherwise.
    virtual ObjectCode object_code() const { return {}; }
};

}  // namespace weft
