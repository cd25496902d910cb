// + - * : integer sums and constant multiples go through the affine canonical form
// (linear_form.hpp), which is exact for every width. Floats are only constant-folded:
// reassociating them would change results.
#pragma once
#include "weft/ir/arith/impl/simplifier.hpp"

namespace weft::ir::arith::detail {

// ramp(b, s) and x(v) are affine in the lane index, so + - and * by a broadcast keep them
// a ramp: ramp(b1, s1) + ramp(b2, s2) == ramp(b1 + b2, s1 + s2). Integers only.
inline Expr Simplifier::rewrite_vector_affine(NodeKind kind, const Expr& a, const Expr& b) {
    if (!a.type().is_vector() || !a.type().is_integer()) return Expr();
    auto base_and_stride = [](const Expr& e, Expr* base, Expr* stride) {
        if (auto* r = e.as<Ramp>()) {
            *base = r->base, *stride = r->stride;
            return true;
        }
        if (auto* bc = e.as<Broadcast>()) {
            *base = bc->value, *stride = make_zero(bc->value.type());
            return true;
        }
        return false;
    };
    Expr base_a, stride_a, base_b, stride_b;
    if (!base_and_stride(a, &base_a, &stride_a) || !base_and_stride(b, &base_b, &stride_b)) return Expr();
    int lanes = a.type().lanes;
    switch (kind) {
        case NodeKind::Add: return rewrite_ramp(rewrite_add(base_a, base_b), rewrite_add(stride_a, stride_b), lanes);
        case NodeKind::Sub: return rewrite_ramp(rewrite_sub(base_a, base_b), rewrite_sub(stride_a, stride_b), lanes);
        case NodeKind::Mul:
            // (b + i*s) * v == b*v + i*(s*v) only when one side is the same in every lane.
            if (b.as<Broadcast>()) return rewrite_ramp(rewrite_mul(base_a, base_b), rewrite_mul(stride_a, base_b), lanes);
            if (a.as<Broadcast>()) return rewrite_ramp(rewrite_mul(base_a, base_b), rewrite_mul(base_a, stride_b), lanes);
            return Expr();
        default: return Expr();
    }
}

inline Expr Simplifier::rewrite_add(const Expr& a, const Expr& b) {
    if (Expr v = rewrite_vector_affine(NodeKind::Add, a, b); v.defined()) return v;
    if (!has_linear_form(a)) return Add::make(a, b);
    LinearForm f = linear_form_of(a);
    f.add(linear_form_of(b), 1);
    merge_div_mod_pairs(f);
    return to_expr(f);
}

inline Expr Simplifier::rewrite_sub(const Expr& a, const Expr& b) {
    if (Expr v = rewrite_vector_affine(NodeKind::Sub, a, b); v.defined()) return v;
    if (!has_linear_form(a)) return Sub::make(a, b);
    LinearForm f = linear_form_of(a);
    f.add(linear_form_of(b), -1);
    merge_div_mod_pairs(f);
    return to_expr(f);
}

inline Expr Simplifier::rewrite_mul(const Expr& a, const Expr& b) {
    if (Expr v = rewrite_vector_affine(NodeKind::Mul, a, b); v.defined()) return v;
    if (!has_linear_form(a)) return Mul::make(a, b);
    int64_t c;
    const Expr* scaled = nullptr;
    if (as_const_int(b, &c)) scaled = &a;
    else if (as_const_int(a, &c)) scaled = &b;
    if (!scaled) return Mul::make(a, b);  // a product of two terms is a term
    LinearForm f(a.type());
    f.add(linear_form_of(*scaled), c);
    return to_expr(f);
}

}  // namespace weft::ir::arith::detail
