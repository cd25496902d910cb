// topi: reductions over a set of axes (sum, mean, max, min, prod).
//
// `axes` lists the dimensions to reduce (negative counts from the end, -1 the last); an empty
// list reduces them all. With keepdims the reduced dimensions stay, with extent 1; without,
// they are dropped (reducing every dimension then gives a 1-element tensor of shape {1}).
#pragma once
#include "weft/ir/target.hpp"
#include "weft/schedule/config.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"

namespace weft::topi {

Tensor sum(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
// Float tensors only.
Tensor mean(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
Tensor max(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
Tensor min(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
Tensor prod(const Tensor& x, const std::vector<int>& axes = {}, bool keepdims = false);
// The int64 index of the largest (argmax) or smallest (argmin) element along `axis`
// (negative counts from the end): the first of equal ones, or the last with
// `select_last_index`. Two reductions: the extreme value, then the least (greatest) index
// holding it.
Tensor argmax(const Tensor& x, int axis = 0, bool keepdims = true, bool select_last_index = false);
Tensor argmin(const Tensor& x, int axis = 0, bool keepdims = true, bool select_last_index = false);

// The default CPU schedule of one of the reductions above (`op`), with `out` an element-wise
// epilogue of it or `op` itself. Data axes outer and parallel; a reduction over trailing
// axes is vectorized along its innermost reduce loop by rfactor (one partial result per
// lane, so float results do not depend on reassociation), otherwise the innermost data axis
// is the vector axis, inside the reduce loops.
void schedule_reduce(Schedule& s, const Tensor& op, const Tensor& out, const Target& target = Target::host(),
                     const Config& config = {});
inline void schedule_reduce(Schedule& s, const Tensor& op) { schedule_reduce(s, op, op); }

}  // namespace weft::topi
