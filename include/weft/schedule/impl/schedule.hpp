// Definitions for schedule/schedule.hpp: creating schedules and the primitives.
#include <algorithm>
#include <functional>
#include <unordered_set>

#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft {
namespace {

std::shared_ptr<StageNode> make_stage(const Operation& op, ScheduleNode* sch) {
    auto n = std::make_shared<StageNode>();
    n->op = op;
    n->origin_op = op;
    n->schedule = sch;
    if (op->is_compute()) {
        n->all_iter_vars = op->axis;
        n->all_iter_vars.insert(n->all_iter_vars.end(), op->reduce_axis.begin(), op->reduce_axis.end());
        n->leaf_iter_vars = n->all_iter_vars;
    }
    return n;
}

int index_in(const std::vector<IterVar>& v, const IterVar& iv) {
    for (size_t i = 0; i < v.size(); ++i)
        if (v[i].same_as(iv)) return int(i);
    return -1;
}

// Which stage owns iv, for error messages.
std::string owner_of(const ScheduleNode* sch, const IterVar& iv) {
    for (auto& s : sch->stages)
        if (index_in(s.node()->all_iter_vars, iv) >= 0) return s.name();
    return "";
}

// Position of iv among the stage's current loops, or a weft::Error saying why it is not one.
size_t leaf_position(const StageNode& n, const IterVar& iv, const char* primitive, const std::source_location& loc) {
    WEFT_CHECK_AT(loc, iv.defined(), primitive, " on stage '", n.op.name(), "': the axis is undefined");
    WEFT_CHECK_AT(loc, n.op->is_compute(), primitive, ": '", n.op.name(),
                  "' is a placeholder (an input); it has no loops to schedule");
    int pos = index_in(n.leaf_iter_vars, iv);
    if (pos >= 0) return size_t(pos);
    if (index_in(n.all_iter_vars, iv) >= 0)
        detail::throw_user_error_at(loc, detail::concat(primitive, " on stage '", n.op.name(), "': axis '", iv.name(),
                                                        "' is no longer a loop of this stage (it was split or fused); "
                                                        "use the axes that split/fuse returned"));
    std::string owner = owner_of(n.schedule, iv);
    if (!owner.empty())
        detail::throw_user_error_at(loc, detail::concat(primitive, " on stage '", n.op.name(), "': axis '", iv.name(),
                                                        "' belongs to stage '", owner, "', not to '", n.op.name(), "'"));
    detail::throw_user_error_at(loc, detail::concat(primitive, " on stage '", n.op.name(), "': axis '", iv.name(),
                                                    "' is not an axis of this stage"));
}

void record(StageNode& n, const char* primitive, std::vector<IterVar> ivs, std::vector<int64_t> ints = {},
            std::vector<std::string> strings = {}) {
    TraceStep step;
    step.stage = n.op.name();
    step.primitive = primitive;
    for (auto& iv : ivs) step.iter_vars.push_back(index_in(n.all_iter_vars, iv));
    step.ints = std::move(ints);
    step.strings = std::move(strings);
    n.schedule->trace.push_back(std::move(step));
}

IterVar derived(const IterVar& from, const std::string& suffix, ir::IterKind kind) {
    return IterVar(ir::Range(), Var(from.name() + "." + suffix, index_type), kind);
}

// The stage that computes `op`: its current operation, its original one, or one that
// cache_read/cache_write replaced (consumers built earlier still read those).
const StageNode* stage_of_op(const ScheduleNode* sch, const te::OperationNode* op) {
    for (auto& s : sch->stages) {
        const StageNode* n = s.node().get();
        if (n->op.get() == op || n->origin_op.get() == op) return n;
        for (auto& p : n->previous_ops)
            if (p.get() == op) return n;
    }
    return nullptr;
}

// Whether stage `consumer` reads stage `producer`, directly or through other stages
// (inlined ones have no loops). Stages, not operations, are compared: after cache_read or
// cache_write a consumer's body may still name an operation its producer's stage replaced.
bool reads_transitively(const ScheduleNode* sch, const StageNode* consumer, const StageNode* producer, int depth = 0) {
    if (depth > 64) return false;
    for (auto& t : consumer->op.input_tensors()) {
        const StageNode* st = stage_of_op(sch, t.op().get());
        if (st == producer) return true;
        if (st && st->op->is_compute() && reads_transitively(sch, st, producer, depth + 1)) return true;
    }
    return false;
}

}  // namespace

