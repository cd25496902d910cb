// The seam between the two LLVM translation units: the JIT side (llvm_jit.hpp) creates a
// module for the target and asks the emitter (llvm_emit.hpp) to fill it.
#pragma once
#include <string>

#include "weft/ir/function.hpp"
#include "weft/ir/target.hpp"

namespace llvm {
class Module;
}

namespace weft::codegen::detail {

// The name of the entry without the argument checks, next to `symbol` (which checks and then
// calls it): what Kernel::call runs, having checked the arguments in C++.
inline constexpr const char* kUncheckedSuffix = ".unchecked";

// Emits f into m (whose triple and data layout are already set) as an externally visible
// function named `symbol` with the WeftKernelFn signature (and, when f's body starts with the
// argument check, `symbol` + kUncheckedSuffix), plus the internal functions it needs
// (outlined parallel bodies). Unoptimized; throws weft::Error on unsupported input.
void emit_kernel(const ir::PrimFunc& f, const Target& target, const std::string& symbol, llvm::Module& m);

// When the emitter's translation unit was compiled: with the JIT unit's, it names this build
// of the backend in the on-disk kernel cache's key (codegen/impl/disk_cache.hpp).
const char* emitter_build_stamp();

}  // namespace weft::codegen::detail
