// The public entry points of ir/arith/simplify.hpp.
#pragma once
#include "weft/ir/arith/impl/simplifier.hpp"

namespace weft::ir::arith {

Expr simplify(const Expr& e, const VarRanges& ranges) {
    // A variable whose range is one point is that constant: substituted first, so that every
    // rule sees it (a GPU tile's clamped extent over a block loop that runs once, such as
    // min(b*112 + 120, 119) - max(b*112, 0), must fold to a constant on both sides).
    std::unordered_map<Var, Expr, VarHash, VarEq> points;
    for (auto& [v, i] : ranges) {
        int64_t lo, hi;
        if (!i.has_lower() || !i.has_upper()) continue;
        detail::RangeEnv none({});
        if (as_const_int(detail::Simplifier(none).mutate(i.min), &lo) &&
            as_const_int(detail::Simplifier(none).mutate(i.max), &hi) && lo == hi)
            points[v] = make_const(v.type(), lo);
    }
    detail::RangeEnv env(ranges);
    return detail::Simplifier(env).mutate(points.empty() ? e : substitute(e, points));
}

Stmt simplify(const Stmt& s, const VarRanges& ranges) {
    detail::RangeEnv env(ranges);
    return detail::Simplifier(env).mutate(s);
}

bool can_prove(const Expr& cond, const VarRanges& ranges) {
    return detail::is_const_true(simplify(cond, ranges));
}

}  // namespace weft::ir::arith