// ---- Stage ------------------------------------------------------------------------------

Operation Stage::op() const { return n_->op; }
Operation Stage::origin_op() const { return n_->origin_op; }
const std::vector<IterVar>& Stage::leaf_iter_vars() const { return n_->leaf_iter_vars; }
const std::vector<IterVar>& Stage::all_iter_vars() const { return n_->all_iter_vars; }
std::string Stage::name() const { return n_->op.name(); }

static std::pair<IterVar, IterVar> do_split(StageNode& n, const IterVar& parent, int64_t value, bool by_nparts,
                                            const std::source_location& loc) {
    const char* prim = by_nparts ? "split_nparts" : "split";
    size_t pos = leaf_position(n, parent, prim, loc);
    WEFT_CHECK_AT(loc, value > 0, prim, " of axis '", parent.name(), "' in stage '", n.op.name(), "': ",
                  by_nparts ? "nparts" : "factor", " must be positive, got ", value);
    IterVar outer = derived(parent, "outer", parent->iter_kind), inner = derived(parent, "inner", parent->iter_kind);
    SplitRelation rel{parent, outer, inner, {}, {}};
    (by_nparts ? rel.nparts : rel.factor) = make_int(value);
    n.relations.push_back(rel);
    n.all_iter_vars.push_back(outer);
    n.all_iter_vars.push_back(inner);
    n.leaf_iter_vars[pos] = outer;
    n.leaf_iter_vars.insert(n.leaf_iter_vars.begin() + long(pos) + 1, inner);
    return {outer, inner};
}

// Recorded after the split succeeded (a refused call leaves no step); parent keeps its
// position, the split only appends to all_iter_vars.
std::pair<IterVar, IterVar> Stage::split(const IterVar& parent, int64_t factor, std::source_location loc) {
    return split(parent, factor, TailStrategy::Guard, loc);
}

// The split primitives copy their axis first: a caller may pass an element of
// leaf_iter_vars(), which the split rewrites (and may reallocate) before the trace records it.
std::pair<IterVar, IterVar> Stage::split(const IterVar& axis, int64_t factor, TailStrategy tail,
                                         std::source_location loc) {
    const IterVar parent = axis;
    WEFT_CHECK_AT(loc, tail == TailStrategy::Guard || parent->iter_kind != ir::IterKind::Reduce,
                  "split of axis '", parent.name(), "' in stage '", name(),
                  "': TailStrategy::ShiftInwards recomputes the iterations its last tile overlaps, which would add "
                  "them to a reduction twice; split a reduce axis with TailStrategy::Guard");
    auto r = do_split(*n_, parent, factor, false, loc);
    std::get<SplitRelation>(n_->relations.back()).tail = tail;
    // The trace keeps the one-integer form for the default, so older JSON still reads.
    if (tail == TailStrategy::Guard) record(*n_, "split", {parent}, {factor});
    else record(*n_, "split", {parent}, {factor, int64_t(tail)});
    return r;
}

std::pair<IterVar, IterVar> Stage::split_nparts(const IterVar& axis, int64_t nparts, std::source_location loc) {
    const IterVar parent = axis;
    auto r = do_split(*n_, parent, nparts, true, loc);
    record(*n_, "split_nparts", {parent}, {nparts});
    return r;
}

std::tuple<IterVar, IterVar, IterVar, IterVar> Stage::tile(const IterVar& x, const IterVar& y, int64_t xf, int64_t yf,
                                                           std::source_location loc) {
    leaf_position(*n_, x, "tile", loc);
    leaf_position(*n_, y, "tile", loc);
    WEFT_CHECK_AT(loc, !x.same_as(y), "tile on stage '", name(), "': x and y are the same axis '", x.name(), "'");
    // Checked up front so a refused tile leaves the stage unchanged.
    WEFT_CHECK_AT(loc, xf > 0 && yf > 0, "tile on stage '", name(), "': factors must be positive, got ", xf, " and ", yf);
    auto [xo, xi] = split(x, xf, loc);
    auto [yo, yi] = split(y, yf, loc);
    reorder({xo, yo, xi, yi}, loc);
    return {xo, yo, xi, yi};
}

