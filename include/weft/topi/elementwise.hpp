// topi: element-wise activations and math functions. Each result has its input's shape and
// dtype; all but relu, leaky_relu and clip need a float input. Schedule them with
// schedule_injective (injective.hpp).
#pragma once
#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"

namespace weft::topi {

Tensor relu(const Tensor& x);
// x for x > 0, alpha * x otherwise.
Tensor leaky_relu(const Tensor& x, double alpha = 0.01);
// leaky_relu's check of alpha for an input of `dtype` (finite; an integer for an integer
// input): a weft::Error otherwise. The graph layer's shape inference calls it, so that a
// node it accepts also computes.
void check_leaky_relu_alpha(double alpha, DataType dtype);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
// The Gauss error function.
Tensor erf(const Tensor& x);
// The exact GELU, x * (1 + erf(x / sqrt(2))) / 2.
Tensor gelu(const Tensor& x);
// min(max(x, lo), hi); needs lo <= hi.
Tensor clip(const Tensor& x, double lo, double hi);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
// x * min(max(x + 3, 0), 6) / 6.
Tensor hard_swish(const Tensor& x);

// Rounding, float inputs: floor, ceil, and round with halfway cases to the even neighbour
// (IEEE's default, ONNX's Round; std::round's away from zero is ir::round).
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);
// 1, -1 or 0 by the sign of x, in x's dtype (any number type; NaN stays NaN).
Tensor sign(const Tensor& x);
// C's trigonometric and hyperbolic functions, float inputs.
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor asinh(const Tensor& x);
Tensor acosh(const Tensor& x);
Tensor atanh(const Tensor& x);
// Bool tensors from the float x's bits (exact under any math flags): NaN; and infinity,
// +inf where `positive`, -inf where `negative`.
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x, bool positive = true, bool negative = true);
// !x of a bool tensor.
Tensor logical_not(const Tensor& x);
// ~x on an integer (or bool) tensor.
Tensor bitwise_not(const Tensor& x);

}  // namespace weft::topi
