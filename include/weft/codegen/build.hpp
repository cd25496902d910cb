// build(): lower a schedule and compile it for a target into a callable Kernel.
#pragma once
#include <source_location>

#include "weft/lower/lower.hpp"
#include "weft/runtime/kernel.hpp"

namespace weft {

// Lowers `s` with `args` (the kernel's parameters, in call order), compiles the program
// for `target` (served from the kernel cache when the same program was built before) and
// returns the kernel. A schedule that cannot run on the target is a weft::Error.
Kernel build(const Schedule& s, const std::vector<Argument>& args, const Target& target = Target::host(),
             const LowerOptions& options = {}, std::source_location loc = std::source_location::current());

// Compiles an already lowered program.
Kernel build(const ir::PrimFunc& func, const Target& target = Target::host());

}  // namespace weft
