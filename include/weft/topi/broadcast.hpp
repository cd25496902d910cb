// topi: numpy-broadcasting arithmetic (add, sub, mul, div, pow, maximum, minimum).
//
// Two tensors broadcast as in numpy: shapes are aligned at their last dimension, a missing
// leading dimension counts as 1, and each pair of dimensions must be equal or one of them 1.
// A tensor combined with a scalar (a number or a scalar Var) applies the scalar to every
// element. Both tensors must have the same dtype (cast one first); the result has it too.
// Schedule the results with schedule_injective (injective.hpp).
#pragma once
#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"

namespace weft::topi {

// The numpy broadcast of two shapes. `op` names the operator in the error thrown when a pair
// of dimensions is neither equal nor 1 (symbolic dimensions must be the same Var, or 1).
std::vector<Expr> broadcast_shape(const std::vector<Expr>& a, const std::vector<Expr>& b,
                                  const std::string& op = "broadcast");

Tensor add(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, Expr b);
Tensor add(Expr a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, Expr b);
Tensor sub(Expr a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, Expr b);
Tensor mul(Expr a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, Expr b);
Tensor div(Expr a, const Tensor& b);
// Float tensors only (a^b with b any real).
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, Expr b);
Tensor pow(Expr a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, Expr b);
Tensor maximum(Expr a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, Expr b);
Tensor minimum(Expr a, const Tensor& b);

}  // namespace weft::topi
