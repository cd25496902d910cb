// Exact structural equality: same shape, types and constants, and the *same* variables
// (by identity). ir/equality.hpp compares up to renaming, which is what the kernel cache
// wants but not what cancelling terms needs: x - y is not 0.
#pragma once
#include <cstring>

#include "weft/ir/expr.hpp"

namespace weft::ir::arith::detail {

inline bool same_expr(const Expr& a, const Expr& b);

namespace equal_impl {
template <class T>
bool same_binary(const Expr& a, const Expr& b) {
    auto* x = static_cast<const T*>(a.get());
    auto* y = static_cast<const T*>(b.get());
    return same_expr(x->a, y->a) && same_expr(x->b, y->b);
}
inline bool same_list(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!same_expr(a[i], b[i])) return false;
    return true;
}
}  // namespace equal_impl

inline bool same_expr(const Expr& a, const Expr& b) {
    using namespace equal_impl;
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined() || a.kind() != b.kind() || a.type() != b.type()) return false;
    switch (a.kind()) {
        case NodeKind::IntImm: return a.as<IntImm>()->value == b.as<IntImm>()->value;
        case NodeKind::FloatImm: {
            // Bitwise, so 0.0 and -0.0 differ.
            double x = a.as<FloatImm>()->value, y = b.as<FloatImm>()->value;
            return std::memcmp(&x, &y, sizeof x) == 0;
        }
        case NodeKind::StringImm: return a.as<StringImm>()->value == b.as<StringImm>()->value;
        case NodeKind::Var: return false;  // distinct nodes are distinct variables
#define WEFT_SAME_BINARY(N) \
    case NodeKind::N: return same_binary<N>(a, b);
            WEFT_SAME_BINARY(Add) WEFT_SAME_BINARY(Sub) WEFT_SAME_BINARY(Mul) WEFT_SAME_BINARY(Div)
            WEFT_SAME_BINARY(Mod) WEFT_SAME_BINARY(Min) WEFT_SAME_BINARY(Max) WEFT_SAME_BINARY(EQ)
            WEFT_SAME_BINARY(NE) WEFT_SAME_BINARY(LT) WEFT_SAME_BINARY(LE) WEFT_SAME_BINARY(GT)
            WEFT_SAME_BINARY(GE) WEFT_SAME_BINARY(And) WEFT_SAME_BINARY(Or)
#undef WEFT_SAME_BINARY
        case NodeKind::Not: return same_expr(a.as<Not>()->a, b.as<Not>()->a);
        case NodeKind::Select: {
            auto *x = a.as<Select>(), *y = b.as<Select>();
            return same_expr(x->condition, y->condition) && same_expr(x->true_value, y->true_value) &&
                   same_expr(x->false_value, y->false_value);
        }
        case NodeKind::Cast: return same_expr(a.as<Cast>()->value, b.as<Cast>()->value);
        case NodeKind::Call: {
            auto *x = a.as<Call>(), *y = b.as<Call>();
            // Calls with effects (or extern ones, which may have them) are never "the same value".
            if (x->call_kind != Call::CallKind::PureIntrinsic) return false;
            return x->name == y->name && x->call_kind == y->call_kind && same_list(x->args, y->args);
        }
        case NodeKind::Load: {
            auto *x = a.as<Load>(), *y = b.as<Load>();
            return x->buffer.same_as(y->buffer) && same_expr(x->index, y->index);
        }
        case NodeKind::Ramp: {
            auto *x = a.as<Ramp>(), *y = b.as<Ramp>();
            return x->lanes == y->lanes && same_expr(x->base, y->base) && same_expr(x->stride, y->stride);
        }
        case NodeKind::Broadcast: {
            auto *x = a.as<Broadcast>(), *y = b.as<Broadcast>();
            return x->lanes == y->lanes && same_expr(x->value, y->value);
        }
        case NodeKind::Let: {
            auto *x = a.as<Let>(), *y = b.as<Let>();
            return x->var.same_as(y->var) && same_expr(x->value, y->value) && same_expr(x->body, y->body);
        }
        case NodeKind::ProducerLoad: {
            auto *x = a.as<ProducerLoad>(), *y = b.as<ProducerLoad>();
            return x->producer == y->producer && x->value_index == y->value_index && same_list(x->indices, y->indices);
        }
        default: return false;  // Reduce: only identical nodes are known equal
    }
}

}  // namespace weft::ir::arith::detail
