// lower(): a schedule and its arguments -> the loop program (ir::PrimFunc).
//
// The whole compiler front half is one ordered pipeline, in lower/impl/lower.hpp, readable
// top to bottom. Set WEFT_PRINT_PASSES=1 (or LowerOptions::print_passes) to print the
// program after every pass ("unchanged" when a pass did nothing).
#pragma once
#include <iosfwd>
#include <variant>

#include "weft/ir/function.hpp"
#include "weft/ir/target.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft {

// A kernel argument: a tensor (a buffer at call time) or a scalar Var used in the computation.
struct Argument {
    std::variant<Tensor, Var> value;
    Argument(Tensor t) : value(std::move(t)) {}
    Argument(Var v) : value(std::move(v)) {}
};

// build() remembers the kernel of a schedule object per target and options
// (codegen/impl/build.hpp): a field that changes the program must join that key.
struct LowerOptions {
    std::string name;           // the kernel's name in messages and dumps; default: the first output's
    bool print_passes = false;  // also on when the environment has WEFT_PRINT_PASSES=1
    bool fast_math = false;     // allow reassociation of float math in this kernel
    int max_unroll = 64;        // unrolled loops longer than this stay loops
    // Lowered for a short compile (graph::CompileTier::fast): no loop is unrolled (register
    // tiles and `unroll` axes stay loops) and the CPU backend runs LLVM's -O0 pipeline and
    // code generation. The same results; kernels compile in a fifth to a tenth of the time
    // and run 5-11x slower (benchmarks/RESULTS.md, "compile tiers").
    bool fast_compile = false;
    // A promise (Halide's set_host_alignment, TVM's data_alignment): every tensor argument's
    // data is aligned to this many bytes (a power of two up to 4096). The kernel checks it
    // when called (a weft::Error naming the argument otherwise) and LLVM compiles knowing it:
    // aligned vector accesses, streaming stores without a run-time alignment test. weft's
    // Buffer allocates 64-byte aligned storage; a view into the middle of one may not be.
    // 0: no promise beyond the element's size. CPU kernels only (CUDA ignores it).
    int argument_alignment = 0;
    // Scalar arguments that are sizes (Halide's Param::set_range with a lower bound of 0):
    // never negative, which the kernel's entry checks (a weft::Error naming the argument) and
    // the lowering assumes, as it does for a tensor argument's symbolic dimension. A split of
    // a loop over `n * m` rows then gets whole tiles in its steady state (register tiles of
    // constant size, unrolled), where without the fact they stay guarded.
    std::vector<Var> sizes;
    // Sizes the kernel is specialized on (Halide's Func::specialize): it tests once, at its
    // entry, whether each listed variable is at least its value, and runs a body lowered
    // knowing that (a row of a symbolic width at least as wide as its register tile has a
    // whole first tile, so every interior tile is constant and unrolled), else the generic
    // body. Twice the code, for kernels over sizes that are usually large.
    std::vector<std::pair<Var, int64_t>> specialize_at_least;
    // What the program is lowered for. A CUDA target makes the whole program one GPU kernel
    // (thread bindings, shared/local memory, barriers; see lower/impl/gpu_*.hpp); build()
    // sets it from its target argument.
    Target target;
};

ir::PrimFunc lower(const Schedule& s, const std::vector<Argument>& args, const LowerOptions& options = {});

namespace lower_passes {
// The passes, in pipeline order (each documented in its header).
ir::Stmt schedule_ops(const Schedule& s);
}  // namespace lower_passes

}  // namespace weft
