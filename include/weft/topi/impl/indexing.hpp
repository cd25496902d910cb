// Definitions of topi/transform.hpp's indexing operators: gather, gather_elements,
// gather_nd (every gathered index wrapped and clamped into its extent, so no read leaves the
// buffer) and cumsum. Shares transform.hpp's shape helpers.
#pragma once
#include "weft/topi/impl/transform.hpp"

namespace weft::topi {

// ---- gather ---------------------------------------------------------------------------------

std::vector<int64_t> gather_shape(const std::vector<int64_t>& data, const std::vector<int64_t>& indices, int64_t axis) {
    size_t a = axis_index(axis, data.size(), "gather");
    std::vector<int64_t> out(data.begin(), data.begin() + int64_t(a));
    out.insert(out.end(), indices.begin(), indices.end());
    out.insert(out.end(), data.begin() + int64_t(a) + 1, data.end());
    check_result(out, "gather");
    return out;
}

// The shapes of a gather's data and int32/int64 indices (a weft::Error naming `op` otherwise).
inline std::pair<std::vector<int64_t>, std::vector<int64_t>> index_operands(const Tensor& data, const Tensor& indices,
                                                                            const std::string& op) {
    std::vector<int64_t> ds = const_shape(data, op, "data"), is = const_shape(indices, op, "indices");
    DataType it = indices.dtype();
    WEFT_CHECK(it == i32 || it == i64, op, ": the indices '", indices.name(), "' have dtype ", it.str(),
               "; they must be int32 or int64");
    return {ds, is};
}

// An index into an extent n as int64: negative counts from the end, the rest clamped into it.
inline Expr wrap_index(Expr k, int64_t n) {
    k = ir::cast(i64, k);
    return clamp(ir::select(k < make_int(0), k + make_int(n), k), 0, n - 1);
}

Tensor gather(const Tensor& data, const Tensor& indices, int64_t axis) {
    auto [ds, is] = index_operands(data, indices, "gather");
    std::vector<int64_t> out = gather_shape(ds, is, axis);
    const size_t a = axis_index(axis, ds.size(), "gather"), ni = is.size();
    const int64_t n = ds[a];
    return nn_detail::compute_nd(
        exprs(out),
        [&](const std::vector<Expr>& o) {
            std::vector<Expr> at_indices(o.begin() + int64_t(a), o.begin() + int64_t(a + ni));
            Expr k = wrap_index(indices.at(at_indices), n);
            std::vector<Expr> idx(o.begin(), o.begin() + int64_t(a));
            idx.push_back(k);
            idx.insert(idx.end(), o.begin() + int64_t(a + ni), o.end());
            return data.at(idx);
        },
        "gather");
}

Tensor gather_elements(const Tensor& data, const Tensor& indices, int64_t axis) {
    auto [ds, is] = index_operands(data, indices, "gather_elements");
    WEFT_CHECK(ds.size() == is.size(), "gather_elements: the indices '", indices.name(), "' have rank ", is.size(),
               " but the data '", data.name(), "' has rank ", ds.size());
    const size_t a = axis_index(axis, ds.size(), "gather_elements");
    for (size_t d = 0; d < ds.size(); ++d)
        WEFT_CHECK(d == a || is[d] <= ds[d], "gather_elements: dimension ", d, " of the indices (", is[d],
                   ") exceeds the data's (", ds[d], ")");
    const int64_t n = ds[a];
    return nn_detail::compute_nd(
        exprs(is),
        [&](const std::vector<Expr>& o) {
            Expr k = wrap_index(indices.at(o), n);
            std::vector<Expr> idx = o;
            idx[a] = k;
            return data.at(idx);
        },
        "gather_elements");
}

std::vector<int64_t> gather_nd_shape(const std::vector<int64_t>& ds, const std::vector<int64_t>& is, int64_t b) {
    WEFT_CHECK(!is.empty() && !ds.empty(), "gather_nd: the data and the indices need at least one dimension");
    const int64_t k = is.back();
    WEFT_CHECK(b >= 0 && b < int64_t(std::min(ds.size(), is.size())), "gather_nd: batch_dims ", b,
               " must be below both ranks (", ds.size(), ", ", is.size(), ")");
    WEFT_CHECK(k >= 1 && b + k <= int64_t(ds.size()), "gather_nd: the indices' last dimension (", k,
               ") must be between 1 and the data's rank less batch_dims (", int64_t(ds.size()) - b, ")");
    for (int64_t d = 0; d < b; ++d)
        WEFT_CHECK(ds[size_t(d)] == is[size_t(d)], "gather_nd: batch dimension ", d, " is ", ds[size_t(d)],
                   " in the data but ", is[size_t(d)], " in the indices");
    std::vector<int64_t> out(is.begin(), is.end() - 1);
    out.insert(out.end(), ds.begin() + b + k, ds.end());
    check_result(out, "gather_nd");
    return out;
}

Tensor gather_nd(const Tensor& data, const Tensor& indices, int64_t b) {
    auto [ds, is] = index_operands(data, indices, "gather_nd");
    std::vector<int64_t> out = gather_nd_shape(ds, is, b);
    const int64_t k = is.back(), q = int64_t(is.size()) - 1;  // q: the indices' leading dimensions
    return nn_detail::compute_nd(
        exprs(out),
        [&](const std::vector<Expr>& o) {
            std::vector<Expr> idx(o.begin(), o.begin() + b);  // the shared batch dimensions
            std::vector<Expr> at(o.begin(), o.begin() + q);
            at.push_back(make_int(0));
            for (int64_t j = 0; j < k; ++j) {
                at.back() = make_int(j);
                idx.push_back(wrap_index(indices.at(at), ds[size_t(b + j)]));
            }
            idx.insert(idx.end(), o.begin() + q, o.end());
            return data.at(idx);
        },
        "gather_nd");
}

namespace {
// Running sums (or products) along axis: term k of element i where k <= i (k < i exclusive),
// or from the end k >= i.
Tensor cumulative(const Tensor& x, int64_t axis, bool exclusive, bool reverse, bool product, const char* op) {
    std::vector<int64_t> xs = const_shape(x, op, "input");
    WEFT_CHECK(!x.dtype().is_bool(), op, ": '", x.name(), "' is a bool tensor; it needs numbers");
    const size_t a = axis_index(axis, xs.size(), op);
    const int64_t n = xs[a];
    IterVar k = te::reduce_axis(make_int(0), make_int(n), "k");
    return nn_detail::compute_nd(
        exprs(xs),
        [&](const std::vector<Expr>& o) {
            std::vector<Expr> idx = o;
            idx[a] = k;
            Expr i = o[a];
            Expr in = reverse ? (exclusive ? Expr(k) > i : Expr(k) >= i) : (exclusive ? Expr(k) < i : Expr(k) <= i);
            return product ? te::prod(x.at(idx), {k}, in) : te::sum(x.at(idx), {k}, in);
        },
        op);
}
}  // namespace

Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
    return cumulative(x, axis, exclusive, reverse, false, "cumsum");
}

Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
    return cumulative(x, axis, exclusive, reverse, true, "cumprod");
}

}  // namespace weft::topi
