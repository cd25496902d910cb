// A lowered kernel: its arguments and its loop program.
#pragma once
#include <string>
#include <vector>

#include "weft/ir/stmt.hpp"

namespace weft::ir {

// One argument of a kernel: a tensor (its data pointer `var`, a handle Var, plus its
// element type and shape) or a scalar (`var` of a scalar type; shape empty).
struct KernelArg {
    enum class Kind : uint8_t { Tensor, Scalar };
    Kind kind;
    std::string name;
    Var var;
    DataType type;
    std::vector<Expr> shape;
    // Tensors: the bytes the data pointer is promised to be aligned to (LowerOptions::
    // argument_alignment), checked at the kernel's entry and then assumed; 0: no promise.
    int64_t alignment = 0;
    // Tensors: whether the kernel writes it (an output of the schedule), and for an output
    // the positions of the input arguments it may share bytes with, each read element-wise
    // (lower/impl/argument_access.hpp). Kernel::call refuses any other overlap.
    bool is_output = false;
    std::vector<int> may_overwrite;
};

struct PrimFunc {
    std::string name;
    std::vector<KernelArg> args;
    Stmt body;
    // Opt-in per kernel: allow reassociation and other fast-math rewrites of float code.
    bool fast_math = false;
    // Compiled for a short compile rather than the fastest code (LowerOptions::fast_compile):
    // the CPU backend runs LLVM's -O0 pipeline and code generation (FastISel).
    bool fast_compile = false;
};

std::ostream& operator<<(std::ostream& os, const PrimFunc& f);

}  // namespace weft::ir