IterVar Stage::fuse(const IterVar& outer, const IterVar& inner, std::source_location loc) {
    size_t po = leaf_position(*n_, outer, "fuse", loc), pi = leaf_position(*n_, inner, "fuse", loc);
    WEFT_CHECK_AT(loc, pi == po + 1, "fuse on stage '", name(), "': '", outer.name(), "' and '", inner.name(),
                  "' are not adjacent loops ('", outer.name(), "' must immediately enclose '", inner.name(),
                  "'); reorder them first");
    WEFT_CHECK_AT(loc, outer->iter_kind == inner->iter_kind, "fuse on stage '", name(), "': cannot fuse '", outer.name(),
                  "' and '", inner.name(), "' because one is a reduction axis and the other is not");
    record(*n_, "fuse", {outer, inner});
    IterVar fused(ir::Range(), Var(outer.name() + "." + inner.name() + ".fused", index_type), outer->iter_kind);
    n_->relations.push_back(FuseRelation{outer, inner, fused});
    n_->all_iter_vars.push_back(fused);
    n_->leaf_iter_vars[po] = fused;
    n_->leaf_iter_vars.erase(n_->leaf_iter_vars.begin() + long(pi));
    return fused;
}

void Stage::reorder(const std::vector<IterVar>& order, std::source_location loc) {
    std::vector<size_t> pos;
    for (auto& iv : order) {
        size_t p = leaf_position(*n_, iv, "reorder", loc);
        WEFT_CHECK_AT(loc, std::find(pos.begin(), pos.end(), p) == pos.end(), "reorder on stage '", name(), "': axis '",
                      iv.name(), "' is listed twice");
        pos.push_back(p);
    }
    record(*n_, "reorder", order);
    std::vector<size_t> sorted = pos;
    std::sort(sorted.begin(), sorted.end());
    auto leaves = n_->leaf_iter_vars;
    for (size_t i = 0; i < order.size(); ++i) leaves[sorted[i]] = order[i];
    n_->leaf_iter_vars = leaves;
}

static void set_kind(StageNode& n, const IterVar& iv, ir::ForKind kind, const char* prim, const std::source_location& loc) {
    leaf_position(n, iv, prim, loc);
    // A vectorized reduce axis combines its lanes as a tree (lower/impl/vectorize.hpp); a
    // parallel one would have threads race on the accumulator.
    if (kind == ir::ForKind::Parallel)
        WEFT_CHECK_AT(loc, iv->iter_kind != ir::IterKind::Reduce, prim, " on stage '", n.op.name(), "': axis '", iv.name(),
                      "' is a reduction axis; its iterations depend on each other, so they cannot run in parallel "
                      "(reorder a data axis inside it, or use Schedule::rfactor to turn partial results into a data axis)");
    auto& a = n.attr_mut(iv);
    WEFT_CHECK_AT(loc, a.kind == ir::ForKind::Serial || a.kind == kind, prim, " on stage '", n.op.name(), "': axis '",
                  iv.name(), "' is already ", ir::for_kind_name(a.kind));
    a.kind = kind;
}

void Stage::vectorize(const IterVar& iv, std::source_location loc) {
    set_kind(*n_, iv, ir::ForKind::Vectorized, "vectorize", loc);
    record(*n_, "vectorize", {iv});
}
void Stage::unroll(const IterVar& iv, std::source_location loc) {
    set_kind(*n_, iv, ir::ForKind::Unrolled, "unroll", loc);
    record(*n_, "unroll", {iv});
}
void Stage::parallel(const IterVar& iv, std::source_location loc) {
    set_kind(*n_, iv, ir::ForKind::Parallel, "parallel", loc);
    record(*n_, "parallel", {iv});
}
void Stage::bind(const IterVar& iv, const ThreadAxis& axis, std::source_location loc) {
    WEFT_CHECK_AT(loc, !axis.tag.empty(), "bind on stage '", name(), "': empty thread axis");
    set_kind(*n_, iv, ir::ForKind::ThreadBound, "bind", loc);
    n_->attr_mut(iv).thread_tag = axis.tag;
    record(*n_, "bind", {iv}, {}, {axis.tag});
}
void Stage::pragma(const IterVar& iv, const std::string& pname, int64_t value, std::source_location loc) {
    leaf_position(*n_, iv, "pragma", loc);
    n_->attr_mut(iv).pragmas.emplace_back(pname, make_int(value));
    record(*n_, "pragma", {iv}, {value}, {pname});
}

