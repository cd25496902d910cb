// The loop nest of one stage over a region of its root axes: leaf loops from the
// schedule's relations, the value of every axis in terms of the leaf loops, bound guards
// for splits that do not divide, and for reductions an init nest plus an update nest.
#pragma once
#include <algorithm>
#include <unordered_map>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/schedule/relations.hpp"

namespace weft::lower_passes {

namespace nest_detail {

using ir::Stmt;
using VarMap = std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq>;

using schedule_detail::IvRange;
using schedule_detail::NestInfo;
using schedule_detail::ceil_div;

inline NestInfo infer_nest(const StageNode& st, const std::vector<ir::Range>& region) {
    return schedule_detail::solve_relations(st, region);
}

inline Stmt guard(const Stmt& body, const std::vector<Expr>& conds) {
    Stmt s = body;
    for (auto it = conds.rbegin(); it != conds.rend(); ++it) s = ir::IfThenElse::make(ir::likely(*it), s);  // loop partitioning splits on it
    return s;
}

// Wraps body in the loops of `leaves` (outer to inner), with each loop's kind and pragmas.
inline Stmt wrap_loops(const StageNode& st, const NestInfo& info, const std::vector<IterVar>& leaves, Stmt body,
                       const VarMap& rename = {}) {
    for (auto it = leaves.rbegin(); it != leaves.rend(); ++it) {
        const IterVar& iv = *it;
        auto r = info.range.at(iv.get());
        Var v = iv.var();
        if (auto f = rename.find(v); f != rename.end()) v = Var(f->second.ptr());
        const IterVarAttr* a = st.attr(iv);
        ir::ForKind kind = a ? a->kind : ir::ForKind::Serial;
        Expr extent = ir::arith::simplify(r.extent);
        if (kind == ir::ForKind::Vectorized) {
            int64_t e;
            WEFT_CHECK(ir::as_const_int(extent, &e) || st.attach == AttachType::Scope, "vectorize on stage '",
                       st.op.name(), "': axis '", iv.name(), "' has a symbolic extent (", ir::to_string(extent),
                       "); vectorize an inner axis of a split by a constant factor instead");
        }
        body = ir::For::make(v, r.min, extent, kind, body, a ? a->thread_tag : "");
        if (a)
            for (auto p = a->pragmas.rbegin(); p != a->pragmas.rend(); ++p)
                body = ir::AttrStmt::make("pragma_" + p->first, p->second, body);
    }
    return body;
}

// A reduction may recompute the tiles a TailStrategy::ShiftInwards split overlaps only where
// each tile gets its own init: the split's outer loop (and every loop made from it) must
// enclose the reduce loops, or the overlapped elements would be accumulated twice.
inline void check_shift_inwards_outside_reduction(const StageNode& st) {
    if (st.op->reduce_axis.empty()) return;
    std::vector<const void*> derived;
    auto is_derived = [&](const IterVar& iv) { return std::find(derived.begin(), derived.end(), iv.get()) != derived.end(); };
    for (auto& rel : st.relations) {
        if (auto* sp = std::get_if<SplitRelation>(&rel)) {
            if (sp->tail != TailStrategy::Guard || is_derived(sp->parent)) derived.push_back(sp->outer.get());
            if (is_derived(sp->parent)) derived.push_back(sp->inner.get());
        } else if (auto* f = std::get_if<FuseRelation>(&rel); f && (is_derived(f->outer) || is_derived(f->inner))) {
            derived.push_back(f->fused.get());
        }
    }
    bool in_reduction = false;
    for (auto& iv : st.leaf_iter_vars) {
        in_reduction |= iv->iter_kind == ir::IterKind::Reduce;
        WEFT_CHECK(!in_reduction || !is_derived(iv), "split with TailStrategy::ShiftInwards on stage '", st.op.name(),
                   "': loop '", iv.name(), "' runs inside a reduce loop, so the elements its last tile overlaps "
                   "would be accumulated twice; order the split's outer loop before the reduce loops (or use "
                   "TailStrategy::Guard)");
    }
}

}  // namespace nest_detail

// A loop nest a tensor intrinsic replaces once every stage is placed (lower/impl/tensorize.hpp):
// until then the ordinary loops stand in, inside AttrStmt("tensorize", site index), so that
// bound inference sees the reads they make.
struct TensorizeSite {
    const StageNode* stage = nullptr;
    std::vector<IterVar> loops;     // the replaced leaf loops, outer to inner
    std::vector<Expr> out_index;    // the output's indices, in leaf loop variables
    std::vector<Expr> sources;      // per output: the reduction's source or the element's value
    ir::CommReducer combiner;       // null unless a reduction
    std::vector<Expr> guards;       // split guards and the reduction's condition
};

// The loop nest computing `bodies` (one per output, inlining done) of stage `st` over `region`.
// A tensorized stage records its site in `sites`. `thread_guards` (GPU: threadIdx == 0 for
// the thread axes a stage shared by the block does not bind) guard the stage's loops from
// leaf position `thread_guard_level` inward (no other stage is computed inside them), or
// every store where that cannot be (a reduction's data loops inside its reduce loops).
inline ir::Stmt make_stage_nest(const StageNode& st, const std::vector<Expr>& bodies, const std::vector<ir::Range>& region,
                                std::vector<TensorizeSite>* sites = nullptr,
                                const std::vector<Expr>& thread_guards = {},
                                size_t thread_guard_level = size_t(-1)) {
    using namespace nest_detail;
    check_shift_inwards_outside_reduction(st);
    NestInfo info = infer_nest(st, region);
    // Where a tensorized nest starts (leaves.size(): not tensorized).
    size_t tz = st.leaf_iter_vars.size();
    TensorizeSite site;
    if (st.tensorize_intrin.defined()) {
        WEFT_ICHECK(sites, "a tensorized stage outside schedule_ops");
        for (size_t i = 0; i < st.leaf_iter_vars.size(); ++i)
            if (st.leaf_iter_vars[i].same_as(st.tensorize_axis)) tz = i;
        WEFT_CHECK_AT(st.tensorize_loc, tz < st.leaf_iter_vars.size(), "tensorize on stage '", st.op.name(), "': axis '",
                      st.tensorize_axis.name(), "' is no longer a loop of the stage (it was split, fused or reordered "
                      "after tensorize; tensorize must be the last primitive on the stage's loops)");
        site.stage = &st;
        site.loops.assign(st.leaf_iter_vars.begin() + long(tz), st.leaf_iter_vars.end());
        for (auto& [c, red] : info.guards) site.guards.push_back(c);
    }
    // Wraps the loops from the tensorized axis inward and marks them for replacement.
    auto mark = [&](Stmt body) {
        Stmt loops = wrap_loops(st, info, site.loops, std::move(body));
        sites->push_back(site);
        return ir::AttrStmt::make("tensorize", make_int(int64_t(sites->size() - 1)), loops);
    };
    VarMap root_values;
    std::vector<Expr> out_index;
    for (auto& a : st.op->axis) {
        root_values[a.var()] = info.value.at(a.get());
        out_index.push_back(info.value.at(a.get()));
    }
    for (auto& r : st.op->reduce_axis) root_values[r.var()] = info.value.at(r.get());
    // Where the thread guard goes: around the loops from `level` inward when that level is
    // outside the reduce loops, else around each store.
    const size_t leaves = st.leaf_iter_vars.size();
    size_t first_red = leaves;
    for (size_t i = 0; i < leaves; ++i)
        if (st.leaf_iter_vars[i]->iter_kind == ir::IterKind::Reduce) { first_red = i; break; }
    first_red = std::min(first_red, tz);
    const bool hoist_guard = !thread_guards.empty() && tz == leaves && thread_guard_level <= first_red;
    auto guarded_from = [&](const std::vector<IterVar>& loops, const Stmt& inner) {
        size_t level = std::min(thread_guard_level, loops.size());
        std::vector<IterVar> out(loops.begin(), loops.begin() + long(level)), in(loops.begin() + long(level), loops.end());
        return wrap_loops(st, info, out, guard(wrap_loops(st, info, in, inner), thread_guards));
    };
    std::vector<Expr> all_guards, data_guards;
    if (!hoist_guard) all_guards = data_guards = thread_guards;
    for (auto& [c, red] : info.guards) {
        all_guards.push_back(c);
        if (!red) data_guards.push_back(c);
    }
    auto store = [&](int v, Expr value, const std::vector<Expr>& index) {
        Stmt s(ir::make_node<ir::ProducerStore>(st.op.ptr(), v, std::move(value), index, st.op.output(v).name()));
        return st.nontemporal_stores ? ir::AttrStmt::make(ir::attr::nontemporal_store, make_int(1), s) : s;
    };
    auto load = [&](int v, const std::vector<Expr>& index) { return st.op.output(v).at(index); };

    site.out_index = out_index;
    auto* red = bodies[0].as<ir::Reduce>();
    if (!red) {
        std::vector<Stmt> stores;
        for (size_t v = 0; v < bodies.size(); ++v) {
            Expr value = ir::substitute(bodies[v], root_values);
            site.sources.push_back(value);
            stores.push_back(store(int(v), value, out_index));
        }
        Stmt body = guard(ir::Seq::make(stores), all_guards);
        if (hoist_guard) return guarded_from(st.leaf_iter_vars, body);
        if (tz == st.leaf_iter_vars.size()) return wrap_loops(st, info, st.leaf_iter_vars, body);
        std::vector<IterVar> outer(st.leaf_iter_vars.begin(), st.leaf_iter_vars.begin() + long(tz));
        return wrap_loops(st, info, outer, mark(body));
    }

    // Reduction: update = combine(current, source) under the guards and the where-condition.
    WEFT_CHECK(!st.nontemporal_stores, "store_nontemporal: '", st.op.name(),
               "' is a reduction, whose output is read back while it is computed; use it on a stage that writes each "
               "element once (cache_write the reduction, then store the copy non-temporally)");
    auto& comb = *red->combiner;
    Stmt update;
    {
        std::vector<Stmt> stores;
        for (size_t v = 0; v < bodies.size(); ++v) stores.push_back(store(int(v), comb.result[v], out_index));
        update = ir::Seq::make(stores);
        // Bind lhs (current values) and rhs (this iteration's sources) before the stores.
        for (int v = int(comb.lhs.size()) - 1; v >= 0; --v) {
            auto* r = bodies[size_t(v)].as<ir::Reduce>();
            update = ir::LetStmt::make(comb.rhs[size_t(v)], ir::substitute(r->source[size_t(v)], root_values), update);
        }
        for (int v = int(comb.lhs.size()) - 1; v >= 0; --v)
            update = ir::LetStmt::make(comb.lhs[size_t(v)], load(v, out_index), update);
        if (!ir::is_one(red->condition)) {
            update = ir::IfThenElse::make(ir::substitute(red->condition, root_values), update);
            site.guards.push_back(ir::substitute(red->condition, root_values));
        }
        update = guard(update, all_guards);
        site.combiner = red->combiner;
        for (size_t v = 0; v < bodies.size(); ++v)
            site.sources.push_back(ir::substitute(bodies[v].as<ir::Reduce>()->source[v], root_values));
    }
    // Loops outside the first reduction loop enclose both init and update. A tensorized
    // nest is replaced whole, so its data loops get their init before it.
    std::vector<IterVar> outer(st.leaf_iter_vars.begin(), st.leaf_iter_vars.begin() + long(first_red));
    std::vector<IterVar> inner(st.leaf_iter_vars.begin() + long(first_red), st.leaf_iter_vars.end());
    std::vector<IterVar> init_loops;
    VarMap rename;
    for (auto& iv : inner)
        if (iv->iter_kind != ir::IterKind::Reduce) {
            init_loops.push_back(iv);
            rename[iv.var()] = Var(iv.name() + ".init", index_type);
        }
    std::vector<Stmt> init_stores;
    for (size_t v = 0; v < bodies.size(); ++v) init_stores.push_back(store(int(v), comb.identity[v], out_index));
    Stmt init = ir::substitute(guard(ir::Seq::make(init_stores), data_guards), rename);
    init = wrap_loops(st, info, init_loops, init, rename);
    Stmt upd;
    if (tz == st.leaf_iter_vars.size()) {
        upd = wrap_loops(st, info, inner, update);
    } else {
        std::vector<IterVar> between(st.leaf_iter_vars.begin() + long(first_red), st.leaf_iter_vars.begin() + long(tz));
        upd = wrap_loops(st, info, between, mark(update));
    }
    if (hoist_guard) return guarded_from(outer, ir::Seq::make({init, upd}));
    return wrap_loops(st, info, outer, ir::Seq::make({init, upd}));
}

}  // namespace weft::lower_passes
