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

Tensor hard_swish(const Tensor& x) {
    nn_detail::check_float(x, "hard_swish");
    Expr three = constant_like(x, 3.0), six = constant_like(x, 6.0), zero = constant_like(x, 0.0);
    Expr sixth = constant_like(x, 1.0 / 6.0);
    return unary(x, [&](Expr v) { return v * ir::min(ir::max(v + three, zero), six) * sixth; }, "hard_swish", true);
}

}  // namespace weft::topi
