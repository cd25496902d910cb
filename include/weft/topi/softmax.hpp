// topi: softmax and log_softmax along one axis, numerically stable (the maximum along the
// axis is subtracted before exp).
#pragma once
#include "weft/ir/target.hpp"
#include "weft/schedule/config.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"

namespace weft::topi {

// exp(x - max) / sum(exp(x - max)) along `axis` (negative counts from the end). Float only.
// `target` decides how the inline exp scales by 2^n (ldexp where it has AVX-512).
Tensor softmax(const Tensor& x, int axis = -1, const Target& target = Target::host());
// x - max - log(sum(exp(x - max))) along `axis`.
Tensor log_softmax(const Tensor& x, int axis = -1, const Target& target = Target::host());

// Default CPU schedules: parallel over the rows (the other axes), one vectorized pass per
// statistic, computed inside the row loop. `out` is `op` or an element-wise epilogue of it.
void schedule_softmax(Schedule& s, const Tensor& op, const Tensor& out, const Target& target = Target::host(),
                      const Config& config = {});
inline void schedule_softmax(Schedule& s, const Tensor& op) { schedule_softmax(s, op, op); }
void schedule_log_softmax(Schedule& s, const Tensor& op, const Tensor& out, const Target& target = Target::host(),
                          const Config& config = {});
inline void schedule_log_softmax(Schedule& s, const Tensor& op) { schedule_log_softmax(s, op, op); }

}  // namespace weft::topi
