// Helpers shared by the nn operators' definitions: rank-generic compute, axis and dtype
// checks, the host's vector width, and the walks the default schedules use.
#pragma once
#include <string>
#include <vector>

#include "weft/ir/target.hpp"
#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"
#include "weft/topi/impl/same_extent.hpp"

namespace weft::topi::nn_detail {

// compute() for a rank known only at run time: f gets one index per dimension.
inline Tensor compute_nd(const std::vector<Expr>& shape, const std::function<Expr(const std::vector<Expr>&)>& f,
                         const std::string& name) {
    return te::compute(shape, f, name);
}

inline void check_defined(const Tensor& x, const std::string& op, const char* what = "input") {
    WEFT_CHECK(x.defined(), op, ": the ", what, " tensor is undefined");
}

inline void check_float(const Tensor& x, const std::string& op, const char* what = "input") {
    check_defined(x, op, what);
    WEFT_CHECK(x.dtype().is_float(), op, ": the ", what, " '", x.name(), "' has dtype ", x.dtype().str(),
               "; it needs a float tensor (cast it first)");
}

// `axis` in [-ndim, ndim) made non-negative.
inline int normalize_axis(int axis, int ndim, const std::string& op) {
    WEFT_CHECK(axis >= -ndim && axis < ndim, op, ": axis ", axis, " is out of range for a ", ndim,
               "-dimensional tensor (use ", -ndim, "..", ndim - 1, ")");
    return axis < 0 ? axis + ndim : axis;
}

// A reduce axis's extent is stored as (end - begin): simplify before reading it.
inline bool const_extent(const Expr& e, int64_t* v) { return ir::as_const_int(ir::arith::simplify(e), v); }

using detail::same_extent;

// The index into a tensor of shape `in` (right-aligned in the broadcast result) for the
// result's indices `out_idx`: missing leading dimensions dropped, dimensions of 1 read at 0.
inline std::vector<Expr> broadcast_index(const std::vector<Expr>& in, const std::vector<Expr>& out_shape,
                                         const std::vector<Expr>& out_idx) {
    size_t skip = out_idx.size() - in.size();
    std::vector<Expr> idx;
    for (size_t d = 0; d < in.size(); ++d)
        idx.push_back(ir::is_one(in[d]) && !ir::is_one(out_shape[skip + d]) ? make_int(0) : out_idx[skip + d]);
    return idx;
}

// Lanes of this dtype in one of the target's vector registers (at least 1).
inline int vector_lanes(DataType t, const Target& target) {
    return std::max(1, target.vector_bits / std::max(8, int(t.bits)));
}

// Every compute tensor `t` reads directly.
inline std::vector<Tensor> compute_inputs(const Tensor& t) {
    std::vector<Tensor> out;
    for (auto& in : t.op().input_tensors())
        if (in.op()->is_compute()) out.push_back(in);
    return out;
}

// The compute stage among the stages `t` reads (directly or not) named `name` (the
// statistics' stages are named "<op>.<what>" by their operator), or undefined.
inline Tensor find_input_named(const Tensor& t, const std::string& name) {
    std::vector<Tensor> todo{t};
    while (!todo.empty()) {
        Tensor cur = todo.back();
        todo.pop_back();
        for (auto& in : compute_inputs(cur)) {
            if (in.op()->name == name) return in;
            todo.push_back(in);
        }
    }
    return Tensor();
}
// The same, or a weft::Error naming `who` when there is none.
inline Tensor input_named(const Tensor& t, const std::string& name, const std::string& who) {
    Tensor found = find_input_named(t, name);
    WEFT_CHECK(found.defined(), who, ": '", t.name(), "' does not read a stage named '", name,
               "'; pass the tensor the operator returned");
    return found;
}

// The reduce axis of `red` that its source reads in the last dimension of some tensor
// (the one to vectorize along), if any.
inline IterVar innermost_reduce_axis(const Tensor& red) {
    IterVar found;
    for (auto& body : red.op()->body)
        ir::post_order_visit(body, [&](const ir::Object* node) {
            if (node->kind != ir::NodeKind::ProducerLoad) return;
            auto* load = static_cast<const ir::ProducerLoad*>(node);
            if (load->indices.empty()) return;
            for (auto& k : red.op()->reduce_axis)
                if (load->indices.back().get() == k.var().get()) found = k;
        });
    return found;
}

// A float coordinate from the data held within [lo, hi], NaN at lo, before its floor becomes
// an index: a float past int64 or NaN converted to an integer is undefined (LLVM's fptosi
// gives poison), and so is the read after it. The callers pick bounds past which every tap
// of the coordinate reads the same (nothing, or the edge).
inline Expr clamp_coordinate(Expr v, double lo, double hi) {
    const DataType t = v.type();
    return ir::select(v > ir::make_const(t, lo), ir::select(v < ir::make_const(t, hi), v, ir::make_const(t, hi)),
                      ir::make_const(t, lo));
}

inline bool is_output(const Schedule& s, const Tensor& t) {
    for (auto& o : s.outputs())
        if (o.same_as(t.op())) return true;
    return false;
}

// Inlines, depth first, every element-wise stage that `t` reads (not reductions, not
// outputs), and the stages they read in turn; stops at reductions and inputs. Returns the
// stages it inlined, plus `t` itself first.
inline std::vector<Tensor> inline_injective_inputs(Schedule& s, const Tensor& t) {
    std::vector<Tensor> chain{t}, todo{t};
    while (!todo.empty()) {
        Tensor cur = todo.back();
        todo.pop_back();
        for (auto& in : compute_inputs(cur)) {
            if (in.op()->is_reduction() || is_output(s, in)) continue;
            bool seen = false;
            for (auto& c : chain) seen |= c.op().same_as(in.op());
            if (seen) continue;
            s[in].compute_inline();
            chain.push_back(in);
            todo.push_back(in);
        }
    }
    return chain;
}

// Inlines the element-wise stages between an operator's result `op` and the epilogue `out`
// that the kernel writes (not op itself, not what op reads, not reductions).
inline void inline_epilogue(Schedule& s, const Tensor& op, const Tensor& out) {
    std::vector<Tensor> todo{out};
    std::vector<Operation> done;
    while (!todo.empty()) {
        Tensor cur = todo.back();
        todo.pop_back();
        for (auto& in : compute_inputs(cur)) {
            if (in.op().same_as(op.op()) || in.op()->is_reduction() || is_output(s, in)) continue;
            bool seen = false;
            for (auto& d : done) seen |= d.same_as(in.op());
            if (seen) continue;
            done.push_back(in.op());
            s[in].compute_inline();
            todo.push_back(in);
        }
    }
}

// Whether every tensor read in these stages' bodies is read at exactly the reading stage's
// own axes, in order (no broadcast, no transposition): then fusing all axes keeps every
// load contiguous.
inline bool reads_element_for_element(const std::vector<Tensor>& stages) {
    bool ok = true;
    for (auto& t : stages) {
        const te::OperationNode& op = *t.op().get();
        for (auto& body : op.body)
            ir::post_order_visit(body, [&](const ir::Object* node) {
                if (node->kind != ir::NodeKind::ProducerLoad) return;
                auto* load = static_cast<const ir::ProducerLoad*>(node);
                if (load->indices.size() != op.axis.size()) {
                    ok = false;
                    return;
                }
                for (size_t d = 0; d < op.axis.size(); ++d) {
                    auto* v = load->indices[d].as<ir::VarNode>();
                    if (!v || v != op.axis[d].var().get()) ok = false;
                }
            });
    }
    return ok;
}

// Fuses a stage's loops `axes` (adjacent, outer to inner) into one.
inline IterVar fuse_all(Stage st, const std::vector<IterVar>& axes) {
    IterVar f = axes.at(0);
    for (size_t d = 1; d < axes.size(); ++d) f = st.fuse(f, axes[d]);
    return f;
}

// Product of constant extents, or -1 when one is symbolic.
inline int64_t const_size(const std::vector<Expr>& shape) {
    int64_t n = 1;
    for (auto& e : shape) {
        int64_t v;
        if (!const_extent(e, &v)) return -1;
        n *= v;
    }
    return n;
}

// Parallel loops pay a fork/join of the thread pool (microseconds): below this many
// elements a kernel runs on the calling thread.
constexpr int64_t kMinParallelElements = 1 << 15;

// Outputs of at least this many bytes are written with non-temporal stores
// (Stage::store_nontemporal): next to their inputs they overflow a typical last-level cache
// share, so caching them only adds a read of every written line and evicts the inputs.
// Measured on a Zen 4 with 32 MiB of L3, 1 thread: the fused chain over 64 MiB went from 19 to
// 30 GB/s. Smaller outputs keep plain stores: the next kernel may read them from the cache.
constexpr int64_t kNontemporalOutputBytes = int64_t(16) << 20;

inline void store_nontemporal_if_large(Schedule& s, const Tensor& out) {
    const int64_t n = const_size(out.shape());
    if (n >= 0 && n * out.dtype().bytes() >= kNontemporalOutputBytes) s[out].store_nontemporal();
}

}  // namespace weft::topi::nn_detail
