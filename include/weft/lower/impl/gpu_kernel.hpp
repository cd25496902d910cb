// GPU targets: the loop program becomes the body of one CUDA kernel.
//  - A loop bound to blockIdx.* / threadIdx.* is no loop on the GPU: every thread runs the
//    body once, with the loop variable bound to its index (a LetStmt of thread_index(tag)).
//    All loops bound to one tag share that index, so their extents must agree; the extents
//    give the launch's grid and block (AttrStmt "thread_extent" around the body).
//  - A loop bound to "vthread" runs inside each thread, unrolled (the simple form of TVM's
//    InjectVirtualThread: correct results, the unrolled copies interleave their accesses).
//  - Serial loops are rebased to start at 0, so per-thread (local) arrays get constant
//    indices once NVCC unrolls them, and stay in registers.
//  - Limits are checked here, naming the loop: at most 1024 threads per block (64 on z),
//    grid y/z at most 65535, at most 48 KiB of static shared memory, and buffers in shared
//    or local memory of a constant size.
#pragma once
#include <array>
#include <map>
#include <unordered_map>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/gpu.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {

using ir::Expr;
using ir::Var;
using ir::make_int;

// The launch tags in the order a kernel's attributes list them.
inline const std::array<const char*, 6>& launch_tags() {
    static const std::array<const char*, 6> tags = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z",
                                                    "threadIdx.x", "threadIdx.y", "threadIdx.z"};
    return tags;
}

// Device limits that do not depend on the GPU model (CUDA compute capability 3.0 and newer).
struct GpuLimits {
    int64_t max_threads_per_block = 1024;
    int64_t max_block_dim[3] = {1024, 1024, 64};
    int64_t max_grid_dim[3] = {2147483647, 65535, 65535};
    int64_t max_static_shared_bytes = 48 * 1024;
};

namespace gpu_kernel_detail {

class BindThreads : public ir::IRMutator {
public:
    BindThreads(std::string kernel, const std::unordered_map<const ir::Object*, std::string>& names)
        : kernel_(std::move(kernel)), names_(names) {}
    std::map<std::string, Expr> extents;  // per launched tag
    std::vector<std::pair<std::string, int64_t>> shared;  // buffer name, bytes
    using IRMutator::mutate;

    std::string describe(const Var& v) const {
        auto it = names_.find(v.get());
        return it != names_.end() ? it->second : "loop '" + v.name() + "'";
    }

protected:
    ir::Stmt visit_(const ir::For* op, const ir::Stmt& self) override {
        if (op->for_kind != ir::ForKind::ThreadBound) return IRMutator::visit_(op, self);
        const std::string& tag = op->thread_tag;
        if (ir::gpu::is_vthread_tag(tag))
            return ir::For::make(op->loop_var, op->min, op->extent, ir::ForKind::Unrolled, mutate(op->body));
        WEFT_CHECK(ir::gpu::is_block_tag(tag) || ir::gpu::is_thread_tag(tag), "CUDA kernel '", kernel_, "': ",
                   describe(op->loop_var), " is bound to unknown thread axis '", tag,
                   "' (use block_x/y/z(), thread_x/y/z() or vthread())");
        bool known = false;
        for (auto* t : launch_tags()) known |= tag == t;
        WEFT_CHECK(known, "CUDA kernel '", kernel_, "': ", describe(op->loop_var), " is bound to unknown thread axis '",
                   tag, "'");
        Expr extent = ir::arith::simplify(op->extent);
        int64_t c;
        if (ir::gpu::is_thread_tag(tag))
            WEFT_CHECK(ir::as_const_int(extent, &c), "CUDA kernel '", kernel_, "': ", describe(op->loop_var),
                       " is bound to ", tag, " with extent ", ir::to_string(extent),
                       ", which is not a constant; the threads of a block are fixed at launch: split the loop by a "
                       "constant factor and bind the inner loop");
        if (auto it = extents.find(tag); it != extents.end()) {
            WEFT_CHECK(ir::arith::can_prove(it->second == extent), "CUDA kernel '", kernel_, "': ",
                       describe(op->loop_var), " is bound to ", tag, " with extent ", ir::to_string(extent), ", but ",
                       first_loop_[tag], " is bound to ", tag, " with extent ", ir::to_string(it->second),
                       "; all loops bound to one thread axis share its index, so their extents must be equal "
                       "(split them by the same factor)");
        } else {
            extents[tag] = extent;
            first_loop_[tag] = describe(op->loop_var);
        }
        Expr index = ir::gpu::thread_index(tag);
        Expr value = ir::is_zero(op->min) ? index : ir::arith::simplify(op->min + index);
        return ir::LetStmt::make(op->loop_var, value, mutate(op->body));
    }
    ir::Stmt visit_(const ir::Allocate* op, const ir::Stmt& self) override {
        int64_t n = 1, c;
        bool constant = true;
        for (auto& e : op->extents) {
            constant &= ir::as_const_int(ir::arith::simplify(e), &c);
            if (constant) n *= c;
        }
        WEFT_CHECK(op->scope == "shared" || op->scope == "local", "CUDA kernel '", kernel_, "': buffer '",
                   op->buffer.name(), "' is in ", op->scope,
                   " memory, which a kernel cannot allocate; compute it at a loop in \"shared\" or \"local\" scope");
        WEFT_CHECK(constant, "CUDA kernel '", kernel_, "': ", op->scope, " buffer '", op->buffer.name(),
                   "' has a size that is not a constant (", ir::to_string(op->extents.at(0)),
                   "); GPU shared and local arrays are sized at compile time: split the loops it is computed in by "
                   "constant factors");
        if (op->scope == "shared") shared.emplace_back(op->buffer.name(), n * op->type.bytes() * op->type.lanes);
        return IRMutator::visit_(op, self);
    }

private:
    std::string kernel_;
    const std::unordered_map<const ir::Object*, std::string>& names_;
    std::map<std::string, std::string> first_loop_;  // per tag, the first loop bound to it
};

// Serial loops start at 0 (`for (r, 0, 4) { i = m + r }`): a local accumulator's index then
// simplifies to a constant per unrolled iteration, so NVCC keeps it in registers.
class RebaseLoops : public ir::IRMutator {
public:
    using IRMutator::mutate;

protected:
    ir::Stmt visit_(const ir::For* op, const ir::Stmt& self) override {
        ir::Stmt s = IRMutator::visit_(op, self);
        auto* f = s.as<ir::For>();
        if (ir::is_zero(f->min) || f->for_kind == ir::ForKind::ThreadBound) return s;
        Var v(f->loop_var.name(), f->loop_var.type());
        ir::Stmt body = ir::substitute(f->body, {{f->loop_var, v + f->min}});
        return ir::For::make(v, make_int(0, f->min.type()), f->extent, f->for_kind, body, f->thread_tag);
    }
};

}  // namespace gpu_kernel_detail

