// && || ! and select: boolean identities and constant conditions.
#pragma once
#include "weft/ir/arith/impl/simplifier.hpp"

namespace weft::ir::arith::detail {

inline Expr Simplifier::rewrite_and(const Expr& a, const Expr& b) {
    if (is_const_false(a) || is_const_true(b)) return a;
    if (is_const_false(b) || is_const_true(a)) return b;
    if (same_expr(a, b)) return a;
    return And::make(a, b);
}

inline Expr Simplifier::rewrite_or(const Expr& a, const Expr& b) {
    if (is_const_true(a) || is_const_false(b)) return a;
    if (is_const_true(b) || is_const_false(a)) return b;
    if (same_expr(a, b)) return a;
    return Or::make(a, b);
}

inline Expr Simplifier::rewrite_not(const Expr& a) {
    if (auto* imm = a.as<IntImm>()) return make_const(a.type(), imm->value ? 0 : 1);
    if (auto* bc = a.as<Broadcast>()) return Broadcast::make(rewrite_not(bc->value), bc->lanes);
    if (auto* inner = a.as<Not>()) return inner->a;
    // !(x < y) == x >= y and so on, for integer operands (for floats NaN breaks it).
    auto negated = [&](NodeKind kind, const auto* cmp) {
        return cmp->a.type().is_integer() ? rewrite_compare(kind, cmp->a, cmp->b) : Not::make(a);
    };
    if (auto* c = a.as<LT>()) return negated(NodeKind::GE, c);
    if (auto* c = a.as<LE>()) return negated(NodeKind::GT, c);
    if (auto* c = a.as<GT>()) return negated(NodeKind::LE, c);
    if (auto* c = a.as<GE>()) return negated(NodeKind::LT, c);
    if (auto* c = a.as<EQ>()) return negated(NodeKind::NE, c);
    if (auto* c = a.as<NE>()) return negated(NodeKind::EQ, c);
    return Not::make(a);
}

inline Expr Simplifier::rewrite_select(const Expr& c, const Expr& t, const Expr& f) {
    if (is_const_true(c)) return t;
    if (is_const_false(c)) return f;
    if (same_expr(t, f)) return t;
    auto *bc = c.as<Broadcast>(), *bt = t.as<Broadcast>(), *bf = f.as<Broadcast>();
    if (bc && bt && bf) return Broadcast::make(rewrite_select(bc->value, bt->value, bf->value), bt->lanes);
    return Select::make(c, t, f);
}

}  // namespace weft::ir::arith::detail
