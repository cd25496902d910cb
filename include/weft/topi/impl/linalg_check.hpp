// Argument checks shared by linalg's computes: each failure is a weft::Error that names
// the operator, the operand and what did not fit.
#pragma once
#include <string>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/printer.hpp"
#include "weft/te/operation.hpp"
#include "weft/topi/impl/same_extent.hpp"

namespace weft::topi::detail {

inline std::string shape_str(const Tensor& t) {
    std::string s = "[";
    auto shape = t.shape();
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + ir::to_string(shape[i]);
    return s + "]";
}

// Equal extents: equal constants, or symbolic ones the simplifier proves equal.
inline void check_operand(const char* op, const char* role, const Tensor& t, int rank) {
    WEFT_CHECK(t.defined(), op, ": operand ", role, " is undefined");
    WEFT_CHECK(t.ndim() == rank, op, ": operand ", role, " ('", t.name(), "') must have ", rank,
               " dimensions, got shape ", shape_str(t));
    WEFT_CHECK(t.dtype().is_float(), op, ": operand ", role, " ('", t.name(), "') must be a float tensor, got ",
               t.dtype().str());
}

inline void check_same_dtype(const char* op, const char* role_a, const Tensor& a, const char* role_b,
                             const Tensor& b) {
    WEFT_CHECK(a.dtype() == b.dtype(), op, ": operands ", role_a, " and ", role_b, " must have the same dtype, got ",
               a.dtype().str(), " and ", b.dtype().str());
}

inline void check_extent(const char* op, const Expr& a, const char* what_a, const Expr& b, const char* what_b) {
    WEFT_CHECK(same_extent(a, b), op, ": ", what_a, " (", ir::to_string(a), ") must equal ", what_b, " (",
               ir::to_string(b), ")");
}

inline void check_bias(const char* op, const Tensor& bias, const Tensor& x, const Expr& N) {
    if (!bias.defined()) return;
    check_operand(op, "bias", bias, 1);
    check_same_dtype(op, "X", x, "bias", bias);
    check_extent(op, bias.shape()[0], "the bias length", N, "the number of output features N");
}

}  // namespace weft::topi::detail
