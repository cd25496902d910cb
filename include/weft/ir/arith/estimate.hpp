// The typical value of an extent that may use variables: each variable at its estimate
// (VarNode::estimate, Var::sized), folded. Schedules size tiles and pick their defaults by it
// where an extent is symbolic, as they do by the value of a constant one.
#pragma once
#include <optional>

#include "weft/ir/expr.hpp"

namespace weft::ir::arith {

// e's value with every variable at its estimate; none where a variable has none or e does
// not fold to an integer.
std::optional<int64_t> estimate(const Expr& e);

// e's value if constant, else its estimate, else `fallback`.
int64_t value_or_estimate(const Expr& e, int64_t fallback);

}  // namespace weft::ir::arith