void Stage::tensorize(const IterVar& axis, const TensorIntrin& intrin, std::source_location loc) {
    size_t pos = leaf_position(*n_, axis, "tensorize", loc);
    WEFT_CHECK_AT(loc, intrin.defined(), "tensorize on stage '", name(), "': the intrinsic is undefined");
    WEFT_CHECK_AT(loc, !n_->tensorize_intrin.defined(), "tensorize on stage '", name(), "': already tensorized with '",
                  n_->tensorize_intrin.name(), "'");
    const auto& desc = *intrin->desc.op().get();
    size_t data = 0, reduce = 0;
    for (size_t i = pos; i < n_->leaf_iter_vars.size(); ++i)
        (n_->leaf_iter_vars[i]->iter_kind == ir::IterKind::Reduce ? reduce : data)++;
    WEFT_CHECK_AT(loc, data == desc.axis.size() && reduce == desc.reduce_axis.size(), "tensorize on stage '", name(),
                  "' at '", axis.name(), "': the loops from there inward are ", data, " data-parallel and ", reduce,
                  " reduce loops, but intrinsic '", intrin.name(), "' has ", desc.axis.size(), " data-parallel and ",
                  desc.reduce_axis.size(), " reduce axes");
    record(*n_, "tensorize", {axis}, {}, {intrin.name()});
    n_->tensorize_axis = axis;
    n_->tensorize_intrin = intrin;
    n_->tensorize_loc = loc;
}

void Stage::compute_at(const Stage& parent, const IterVar& iv, std::source_location loc) {
    WEFT_CHECK_AT(loc, parent.defined(), "compute_at of '", name(), "': the parent stage is undefined");
    WEFT_CHECK_AT(loc, n_->op->is_compute(), "compute_at: '", name(), "' is a placeholder (an input), it is not computed");
    WEFT_CHECK_AT(loc, !n_->is_output, "compute_at: '", name(),
                  "' is an output of the schedule; outputs are computed at the root");
    WEFT_CHECK_AT(loc, !same_as(parent), "compute_at: stage '", name(), "' cannot be computed inside itself");
    leaf_position(*parent.n_, iv, "compute_at", loc);
    WEFT_CHECK_AT(loc, reads_transitively(n_->schedule, parent.n_.get(), n_.get()), "compute_at: stage '", parent.name(),
                  "' does not read '", name(), "', so '", name(), "' cannot be computed inside its loop '", iv.name(),
                  "'; attach it to a stage that consumes it");
    record(*n_, "compute_at", {}, {}, {parent.name()});
    n_->schedule->trace.back().iter_vars = {index_in(parent.n_->all_iter_vars, iv)};
    n_->attach = AttachType::Scope;
    n_->attach_stage = parent.n_;
    n_->attach_ivar = iv;
}

