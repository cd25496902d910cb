// Casts, ramps, lets and calls.
#pragma once
#include "weft/ir/arith/impl/simplifier.hpp"

namespace weft::ir::arith::detail {

inline Expr Simplifier::rewrite_cast(DataType t, const Expr& v) {
    if (v.type() == t) return v;
    if (Expr folded = fold_cast(t, v); folded.defined()) return folded;
    if (auto* bc = v.as<Broadcast>()) return Broadcast::make(rewrite_cast(t.element_of(), bc->value), bc->lanes);
    return Cast::make(t, v);
}

inline Expr Simplifier::rewrite_ramp(const Expr& base, const Expr& stride, int lanes) {
    if (is_zero(stride)) return Broadcast::make(base, lanes);
    return Ramp::make(base, stride, lanes);
}

// Constants and variables are substituted (they cost nothing to repeat); other values stay
// bound, and the body is simplified knowing the variable's value.
inline bool is_substitutable(const Expr& value) { return value.as<IntImm>() || value.as<FloatImm>() || value.as<VarNode>(); }

inline Expr Simplifier::visit_(const Let* op, const Expr&) {
    Expr value = mutate(op->value);
    if (is_substitutable(value)) return mutate(substitute(op->body, {{op->var, value}}));
    env_.push(op->var, Interval::single_point(value));
    Expr body = mutate(op->body);
    env_.pop();
    if (!uses_var(body, op->var)) return body;
    return Let::make(op->var, value, body);
}

inline Expr Simplifier::visit_(const Call* op, const Expr& self) {
    // if_then_else evaluates one branch only, so a constant condition picks it.
    if (op->name != "if_then_else" || op->args.size() != 3) return IRMutator::visit_(op, self);
    Expr c = mutate(op->args[0]);
    if (is_const_true(c)) return mutate(op->args[1]);
    if (is_const_false(c)) return mutate(op->args[2]);
    return Call::make(op->type, op->name, {c, mutate(op->args[1]), mutate(op->args[2])}, op->call_kind);
}

}  // namespace weft::ir::arith::detail
