// / % on integers, with floor semantics (ir/expr.hpp). Each rule states its precondition;
// the identities are exact for unbounded integers, so those that move terms across the
// division are applied only where arithmetic does not wrap (signed 64-bit, int_math.hpp).
#pragma once
#include "weft/ir/arith/impl/simplifier.hpp"

namespace weft::ir::arith::detail {

// f == c * quotient + residual, where quotient takes every term whose coefficient is a
// multiple of c and the floor of constant / c, and residual keeps the other terms and a
// constant in [0, c). Needs c > 0.
inline void split_multiples(const LinearForm& f, int64_t c, LinearForm* quotient, LinearForm* residual) {
    for (auto& [term, coeff] : f.terms) {
        if (coeff % c == 0) quotient->add_term(term, coeff / c);
        else residual->add_term(term, coeff);
    }
    quotient->constant = int64_t(floor_div(f.constant, c));
    residual->constant = int64_t(floor_mod(f.constant, c));
}

// The n for which every value of r lies in [n*c, n*c + c - 1] (one period of c), if any.
// Then r / c == n and r % c == r - n*c, for either sign of c.
inline std::optional<i128> single_period(ConstRange r, i128 c) {
    if (!r.has_lo() || !r.has_hi()) return std::nullopt;
    i128 n = floor_div(r.lo, c);
    if (floor_div(r.hi, c) != n) return std::nullopt;
    return n;
}

inline Expr Simplifier::rewrite_div(const Expr& a, const Expr& b) {
    DataType t = a.type();
    if (!t.is_integer()) return Div::make(a, b);
    if (t.is_vector()) {
        Expr v = rewrite_vector_div_mod(NodeKind::Div, a, b);
        return v.defined() ? v : Div::make(a, b);
    }
    i128 c;
    if (!as_true_const(b, &c)) return rewrite_div_mod_by_expr(NodeKind::Div, a, b);
    if (c == 0) return Div::make(a, b);  // division by zero is left to the program
    if (c == 1) return a;
    // Precondition: a's range lies within one period of c.
    if (auto n = single_period(range_of(a), c)) return make_int(int64_t(*n), t);
    if (!no_overflow_type(t) || c < 0) return Div::make(a, b);

    // (x / c1) / c == x / (c1 * c) for c1, c > 0: floor(floor(x/c1)/c) == floor(x/(c1*c)).
    if (auto* inner = a.as<Div>()) {
        i128 c1;
        if (as_true_const(inner->b, &c1) && c1 > 0 && c1 * c <= (i128(1) << 62))
            return rewrite_div(inner->a, make_int(int64_t(c1 * c), t));
    }
    // (x % (c*k)) / c == (x / c) % k for c, k > 0: both equal floor(x/c) - k*floor(x/(c*k)).
    if (auto* inner = a.as<Mod>()) {
        i128 m;
        if (as_true_const(inner->b, &m) && m > 0 && m % c == 0)
            return rewrite_mod(rewrite_div(inner->a, b), make_int(int64_t(m / c), t));
    }
    // (c*q + r) / c == q + r / c for c > 0 and any integers q, r (floor semantics; without
    // overflow). So (x*c*k + y) / c == x*k + y / c and (x + 9) / 8 == (x + 1) / 8 + 1.
    LinearForm quotient(t), residual(t);
    split_multiples(linear_form_of(a), int64_t(c), &quotient, &residual);
    if (quotient.is_constant() && quotient.constant == 0) return Div::make(a, b);
    return rewrite_add(to_expr(quotient), rewrite_div(to_expr(residual), b));
}

inline Expr Simplifier::rewrite_mod(const Expr& a, const Expr& b) {
    DataType t = a.type();
    if (!t.is_integer()) return Mod::make(a, b);
    if (t.is_vector()) {
        Expr v = rewrite_vector_div_mod(NodeKind::Mod, a, b);
        return v.defined() ? v : Mod::make(a, b);
    }
    i128 c;
    if (!as_true_const(b, &c)) return rewrite_div_mod_by_expr(NodeKind::Mod, a, b);
    if (c == 0) return Mod::make(a, b);
    if (c == 1 || c == -1) return make_zero(t);
    // Precondition: a's range lies within one period of c; then a % c == a - n*c.
    if (auto n = single_period(range_of(a), c)) {
        if (*n == 0) return a;
        return rewrite_sub(a, make_int(int64_t(*n * c), t));
    }
    if (!no_overflow_type(t) || c < 0) return Mod::make(a, b);

    // (x % (c*k)) % c == x % c for c, k > 0.
    if (auto* inner = a.as<Mod>()) {
        i128 m;
        if (as_true_const(inner->b, &m) && m > 0 && m % c == 0) return rewrite_mod(inner->a, b);
    }
    // (c*q + r) % c == r % c for c > 0 (without overflow): multiples of c drop out.
    LinearForm quotient(t), residual(t);
    split_multiples(linear_form_of(a), int64_t(c), &quotient, &residual);
    if (quotient.is_constant() && quotient.constant == 0) return Mod::make(a, b);
    return rewrite_mod(to_expr(residual), b);
}

// x / y == 0 and x % y == x when 0 <= x < y (so y > 0), from the ranges of x and y - x.
inline Expr Simplifier::rewrite_div_mod_by_expr(NodeKind kind, const Expr& a, const Expr& b) {
    DataType t = a.type();
    auto keep = [&] { return kind == NodeKind::Div ? Div::make(a, b) : Mod::make(a, b); };
    if (range_of(a).lo < 0) return keep();
    auto a_below_b = decide_on_difference(a, b, [](ConstRange d) -> std::optional<bool> {
        if (d.hi <= -1) return true;
        return std::nullopt;
    });
    if (!a_below_b) return keep();
    return kind == NodeKind::Div ? make_zero(t) : a;
}

// ramp(base, s, n) / x(c) and % x(c), for c > 0 and s >= 0: when all n lanes stay inside
// the period of c that holds base, the quotient is the same in every lane and the remainder
// is a ramp. With base == c*q + r (split_multiples), that needs 0 <= r and
// r + s*(n - 1) < c over r's whole range.
inline Expr Simplifier::rewrite_vector_div_mod(NodeKind kind, const Expr& a, const Expr& b) {
    auto* ramp = a.as<Ramp>();
    auto* divisor = b.as<Broadcast>();
    if (!ramp || !divisor) return Expr();
    DataType t = ramp->base.type();
    i128 c, s;
    if (!no_overflow_type(t) || !as_true_const(divisor->value, &c) || !as_true_const(ramp->stride, &s)) return Expr();
    if (c <= 0 || s < 0) return Expr();
    LinearForm quotient(t), residual(t);
    split_multiples(linear_form_of(ramp->base), int64_t(c), &quotient, &residual);
    ConstRange r = range_of(to_expr(residual));
    if (r.lo < 0 || xadd(r.hi, xmul(s, ramp->lanes - 1)) >= c) return Expr();
    if (kind == NodeKind::Div) return Broadcast::make(rewrite_div(ramp->base, divisor->value), ramp->lanes);
    return rewrite_ramp(rewrite_mod(ramp->base, divisor->value), ramp->stride, ramp->lanes);
}

}  // namespace weft::ir::arith::detail
