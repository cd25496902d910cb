// Definitions for codegen/build.hpp.
#include <cstdlib>
#include <sstream>

#include "weft/codegen/build.hpp"
#include "weft/codegen/cuda/codegen_cuda.hpp"
#include "weft/codegen/llvm/codegen_llvm.hpp"
#include "weft/ir/gpu.hpp"
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
    WEFT_CHECK(target.is_cuda() || target.is_cpu(), "build: unknown target kind (", target.str(), ")");
    if (target.is_cpu()) {
        auto* launch = func.body.as<ir::AttrStmt>();
        WEFT_CHECK(!launch || launch->key != ir::gpu::thread_extent_key, "build: kernel '", func.name,
                   "' was lowered for a GPU (LowerOptions::target = Target::cuda()); build it for Target::cuda(), or "
                   "lower it again for the CPU");
    }
    // CUDA: CUDA C -> NVRTC -> PTX, no GPU needed until the kernel is called. CPU: LLVM ORC.
    auto module = KernelCache::global().get_or_build(func, target, [&] {
        return target.is_cuda() ? codegen::compile_cuda(func, target) : codegen::compile_llvm_or_load(func, target);
    });
    return Kernel(module, func);
}

Kernel build(const Schedule& s, const std::vector<Argument>& args, const Target& target, const LowerOptions& options,
             std::source_location loc) {
    // The same schedule object in the same state (its trace only grows), the same arguments,
    // target and options: the kernel built last time, without lowering again.
    const char* print = std::getenv("WEFT_PRINT_PASSES");
    bool memo = !options.print_passes && !(print && std::string(print) == "1");
    std::string key;
    if (memo) {
        std::ostringstream k;
        k << s.node().get() << '/' << s.trace().size() << '/' << target.str() << '/' << options.name << '/'
          << options.fast_math << '/' << options.max_unroll << '/' << options.argument_alignment << '/'
          << options.fast_compile;
        for (auto& a : args) {
            if (auto* t = std::get_if<Tensor>(&a.value)) k << "/t" << t->op().get() << ":" << t->value_index();
            else k << "/v" << std::get<Var>(a.value).get();
        }
        key = k.str();
        if (auto r = KernelCache::global().recall(key, s.node())) return Kernel(r->module, r->func);
    }
    check_target_support(s, target, loc);
    LowerOptions lower_options = options;
    lower_options.target = target;
    Kernel k = build(lower(s, args, lower_options), target);
    if (memo) KernelCache::global().remember(key, s.node(), {k.module(), k.signature()});
    return k;
}

}  // namespace weft
