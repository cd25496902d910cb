// Stage::prefetch: software prefetches at the top of a loop of a stage's nest (TVM's
// prefetch). For `prefetch(t, iv, offset)` the region of t that the stage's own body reads in
// one iteration of iv (the inner loops relaxed to their ranges) is taken at iteration
// iv + offset, and every cache line of it gets one hint:
//
//   for (iv, ...) {
//     for (p0, 0, rows) for (p1, 0, lines) weft.prefetch(t[lo0 + p0, lo1 + p1 * 16])   // 64-byte lines
//     ...the iteration's own work...
//   }
//
// The hint is Evaluate(weft.prefetch(load)) with a ProducerLoad of t as its argument; storage
// flattening makes the load a flat Load, and the CPU backend emits llvm.prefetch for its
// address without reading it. Bound inference ignores these loads (schedule_ops.hpp).
#pragma once
#include <vector>

#include "weft/ir/arith/interval.hpp"
#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft::lower_passes {

namespace prefetch_detail {

inline constexpr int64_t kCacheLineBytes = 64;
inline constexpr const char* kPrefetch = "weft.prefetch";

inline bool is_prefetch(const ir::Call* call) { return call->name == kPrefetch; }

// The box of `tensor` that loads inside a loop body touch, each loop inside it relaxed to
// its range; variables of enclosing loops stay symbolic.
class ReadBox : public ir::IRVisitor {
public:
    ReadBox(const te::OperationNode* tensor, int value_index) : tensor_(tensor), value_index_(value_index) {}
    std::vector<ir::arith::Interval> box;
    using IRVisitor::visit;

protected:
    void visit_(const ir::For* op) override {
        ranges_[op->loop_var] = ir::arith::Interval(op->min, op->min + op->extent - 1);
        visit(op->body);
    }
    void visit_(const ir::ProducerLoad* op) override {
        IRVisitor::visit_(op);
        if (static_cast<const void*>(op->producer.get()) != static_cast<const void*>(tensor_) ||
            op->value_index != value_index_)
            return;
        if (box.empty()) box.resize(op->indices.size());
        for (size_t d = 0; d < op->indices.size(); ++d) {
            ir::arith::Interval iv = ir::arith::bounds_of(op->indices[d], ranges_);
            if (first_) box[d] = iv;
            else if (!iv.is_bounded() || !box[d].is_bounded()) box[d] = ir::arith::Interval::everything();
            else box[d] = ir::arith::Interval(ir::min(box[d].min, iv.min), ir::max(box[d].max, iv.max));
        }
        first_ = false;
    }

private:
    const te::OperationNode* tensor_;
    int value_index_;
    ir::arith::VarRanges ranges_;
    bool first_ = true;
};

// Prepends the prefetches of `p` to the body of the loop over p.loop.
class InsertPrefetch : public ir::IRMutator {
public:
    InsertPrefetch(const StageNode& st, const StageNode::Prefetch& p) : st_(st), p_(p) {}
    bool found = false;
    using IRMutator::mutate;

protected:
    ir::Stmt visit_(const ir::For* op, const ir::Stmt& self) override {
        if (!op->loop_var.same_as(p_.loop.var())) return IRMutator::visit_(op, self);
        found = true;
        WEFT_CHECK(op->for_kind != ir::ForKind::Vectorized, "prefetch of '", p_.tensor.name(), "' at loop '",
                   p_.loop.name(), "' of stage '", st_.op.name(), "': the loop is vectorized; prefetch at a loop around it");
        ReadBox box(p_.tensor.op().get(), p_.tensor.value_index());
        box.visit(op->body);
        WEFT_CHECK(!box.box.empty(), "prefetch of '", p_.tensor.name(), "' at loop '", p_.loop.name(), "' of stage '",
                   st_.op.name(), "': the stage reads nothing of it inside that loop");
        ir::Stmt hints = prefetch_nest(box.box, op->loop_var);
        return ir::For::make(op->loop_var, op->min, op->extent, op->for_kind, ir::Seq::make({hints, op->body}),
                             op->thread_tag);
    }

private:
    // One hint per cache line of the box, at iteration loop_var + offset.
    ir::Stmt prefetch_nest(const std::vector<ir::arith::Interval>& box, const Var& loop_var) {
        const Expr later = loop_var + make_int(p_.offset);
        const int64_t step = std::max<int64_t>(1, kCacheLineBytes / std::max(1, p_.tensor.dtype().bytes()));
        std::vector<Var> vars;
        std::vector<Expr> extents, index;
        for (size_t d = 0; d < box.size(); ++d) {
            WEFT_CHECK(box[d].has_lower() && box[d].has_upper(), "prefetch of '", p_.tensor.name(), "' at loop '",
                       p_.loop.name(), "' of stage '", st_.op.name(), "': dimension ", d,
                       " of the region it reads has no bound");
            Expr lo = ir::substitute(box[d].min, {{loop_var, later}});  // the region `offset` iterations on
            Expr extent = ir::arith::simplify(box[d].max - box[d].min + 1);
            const bool last = d + 1 == box.size();
            Var v(p_.tensor.name() + ".prefetch" + std::to_string(d), index_type);
            vars.push_back(v);
            // A row of n elements that starts anywhere in a line touches up to (n + 2 step - 2) / step lines.
            extents.push_back(last ? ir::arith::simplify((extent + make_int(2 * step - 2)) / make_int(step)) : extent);
            index.push_back(ir::arith::simplify(lo + (last ? v * make_int(step) : Expr(v))));
        }
        Expr load = p_.tensor.at(index);
        ir::Stmt s = ir::Evaluate::make(ir::Call::make(p_.tensor.dtype(), kPrefetch, {load}, ir::Call::CallKind::Intrinsic));
        for (size_t d = box.size(); d-- > 0;) s = ir::For::make(vars[d], make_int(0), extents[d], ir::ForKind::Serial, s);
        return s;
    }

    const StageNode& st_;
    const StageNode::Prefetch& p_;
};

}  // namespace prefetch_detail

// The stage's nest with its Stage::prefetch hints in place.
inline ir::Stmt insert_prefetches(const StageNode& st, ir::Stmt nest) {
    for (auto& p : st.prefetches) {
        prefetch_detail::InsertPrefetch ins(st, p);
        nest = ins.mutate(nest);
        WEFT_CHECK(ins.found, "prefetch of '", p.tensor.name(), "' on stage '", st.op.name(), "': loop '", p.loop.name(),
                   "' is no longer a loop of the stage (split, fused or tensorized after the prefetch); call prefetch "
                   "on the loop the stage ends up with");
    }
    return nest;
}

}  // namespace weft::lower_passes
