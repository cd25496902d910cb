// Definitions for codegen/build.hpp.
#include "weft/codegen/build.hpp"
#include "weft/codegen/llvm/codegen_llvm.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/runtime/kernel_cache.hpp"

namespace weft {
namespace {

// A CPU cannot run loops bound to GPU thread axes: name the first one.
void check_target_support(const Schedule& s, const Target& target, const std::source_location& loc) {
    if (!target.is_cpu()) return;
    for (auto& st : s.stages())
        for (auto& [iv, attr] : st.node()->attrs)
            WEFT_CHECK_AT(loc, attr.kind != ir::ForKind::ThreadBound, "stage '", st.name(), "': axis '", iv.name(),
                          "' is bound to ", attr.thread_tag,
                          ", but the target is a CPU; bind() is only for GPU targets (use parallel() on a CPU)");
}

}  // namespace

Kernel build(const ir::PrimFunc& func, const Target& target) {
    WEFT_CHECK(target.is_cpu(), "build: the CUDA backend is not available in this build; use Target::host()");
    auto module = KernelCache::global().get_or_build(func, target, [&] { return codegen::compile_llvm(func, target); });
    return Kernel(module, func);
}

Kernel build(const Schedule& s, const std::vector<Argument>& args, const Target& target, const LowerOptions& options,
             std::source_location loc) {
    check_target_support(s, target, loc);
    return build(lower(s, args, options), target);
}

}  // namespace weft
