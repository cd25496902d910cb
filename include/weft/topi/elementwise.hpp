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

}  // namespace weft::topi
