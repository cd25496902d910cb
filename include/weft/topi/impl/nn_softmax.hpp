// Definitions of topi/softmax.hpp.
//
// softmax = e * (1 / sum(e)) with e = exp(x - max(x)) (exp inline: nn_exp.hpp); the four stages are named
// "softmax.max", "softmax.exp", "softmax.sum", "softmax.inv" so the schedule finds them.
// log_softmax = x - (max + log(sum(exp(x - max)))); its row stages are "log_softmax.max",
// "log_softmax.sum", "log_softmax.lse" (exp is recomputed inside the sum, never stored).
#pragma once
#include "weft/topi/impl/nn_exp.hpp"
#include "weft/topi/impl/nn_rows.hpp"
#include "weft/topi/softmax.hpp"

namespace weft::topi {

namespace nn_detail {

// The row maximum of x along `axis`, the first stage of both operators.
inline Tensor row_max(const Tensor& x, int axis, const std::string& op) {
    std::vector<Expr> shape = x.shape();
    IterVar k = te::reduce_axis(make_int(0), shape[size_t(axis)], "k");
    return compute_nd(
        drop_axis(shape, axis),
        [&](const std::vector<Expr>& r) { return te::max(x.at(with_index(r, axis, x.ndim(), k.var())), {k}); },
        op + ".max");
}

// The row sum along `axis` of f(index into x's shape).
inline Tensor row_sum(const Tensor& x, int axis, const std::function<Expr(const std::vector<Expr>&)>& f,
                      const std::string& name) {
    std::vector<Expr> shape = x.shape();
    IterVar k = te::reduce_axis(make_int(0), shape[size_t(axis)], "k");
    return compute_nd(
        drop_axis(shape, axis),
        [&](const std::vector<Expr>& r) { return te::sum(f(with_index(r, axis, x.ndim(), k.var())), {k}); }, name);
}

// The softmax axis of `op` (a tensor softmax/log_softmax returned): the position of the
// reduce axis in the max stage's read of x.
inline int softmax_axis(const Tensor& mx) {
    int axis = -1;
    auto k = mx.op()->reduce_axis.at(0).var();
    ir::post_order_visit(mx.op()->body[0], [&](const ir::Object* node) {
        if (node->kind != ir::NodeKind::ProducerLoad) return;
        auto* load = static_cast<const ir::ProducerLoad*>(node);
        for (size_t d = 0; d < load->indices.size(); ++d)
            if (load->indices[d].get() == k.get()) axis = int(d);
    });
    WEFT_ICHECK(axis >= 0, "the softmax max stage does not read x along its reduce axis");
    return axis;
}

}  // namespace nn_detail

Tensor softmax(const Tensor& x, int axis, const Target& target) {
    using namespace nn_detail;
    check_float(x, "softmax");
    axis = normalize_axis(axis, x.ndim(), "softmax");
    const int nd = x.ndim();
    Tensor mx = row_max(x, axis, "softmax");
    Tensor e = compute_nd(
        x.shape(), [&](const std::vector<Expr>& i) { return inline_exp(x.at(i) - mx.at(drop_index(i, axis)), target); },
        "softmax.exp");
    Tensor total = row_sum(x, axis, [&](const std::vector<Expr>& i) { return e.at(i); }, "softmax.sum");
    Tensor inv = compute_nd(
        total.shape(), [&](const std::vector<Expr>& r) { return ir::make_one(x.dtype()) / total.at(r); },
        "softmax.inv");
    (void)nd;
    return compute_nd(
        x.shape(), [&](const std::vector<Expr>& i) { return e.at(i) * inv.at(drop_index(i, axis)); }, "softmax");
}

Tensor log_softmax(const Tensor& x, int axis, const Target& target) {
    using namespace nn_detail;
    check_float(x, "log_softmax");
    axis = normalize_axis(axis, x.ndim(), "log_softmax");
    Tensor mx = row_max(x, axis, "log_softmax");
    Tensor total = row_sum(
        x, axis, [&](const std::vector<Expr>& i) { return inline_exp(x.at(i) - mx.at(drop_index(i, axis)), target); },
        "log_softmax.sum");
    Tensor lse = compute_nd(
        total.shape(), [&](const std::vector<Expr>& r) { return mx.at(r) + ir::log(total.at(r)); },
        "log_softmax.lse");
    return compute_nd(
        x.shape(), [&](const std::vector<Expr>& i) { return x.at(i) - lse.at(drop_index(i, axis)); }, "log_softmax");
}

namespace {

// Both schedules: `out` runs over rows (the axes before the softmax axis, parallel) and,
// inside each, its remaining axes as vectors; the statistics are computed per row.
IterVar softmax_rows(Schedule& s, const Tensor& op, const Tensor& out, const Tensor& mx, const Target& target) {
    nn_detail::check_defined(op, "schedule_softmax", "op");
    nn_detail::check_defined(out, "schedule_softmax", "output");
    if (!out.same_as(op)) {
        nn_detail::inline_epilogue(s, op, out);
        s[op].compute_inline();
    }
    return nn_detail::row_loops(s, out, nn_detail::softmax_axis(mx), target);
}

}  // namespace

void schedule_softmax(Schedule& s, const Tensor& op, const Tensor& out, const Target& target, const Config&) {
    using namespace nn_detail;
    Tensor mx = input_named(op, "softmax.max", "schedule_softmax");
    Tensor e = input_named(op, "softmax.exp", "schedule_softmax");
    Tensor total = input_named(op, "softmax.sum", "schedule_softmax");
    Tensor inv = input_named(op, "softmax.inv", "schedule_softmax");
    IterVar rows = softmax_rows(s, op, out, mx, target);
    reduce_in_row(s, mx, out, rows, target);
    IterVar e_vectors = elementwise_in_row(s, e, out, rows, target);
    // The sum adds each vector of exponentials as soon as the exp pass has computed it, in the
    // same loop (compute_with), instead of reading the row again: one partial per lane, as
    // many vectors as the exp loop's. Where the row is not whole vectors the loops differ.
    const int axis = softmax_axis(mx);
    int64_t length = 0;
    const int lanes = vector_lanes(op.dtype(), target);
    const bool fuse_sum = rows.defined() && axis == op.ndim() - 1 &&
                          ir::as_const_int(op.shape()[size_t(axis)], &length) && length % lanes == 0 &&
                          length >= 2 * lanes;
    std::vector<Tensor> partials = reduce_in_row(s, total, out, rows, target, fuse_sum ? 1 : 4);
    if (fuse_sum && partials.size() == 1) s[partials[0]].compute_with(s[e], e_vectors);
    if (fuse_sum) prefetch_rows_ahead(s, e, mx, e_vectors, length, target);
    scalar_in_row(s, inv, out, rows);
    store_nontemporal_if_large(s, out);
}

void schedule_log_softmax(Schedule& s, const Tensor& op, const Tensor& out, const Target& target, const Config&) {
    using namespace nn_detail;
    Tensor mx = input_named(op, "log_softmax.max", "schedule_log_softmax");
    Tensor total = input_named(op, "log_softmax.sum", "schedule_log_softmax");
    Tensor lse = input_named(op, "log_softmax.lse", "schedule_log_softmax");
    IterVar rows = softmax_rows(s, op, out, mx, target);
    reduce_in_row(s, mx, out, rows, target);
    reduce_in_row(s, total, out, rows, target);
    scalar_in_row(s, lse, out, rows);
    store_nontemporal_if_large(s, out);
}

}  // namespace weft::topi
