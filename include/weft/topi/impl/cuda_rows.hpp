// GPU schedules of the row operators (topi/cuda.hpp): softmax, log_softmax, layer_norm.
// One block per row. Each row statistic (max, sum, ...) is a reduction split across the
// block's threads: every thread reduces a strided part of the row in a register and stores
// it to a shared buffer; after a barrier every thread combines the partial results in its
// own registers (the statistic is then at hand for all of them, with no second barrier);
// finally the threads write the row together, consecutive threads on consecutive elements.
#pragma once
#include "weft/topi/impl/cuda_injective.hpp"

namespace weft::topi::cuda {
namespace detail {

// The position in x's indices of the reduce axis of a row statistic (the softmax axis).
inline int reduced_position(const Tensor& stat) {
    int axis = -1;
    auto k = stat.op()->reduce_axis.back().var();
    ir::post_order_visit(stat.op()->body[0], [&](const ir::Object* node) {
        if (node->kind != ir::NodeKind::ProducerLoad) return;
        auto* load = static_cast<const ir::ProducerLoad*>(node);
        for (size_t d = 0; d < load->indices.size(); ++d)
            if (load->indices[d].get() == k.get()) axis = int(d);
    });
    WEFT_ICHECK(axis >= 0, "the row statistic '", stat.name(), "' does not read along its reduce axis");
    return axis;
}

struct RowLoops {
    IterVar row;  // bound to blockIdx.x; undefined when the whole tensor is one row
    int64_t threads = kBlockThreads;
};

// `out`'s loops: the axes in `row_axes` are the row, outermost, fused, bound to blockIdx.x;
// the others (the row's elements) fused and split across `threads` threads.
inline RowLoops row_per_block(Schedule& s, const Tensor& out, const std::vector<bool>& in_row, int64_t threads) {
    Stage st = s[out];
    std::vector<IterVar> rows, elems;
    for (int d = 0; d < out.ndim(); ++d) (in_row[size_t(d)] ? elems : rows).push_back(out.axis(d));
    std::vector<IterVar> order = rows;
    order.insert(order.end(), elems.begin(), elems.end());
    st.reorder(order);
    RowLoops r;
    r.threads = threads;
    if (!rows.empty()) {
        r.row = fuse_all(st, rows);
        st.bind(r.row, block_x());
    }
    IterVar e = fuse_all(st, elems);
    auto [eo, ei] = st.split(e, r.threads);
    st.bind(ei, thread_x());
    return r;
}

// A one-value-per-row stage (1 / sum, max + log(sum), ...) in every thread's registers.
inline void per_row_value(Schedule& s, const Tensor& t, const Tensor& out, const RowLoops& r) {
    s[t].set_scope("local");
    if (r.row.defined()) s[t].compute_at(s[out], r.row);
}

inline void epilogue_of(Schedule& s, const Tensor& op, const Tensor& out) {
    if (out.same_as(op)) return;
    nn_detail::inline_epilogue(s, op, out);
    s[op].compute_inline();
}

// The statistics `stats` (reductions over the row, in order) split across the row's threads
// and attached to the row; called after row_per_block.
inline void attach_stats(Schedule& s, const std::vector<std::pair<Tensor, Tensor>>& stats, const Tensor& out,
                         const RowLoops& r) {
    for (auto& [red, rf] : stats) {
        if (r.row.defined()) {
            attach_rows(s, rf, red, out, r.row);
        } else {
            s[red].set_scope("local");
        }
    }
}

inline std::vector<bool> one_axis(int ndim, int axis) {
    std::vector<bool> v(size_t(ndim), false);
    v[size_t(axis)] = true;
    return v;
}

}  // namespace detail

namespace detail {

// softmax and log_softmax: a max and a sum over the row split across the threads, then a
// per-row value (1 / sum, or max + log(sum)) in registers.
inline void schedule_max_sum_rows(Schedule& s, const Tensor& op, const Tensor& out, const std::string& name,
                                  const char* value_stage, const char* who) {
    Tensor mx = input_named(op, name + ".max", who), total = input_named(op, name + ".sum", who),
           value = input_named(op, name + "." + value_stage, who);
    epilogue_of(s, op, out);
    // softmax's exp is recomputed where it is read: cheaper than a row in memory.
    if (Tensor e = find_input_named(op, name + ".exp"); e.defined()) s[e].compute_inline();
    const int64_t threads = reduce_threads(mx);
    Tensor rf_max = split_across_threads(s, mx, threads);
    Tensor rf_sum = split_across_threads(s, total, threads);
    auto r = row_per_block(s, out, one_axis(out.ndim(), reduced_position(mx)), threads);
    attach_stats(s, {{mx, rf_max}, {total, rf_sum}}, out, r);
    per_row_value(s, value, out, r);
}

}  // namespace detail

void schedule_softmax(Schedule& s, const Tensor& op, const Tensor& out) {
    detail::schedule_max_sum_rows(s, op, out, "softmax", "inv", "cuda::schedule_softmax");
}

void schedule_log_softmax(Schedule& s, const Tensor& op, const Tensor& out) {
    detail::schedule_max_sum_rows(s, op, out, "log_softmax", "lse", "cuda::schedule_log_softmax");
}

void schedule_layer_norm(Schedule& s, const Tensor& op, const Tensor& out) {
    const char* who = "cuda::schedule_layer_norm";
    Tensor total = detail::input_named(op, "layer_norm.sum", who), mean = detail::input_named(op, "layer_norm.mean", who),
           var_sum = detail::input_named(op, "layer_norm.var_sum", who),
           rstd = detail::input_named(op, "layer_norm.rstd", who);
    detail::epilogue_of(s, op, out);
    const int64_t threads = detail::reduce_threads(total);
    const int lead = out.ndim() - int(total.op()->reduce_axis.size());
    WEFT_CHECK(lead > 0, who, ": '", op.name(), "' normalizes over all its dimensions; the GPU schedule needs at least one "
               "row dimension (reshape the input to [1, ...])");
    Tensor rf_sum = detail::split_across_threads(s, total, threads);
    Tensor rf_var = detail::split_across_threads(s, var_sum, threads);
    std::vector<bool> in_row(size_t(out.ndim()), false);
    for (int d = lead; d < out.ndim(); ++d) in_row[size_t(d)] = true;
    auto r = detail::row_per_block(s, out, in_row, threads);
    detail::attach_stats(s, {{total, rf_sum}, {var_sum, rf_var}}, out, r);
    detail::per_row_value(s, mean, out, r);
    detail::per_row_value(s, rstd, out, r);
}

}  // namespace weft::topi::cuda
