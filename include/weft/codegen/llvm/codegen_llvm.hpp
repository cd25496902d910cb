// The LLVM backend: a lowered PrimFunc → LLVM IR → O3 for the target CPU → machine code in
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

}  // namespace weft::codegen