void Stage::compute_with(const Stage& other, const IterVar& iv, std::source_location loc) {
    WEFT_CHECK_AT(loc, other.defined(), "compute_with of '", name(), "': the other stage is undefined");
    WEFT_CHECK_AT(loc, n_->op->is_compute(), "compute_with: '", name(), "' is a placeholder (an input), it is not computed");
    WEFT_CHECK_AT(loc, !same_as(other), "compute_with: stage '", name(), "' cannot be fused with itself");
    size_t depth = leaf_position(*other.n_, iv, "compute_with", loc) + 1;
    WEFT_CHECK_AT(loc, n_->leaf_iter_vars.size() >= depth, "compute_with: '", name(), "' has ",
                  n_->leaf_iter_vars.size(), " loops, fewer than the ", depth, " of '", other.name(),
                  "' down to its loop '", iv.name(), "'");
    WEFT_CHECK_AT(loc, !reads_transitively(n_->schedule, other.n_.get(), n_.get()), "compute_with: '", other.name(),
                  "' reads '", name(), "', so '", name(), "' cannot run after it in each fused iteration");
    WEFT_CHECK_AT(loc, !other.n_->with_stage.lock(), "compute_with: '", other.name(),
                  "' is itself fused with another stage (compute_with); fuse '", name(), "' with that one");
    for (auto& st : n_->schedule->stages) {
        auto with = st.node()->with_stage.lock();
        WEFT_CHECK_AT(loc, with != n_, "compute_with: '", st.name(), "' is fused with '", name(),
                      "', so '", name(), "' cannot itself be fused with another stage (no chains)");
        WEFT_CHECK_AT(loc, with != other.n_ || st.same_as(*this), "compute_with: '", st.name(),
                      "' is already fused with '", other.name(), "'; a stage takes at most one other stage");
    }
    record(*n_, "compute_with", {}, {}, {other.name()});
    n_->schedule->trace.back().iter_vars = {index_in(other.n_->all_iter_vars, iv)};
    n_->with_stage = other.n_;
    n_->with_ivar = iv;
}

void Stage::compute_inline(std::source_location loc) {
    WEFT_CHECK_AT(loc, n_->op->is_compute(), "compute_inline: '", name(), "' is a placeholder (an input)");
    WEFT_CHECK_AT(loc, !n_->is_output, "compute_inline: '", name(),
                  "' is an output of the schedule; it must be stored, not inlined");
    WEFT_CHECK_AT(loc, !n_->op->is_reduction(), "compute_inline: '", name(),
                  "' is a reduction; only element-wise stages can be inlined (use compute_at instead)");
    record(*n_, "compute_inline", {});
    n_->attach = AttachType::Inline;
}

void Stage::compute_root(std::source_location loc) {
    WEFT_CHECK_AT(loc, n_->op->is_compute(), "compute_root: '", name(), "' is a placeholder (an input)");
    record(*n_, "compute_root", {});
    n_->attach = AttachType::Root;
    n_->attach_stage.reset();
    n_->attach_ivar = IterVar();
}

void Stage::set_scope(const std::string& scope, std::source_location loc) {
    WEFT_CHECK_AT(loc, scope == "global" || scope == "local" || scope == "shared", "set_scope on stage '", name(),
                  "': unknown storage scope '", scope, "' (use \"global\", \"local\" or \"shared\")");
    WEFT_CHECK_AT(loc, !n_->is_output || scope == "global", "set_scope: '", name(),
                  "' is an output, it lives in the caller's (global) buffer");
    record(*n_, "set_scope", {}, {}, {scope});
    n_->scope = scope;
}

void Stage::double_buffer(std::source_location loc) {
    WEFT_CHECK_AT(loc, n_->op->is_compute() && !n_->is_output, "double_buffer: '", name(),
                  "' is not an intermediate stage; double-buffer a shared cache stage (cache_read into \"shared\")");
    record(*n_, "double_buffer", {});
    n_->double_buffer = true;
}

void Stage::prefetch(const Tensor& t, const IterVar& iv, int64_t offset, std::source_location loc) {
    WEFT_CHECK_AT(loc, t.defined(), "prefetch on stage '", name(), "': the tensor is undefined");
    size_t pos = leaf_position(*n_, iv, "prefetch", loc);
    WEFT_CHECK_AT(loc, offset != 0, "prefetch of '", t.name(), "' at loop '", iv.name(), "' of stage '", name(),
                  "': an offset of 0 prefetches what the iteration reads right away; use 1 or more");
    bool reads = false;
    for (auto& in : n_->op.input_tensors()) reads |= in.op().same_as(t.op());
    WEFT_CHECK_AT(loc, reads, "prefetch on stage '", name(), "': it does not read '", t.name(),
                  "' (after cache_read, prefetch the tensor the stage reads now)");
    const IterVarAttr* a = n_->attr(n_->leaf_iter_vars[pos]);
    WEFT_CHECK_AT(loc, !a || a->kind != ir::ForKind::Vectorized, "prefetch of '", t.name(), "' at loop '", iv.name(),
                  "' of stage '", name(), "': the loop is vectorized; prefetch at a loop around it");
    n_->prefetches.push_back({t, iv, offset});
    // The output of a multi-output operation after the offset; output 0 keeps the short form.
    if (t.value_index() == 0) record(*n_, "prefetch", {iv}, {offset}, {t.op().name()});
    else record(*n_, "prefetch", {iv}, {offset, int64_t(t.value_index())}, {t.op().name()});
}

