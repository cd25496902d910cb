// Specializing a kernel on its sizes (Halide's Func::specialize): the body partitioned knowing
// each listed size is at least its value, beside the generic partition, behind one test at the
// kernel's entry. The sizes come from LowerOptions::specialize_at_least and from the schedule:
// a split with TailStrategy::ShiftInwardsOrGuard of an axis whose extent is a symbolic size
// asks for that extent to hold a tile, which is where its tiles are all whole.
#pragma once
#include <map>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/function.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/lower/impl/loop_partition.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft::lower_passes {

namespace specialize_detail {

// The scalar arguments e reads (by identity).
inline std::vector<Var> scalars_in(const Expr& e, const std::vector<ir::KernelArg>& args) {
    std::vector<Var> found;
    for (const ir::KernelArg& a : args)
        if (a.kind == ir::KernelArg::Kind::Scalar && ir::uses_var(e, a.var)) found.push_back(a.var);
    return found;
}

// The least v in [0, 2^24] where extent (nondecreasing in v, its only variable) is at least
// `tile`; none where no such value folds.
inline std::optional<int64_t> least_value(const Expr& extent, const Var& v, int64_t tile) {
    auto at = [&](int64_t x) -> std::optional<int64_t> {
        int64_t r = 0;
        if (!ir::as_const_int(ir::arith::simplify(ir::substitute(extent, {{v, make_int(x)}})), &r)) return std::nullopt;
        return r;
    };
    int64_t lo = 0, hi = int64_t(1) << 24;
    std::optional<int64_t> top = at(hi);
    if (!top || *top < tile) return std::nullopt;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        std::optional<int64_t> y = at(mid);
        if (!y) return std::nullopt;
        if (*y >= tile) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

}  // namespace specialize_detail

// The sizes `s` asks its kernel to be specialized on: for each TailStrategy::ShiftInwardsOrGuard
// split of an axis whose extent reads one scalar size, the least value of that size at which
// the extent holds a tile (the largest such per size), merged with `requested`.
inline std::vector<std::pair<Var, int64_t>> specializations(const Schedule& s, const std::vector<ir::KernelArg>& args,
                                                           const std::vector<std::pair<Var, int64_t>>& requested) {
    std::vector<std::pair<Var, int64_t>> out = requested;
    auto merge = [&](const Var& v, int64_t at_least) {
        for (auto& [w, c] : out)
            if (w.same_as(v)) {
                c = std::max(c, at_least);
                return;
            }
        out.emplace_back(v, at_least);
    };
    for (const Stage& stage : s.stages())
        for (const IterVarRelation& rel : stage.node()->relations) {
            const auto* sp = std::get_if<SplitRelation>(&rel);
            int64_t tile = 0;
            if (!sp || sp->tail != TailStrategy::ShiftInwardsOrGuard || !sp->factor.defined() ||
                !ir::as_const_int(sp->factor, &tile) || !sp->parent->dom.extent.defined())
                continue;
            const Expr& extent = sp->parent->dom.extent;
            const std::vector<Var> vars = specialize_detail::scalars_in(extent, args);
            if (vars.size() != 1) continue;
            if (std::optional<int64_t> least = specialize_detail::least_value(extent, vars[0], tile))
                merge(vars[0], *least);
        }
    return out;
}

// `body` partitioned for `sizes`, and, where `at_least` lists sizes, behind a test of them: the
// body partitioned knowing them at least their values, else the generic partition.
inline ir::Stmt partition_specialized(const ir::Stmt& body, const ir::arith::VarRanges& sizes,
                                      const std::vector<std::pair<Var, int64_t>>& at_least, const std::string& kernel) {
    if (at_least.empty()) return loop_partition(body, sizes);
    ir::arith::VarRanges large = sizes;
    Expr when;
    for (const auto& [v, least] : at_least) {
        WEFT_CHECK(least >= 0, "lower: kernel '", kernel, "': specialize_at_least for '", v.name(),
                   "' must not be negative, got ", least);
        large[v] = ir::arith::Interval(ir::make_const(v.type(), double(least)), Expr());
        Expr c = Expr(v) >= ir::make_const(v.type(), double(least));
        when = when.defined() ? (when && c) : c;
    }
    return ir::IfThenElse::make(when, loop_partition(body, large), loop_partition(body, sizes));
}

}  // namespace weft::lower_passes
