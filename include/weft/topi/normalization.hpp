// topi: layer normalization.
#pragma once
#include "weft/ir/target.hpp"
#include "weft/schedule/config.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"

namespace weft::topi {

// Normalizes x over its trailing gamma.ndim() axes: (x - mean) / sqrt(var + epsilon) * gamma
// + beta, with the mean and the (biased) variance over those axes. gamma and beta have the
// shape of the normalized axes and x's dtype (float). Needs epsilon >= 0.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double epsilon = 1e-5);
// layer_norm's check of epsilon (finite and >= 0): a weft::Error naming `op` otherwise. The
// graph layer's shape inference calls it, so that a node it accepts also computes.
void check_norm_epsilon(double epsilon, const std::string& op = "layer_norm");

// Default CPU schedule: parallel over the rows, a vectorized pass for the mean, one for the
// variance and one for the output, all inside the row loop.
void schedule_layer_norm(Schedule& s, const Tensor& op, const Tensor& out, const Target& target = Target::host(),
                         const Config& config = {});
inline void schedule_layer_norm(Schedule& s, const Tensor& op) { schedule_layer_norm(s, op, op); }

}  // namespace weft::topi