void Stage::store_nontemporal(std::source_location loc) {
    WEFT_CHECK_AT(loc, n_->op->is_compute(), "store_nontemporal: '", name(), "' is not a compute stage");
    record(*n_, "store_nontemporal", {});
    n_->nontemporal_stores = true;
}

// ---- Schedule ---------------------------------------------------------------------------

Schedule create_schedule(const std::vector<Tensor>& outputs) {
    auto sch = std::make_shared<ScheduleNode>();
    std::vector<Operation> order;
    std::unordered_set<const void*> visited, on_path;
    std::function<void(const Operation&)> visit = [&](const Operation& op) {
        if (visited.count(op.get())) return;
        WEFT_CHECK(!on_path.count(op.get()), "create_schedule: the computation has a cycle through '", op.name(), "'");
        on_path.insert(op.get());
        for (auto& t : op.input_tensors()) visit(t.op());
        on_path.erase(op.get());
        visited.insert(op.get());
        order.push_back(op);
    };
    WEFT_CHECK(!outputs.empty(), "create_schedule: no output tensors given");
    for (auto& t : outputs) {
        WEFT_CHECK(t.defined(), "create_schedule: an output tensor is undefined");
        WEFT_CHECK(t.op()->is_compute(), "create_schedule: output '", t.name(), "' is a placeholder; nothing computes it");
        visit(t.op());
        sch->outputs.push_back(t.op());
    }
    std::vector<std::shared_ptr<StageNode>> made;
    for (auto& op : order) {
        auto st = make_stage(op, sch.get());
        for (auto& o : sch->outputs) st->is_output |= o.same_as(op);
        sch->stages.emplace_back(st);
        made.push_back(st);
    }
    // A scan's body (the stages that read its state) runs inside its loop over time, once
    // per step: attached there, as a compute_at would (te::scan).
    for (auto& scan : made) {
        if (!scan->op->is_scan()) continue;
        for (const Operation& b : te::scan_body_ops(scan->op))
            for (auto& st : made)
                if (st->op.same_as(b)) {
                    WEFT_CHECK(!st->is_output, "create_schedule: '", b.name(), "' reads the state of scan '",
                               scan->op.name(), "', so it runs inside the scan's steps and cannot be an output");
                    st->attach = AttachType::Scope;
                    st->attach_stage = scan;
                    st->attach_ivar = scan->op->axis[0];
                }
    }
    return Schedule(sch);
}

Stage Schedule::operator[](const Operation& op) const {
    for (auto& s : n_->stages)
        if (s.node()->origin_op.same_as(op) || s.node()->op.same_as(op)) return s;
    detail::throw_user_error(detail::concat("schedule has no stage for '", op.name(),
                                            "'; is it part of the computation given to create_schedule?"));
}
Stage Schedule::operator[](const Tensor& t) const { return (*this)[t.op()]; }

const std::vector<Stage>& Schedule::stages() const { return n_->stages; }
const std::vector<Operation>& Schedule::outputs() const { return n_->outputs; }
const std::vector<TraceStep>& Schedule::trace() const { return n_->trace; }

namespace {

// Replaces reads of `from` (any output) by reads of the same output of `to`.
class ReplaceProducer : public ir::IRMutator {
public:
    ReplaceProducer(const te::OperationNode* from, Operation to) : from_(from), to_(std::move(to)) {}
    using IRMutator::mutate;
    Expr visit_(const ir::ProducerLoad* op, const Expr& self) override {
        Expr e = IRMutator::visit_(op, self);
        auto* load = e.as<ir::ProducerLoad>();
        if (load->producer.get() != from_) return e;
        return to_.output(load->value_index).at(load->indices);
    }

private:
    const te::OperationNode* from_;
    Operation to_;
};

Operation with_body(const Operation& op, std::vector<Expr> body) {
    auto node = std::make_shared<te::OperationNode>(te::OperationNode::OpKind::Compute, op->name);
    node->axis = op->axis;
    node->reduce_axis = op->reduce_axis;
    node->body = std::move(body);
    return Operation(std::shared_ptr<const te::OperationNode>(node));
}

void check_untouched(const StageNode& n, const char* prim, const std::source_location& loc) {
    WEFT_CHECK_AT(loc, n.relations.empty() && n.attrs.empty() && n.attach == AttachType::Root, prim, " on '",
                  n.op.name(), "' must come before any other primitive on its stage");
}

}  // namespace

