// The simplifier: constant folding, a canonical form for affine index expressions (sums of
// constant multiples of terms, constants last), and div/mod rules applied only when their
// preconditions (sign and divisibility facts, from the variables' ranges) hold.
#pragma once
#include "weft/ir/arith/interval.hpp"
#include "weft/ir/stmt.hpp"

namespace weft::ir::arith {

// An expression equal to e for every value of its variables within `ranges`.
Expr simplify(const Expr& e, const VarRanges& ranges = {});

// Simplifies every expression in s, using each For loop's range for its variable inside
// the body; removes branches and loops proven dead, and single-iteration loops.
Stmt simplify(const Stmt& s, const VarRanges& ranges = {});

// True only if cond (a bool expression) holds for every value within `ranges`.
bool can_prove(const Expr& cond, const VarRanges& ranges = {});

}  // namespace weft::ir::arith
