// Definitions of topi/reduction.hpp: sum, mean, max, min, prod over axes, and their schedule.
#pragma once
#include <algorithm>

#include "weft/topi/impl/nn_detail.hpp"
#include "weft/topi/impl/nn_injective.hpp"
#include "weft/topi/reduction.hpp"

namespace weft::topi {

namespace nn_detail {

using ReduceFn = Expr (*)(Expr, const std::vector<IterVar>&, Expr);

// The reduction of x over `axes` (see reduction.hpp for the conventions).
inline Tensor reduce(const Tensor& x, std::vector<int> axes, bool keepdims, ReduceFn fn, const std::string& op) {
    check_defined(x, op);
    const int ndim = x.ndim();
    if (axes.empty())
        for (int d = 0; d < ndim; ++d) axes.push_back(d);
    std::vector<bool> reduced(size_t(ndim), false);
    for (int a : axes) {
        int d = normalize_axis(a, ndim, op);
        WEFT_CHECK(!reduced[size_t(d)], op, ": axis ", a, " is listed twice (as dimension ", d, ")");
        reduced[size_t(d)] = true;
    }
    std::vector<Expr> in_shape = x.shape(), shape;
    std::vector<IterVar> raxes = std::vector<IterVar>(size_t(ndim));
    for (int d = 0; d < ndim; ++d) {
        if (reduced[size_t(d)]) {
            raxes[size_t(d)] = te::reduce_axis(make_int(0), in_shape[size_t(d)], "k" + std::to_string(d));
            if (keepdims) shape.push_back(make_int(1));
        } else {
            shape.push_back(in_shape[size_t(d)]);
        }
    }
    const bool all_dropped = shape.empty();
    if (all_dropped) shape.push_back(make_int(1));
    return compute_nd(
        shape, [&](const std::vector<Expr>& out) {
            std::vector<Expr> idx;
            std::vector<IterVar> over;
            size_t o = 0;
            for (int d = 0; d < ndim; ++d) {
                if (reduced[size_t(d)]) {
                    idx.push_back(raxes[size_t(d)].var());
                    over.push_back(raxes[size_t(d)]);
                    if (keepdims) ++o;
                } else {
                    idx.push_back(out[o++]);
                }
            }
            return fn(x.at(idx), over, Expr());
        },
        op);
}

inline Expr sum_fn(Expr e, const std::vector<IterVar>& a, Expr w) { return te::sum(e, a, w); }
inline Expr max_fn(Expr e, const std::vector<IterVar>& a, Expr w) { return te::max(e, a, w); }
inline Expr min_fn(Expr e, const std::vector<IterVar>& a, Expr w) { return te::min(e, a, w); }
inline Expr prod_fn(Expr e, const std::vector<IterVar>& a, Expr w) { return te::prod(e, a, w); }

// The stage rfactor made of `red` over `axis` (split from one of red's reduce loops),
// with the kept axis as the vector, innermost, and the other reduce loops around it.
inline Tensor rfactor_vectorized(Schedule& s, const Tensor& red, const IterVar& axis) {
    Tensor rf = s.rfactor(red, axis);
    Stage st = s[rf];
    IterVar kept = rf.op()->axis.back();
    std::vector<IterVar> order;
    for (auto& iv : st.leaf_iter_vars())
        if (!iv.same_as(kept)) order.push_back(iv);
    order.push_back(kept);
    st.reorder(order);
    st.vectorize(kept);
    return rf;
}

// After rfactor, `red` reduces one vector of partial results over its last (reduce) loop:
// vectorized, the lanes combine as a tree of halves (log2(lanes) steps, lower/impl/
// vectorize.hpp) instead of a chain of lanes - 1 dependent operations.
inline void combine_lanes_as_tree(Schedule& s, const Tensor& red) {
    Stage st = s[red];
    IterVar lanes = st.leaf_iter_vars().back();
    WEFT_ICHECK(lanes->iter_kind == ir::IterKind::Reduce, "rfactor left '", red.name(), "' without its lane loop");
    st.vectorize(lanes);
}

// Vectorizes the reduction `red` along its reduce axis `k` (read as the innermost dimension):
// rfactor keeps one partial result per vector lane, reduced over the other reduce loops with
// the lanes innermost; `red` then combines the lanes as a tree.
//
// The lane count is the widest power of two up to the target's width that divides k's extent
// (a split that did not divide would guard each lane, which stays serial); none when no
// width of at least 4 lanes fits. With chains > 1 a long row gets that many vectors of
// partial results, independent chains that hide the latency of the adds (or maxes); a
// second rfactor folds them into one vector before the lanes are combined. Returns the
// factored stages, outer first (both are computed where the caller computes `red`).
inline std::vector<Tensor> rfactor_lanes(Schedule& s, const Tensor& red, const IterVar& k, const Target& target,
                                         int chains = 4) {
    int64_t extent;
    if (!const_extent(k.dom().extent, &extent)) {
        // A symbolic length: whole vectors in the split's steady loop (loop partitioning cuts
        // it from the guarded tail), one chain.
        auto [ko, ki] = s[red].split(k, vector_lanes(red.dtype(), target));
        Tensor partial = rfactor_vectorized(s, red, ki);
        combine_lanes_as_tree(s, red);
        return {partial};
    }
    int lanes = vector_lanes(red.dtype(), target);
    while (lanes >= 4 && (extent % lanes != 0 || extent < 2 * lanes)) lanes /= 2;
    if (lanes < 4) return {};
    if (chains <= 1 || extent % (chains * lanes) != 0 || extent < 4 * chains * lanes) {
        auto [ko, ki] = s[red].split(k, lanes);
        Tensor partial = rfactor_vectorized(s, red, ki);
        combine_lanes_as_tree(s, red);
        return {partial};
    }
    auto [ko, ki] = s[red].split(k, chains * lanes);
    Tensor wide = rfactor_vectorized(s, red, ki);
    // red now reduces the chains * lanes partials over its only reduce axis.
    IterVar partial_axis = s[red].leaf_iter_vars().back();
    auto [po, pi] = s[red].split(partial_axis, lanes);
    Tensor narrow = rfactor_vectorized(s, red, pi);
    combine_lanes_as_tree(s, red);
    return {wide, narrow};
}

// The reduction stage of an op: the op itself, or the reduction it reads (mean).
inline Tensor find_reduction(const Tensor& op, const std::string& who) {
    if (op.op()->is_reduction()) return op;
    for (auto& in : compute_inputs(op))
        if (in.op()->is_reduction()) return in;
    WEFT_CHECK(false, who, ": '", op.name(), "' is not a reduction and reads none");
    return Tensor();
}

}  // namespace nn_detail

Tensor sum(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
    return nn_detail::reduce(x, axes, keepdims, nn_detail::sum_fn, "sum");
}

Tensor mean(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
    nn_detail::check_float(x, "mean");
    Tensor total = nn_detail::reduce(x, axes, keepdims, nn_detail::sum_fn, "mean.sum");
    int64_t in = nn_detail::const_size(x.shape()), out = nn_detail::const_size(total.shape());
    Expr count;
    if (in > 0 && out > 0) {
        count = ir::make_const(x.dtype(), double(in / out));
    } else {  // symbolic: the product of the reduced extents
        count = ir::make_const(x.dtype(), 1.0);
        std::vector<Expr> shape = x.shape();
        std::vector<int> list = axes;
        if (list.empty())
            for (int d = 0; d < x.ndim(); ++d) list.push_back(d);
        for (int a : list) count = count * ir::cast(x.dtype(), shape[size_t(nn_detail::normalize_axis(a, x.ndim(), "mean"))]);
    }
    return nn_detail::compute_nd(total.shape(), [&](const std::vector<Expr>& i) { return total.at(i) / count; }, "mean");
}

Tensor max(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
    return nn_detail::reduce(x, axes, keepdims, nn_detail::max_fn, "max");
}

Tensor min(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
    return nn_detail::reduce(x, axes, keepdims, nn_detail::min_fn, "min");
}

Tensor prod(const Tensor& x, const std::vector<int>& axes, bool keepdims) {
    return nn_detail::reduce(x, axes, keepdims, nn_detail::prod_fn, "prod");
}

namespace nn_detail {
Tensor arg_extreme(const Tensor& x, int axis, bool keepdims, bool last, bool largest, const std::string& op) {
    check_defined(x, op);
    WEFT_CHECK(!x.dtype().is_bool(), op, ": '", x.name(), "' is a bool tensor; it needs numbers");
    const int ndim = x.ndim(), d = normalize_axis(axis, ndim, op);
    Tensor extreme = reduce(x, {d}, true, largest ? max_fn : min_fn, op + ".value");
    const Expr n = x.shape()[size_t(d)];
    std::vector<Expr> shape;
    for (int k = 0; k < ndim; ++k)
        if (k != d || keepdims) shape.push_back(k == d ? make_int(1) : x.shape()[size_t(k)]);
    if (shape.empty()) shape.push_back(make_int(1));
    IterVar k = te::reduce_axis(make_int(0), n, "k");
    return compute_nd(
        shape,
        [&](const std::vector<Expr>& i) {
            std::vector<Expr> at, m;  // x's index along k, and the extreme's
            size_t next = 0;  // the output's index of x's dimension j
            for (int j = 0; j < ndim; ++j) {
                if (j == d) {
                    at.push_back(k);
                    m.push_back(make_int(0));
                    next += keepdims;
                } else {
                    at.push_back(i[next]);
                    m.push_back(i[next++]);
                }
            }
            Expr hit = x.at(at) == extreme.at(m);
            Expr index = ir::cast(DataType::int_(64), Expr(k));
            // The first index: the least of the hits (n where none); the last: the greatest.
            return last ? te::max(ir::select(hit, index, ir::make_int(-1, DataType::int_(64))), {k})
                        : te::min(ir::select(hit, index, ir::cast(DataType::int_(64), n)), {k});
        },
        op);
}
}  // namespace nn_detail

Tensor argmax(const Tensor& x, int axis, bool keepdims, bool select_last_index) {
    return nn_detail::arg_extreme(x, axis, keepdims, select_last_index, true, "argmax");
}
Tensor argmin(const Tensor& x, int axis, bool keepdims, bool select_last_index) {
    return nn_detail::arg_extreme(x, axis, keepdims, select_last_index, false, "argmin");
}

void schedule_reduce(Schedule& s, const Tensor& op, const Tensor& out, const Target& target, const Config&) {
    using namespace nn_detail;
    check_defined(op, "schedule_reduce", "op");
    check_defined(out, "schedule_reduce", "output");
    Tensor red = find_reduction(op, "schedule_reduce");
    inline_injective_inputs(s, red);  // the producers of the reduction fuse into it
    if (!out.same_as(red)) inline_injective_inputs(s, out);
    const int64_t work = const_size(red.op().input_tensors().at(0).shape());
    const bool parallel = work < 0 || work >= kMinParallelElements;

    IterVar k = innermost_reduce_axis(red);
    if (k.defined()) {
        // The reduction runs along memory: one row loop over the output, the reduction
        // (vectorized by lanes) inside it.
        std::vector<Tensor> partials = rfactor_lanes(s, red, k, target);
        std::vector<IterVar> axes;
        for (int d = 0; d < out.ndim(); ++d) axes.push_back(out.axis(d));
        IterVar rows = fuse_all(s[out], axes);
        if (parallel) s[out].parallel(rows);
        if (!out.same_as(red)) s[red].compute_at(s[out], rows);
        for (auto& p : partials) s[p].compute_at(s[out], rows);
        return;
    }
    // The reduction runs across memory: the innermost data axis is the vector axis, inside
    // the reduce loops, which stream whole vectors of the input.
    InjectiveLoops loops = vectorize_injective(s, out, false, target);
    auto lane_innermost = [](Stage st, const IterVar& lane) {
        std::vector<IterVar> order;
        for (auto& iv : st.leaf_iter_vars())
            if (!iv.same_as(lane)) order.push_back(iv);
        order.push_back(lane);
        st.reorder(order);
    };
    if (out.same_as(red)) {
        lane_innermost(s[red], loops.lane);
        return;
    }
    s[red].compute_at(s[out], loops.block);
    IterVar last = red.op()->axis.back();
    lane_innermost(s[red], last);
    s[red].vectorize(last);
}

}  // namespace weft::topi
