// The LLVM backend: a lowered PrimFunc → LLVM IR → O2 for the target CPU → machine code in
// an ORC LLJIT, returned as a KernelModule. Deliberately free of LLVM headers (see
// TOOLCHAIN.md): the implementation is compiled once, in include/weft/impl/llvm_emit.hpp
// (IR emission) and include/weft/impl/llvm_jit.hpp (optimizer, JIT, Target::host).
#pragma once
#include <memory>

#include "weft/ir/function.hpp"
#include "weft/ir/target.hpp"
#include "weft/runtime/module.hpp"

namespace weft::codegen {

// JIT-compiles f for a CPU target. The module's entry() is f's code under the calling
// convention of ir/abi.hpp; llvm_ir() is the optimized IR, assembly() the machine code as
// text (generated on first request). Kernels with the same name coexist: each gets a
// unique symbol inside the JIT, and its machine code is freed with the module.
// Throws weft::Error for input the CPU backend cannot compile (a GPU-bound loop, math on
// float16).
std::shared_ptr<const KernelModule> compile_llvm(const ir::PrimFunc& f, const Target& target);

// Loads a kernel's relocatable object code (KernelModule::object_code() of a module that
// compile_llvm made, here or in another process) into the JIT without compiling anything:
// the module's entry() is the object's `symbol`, linked against weft's runtime functions
// and libm / libmvec. `target` is what it was compiled for (it must run on this host).
// Throws weft::Error when the object does not load or link.
// `llvm_ir`, when given, is what the module's llvm_ir() reports (and assembly() is made
// from); `compile_ms` its compile_ms().
std::shared_ptr<const KernelModule> load_llvm_object(const ObjectCode& object, const std::string& kernel_name,
                                                     const Target& target, std::string llvm_ir = {},
                                                     double compile_ms = 0);

// compile_llvm through the on-disk kernel cache (KernelCache::disk_directory()): the object
// code stored for the same program, target and build of weft when there is one (no
// compile), else compile_llvm, storing the result. Without a directory, compile_llvm.
std::shared_ptr<const KernelModule> compile_llvm_or_load(const ir::PrimFunc& f, const Target& target);

// The largest file compile_llvm_or_load reads from the disk cache: far above any kernel's
// object code and IR (tens of KB to a few MB), and a bound on what a stray file there makes
// it allocate. A larger file, or one that is not a regular file, is a miss, never read.
inline constexpr int64_t kMaxDiskKernelBytes = int64_t(256) << 20;

// How many kernels compile_llvm has compiled in this process (kernel cache hits and
// load_llvm_object do not count).
uint64_t compile_llvm_count();

}  // namespace weft::codegen
