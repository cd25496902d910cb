// Interval analysis: the range of an expression given the ranges of its variables.
// Bounds are symbolic expressions (the range of io * 8 + ii with ii in [0, 7] is
// [io * 8, io * 8 + 7]); an undefined bound means unbounded on that side.
#pragma once
#include <unordered_map>

#include "weft/ir/expr.hpp"

namespace weft::ir::arith {

// A closed interval [min, max]. An undefined min (max) means -infinity (+infinity).
struct Interval {
    Expr min, max;
    Interval() = default;
    Interval(Expr lo, Expr hi) : min(std::move(lo)), max(std::move(hi)) {}
    static Interval everything() { return {}; }
    static Interval single_point(const Expr& e) { return {e, e}; }
    bool has_lower() const { return min.defined(); }
    bool has_upper() const { return max.defined(); }
    bool is_bounded() const { return has_lower() && has_upper(); }
    bool is_single_point() const { return is_bounded() && min.same_as(max); }
};

// Variables missing from the map stand for themselves (a single point).
using VarRanges = std::unordered_map<Var, Interval, VarHash, VarEq>;

// An interval containing every value e takes when each variable ranges over its interval.
// The result is simplified; it is exact for affine expressions with constant coefficients.
Interval bounds_of(const Expr& e, const VarRanges& ranges);

// The smallest interval containing both.
Interval interval_union(const Interval& a, const Interval& b);

// Constant bounds of e, when they exist: returns false if a side is not a constant.
bool const_bounds(const Expr& e, const VarRanges& ranges, int64_t* lo, int64_t* hi);

}  // namespace weft::ir::arith
