// Definitions of topi/elementwise.hpp: activations and math functions, one element each.
#pragma once
#include <cmath>

#include "weft/topi/elementwise.hpp"
#include "weft/topi/impl/nn_detail.hpp"

namespace weft::topi {

namespace {

Tensor unary(const Tensor& x, const std::function<Expr(Expr)>& f, const std::string& op, bool float_only) {
    if (float_only) nn_detail::check_float(x, op);
    else nn_detail::check_defined(x, op);
    return nn_detail::compute_nd(x.shape(), [&](const std::vector<Expr>& i) { return f(x.at(i)); }, op);
}

Expr constant_like(const Tensor& x, double v) { return ir::make_const(x.dtype(), v); }

}  // namespace

Tensor relu(const Tensor& x) {
    nn_detail::check_defined(x, "relu");
    Expr zero = ir::make_zero(x.dtype());
    return unary(x, [&](Expr v) { return ir::max(v, zero); }, "relu", false);
}

void check_leaky_relu_alpha(double alpha, DataType dtype) {
    WEFT_CHECK(std::isfinite(alpha), "leaky_relu: alpha must be finite, got ", alpha);
    WEFT_CHECK(dtype.is_float() || alpha == std::floor(alpha), "leaky_relu: alpha ", alpha,
               " is not an integer but the input has dtype ", dtype.str(), "; use a float tensor");
}

Tensor leaky_relu(const Tensor& x, double alpha) {
    nn_detail::check_defined(x, "leaky_relu");
    check_leaky_relu_alpha(alpha, x.dtype());
    Expr zero = ir::make_zero(x.dtype()), a = constant_like(x, alpha);
    return unary(x, [&](Expr v) { return ir::select(v > zero, v, v * a); }, "leaky_relu", false);
}

Tensor sigmoid(const Tensor& x) { return unary(x, [](Expr v) { return ir::sigmoid(v); }, "sigmoid", true); }

Tensor tanh(const Tensor& x) { return unary(x, [](Expr v) { return ir::tanh(v); }, "tanh", true); }

Tensor erf(const Tensor& x) { return unary(x, [](Expr v) { return ir::erf(v); }, "erf", true); }

Tensor gelu(const Tensor& x) {
    nn_detail::check_float(x, "gelu");
    Expr half = constant_like(x, 0.5), one = constant_like(x, 1.0), rsqrt2 = constant_like(x, M_SQRT1_2);
    return unary(x, [&](Expr v) { return half * v * (one + ir::erf(v * rsqrt2)); }, "gelu", true);
}

Tensor clip(const Tensor& x, double lo, double hi) {
    nn_detail::check_defined(x, "clip");
    WEFT_CHECK(!std::isnan(lo) && !std::isnan(hi) && lo <= hi, "clip: needs lo <= hi, got lo = ", lo, ", hi = ", hi);
    Expr l = constant_like(x, lo), h = constant_like(x, hi);
    return unary(x, [&](Expr v) { return ir::min(ir::max(v, l), h); }, "clip", false);
}

Tensor exp(const Tensor& x) { return unary(x, [](Expr v) { return ir::exp(v); }, "exp", true); }

Tensor log(const Tensor& x) { return unary(x, [](Expr v) { return ir::log(v); }, "log", true); }

Tensor sqrt(const Tensor& x) { return unary(x, [](Expr v) { return ir::sqrt(v); }, "sqrt", true); }

Tensor floor(const Tensor& x) { return unary(x, [](Expr v) { return ir::floor(v); }, "floor", true); }
Tensor ceil(const Tensor& x) { return unary(x, [](Expr v) { return ir::ceil(v); }, "ceil", true); }
Tensor round(const Tensor& x) { return unary(x, [](Expr v) { return ir::roundeven(v); }, "round", true); }

Tensor sign(const Tensor& x) {
    nn_detail::check_defined(x, "sign");
    WEFT_CHECK(!x.dtype().is_bool(), "sign: '", x.name(), "' is a bool tensor; it needs numbers");
    Expr zero = constant_like(x, 0), one = constant_like(x, 1);
    // x itself where it is neither above nor below 0: 0, -0 and NaN stay what they are.
    return unary(
        x, [&](Expr v) { return ir::select(v > zero, one, ir::select(v < zero, zero - one, x.dtype().is_uint() ? zero : v)); },
        "sign", false);
}

#define WEFT_TOPI_LIBM(NAME) \
    Tensor NAME(const Tensor& x) { return unary(x, [](Expr v) { return ir::NAME(v); }, #NAME, true); }
WEFT_TOPI_LIBM(sin)
WEFT_TOPI_LIBM(cos)
WEFT_TOPI_LIBM(tan)
WEFT_TOPI_LIBM(asin)
WEFT_TOPI_LIBM(acos)
WEFT_TOPI_LIBM(atan)
WEFT_TOPI_LIBM(sinh)
WEFT_TOPI_LIBM(cosh)
WEFT_TOPI_LIBM(asinh)
WEFT_TOPI_LIBM(acosh)
WEFT_TOPI_LIBM(atanh)
#undef WEFT_TOPI_LIBM

namespace {
// The bits of +inf and -inf as a same-width integer's (x reinterpreted).
struct FloatBits {
    DataType int_type;
    Expr infinity, minus_infinity;
};
FloatBits float_bits(const Tensor& x, const char* op) {
    nn_detail::check_float(x, op);
    const int bits = x.dtype().bits;
    WEFT_CHECK(bits == 32 || bits == 64, op, ": '", x.name(), "' has dtype ", x.dtype().str(),
               "; float32 and float64 are supported");
    DataType it = DataType::int_(bits);
    if (bits == 32) return {it, ir::make_int(0x7f800000, it), ir::make_int(-0x00800000LL, it)};
    return {it, ir::make_int(0x7ff0000000000000LL, it), ir::make_int(-0x0010000000000000LL, it)};
}
}  // namespace

Tensor isnan(const Tensor& x) {
    FloatBits f = float_bits(x, "isnan");
    return unary(
        x,
        [&](Expr v) {
            // NaN: bits above +inf's, or, with the sign set (negative as an integer), above
            // -inf's (no arithmetic on the bits: a masking subtraction overflows as signed).
            Expr b = ir::reinterpret(f.int_type, v);
            return b > f.infinity || (b < ir::make_zero(f.int_type) && b > f.minus_infinity);
        },
        "isnan", true);
}

Tensor isinf(const Tensor& x, bool positive, bool negative) {
    FloatBits f = float_bits(x, "isinf");
    return unary(
        x,
        [&](Expr v) {
            Expr b = ir::reinterpret(f.int_type, v);
            Expr pos = b == f.infinity, neg = b == f.minus_infinity;
            if (positive && negative) return pos || neg;
            if (positive) return pos;
            if (negative) return neg;
            return pos && neg;  // false, as a bool expression of v
        },
        "isinf", true);
}

Tensor logical_not(const Tensor& x) {
    nn_detail::check_defined(x, "logical_not");
    WEFT_CHECK(x.dtype().is_bool(), "logical_not: '", x.name(), "' has dtype ", x.dtype().str(), "; it must be bool");
    return unary(x, [](Expr v) { return !v; }, "logical_not", false);
}

Tensor bitwise_not(const Tensor& x) {
    nn_detail::check_defined(x, "bitwise_not");
    WEFT_CHECK(x.dtype().is_integer(), "bitwise_not: '", x.name(), "' has dtype ", x.dtype().str(), "; it needs integers");
    return unary(x, [](Expr v) { return ir::bitwise_not(v); }, "bitwise_not", false);
}

Tensor hard_swish(const Tensor& x) {
    nn_detail::check_float(x, "hard_swish");
    Expr three = constant_like(x, 3.0), six = constant_like(x, 6.0), zero = constant_like(x, 0.0);
    Expr sixth = constant_like(x, 1.0 / 6.0);
    return unary(x, [&](Expr v) { return v * ir::min(ir::max(v + three, zero), six) * sixth; }, "hard_swish", true);
}

}  // namespace weft::topi
