// GPU targets: what a schedule must do before it can become one CUDA kernel, checked on the
// schedule so the message names the stage and the loop. The whole program is one kernel
// (TVM style): every root stage's outermost loops must be bound to blocks/threads (a loop
// outside all of them would run the whole grid again, serially), and every intermediate
// stage must live inside the kernel: inlined, or computed at a loop of its consumer in
// "shared" or "local" memory (a kernel cannot allocate global memory for itself).
#pragma once
#include <string>
#include <unordered_map>

#include "weft/ir/function.hpp"
#include "weft/ir/gpu.hpp"
#include "weft/lower/impl/make_entry.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft::lower_passes {

inline void check_gpu_schedule(const Schedule& s, const std::string& kernel) {
    for (auto& st : s.stages()) {
        const StageNode& n = *st.node();
        if (!n.op->is_compute() || n.attach == AttachType::Inline) continue;
        if (!n.is_output)
            WEFT_CHECK(n.scope == "shared" || n.scope == "local", "CUDA kernel '", kernel, "': stage '", n.op.name(),
                       "' is stored in global memory, which a kernel cannot allocate for itself; compute_inline it, "
                       "or compute_at it inside a loop of its consumer and set_scope(\"shared\") (one copy per block) "
                       "or set_scope(\"local\") (one per thread)");
        if (n.double_buffer)
            WEFT_CHECK(n.scope == "shared" && n.attach == AttachType::Scope, "CUDA kernel '", kernel,
                       "': double_buffer on stage '", n.op.name(),
                       "' needs a \"shared\" stage computed at a serial loop of its consumer (compute_at)");
        WEFT_CHECK(n.prefetches.empty(), "CUDA kernel '", kernel, "': stage '", n.op.name(),
                   "' has a prefetch(), which is a CPU schedule primitive; on a GPU stage the data in shared memory "
                   "(cache_read into \"shared\", double_buffer) instead");
        for (auto& [iv, a] : n.attrs)
            WEFT_CHECK(a.kind != ir::ForKind::Parallel, "CUDA kernel '", kernel, "': loop '", iv.name(), "' of stage '",
                       n.op.name(), "' is parallel(), which is for CPU threads; on a GPU bind it to block_x() or "
                       "thread_x() instead");
        if (n.attach != AttachType::Root) continue;
        // Root stages: the loops outside the first bound loop.
        bool any_bound = false;
        for (auto& iv : n.leaf_iter_vars) {
            const IterVarAttr* a = n.attr(iv);
            bool bound = a && a->kind == ir::ForKind::ThreadBound && !ir::gpu::is_vthread_tag(a->thread_tag);
            if (bound) {
                any_bound = true;
                break;
            }
            WEFT_CHECK(false, "CUDA kernel '", kernel, "': loop '", iv.name(), "' of stage '", n.op.name(),
                       "' is outside every blockIdx/threadIdx loop, so it would run the whole kernel serially; "
                       "bind it to block_x() or block_y()/block_z() (or fuse it into a bound loop), or reorder it "
                       "inside the bound loops");
        }
        WEFT_CHECK(any_bound || n.leaf_iter_vars.empty(), "CUDA kernel '", kernel, "': stage '", n.op.name(),
                   "' has no loop bound to a GPU block or thread; bind its outer loop to block_x() and an inner one "
                   "to thread_x()");
    }
}

// A CUDA kernel's parameters are exactly its arguments (no shape records): a symbolic
// dimension of a tensor must also be passed as a scalar argument for the kernel to know it.
inline void check_gpu_arguments(const std::string& kernel, const std::vector<ir::KernelArg>& args, const ir::Stmt& body) {
    std::vector<ir::KernelArg> scalars;
    for (auto& a : args)
        if (a.kind == ir::KernelArg::Kind::Scalar) scalars.push_back(a);
    for (auto& a : args)
        for (auto& d : a.shape)
            if (auto* v = d.as<ir::VarNode>()) {
                bool passed = false;
                for (auto& sc : scalars) passed |= sc.var.get() == v;
                WEFT_CHECK(passed, "CUDA kernel '", kernel, "': dimension '", v->name, "' of tensor '", a.name,
                           "' is symbolic; pass the variable '", v->name,
                           "' as a scalar argument too, so the kernel receives its value");
            }
    check_free_variables(kernel, args, body);  // shape variables were checked above
}

// "loop 'i.outer' of stage 'C'" for every loop variable of the schedule, for messages.
inline std::unordered_map<const ir::Object*, std::string> loop_descriptions(const Schedule& s) {
    std::unordered_map<const ir::Object*, std::string> names;
    for (auto& st : s.stages())
        for (auto& iv : st.node()->all_iter_vars)
            names[iv.var().get()] = "loop '" + iv.name() + "' of stage '" + st.node()->op.name() + "'";
    return names;
}

}  // namespace weft::lower_passes