// The kernel body: thread loops bound, limits checked, launch extents as attributes.
inline ir::Stmt make_gpu_kernel(const std::string& kernel, ir::Stmt body,
                                const std::unordered_map<const ir::Object*, std::string>& loop_names,
                                const GpuLimits& limits = {}) {
    gpu_kernel_detail::BindThreads bind(kernel, loop_names);
    body = bind.mutate(body);
    body = ir::arith::simplify(gpu_kernel_detail::RebaseLoops().mutate(body));
    int64_t threads = 1;
    for (int d = 0; d < 3; ++d) {
        std::string tag = std::string("threadIdx.") + "xyz"[d];
        auto it = bind.extents.find(tag);
        if (it == bind.extents.end()) continue;
        int64_t e = 0;
        ir::as_const_int(it->second, &e);
        WEFT_CHECK(e <= limits.max_block_dim[d], "CUDA kernel '", kernel, "': ", tag, " has extent ", e,
                   ", over the device limit of ", limits.max_block_dim[d], "; split the loop bound to it");
        threads *= e;
    }
    WEFT_CHECK(threads <= limits.max_threads_per_block, "CUDA kernel '", kernel, "': a block has ", threads,
               " threads (the product of the threadIdx extents), over the device limit of ",
               limits.max_threads_per_block, "; bind smaller splits to thread_x/y/z()");
    for (int d = 0; d < 3; ++d) {
        std::string tag = std::string("blockIdx.") + "xyz"[d];
        auto it = bind.extents.find(tag);
        int64_t e;
        if (it != bind.extents.end() && ir::as_const_int(it->second, &e))
            WEFT_CHECK(e <= limits.max_grid_dim[d], "CUDA kernel '", kernel, "': ", tag, " has extent ", e,
                       ", over the device's grid limit of ", limits.max_grid_dim[d],
                       "; bind a larger block or fuse this axis into blockIdx.x");
    }
    int64_t shared_bytes = 0;
    std::string shared_list;
    for (auto& [name, bytes] : bind.shared) {
        shared_bytes += bytes;
        shared_list += (shared_list.empty() ? "" : ", ") + name + " " + std::to_string(bytes) + " B";
    }
    WEFT_CHECK(shared_bytes <= limits.max_static_shared_bytes, "CUDA kernel '", kernel, "': its shared buffers need ",
               shared_bytes, " bytes (", shared_list, "), over the ", limits.max_static_shared_bytes,
               " bytes of static shared memory a block may have; use smaller tiles");
    for (auto it = launch_tags().rbegin(); it != launch_tags().rend(); ++it)
        if (auto e = bind.extents.find(*it); e != bind.extents.end())
            body = ir::AttrStmt::make(ir::gpu::thread_extent_key, ir::gpu::launch_extent(*it, e->second), body);
    return body;
}

}  // namespace weft::lower_passes
