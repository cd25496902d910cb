// The public entry points of ir/arith/simplify.hpp.
#pragma once
#include "weft/ir/arith/impl/simplifier.hpp"

namespace weft::ir::arith {

Expr simplify(const Expr& e, const VarRanges& ranges) {
    detail::RangeEnv env(ranges);
    return detail::Simplifier(env).mutate(e);
}

Stmt simplify(const Stmt& s, const VarRanges& ranges) {
    detail::RangeEnv env(ranges);
    return detail::Simplifier(env).mutate(s);
}

bool can_prove(const Expr& cond, const VarRanges& ranges) {
    return detail::is_const_true(simplify(cond, ranges));
}

}  // namespace weft::ir::arith