Tensor Schedule::cache_read(const Tensor& t, const std::string& scope, const std::vector<Tensor>& readers,
                            std::source_location loc) {
    WEFT_CHECK_AT(loc, t.defined(), "cache_read: the tensor is undefined");
    WEFT_CHECK_AT(loc, !readers.empty(), "cache_read of '", t.name(), "': no readers given");
    Stage src = (*this)[t];
    std::vector<Stage> reader_stages;
    std::vector<std::string> names{scope};
    for (auto& r : readers) {
        Stage rs = (*this)[r];
        bool reads = false;
        for (auto& in : rs.op().input_tensors()) reads |= in.op().same_as(src.op());
        WEFT_CHECK_AT(loc, reads, "cache_read: '", rs.name(), "' does not read '", t.name(), "'");
        check_untouched(*rs.node(), "cache_read", loc);
        reader_stages.push_back(rs);
        names.push_back(rs.name());
    }
    WEFT_CHECK_AT(loc, scope == "global" || scope == "local" || scope == "shared", "cache_read of '", t.name(),
                  "': unknown storage scope '", scope, "'");
    Operation src_op = src.op();
    Tensor cache;
    {
        std::vector<std::string> names;
        for (size_t d = 0; d < t.shape().size(); ++d) names.push_back("ax" + std::to_string(d) + "." + scope);
        auto axes = te::detail::make_axes(t.shape(), names);
        std::vector<Expr> idx;
        for (auto& a : axes) idx.push_back(a.var());
        std::vector<Expr> body;
        for (int v = 0; v < src_op->num_outputs(); ++v) body.push_back(src_op.output(v).at(idx));
        cache = te::detail::make_compute(axes, body, t.op().name() + "." + scope).output(t.value_index());
    }
    auto cache_stage = make_stage(cache.op(), n_.get());
    cache_stage->scope = scope;
    for (auto& rs : reader_stages) {
        ReplaceProducer rp(src_op.get(), cache.op());
        std::vector<Expr> body;
        for (auto& b : rs.op()->body) body.push_back(rp.mutate(b));
        rs.node()->previous_ops.push_back(rs.op());
        rs.node()->op = with_body(rs.op(), body);
    }
    // The cache stage goes right after its source.
    auto it = std::find_if(n_->stages.begin(), n_->stages.end(), [&](const Stage& s) { return s.same_as(src); });
    n_->stages.insert(it + 1, Stage(cache_stage));
    // ints: which output of the source is cached (replay needs it for multi-output ops).
    TraceStep step{src.name(), "cache_read", {}, {int64_t(t.value_index())}, names};
    n_->trace.push_back(step);
    return cache;
}

