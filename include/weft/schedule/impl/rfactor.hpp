// Definition of Schedule::rfactor (schedule/schedule.hpp).
#include <unordered_map>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/schedule/relations.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft {

Tensor Schedule::rfactor(const Tensor& t, const IterVar& axis, int factor_axis, std::source_location loc) {
    WEFT_CHECK_AT(loc, t.defined(), "rfactor: the tensor is undefined");
    Stage st = (*this)[t];
    StageNode& n = *st.node();
    Operation op = n.op;
    WEFT_CHECK_AT(loc, op->is_compute() && op->is_reduction(), "rfactor: '", t.name(),
                  "' is not a reduction (its body has no sum/max/min/... over reduce axes)");
    WEFT_CHECK_AT(loc, axis.defined(), "rfactor of '", t.name(), "': the axis is undefined");
    bool is_leaf = false;
    for (auto& iv : n.leaf_iter_vars) is_leaf |= iv.same_as(axis);
    WEFT_CHECK_AT(loc, is_leaf && axis->iter_kind == ir::IterKind::Reduce, "rfactor of '", t.name(), "': '",
                  axis.name(), "' is not a reduce loop of its stage (give a reduce axis or a loop split from one)");
    // Only splits of reduce axes may precede rfactor: the new stages start with fresh loops.
    for (auto& rel : n.relations) {
        auto* sp = std::get_if<SplitRelation>(&rel);
        WEFT_CHECK_AT(loc, sp && sp->parent->iter_kind == ir::IterKind::Reduce, "rfactor of '", t.name(),
                      "' must come before fuse and before splits of data axes on its stage");
    }
    WEFT_CHECK_AT(loc, n.attrs.empty() && n.attach == AttachType::Root, "rfactor of '", t.name(),
                  "' must come before vectorize/unroll/parallel/compute_at on its stage");
    const int ndim = int(op->axis.size());
    if (factor_axis < 0) factor_axis += ndim + 1;
    WEFT_CHECK_AT(loc, factor_axis >= 0 && factor_axis <= ndim, "rfactor of '", t.name(), "': factor_axis ",
                  factor_axis, " is out of range for a ", ndim, "-dimensional tensor (0..", ndim, " or -1)");

    // Every original reduce axis in terms of the leaf loops, and the guards of splits that
    // do not divide (they become the new reduction's condition).
    std::vector<ir::Range> region;
    for (auto& a : op->axis) region.push_back(a.dom());
    auto info = schedule_detail::solve_relations(n, region);
    auto extent_of = [&](const IterVar& iv) { return ir::arith::simplify(info.range.at(iv.get()).extent); };

    // RF: data axes = t's axes with `axis` inserted; reduce axes = the other reduce leaves.
    std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq> to_rf;
    std::vector<IterVar> rf_axes, rf_reduce;
    IterVar kept;
    for (int d = 0; d <= ndim; ++d) {
        if (d == factor_axis) {
            kept = IterVar(ir::Range(make_int(0), extent_of(axis)), Var(axis.name() + ".rf", index_type),
                           ir::IterKind::DataPar);
            rf_axes.push_back(kept);
        }
        if (d == ndim) break;
        auto& a = op->axis[size_t(d)];
        IterVar fresh(a.dom(), Var(a.name() + ".rf", index_type), ir::IterKind::DataPar);
        to_rf[a.var()] = fresh.var();
        rf_axes.push_back(fresh);
    }
    std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq> leaf_to_rf;
    leaf_to_rf[axis.var()] = kept.var();
    for (auto& iv : n.leaf_iter_vars) {
        if (iv->iter_kind != ir::IterKind::Reduce || iv.same_as(axis)) continue;
        IterVar fresh(ir::Range(make_int(0), extent_of(iv)), Var(iv.name(), index_type), ir::IterKind::Reduce);
        leaf_to_rf[iv.var()] = fresh.var();
        rf_reduce.push_back(fresh);
    }
    WEFT_CHECK_AT(loc, !rf_reduce.empty(), "rfactor of '", t.name(), "': '", axis.name(),
                  "' is its only reduce loop, so nothing would be left to reduce in the factored stage; "
                  "split it first (e.g. split(k, 16) and rfactor over the inner loop)");
    for (auto& r : op->reduce_axis) to_rf[r.var()] = ir::substitute(info.value.at(r.get()), leaf_to_rf);
    Expr cond = ir::make_const(boolean, 1);
    // likely(): loop partitioning cuts the factored loops into guard-free steady loops (vector
    // code over a symbolic length) and a guarded tail, as it does a split's own guard.
    for (auto& [c, is_reduce] : info.guards) cond = cond && ir::likely(ir::substitute(c, leaf_to_rf));

    auto* first = op->body[0].as<ir::Reduce>();
    std::vector<Expr> sources;
    for (auto& src : first->source) sources.push_back(ir::substitute(src, to_rf));
    if (!ir::is_one(first->condition)) cond = ir::substitute(first->condition, to_rf) && cond;
    cond = ir::arith::simplify(cond);
    std::vector<Expr> rf_body;
    for (size_t v = 0; v < op->body.size(); ++v)
        rf_body.push_back(ir::Reduce::make(first->combiner, sources, rf_reduce, cond, int(v)));
    // A second rfactor of the same reduction gets its own name (S.rf, S.rf2, ...).
    std::string rf_name = op->name + ".rf";
    for (int n_same = 2;; ++n_same) {
        bool taken = false;
        for (auto& other : n_->stages) taken |= other.name() == rf_name;
        if (!taken) break;
        rf_name = op->name + ".rf" + std::to_string(n_same);
    }
    Operation rf_op = te::detail::make_compute(rf_axes, rf_body, rf_name);

    // t reduces RF over the kept axis.
    IterVar rv(ir::Range(make_int(0), extent_of(axis)), Var(axis.name() + ".v", index_type), ir::IterKind::Reduce);
    std::vector<Expr> idx;
    for (int d = 0; d < ndim; ++d) idx.push_back(op->axis[size_t(d)].var());
    idx.insert(idx.begin() + factor_axis, rv.var());
    std::vector<Expr> partials;
    for (int v = 0; v < op->num_outputs(); ++v) partials.push_back(rf_op.output(v).at(idx));
    std::vector<Expr> body;
    for (size_t v = 0; v < op->body.size(); ++v)
        body.push_back(ir::Reduce::make(first->combiner, partials, {rv}, ir::make_const(boolean, 1), int(v)));
    auto node = std::make_shared<te::OperationNode>(te::OperationNode::OpKind::Compute, op->name);
    node->axis = op->axis;
    node->reduce_axis = {rv};
    node->body = body;

    TraceStep step{n.op.name(), "rfactor", {}, {int64_t(factor_axis)}, {}};
    for (size_t i = 0; i < n.all_iter_vars.size(); ++i)
        if (n.all_iter_vars[i].same_as(axis)) step.iter_vars.push_back(int(i));
    n.previous_ops.push_back(op);
    n.op = Operation(std::shared_ptr<const te::OperationNode>(node));
    n.relations.clear();
    n.all_iter_vars = n.op->axis;
    n.all_iter_vars.push_back(rv);
    n.leaf_iter_vars = n.all_iter_vars;
    auto rf_stage = std::make_shared<StageNode>();
    rf_stage->op = rf_stage->origin_op = rf_op;
    rf_stage->schedule = n_.get();
    rf_stage->all_iter_vars = rf_axes;
    rf_stage->all_iter_vars.insert(rf_stage->all_iter_vars.end(), rf_reduce.begin(), rf_reduce.end());
    rf_stage->leaf_iter_vars = rf_stage->all_iter_vars;
    auto it = std::find_if(n_->stages.begin(), n_->stages.end(), [&](const Stage& s) { return s.same_as(st); });
    n_->stages.insert(it, Stage(rf_stage));
    n_->trace.push_back(std::move(step));
    return rf_op.output(t.value_index());
}

}  // namespace weft
