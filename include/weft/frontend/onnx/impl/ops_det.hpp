// The ONNX importer's Det: Gaussian elimination with partial pivoting, unrolled over the
// matrix's columns in graph operators (argmax for the pivot row, selects for the swap, a
// broadcast multiply-subtract for the elimination); the determinant is the product of the
// pivots times the swaps' sign. A zero pivot makes the product 0 (its column is all zero
// below it); it divides by 1 instead, so no NaN enters the other rows.
#pragma once
#include "weft/frontend/onnx/impl/ops_elementwise.hpp"

namespace weft::onnx::detail {

// Matrices of up to this order: the elimination is unrolled, about 15 nodes per column.
inline constexpr int64_t kMaxDetOrder = 32;

inline std::vector<Value> convert_det(Ctx& c) {
    Value a = c.in(0);
    const std::vector<int64_t> s = c.shape(a);
    const DataType t = c.dtype(a);
    if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2] || !t.is_float())
        malformed("the input must be float square matrices [..., M, M], got " + graph::shape_str(s));
    const int64_t n = s.back(), r = int64_t(s.size());
    if (n > kMaxDetOrder)
        unsupported("Det of matrices of order " + std::to_string(n) + " (weft unrolls the elimination up to " +
                    std::to_string(kMaxDetOrder) + ")");
    std::vector<int64_t> rows_shape(size_t(r), 1);
    rows_shape[size_t(r - 2)] = n;
    std::vector<int64_t> row_index;
    for (int64_t i = 0; i < n; ++i) row_index.push_back(i);
    Value rows = c.constant(int64_buffer(row_index, rows_shape), "row");  // [1.., n, 1]
    Value one = c.scalar(1, t, "one"), zero = c.scalar(0, t, "zero");
    Value det, sign = one;
    std::vector<int64_t> row_shape = s;
    row_shape[size_t(r - 2)] = 1;  // [..., 1, n]
    for (int64_t k = 0; k < n; ++k) {
        // The pivot: the largest |a| in column k at row k or below.
        Value column = c.g.slice(a, {k, k}, {n, k + 1}, {r - 2, r - 1}, {1, 1}, c.fresh("column"));
        Value at = c.add("argmax", {abs_of(c, column)}, {{"axis", r - 2}, {"keepdims", int64_t(1)}});
        Value p = c.add("add", {at, c.scalar(double(k), DataType::int_(64), "k")});  // [..., 1, 1]
        // Rows k and p swapped.
        Value row_p = c.add("gather_elements", {a, expand_to(c, p, row_shape)}, {{"axis", r - 2}});
        Value row_k = c.g.slice(a, {k}, {k + 1}, {r - 2}, {1}, c.fresh("row"));
        Value is_k = c.add("equal", {rows, c.scalar(double(k), DataType::int_(64), "k")});
        Value is_p = c.add("equal", {rows, p});
        a = c.g.where(is_k, row_p, c.g.where(is_p, row_k, a, c.fresh("swap")), c.fresh("swapped"));
        sign = c.add("mul", {sign, c.g.where(c.add("equal", {p, c.scalar(double(k), DataType::int_(64), "k")}), one,
                                             c.scalar(-1, t, "minus_one"), c.fresh("flip"))});
        Value pivot = c.g.slice(a, {k, k}, {k + 1, k + 1}, {r - 2, r - 1}, {1, 1}, c.fresh("pivot"));  // [..., 1, 1]
        det = det.defined() ? c.add("mul", {det, pivot}) : pivot;
        if (k + 1 == n) break;
        // Rows below k less their multiple of row k.
        Value safe = c.g.where(c.add("equal", {pivot, zero}), one, pivot, c.fresh("safe_pivot"));
        Value factor = c.add("div", {c.g.slice(a, {k}, {k + 1}, {r - 1}, {1}, c.fresh("col")), safe});  // [..., n, 1]
        factor = c.g.where(c.add("greater", {rows, c.scalar(double(k), DataType::int_(64), "k")}), factor, zero,
                           c.fresh("below"));
        Value pivot_row = c.g.slice(a, {k}, {k + 1}, {r - 2}, {1}, c.fresh("pivot_row"));  // [..., 1, n]
        a = c.add("sub", {a, c.add("mul", {factor, pivot_row})});
    }
    Value d = c.add("mul", {det, sign});  // [..., 1, 1]
    std::vector<int64_t> out(s.begin(), s.end() - 2);
    if (out.empty()) return {c.mark_scalar(reshape(c, d, {1}, c.out()))};
    return {reshape(c, d, out, c.out())};
}

}  // namespace weft::onnx::detail
