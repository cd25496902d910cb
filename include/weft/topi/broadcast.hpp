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
// Integers divide toward zero (C, ONNX); x / 0 is 0 and the minimum / -1 wraps: no trap.
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

// Comparisons of two tensors of one dtype, broadcast: bool tensors (a float NaN compares
// unequal to everything, itself included).
Tensor equal(const Tensor& a, const Tensor& b);
Tensor not_equal(const Tensor& a, const Tensor& b);
Tensor greater(const Tensor& a, const Tensor& b);
Tensor greater_equal(const Tensor& a, const Tensor& b);
Tensor less(const Tensor& a, const Tensor& b);
Tensor less_equal(const Tensor& a, const Tensor& b);
// Logic on bool tensors, broadcast.
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor logical_xor(const Tensor& a, const Tensor& b);
// Bit operations on integer tensors (and/or/xor/not on bools too), broadcast; shifts by an
// amount outside [0, bits) give 0, or the sign for a signed right shift (ir/op.hpp).
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor shift_left(const Tensor& a, const Tensor& b);
Tensor shift_right(const Tensor& a, const Tensor& b);
// The remainder of a / b, broadcast. `fmod` false: the sign of b, a - floor(a / b) * b
// (Python's %); true: the sign of a, C's fmod. Integers and floats alike. An
// integer remainder by 0 is 0 (not undefined behaviour).
Tensor mod(const Tensor& a, const Tensor& b, bool fmod = false);

}  // namespace weft::topi
