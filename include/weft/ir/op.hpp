// Building expressions: operators, mixed-dtype rules, math intrinsics, constants.
//
// Mixed-dtype rules for binary operators (a op b), applied in order:
//  1. A scalar combined with a vector is broadcast to the vector's lanes.
//  2. A weak immediate (a C++ literal like `2` or `0.5f`) takes the other operand's type;
//     a weak float literal with an integer operand makes the result float32 instead.
//  3. float with int/uint: the integer side is converted to the float type.
//  4. Two floats or two integers of different widths: the narrower is widened.
//  5. int and uint of the same width: the result is int.
// Conversions are explicit Cast nodes, visible in the printed program. Comparisons give
// bool; && || ! need bool operands. Integer / and % use floor semantics (ir/expr.hpp).
#pragma once
#include <vector>

#include "weft/ir/stmt.hpp"

namespace weft::ir {

// An immediate of type t (vector types give a Broadcast).
Expr make_const(DataType t, double value);
Expr make_int(int64_t v, DataType t = index_type);
Expr make_zero(DataType t);
Expr make_one(DataType t);
// The smallest / largest value of t (for max/min reducers' identities).
Expr min_value(DataType t);
Expr max_value(DataType t);

// The integer value of a scalar constant, or nullopt-like false.
bool as_const_int(const Expr& e, int64_t* value);
bool is_const_int(const Expr& e, int64_t value);
inline bool is_zero(const Expr& e) { return is_const_int(e, 0); }
inline bool is_one(const Expr& e) { return is_const_int(e, 1); }
inline bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
bool is_const(const Expr& e);

// Applies the mixed-dtype rules above to a pair of operands (op names the operator in errors).
void match_types(Expr& a, Expr& b, const char* op);

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);

Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
// Both branches are evaluated: use if_then_else when a branch must not run (out-of-bounds loads).
Expr select(Expr cond, Expr t, Expr f);
// Only the chosen branch is evaluated (an intrinsic the backends lower to control flow).
Expr if_then_else(Expr cond, Expr t, Expr f);
// cond itself, marked as holding for most iterations: loop partitioning splits a loop whose
// iterations make it true for a prefix or a suffix (an affine bound on the loop variable)
// into a copy where it is replaced by true and copies that keep the test. A padded read
// if_then_else(likely(y >= 0) && likely(y < H), X(y), 0) runs without a test inside.
Expr likely(Expr cond);
Expr cast(DataType t, Expr v);
Expr truncdiv(Expr a, Expr b);  // C semantics: rounds toward zero
Expr truncmod(Expr a, Expr b);
// Bit operations on integers and bools (shifts: integers). A shift by an amount outside
// [0, bits) is defined: 0 for a left or an unsigned right shift, the sign (0 or -1) for a
// signed right shift (arithmetic); a left shift drops the bits past the top (wraps).
Expr bitwise_and(Expr a, Expr b);
Expr bitwise_or(Expr a, Expr b);
Expr bitwise_xor(Expr a, Expr b);
Expr bitwise_not(Expr a);
Expr shift_left(Expr a, Expr b);
Expr shift_right(Expr a, Expr b);
// The names of the bit intrinsics above ("bitwise_and", ..., "shift_right").
bool is_bit_intrinsic(const std::string& name);

// Math intrinsics. Float types only (an integer argument is a weft::Error), except abs
// which also accepts integers.
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr rsqrt(Expr x);
Expr tanh(Expr x);
Expr sigmoid(Expr x);
Expr erf(Expr x);
Expr pow(Expr x, Expr y);
Expr abs(Expr x);
Expr floor(Expr x);
Expr ceil(Expr x);
Expr round(Expr x);      // halfway cases away from zero, like std::round
Expr roundeven(Expr x);  // halfway cases to the even neighbour (IEEE's default; ONNX Round)
// C's fmod: x - y * trunc(x / y), exact; the sign of x.
Expr fmod(Expr x, Expr y);
// The trigonometric and hyperbolic functions (C's, from libm/libmvec on the CPU).
Expr sin(Expr x);
Expr cos(Expr x);
Expr tan(Expr x);
Expr asin(Expr x);
Expr acos(Expr x);
Expr atan(Expr x);
Expr sinh(Expr x);
Expr cosh(Expr x);
Expr asinh(Expr x);
Expr acosh(Expr x);
Expr atanh(Expr x);
// Their names, the one list the backends read: each is C's function of that name.
const std::vector<std::string>& libm_unary_functions();
// x * 2^floor(n), x and n floats of one type: exact, or the overflow (inf) or underflow (a
// subnormal or 0) of that product (AVX-512's VSCALEF; C's ldexp with an integer-valued n).
Expr ldexp(Expr x, Expr n);

// A call to a C function `name` (resolved at JIT time) returning `type`.
Expr call_extern(DataType type, std::string name, std::vector<Expr> args);

// A scalar repeated in `lanes` lanes.
Expr broadcast(Expr v, int lanes);
// The bits of v as type t (same total width: i8x64 <-> i32x16, f32 <-> i32).
Expr reinterpret(DataType t, Expr v);
// A call to an LLVM intrinsic by its full name, e.g. "llvm.x86.avx512.vpdpbusd.512"; for tensor
// intrinsics' lowerings (te/tensor_intrin.hpp). The CPU backend only; LLVM checks the signature.
Expr call_llvm_intrin(DataType type, std::string name, std::vector<Expr> args);

// The names of the pure math intrinsics the backends implement.
bool is_math_intrinsic(const std::string& name);

}  // namespace weft::ir
