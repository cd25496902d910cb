// Row-wise building blocks shared by softmax, log_softmax and layer_norm: the shape of the
// per-row statistics, indexing them, and scheduling the statistics inside a row loop.
#pragma once
#include "weft/topi/impl/nn_reduction.hpp"

namespace weft::topi::nn_detail {

// `shape` without dimension `axis` ({1} when nothing is left).
inline std::vector<Expr> drop_axis(const std::vector<Expr>& shape, int axis) {
    std::vector<Expr> out;
    for (int d = 0; d < int(shape.size()); ++d)
        if (d != axis) out.push_back(shape[size_t(d)]);
    if (out.empty()) out.push_back(make_int(1));
    return out;
}

// Indices `idx` without position `axis` ({0} when nothing is left), to read a statistic.
inline std::vector<Expr> drop_index(const std::vector<Expr>& idx, int axis) {
    std::vector<Expr> out;
    for (int d = 0; d < int(idx.size()); ++d)
        if (d != axis) out.push_back(idx[size_t(d)]);
    if (out.empty()) out.push_back(make_int(0));
    return out;
}

// `idx` with `k` inserted at position `axis` (idx comes from drop_axis's shape).
inline std::vector<Expr> with_index(const std::vector<Expr>& idx, int axis, int ndim, Expr k) {
    std::vector<Expr> out;
    if (ndim == 1) return {k};
    for (int d = 0, o = 0; d < ndim; ++d) out.push_back(d == axis ? k : idx[size_t(o++)]);
    return out;
}

// A statistic `red` of each row, computed inside the row loop `rows` of `out`. Vectorized
// along the row by rfactor (one partial result per lane) when the row is contiguous and its
// length allows it; across rows (its last data axis the vector, inside the reduce loops)
// when the reduced axis is not the innermost one. `chains`: see rfactor_lanes. Returns the
// rfactor stages (the per-lane partial results), outermost first.
inline std::vector<Tensor> reduce_in_row(Schedule& s, const Tensor& red, const Tensor& out, const IterVar& rows,
                                         const Target& target, int chains = 4) {
    IterVar k = innermost_reduce_axis(red);
    std::vector<Tensor> partials = k.defined() ? rfactor_lanes(s, red, k, target, chains) : std::vector<Tensor>{};
    if (!k.defined()) {
        Stage st = s[red];
        auto [o, lane] = st.split(red.axis(red.ndim() - 1), vector_lanes(red.dtype(), target));
        std::vector<IterVar> order;
        for (auto& iv : st.leaf_iter_vars())
            if (!iv.same_as(lane)) order.push_back(iv);
        order.push_back(lane);
        st.reorder(order);
        st.vectorize(lane);
    }
    if (rows.defined()) {
        s[red].compute_at(s[out], rows);
        for (auto& p : partials) s[p].compute_at(s[out], rows);
    }
    return partials;
}

// An element-wise stage of a whole row (shape = out's), computed inside the row loop and
// vectorized along its last axis. Returns the loop over the vectors.
inline IterVar elementwise_in_row(Schedule& s, const Tensor& t, const Tensor& out, const IterVar& rows,
                                  const Target& target) {
    if (rows.defined()) s[t].compute_at(s[out], rows);
    auto [o, lane] = s[t].split(t.axis(t.ndim() - 1), vector_lanes(t.dtype(), target));
    s[t].vectorize(lane);
    return o;
}

// A one-value-per-row stage computed inside the row loop.
inline void scalar_in_row(Schedule& s, const Tensor& t, const Tensor& out, const IterVar& rows) {
    if (rows.defined()) s[t].compute_at(s[out], rows);
}

// Software prefetch of the rows ahead of row i of x (a kernel input, rows contiguous,
// `length` elements each), one hint per cache line spread over the loop `vectors` of `t`,
// which reads one vector of row i per iteration. The hardware prefetchers stop at 4 KiB page
// boundaries and a kernel that reads a row, then computes on it from L1, leaves them nothing
// to follow between rows: the next row's first pass waits for memory. The hints run at least
// a page ahead. Measured on a 2-core Xeon (AVX-512, 4096 x 1024, 1 thread, one process,
// three rounds): softmax 0.97-1.01 -> 1.09-1.10 of Eigen's in the same process one row
// ahead (two rows: the same within 2%); layer_norm 12% faster than without hints one row
// ahead, 5% two rows ahead.
// `x` is the one tensor that `reader` (the row's first statistic) reads.
inline void prefetch_rows_ahead(Schedule& s, const Tensor& t, const Tensor& reader, const IterVar& vectors,
                                int64_t length, const Target& target) {
    std::vector<Tensor> inputs = reader.op().input_tensors();
    if (inputs.size() != 1 || !inputs[0].op()->is_placeholder() || length <= 0) return;
    const Tensor& x = inputs[0];
    const int lanes = vector_lanes(x.dtype(), target);
    const int64_t row_bytes = length * x.dtype().bytes();
    if (length % lanes != 0 || row_bytes < 1024) return;  // short rows: the hardware prefetcher follows them
    const int64_t rows_ahead = (4096 + row_bytes - 1) / row_bytes;
    s[t].prefetch(x, vectors, rows_ahead * (length / lanes));
}

// The row loop of `out` over its first `lead` axes (fused, parallel when there is enough
// work; undefined when lead == 0), and its remaining axes fused and split into vectors.
inline IterVar row_loops(Schedule& s, const Tensor& out, int lead, const Target& target) {
    Stage st = s[out];
    std::vector<IterVar> axes;
    for (int d = 0; d < out.ndim(); ++d) axes.push_back(out.axis(d));
    IterVar rows;
    if (lead > 0) {
        // Row axes of a symbolic extent stay apart (the outermost parallel): fused, a row's
        // statistics would be indexed by `f / n` and `f % n`, from which the lowering cannot
        // prove that a stage computed per row covers one row.
        bool symbolic = false;
        int64_t extent = 0;
        for (int d = 0; d < lead; ++d) symbolic |= !ir::as_const_int(out.shape()[size_t(d)], &extent);
        int64_t size = const_size(out.shape());
        if (symbolic) {
            rows = axes[size_t(lead) - 1];
            st.parallel(axes[0]);
        } else {
            rows = fuse_all(st, std::vector<IterVar>(axes.begin(), axes.begin() + lead));
            if (size < 0 || size >= kMinParallelElements) st.parallel(rows);
        }
    }
    IterVar row = fuse_all(st, std::vector<IterVar>(axes.begin() + lead, axes.end()));
    auto [o, lane] = st.split(row, vector_lanes(out.dtype(), target));
    st.vectorize(lane);
    return rows;
}

}  // namespace weft::topi::nn_detail
