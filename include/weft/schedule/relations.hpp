// A stage's loop relations solved: the range of every axis (root, split and fused ones)
// over a region of the root axes, the value of every axis in terms of the leaf loops, and
// the guards non-dividing splits need. Lowering builds loop nests from it; rfactor uses it
// to rewrite a reduction in terms of split reduce loops.
#pragma once
#include <unordered_map>
#include <vector>

#include "weft/ir/arith/simplify.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft::schedule_detail {

struct IvRange {
    Expr min, extent;
};

struct NestInfo {
    std::unordered_map<const void*, IvRange> range;  // per IterVar node
    std::unordered_map<const void*, Expr> value;     // per IterVar node, in leaf loop vars
    // Guards (value < min + extent) for splits that may not divide; `reduce` marks those
    // that involve a reduction axis (they do not guard the init).
    std::vector<std::pair<Expr, bool>> guards;
};

inline Expr ceil_div(const Expr& a, const Expr& b) { return ir::arith::simplify((a + b - 1) / b); }

inline NestInfo solve_relations(const StageNode& st, const std::vector<ir::Range>& region) {
    NestInfo info;
    auto& op = st.op;
    for (size_t d = 0; d < op->axis.size(); ++d) info.range[op->axis[d].get()] = {region[d].min, region[d].extent};
    for (auto& r : op->reduce_axis) info.range[r.get()] = {r.dom().min, r.dom().extent};
    // Forward: ranges of derived axes.
    for (auto& rel : st.relations) {
        if (auto* sp = std::get_if<SplitRelation>(&rel)) {
            auto pr = info.range.at(sp->parent.get());
            Expr factor = sp->factor.defined() ? sp->factor : ceil_div(pr.extent, sp->nparts);
            Expr nouter = sp->factor.defined() ? ceil_div(pr.extent, sp->factor) : sp->nparts;
            info.range[sp->outer.get()] = {make_int(0), nouter};
            info.range[sp->inner.get()] = {make_int(0), factor};
        } else {
            auto& f = std::get<FuseRelation>(rel);
            auto ro = info.range.at(f.outer.get()), ri = info.range.at(f.inner.get());
            info.range[f.fused.get()] = {make_int(0), ir::arith::simplify(ro.extent * ri.extent)};
        }
    }
    // Backward: values of every axis from the leaf loop variables.
    for (auto& iv : st.leaf_iter_vars) info.value[iv.get()] = iv.var();
    for (auto it = st.relations.rbegin(); it != st.relations.rend(); ++it) {
        if (auto* sp = std::get_if<SplitRelation>(&*it)) {
            auto pr = info.range.at(sp->parent.get());
            Expr factor = info.range.at(sp->inner.get()).extent;
            Expr start = info.value.at(sp->outer.get()) * factor;
            Expr covered = info.range.at(sp->outer.get()).extent * factor;
            const bool exact = ir::arith::can_prove(covered == pr.extent);
            // TailStrategy::ShiftInwards: the last tile starts at extent - factor (it overlaps
            // the previous one) where the extent is known to hold a whole tile.
            const bool shift_asked = !exact && sp->tail != TailStrategy::Guard;
            const bool shift = shift_asked && ir::arith::can_prove(pr.extent >= factor);
            if (shift) start = ir::min(start, pr.extent - factor);
            // TailStrategy::ShiftInwardsOrGuard over an extent that may be below a tile:
            // shifted but never before the start, and guarded.
            const bool shift_guarded = shift_asked && !shift && sp->tail == TailStrategy::ShiftInwardsOrGuard;
            if (shift_guarded) start = ir::max(ir::min(start, pr.extent - factor), make_int(0));
            info.value[sp->parent.get()] = ir::arith::simplify(pr.min + start + info.value.at(sp->inner.get()));
            // Guard unless the split provably covers the parent exactly.
            if (!exact && !shift) {
                Expr cond = info.value.at(sp->parent.get()) < pr.min + pr.extent;
                info.guards.emplace_back(cond, sp->parent->iter_kind == ir::IterKind::Reduce);
            }
        } else {
            auto& f = std::get<FuseRelation>(*it);
            auto ro = info.range.at(f.outer.get()), ri = info.range.at(f.inner.get());
            Expr fv = info.value.at(f.fused.get());
            info.value[f.outer.get()] = ir::arith::simplify(ro.min + fv / ri.extent);
            info.value[f.inner.get()] = ir::arith::simplify(ri.min + fv % ri.extent);
        }
    }
    return info;
}

}  // namespace weft::schedule_detail
