// topi scatters: scatter_elements and scatter_nd (ONNX's ScatterElements / ScatterND), each
// as a gather from the output's side: an output element searches the updates aimed at it (a
// reduction over the indices: O(output x updates along the searched dimensions), meant for
// the small index sets models scatter with). Reduction "none" takes the last update aimed at
// an element; "add", "mul", "max", "min" combine every one with the data.
#pragma once
#include "weft/topi/impl/indexing.hpp"

namespace weft::topi {

namespace scatter_detail {

inline void check_reduction(const std::string& r, const char* op) {
    WEFT_CHECK(r == "none" || r == "add" || r == "mul" || r == "max" || r == "min", op, ": reduction '", r,
               "' is none of none, add, mul, max, min");
}

// Every update aimed at an element reduced with `reduction` (its identity where none is).
inline Expr reduce_updates(Expr update, const std::vector<IterVar>& over, Expr aimed, const std::string& reduction) {
    if (reduction == "add") return te::sum(update, over, aimed);
    if (reduction == "mul") return te::prod(update, over, aimed);
    return reduction == "max" ? te::max(update, over, aimed) : te::min(update, over, aimed);
}

inline Expr combine(Expr d, Expr a, const std::string& reduction) {
    if (reduction == "add") return d + a;
    if (reduction == "mul") return d * a;
    return reduction == "max" ? ir::max(d, a) : ir::min(d, a);
}

}  // namespace scatter_detail

Tensor scatter_elements(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis,
                        const std::string& reduction) {
    using namespace scatter_detail;
    auto [ds, is] = index_operands(data, indices, "scatter_elements");
    check_reduction(reduction, "scatter_elements");
    const std::vector<int64_t> us = const_shape(updates, "scatter_elements", "updates");
    WEFT_CHECK(updates.dtype() == data.dtype(), "scatter_elements: the updates '", updates.name(), "' are ",
               updates.dtype().str(), " but the data '", data.name(), "' is ", data.dtype().str());
    WEFT_CHECK(us == is, "scatter_elements: the updates ", shape_string(us), " and the indices ", shape_string(is),
               " must have one shape");
    WEFT_CHECK(ds.size() == is.size(), "scatter_elements: the indices have rank ", is.size(), " but the data ", ds.size());
    const size_t a = axis_index(axis, ds.size(), "scatter_elements");
    for (size_t d = 0; d < ds.size(); ++d)
        WEFT_CHECK(d == a || is[d] <= ds[d], "scatter_elements: dimension ", d, " of the indices (", is[d],
                   ") exceeds the data's (", ds[d], ")");
    IterVar r = te::reduce_axis(make_int(0), make_int(is[a]), "r");
    // The update at position r along the axis, beside output element o.
    auto at_update = [&](const std::vector<Expr>& o, Expr along) {
        std::vector<Expr> u(o.size());
        for (size_t d = 0; d < o.size(); ++d) u[d] = d == a ? along : ir::min(o[d], make_int(is[d] - 1));
        return u;
    };
    auto aimed = [&](const std::vector<Expr>& o) {
        Expr c = wrap_index(indices.at(at_update(o, r)), ds[a]) == ir::cast(i64, o[a]);
        for (size_t d = 0; d < o.size(); ++d)
            if (d != a && is[d] < ds[d]) c = c && o[d] < make_int(is[d]);
        return c;
    };
    if (reduction == "none") {
        Tensor last = nn_detail::compute_nd(
            exprs(ds), [&](const std::vector<Expr>& o) { return te::max(ir::cast(i64, Expr(r)), {r}, aimed(o)); },
            "scatter_elements_last");
        return nn_detail::compute_nd(
            exprs(ds),
            [&](const std::vector<Expr>& o) {
                Expr k = last.at(o);
                Expr from = updates.at(at_update(o, clamp(k, 0, is[a] - 1)));
                return ir::select(k >= make_int(0, i64), from, data.at(o));
            },
            "scatter_elements");
    }
    Tensor acc = nn_detail::compute_nd(
        exprs(ds),
        [&](const std::vector<Expr>& o) { return reduce_updates(updates.at(at_update(o, r)), {r}, aimed(o), reduction); },
        "scatter_elements_" + reduction);
    return nn_detail::compute_nd(
        exprs(ds), [&](const std::vector<Expr>& o) { return combine(data.at(o), acc.at(o), reduction); },
        "scatter_elements");
}

Tensor scatter_nd(const Tensor& data, const Tensor& indices, const Tensor& updates, const std::string& reduction) {
    using namespace scatter_detail;
    auto [ds, is] = index_operands(data, indices, "scatter_nd");
    check_reduction(reduction, "scatter_nd");
    WEFT_CHECK(updates.dtype() == data.dtype(), "scatter_nd: the updates are ", updates.dtype().str(),
               " but the data is ", data.dtype().str());
    const int64_t k = is.back(), q = int64_t(is.size()) - 1;
    if (q == 0) {  // one update: searched over a leading dimension of 1
        std::vector<int64_t> one_u = const_shape(updates, "scatter_nd", "updates");
        one_u.insert(one_u.begin(), 1);
        return scatter_nd(data, reshape(indices, {1, k}), reshape(updates, one_u), reduction);
    }
    WEFT_CHECK(k >= 1 && k <= int64_t(ds.size()), "scatter_nd: the indices' last dimension (", k,
               ") must be between 1 and the data's rank (", ds.size(), ")");
    std::vector<int64_t> want(is.begin(), is.end() - 1);
    want.insert(want.end(), ds.begin() + k, ds.end());
    const std::vector<int64_t> us = const_shape(updates, "scatter_nd", "updates");
    WEFT_CHECK(us == want, "scatter_nd: the updates are ", shape_string(us), "; data ", shape_string(ds), " and indices ",
               shape_string(is), " need ", shape_string(want));
    std::vector<IterVar> r;
    for (int64_t j = 0; j < q; ++j) r.push_back(te::reduce_axis(make_int(0), make_int(is[size_t(j)]), "r" + std::to_string(j)));
    auto aimed = [&](const std::vector<Expr>& o) {
        Expr c;
        std::vector<Expr> at(r.begin(), r.end());
        at.push_back(make_int(0));
        for (int64_t j = 0; j < k; ++j) {
            at.back() = make_int(j);
            Expr same = wrap_index(indices.at(at), ds[size_t(j)]) == ir::cast(i64, o[size_t(j)]);
            c = c.defined() ? (c && same) : same;
        }
        return c;
    };
    // The update of position u (q leading coordinates) beside output element o.
    auto update_at = [&](const std::vector<Expr>& o, std::vector<Expr> u) {
        u.insert(u.end(), o.begin() + k, o.end());
        return updates.at(u);
    };
    if (reduction == "none") {
        // The last aimed update by its flat position among the indices' leading dimensions.
        Tensor last = nn_detail::compute_nd(
            exprs(ds),
            [&](const std::vector<Expr>& o) {
                Expr flat = make_int(0, i64);
                for (int64_t j = 0; j < q; ++j) flat = flat * make_int(is[size_t(j)], i64) + ir::cast(i64, Expr(r[size_t(j)]));
                return te::max(flat, r, aimed(o));
            },
            "scatter_nd_last");
        return nn_detail::compute_nd(
            exprs(ds),
            [&](const std::vector<Expr>& o) {
                Expr f = last.at(o), rest = ir::max(f, make_int(0, i64));
                std::vector<Expr> u(static_cast<size_t>(q), Expr());
                for (int64_t j = q - 1; j >= 0; --j) {
                    u[size_t(j)] = rest % make_int(is[size_t(j)], i64);
                    rest = rest / make_int(is[size_t(j)], i64);
                }
                return ir::select(f >= make_int(0, i64), update_at(o, u), data.at(o));
            },
            "scatter_nd");
    }
    Tensor acc = nn_detail::compute_nd(
        exprs(ds),
        [&](const std::vector<Expr>& o) {
            return reduce_updates(update_at(o, std::vector<Expr>(r.begin(), r.end())), r, aimed(o), reduction);
        },
        "scatter_nd_" + reduction);
    return nn_detail::compute_nd(
        exprs(ds), [&](const std::vector<Expr>& o) { return combine(data.at(o), acc.at(o), reduction); }, "scatter_nd");
}

Tensor tensor_scatter(const Tensor& past, const Tensor& update, const Tensor& write_indices, int64_t axis,
                      bool circular) {
    const std::vector<int64_t> ps = const_shape(past, "tensor_scatter", "past"), us = const_shape(update, "tensor_scatter", "update");
    WEFT_CHECK(update.dtype() == past.dtype(), "tensor_scatter: the update '", update.name(), "' is ",
               update.dtype().str(), " but the cache '", past.name(), "' is ", past.dtype().str());
    WEFT_CHECK(ps.size() >= 2 && us.size() == ps.size(), "tensor_scatter: the cache ", shape_string(ps),
               " and the update ", shape_string(us), " need one rank, at least 2");
    const size_t a = axis_index(axis, ps.size(), "tensor_scatter");
    WEFT_CHECK(a != 0, "tensor_scatter: the axis must not be the batch (0)");
    for (size_t d = 0; d < ps.size(); ++d)
        WEFT_CHECK(d == a ? us[d] <= ps[d] : us[d] == ps[d], "tensor_scatter: the update ", shape_string(us),
                   " does not fit the cache ", shape_string(ps), " along dimension ", d);
    if (write_indices.defined()) {
        const std::vector<int64_t> ws = const_shape(write_indices, "tensor_scatter", "write_indices");
        WEFT_CHECK(write_indices.dtype() == i64 && ws == std::vector<int64_t>{ps[0]}, "tensor_scatter: write_indices '",
                   write_indices.name(), "' must be int64 [", ps[0], "]");
    }
    const int64_t S = ps[a], U = us[a];
    return nn_detail::compute_nd(
        exprs(ps),
        [&](const std::vector<Expr>& o) {
            Expr start = write_indices.defined() ? write_indices(o[0]) : make_int(0, i64);
            Expr d = o[a] - start;
            // A position's place in the update: wrapped into [0, S) when circular.
            if (circular) d = ir::select(d % make_int(S, i64) < make_int(0, i64), d % make_int(S, i64) + make_int(S, i64),
                                         d % make_int(S, i64));
            Expr hit = d >= make_int(0, i64) && d < make_int(U, i64);
            std::vector<Expr> u = o;
            u[a] = ir::min(ir::max(d, make_int(0, i64)), make_int(U - 1, i64));
            return ir::select(hit, update.at(u), past.at(o));
        },
        "tensor_scatter");
}

}  // namespace weft::topi