Tensor Schedule::cache_write(const Tensor& t, const std::string& scope, std::source_location loc) {
    WEFT_CHECK_AT(loc, t.defined(), "cache_write: the tensor is undefined");
    Stage st = (*this)[t];
    WEFT_CHECK_AT(loc, st.op()->is_compute(), "cache_write: '", t.name(), "' is a placeholder");
    check_untouched(*st.node(), "cache_write", loc);
    WEFT_CHECK_AT(loc, scope == "global" || scope == "local" || scope == "shared", "cache_write of '", t.name(),
                  "': unknown storage scope '", scope, "'");
    Operation op = st.op();
    // The cache computes the original body over fresh data axes and the original reduce axes.
    std::vector<std::string> names;
    for (auto& a : op->axis) names.push_back(a.name() + ".c");
    auto axes = te::detail::make_axes(t.shape(), names);
    std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq> to_new;
    for (size_t d = 0; d < axes.size(); ++d) to_new[op->axis[d].var()] = axes[d].var();
    std::vector<Expr> cache_body;
    for (auto& b : op->body) cache_body.push_back(ir::substitute(b, to_new));
    auto cnode = std::make_shared<te::OperationNode>(te::OperationNode::OpKind::Compute, op->name + "." + scope);
    cnode->axis = axes;
    cnode->reduce_axis = op->reduce_axis;
    cnode->body = cache_body;
    Operation cache_op{std::shared_ptr<const te::OperationNode>(cnode)};
    // The original stage now copies from the cache over its original axes.
    std::vector<Expr> idx;
    for (auto& a : op->axis) idx.push_back(a.var());
    std::vector<Expr> copy;
    for (int v = 0; v < op->num_outputs(); ++v) copy.push_back(cache_op.output(v).at(idx));
    auto nnode = std::make_shared<te::OperationNode>(te::OperationNode::OpKind::Compute, op->name);
    nnode->axis = op->axis;
    nnode->body = copy;
    st.node()->previous_ops.push_back(op);
    st.node()->op = Operation(std::shared_ptr<const te::OperationNode>(nnode));
    st.node()->all_iter_vars = op->axis;
    st.node()->leaf_iter_vars = op->axis;
    auto cache_stage = make_stage(cache_op, n_.get());
    cache_stage->scope = scope;
    auto it = std::find_if(n_->stages.begin(), n_->stages.end(), [&](const Stage& s) { return s.same_as(st); });
    n_->stages.insert(it, Stage(cache_stage));
    n_->trace.push_back(TraceStep{st.name(), "cache_write", {}, {}, {scope}});
    return cache_op.output(t.value_index());
}

bool Schedule::operator==(const Schedule& o) const {
    if (n_->outputs.size() != o.n_->outputs.size()) return false;
    for (size_t i = 0; i < n_->outputs.size(); ++i)
        if (!n_->outputs[i].same_as(o.n_->outputs[i])) return false;
    return n_->trace == o.n_->trace;
}

std::ostream& operator<<(std::ostream& os, const Schedule& s) {
    for (auto& st : s.stages()) {
        auto& n = *st.node();
        os << "stage " << n.op.name();
        if (n.op->is_placeholder()) { os << " (placeholder)\n"; continue; }
        switch (n.attach) {
            case AttachType::Root: os << " @root"; break;
            case AttachType::Inline: os << " @inline"; break;
            case AttachType::Scope: os << " @" << n.attach_stage.lock()->op.name() << "." << n.attach_ivar.name(); break;
        }
        if (auto with = n.with_stage.lock()) os << " with " << with->op.name() << "." << n.with_ivar.name();
        if (n.scope != "global") os << " scope=" << n.scope;
        if (n.double_buffer) os << " double_buffer";
        if (n.nontemporal_stores) os << " store_nontemporal";
        for (auto& p : n.prefetches) os << " prefetch(" << p.tensor.name() << ", " << p.loop.name() << ", " << p.offset << ")";
        os << "\n";
        for (auto& r : n.relations) {
            if (auto* sp = std::get_if<SplitRelation>(&r))
                os << "  split " << sp->parent.name() << " -> " << sp->outer.name() << ", " << sp->inner.name()
                   << (sp->factor.defined() ? " factor " : " nparts ")
                   << (sp->factor.defined() ? sp->factor : sp->nparts)
                   << (sp->tail == TailStrategy::ShiftInwards ? " shift_inwards"
                       : sp->tail == TailStrategy::ShiftInwardsOrGuard ? " shift_inwards_or_guard" : "") << "\n";
            else if (auto* f = std::get_if<FuseRelation>(&r))
                os << "  fuse " << f->outer.name() << ", " << f->inner.name() << " -> " << f->fused.name() << "\n";
        }
        os << "  loops:";
        for (auto& iv : n.leaf_iter_vars) {
            os << " " << iv.name();
            if (auto* a = n.attr(iv); a && a->kind != ir::ForKind::Serial)
                os << "(" << (a->thread_tag.empty() ? std::string(ir::for_kind_name(a->kind)) : a->thread_tag) << ")";
        }
        os << "\n";
    }
    return os;
}

}  // namespace weft
