// Integer arithmetic the simplifier reasons with: the true (mathematical) values of
// immediates, saturating extended integers for range arithmetic, floor division, and the
// overflow contract of each integer type.
//
// The overflow contract: signed 64-bit arithmetic (index_type) is assumed never to
// overflow, as in Halide and C; every other integer type wraps at its width. Rewrites that
// are exact only without overflow (moving a multiple of c out of a division, deciding a < b
// from the sign of a - b) are applied to signed 64-bit expressions only. Rewrites that are
// exact in modular arithmetic (the affine canonical form) are applied to every width.
#pragma once
#include <algorithm>
#include <cstdint>

#include "weft/ir/expr.hpp"

namespace weft::ir::arith::detail {

using i128 = __int128;

// Range ends live in a wider domain than any value: ±kInf stand for ±infinity, and results
// saturate to them, so range arithmetic itself never overflows.
inline constexpr i128 kInf = i128(1) << 100;

inline bool is_inf(i128 v) { return v >= kInf || v <= -kInf; }
inline i128 saturate(i128 v) { return v >= kInf ? kInf : (v <= -kInf ? -kInf : v); }
inline i128 xadd(i128 a, i128 b) {
    if (is_inf(a)) return a;
    if (is_inf(b)) return b;
    return saturate(a + b);
}
inline i128 xneg(i128 a) { return -a; }
inline i128 xmul(i128 a, i128 b) {
    if (a == 0 || b == 0) return 0;
    bool negative = (a < 0) != (b < 0);
    if (is_inf(a) || is_inf(b)) return negative ? -kInf : kInf;
    i128 r;
    if (__builtin_mul_overflow(a, b, &r)) return negative ? -kInf : kInf;
    return saturate(r);
}

// Floor division and modulo (the IR's integer semantics, ir/expr.hpp); b != 0.
inline i128 floor_div(i128 a, i128 b) {
    i128 q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
}
inline i128 floor_mod(i128 a, i128 b) { return a - floor_div(a, b) * b; }

// Floor division of a range end by a finite nonzero b: infinities keep (or flip) their sign.
inline i128 xfloor_div(i128 a, i128 b) {
    if (is_inf(a)) return (a < 0) != (b < 0) ? -kInf : kInf;
    return floor_div(a, b);
}

// Whether t's arithmetic is assumed not to overflow (see the contract above).
inline bool no_overflow_type(DataType t) { return t.is_int() && t.bits >= 64; }

// The smallest and largest value of integer type t (bool is [0, 1]).
inline i128 type_min(DataType t) {
    if (!t.is_int()) return 0;
    return -(i128(1) << (t.bits - 1));
}
inline i128 type_max(DataType t) {
    if (t.is_bool()) return 1;
    if (t.is_int()) return (i128(1) << (t.bits - 1)) - 1;
    return (i128(1) << t.bits) - 1;
}

// The value an integer immediate of type t stands for: uint64 immediates are stored wrapped
// into int64_t, so 2^64 - 1 is stored as -1.
inline i128 true_value(DataType t, int64_t stored) {
    return t.is_uint() && t.bits >= 64 ? i128(uint64_t(stored)) : i128(stored);
}

// v reduced to `bits` bits, as a signed two's-complement number. Coefficients of the affine
// canonical form are kept in this representation for every integer type, so that x - y
// stays x - y (and does not become x + y * 255 in uint8).
inline int64_t wrap_signed(int bits, int64_t v) {
    if (bits >= 64) return v;
    uint64_t mask = (uint64_t(1) << bits) - 1;
    uint64_t u = uint64_t(v) & mask;
    if (u >> (bits - 1)) u |= ~mask;
    return int64_t(u);
}
inline int64_t wrapping_add(int bits, int64_t a, int64_t b) { return wrap_signed(bits, int64_t(uint64_t(a) + uint64_t(b))); }
inline int64_t wrapping_mul(int bits, int64_t a, int64_t b) { return wrap_signed(bits, int64_t(uint64_t(a) * uint64_t(b))); }
inline int64_t wrapping_neg(int bits, int64_t a) { return wrap_signed(bits, int64_t(0 - uint64_t(a))); }

// The true value of e if it is a scalar integer immediate.
inline bool as_true_const(const Expr& e, i128* v) {
    auto* imm = e.as<IntImm>();
    if (!imm) return false;
    *v = true_value(imm->type, imm->value);
    return true;
}

}  // namespace weft::ir::arith::detail
