// Constant folding: the value of an operator applied to immediates, for every dtype, as the
// generated code would compute it. Integers wrap to their width and divide with floor
// semantics; a division or modulo by zero is never folded (the node stays, so the program
// keeps its behaviour). Floats fold only in float32 and float64, where double arithmetic
// rounded to the type is exact; float16/bfloat16 arithmetic is left to the target.
#pragma once
#include <cmath>

#include "weft/ir/arith/impl/int_math.hpp"
#include "weft/ir/op.hpp"

namespace weft::ir::arith::detail {

inline bool foldable_float(DataType t) { return t.is_float() && !t.is_bfloat() && (t.bits == 32 || t.bits == 64); }

// The folded value of a (kind) b for scalar immediates a and b of the same type, or an
// undefined Expr when it does not fold.
inline Expr fold_binary(NodeKind kind, const Expr& a, const Expr& b) {
    DataType t = a.type();
    if (auto *x = a.as<IntImm>(), *y = b.as<IntImm>(); x && y) {
        i128 p = true_value(t, x->value), q = true_value(t, y->value);
        // Ring operations: computed exactly, then wrapped to the width by IntImm::make.
        auto wrap = [&](i128 v) { return make_int(int64_t(uint64_t(v & ~uint64_t(0))), t); };
        auto boolean_of = [&](bool v) { return make_const(DataType::bool_(), v ? 1 : 0); };
        switch (kind) {
            case NodeKind::Add: return wrap(p + q);
            case NodeKind::Sub: return wrap(p - q);
            case NodeKind::Mul: return wrap(i128(uint64_t(p) * uint64_t(q)));  // the low 64 bits are exact
            case NodeKind::Div: return q == 0 ? Expr() : wrap(floor_div(p, q));
            case NodeKind::Mod: return q == 0 ? Expr() : wrap(floor_mod(p, q));
            case NodeKind::Min: return p <= q ? a : b;
            case NodeKind::Max: return p >= q ? a : b;
            case NodeKind::EQ: return boolean_of(p == q);
            case NodeKind::NE: return boolean_of(p != q);
            case NodeKind::LT: return boolean_of(p < q);
            case NodeKind::LE: return boolean_of(p <= q);
            case NodeKind::GT: return boolean_of(p > q);
            case NodeKind::GE: return boolean_of(p >= q);
            case NodeKind::And: return boolean_of(p && q);
            case NodeKind::Or: return boolean_of(p || q);
            default: return Expr();
        }
    }
    if (auto *x = a.as<FloatImm>(), *y = b.as<FloatImm>(); x && y && foldable_float(t)) {
        double p = x->value, q = y->value;
        auto value = [&](double v) { return make_const(t, v); };
        auto boolean_of = [&](bool v) { return make_const(DataType::bool_(), v ? 1 : 0); };
        switch (kind) {
            case NodeKind::Add: return value(t.bits == 32 ? double(float(p) + float(q)) : p + q);
            case NodeKind::Sub: return value(t.bits == 32 ? double(float(p) - float(q)) : p - q);
            case NodeKind::Mul: return value(t.bits == 32 ? double(float(p) * float(q)) : p * q);
            case NodeKind::Div:
                if (q == 0) return Expr();
                return value(t.bits == 32 ? double(float(p) / float(q)) : p / q);
            case NodeKind::Min: return std::isnan(p) || std::isnan(q) ? Expr() : (p <= q ? a : b);
            case NodeKind::Max: return std::isnan(p) || std::isnan(q) ? Expr() : (p >= q ? a : b);
            case NodeKind::EQ: return boolean_of(p == q);
            case NodeKind::NE: return boolean_of(p != q);
            case NodeKind::LT: return boolean_of(p < q);
            case NodeKind::LE: return boolean_of(p <= q);
            case NodeKind::GT: return boolean_of(p > q);
            case NodeKind::GE: return boolean_of(p >= q);
            default: return Expr();  // float Mod: left to the target's floor
        }
    }
    return Expr();
}

// The value of cast<t>(c) for a scalar immediate c, or undefined when it does not fold
// (a float out of the integer type's range, a 16-bit float target).
inline Expr fold_cast(DataType t, const Expr& c) {
    if (!t.is_scalar()) return Expr();
    if (auto* imm = c.as<IntImm>()) {
        i128 v = true_value(imm->type, imm->value);
        if (t.is_integer()) return make_int(imm->value, t);  // IntImm::make wraps to the width
        if (foldable_float(t)) return make_const(t, double(v));
        return Expr();
    }
    if (auto* f = c.as<FloatImm>()) {
        if (foldable_float(t)) return make_const(t, f->value);
        if (t.is_bool()) return make_const(t, f->value != 0 ? 1 : 0);
        if (t.is_integer() && std::isfinite(f->value)) {
            double v = std::trunc(f->value);  // C conversion: toward zero
            if (v >= double(type_min(t)) && v <= double(type_max(t)) && v >= -9.2e18 && v <= 9.2e18)
                return make_int(int64_t(v), t);
        }
    }
    return Expr();
}

}  // namespace weft::ir::arith::detail
