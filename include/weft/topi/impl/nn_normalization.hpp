// Definitions of topi/normalization.hpp.
//
// layer_norm's row stages are named "layer_norm.sum" (sum of x), "layer_norm.mean",
// "layer_norm.var_sum" (sum of squared deviations from the mean: two passes, the stable
// form) and "layer_norm.rstd" (1 / sqrt(var + epsilon)); the schedule finds them by name.
#pragma once
#include "weft/ir/arith/simplify.hpp"
#include "weft/topi/impl/nn_rows.hpp"
#include "weft/topi/normalization.hpp"

namespace weft::topi {

void check_norm_epsilon(double epsilon, const std::string& op) {
    WEFT_CHECK(std::isfinite(epsilon) && epsilon >= 0, op, ": epsilon must be finite and >= 0, got ", epsilon);
}

Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double epsilon) {
    using namespace nn_detail;
    const std::string op = "layer_norm";
    check_float(x, op);
    check_defined(gamma, op, "gamma");
    check_defined(beta, op, "beta");
    WEFT_CHECK(gamma.dtype() == x.dtype() && beta.dtype() == x.dtype(), op, ": gamma (", gamma.dtype().str(),
               ") and beta (", beta.dtype().str(), ") must have x's dtype ", x.dtype().str());
    check_norm_epsilon(epsilon, op);
    const int nd = x.ndim(), m = gamma.ndim();
    WEFT_CHECK(m <= nd, op, ": gamma has ", m, " dimensions but x only ", nd,
               "; gamma's shape is that of x's trailing (normalized) dimensions");
    std::vector<Expr> xs = x.shape(), gs = gamma.shape(), bs = beta.shape();
    WEFT_CHECK(bs.size() == gs.size(), op, ": beta has ", bs.size(), " dimensions but gamma ", gs.size());
    for (int d = 0; d < m; ++d) {
        WEFT_CHECK(same_extent(gs[size_t(d)], xs[size_t(nd - m + d)]), op, ": gamma's dimension ", d, " is ",
                   gs[size_t(d)], " but x's dimension ", nd - m + d, " is ", xs[size_t(nd - m + d)],
                   "; gamma's shape must be x's trailing dimensions");
        WEFT_CHECK(same_extent(bs[size_t(d)], gs[size_t(d)]), op, ": beta's dimension ", d, " is ",
                   bs[size_t(d)], " but gamma's is ", gs[size_t(d)], "; they must have the same shape");
    }
    const int lead = nd - m;
    std::vector<Expr> row_shape(xs.begin(), xs.begin() + lead);
    if (row_shape.empty()) row_shape.push_back(make_int(1));
    std::vector<IterVar> ks;
    Expr count = ir::make_one(x.dtype());
    for (int d = lead; d < nd; ++d) {
        ks.push_back(te::reduce_axis(make_int(0), xs[size_t(d)], "k" + std::to_string(d - lead)));
        count = count * ir::cast(x.dtype(), xs[size_t(d)]);
    }
    count = ir::arith::simplify(count);
    // x at row r, element k of the normalized axes.
    auto x_at = [&](const std::vector<Expr>& r, const std::vector<Expr>& k) {
        std::vector<Expr> idx = lead ? r : std::vector<Expr>{};
        idx.insert(idx.end(), k.begin(), k.end());
        return x.at(idx);
    };
    std::vector<Expr> kvars;
    for (auto& k : ks) kvars.push_back(k.var());
    auto row_of = [&](const std::vector<Expr>& i) {
        return lead ? std::vector<Expr>(i.begin(), i.begin() + lead) : std::vector<Expr>{make_int(0)};
    };
    auto tail_of = [&](const std::vector<Expr>& i) { return std::vector<Expr>(i.begin() + lead, i.end()); };

    Tensor total = compute_nd(row_shape, [&](const std::vector<Expr>& r) { return te::sum(x_at(r, kvars), ks); },
                              op + ".sum");
    Tensor mean = compute_nd(row_shape, [&](const std::vector<Expr>& r) { return total.at(r) / count; }, op + ".mean");
    Tensor var_sum = compute_nd(
        row_shape, [&](const std::vector<Expr>& r) {
            Expr dev = x_at(r, kvars) - mean.at(r);
            return te::sum(dev * dev, ks);
        },
        op + ".var_sum");
    Expr eps = ir::make_const(x.dtype(), epsilon);
    Tensor rstd = compute_nd(
        row_shape, [&](const std::vector<Expr>& r) {
            return ir::make_one(x.dtype()) / ir::sqrt(var_sum.at(r) / count + eps);
        },
        op + ".rstd");
    return compute_nd(
        xs, [&](const std::vector<Expr>& i) {
            std::vector<Expr> r = row_of(i), k = tail_of(i);
            return (x.at(i) - mean.at(r)) * rstd.at(r) * gamma.at(k) + beta.at(k);
        },
        op);
}

void schedule_layer_norm(Schedule& s, const Tensor& op, const Tensor& out, const Target& target, const Config&) {
    using namespace nn_detail;
    check_defined(op, "schedule_layer_norm", "op");
    check_defined(out, "schedule_layer_norm", "output");
    Tensor total = input_named(op, "layer_norm.sum", "schedule_layer_norm");
    Tensor mean = input_named(op, "layer_norm.mean", "schedule_layer_norm");
    Tensor var_sum = input_named(op, "layer_norm.var_sum", "schedule_layer_norm");
    Tensor rstd = input_named(op, "layer_norm.rstd", "schedule_layer_norm");
    if (!out.same_as(op)) {
        inline_epilogue(s, op, out);
        s[op].compute_inline();
    }
    // The normalized axes are the reduce axes of the sum; the rest are rows.
    const int lead = out.ndim() - int(total.op()->reduce_axis.size());
    IterVar rows = row_loops(s, out, lead, target);
    reduce_in_row(s, total, out, rows, target);
    scalar_in_row(s, mean, out, rows);
    // One chain for the second pass over the row: LLVM unrolls a 4-chain pass completely,
    // and two completely unrolled passes over the same row share their loads of x, which
    // keeps the whole row in registers and spills it to the stack. Out of cache those spills
    // wait for memory and stall the next row's loads (measured: 2.0 ms instead of 1.3 ms
    // at 4096 x 1024, 1 thread); a loop reloads x from L1 instead.
    std::vector<Tensor> var_partials = reduce_in_row(s, var_sum, out, rows, target, 1);
    // The second pass (x from L1) fetches the next rows for the first.
    int64_t length = 0;
    if (rows.defined() && lead == out.ndim() - 1 && var_partials.size() == 1 &&
        ir::as_const_int(out.shape().back(), &length))
        prefetch_rows_ahead(s, var_partials[0], total, s[var_partials[0]].leaf_iter_vars()[1], length, target);
    scalar_in_row(s, rstd, out, rows);
    store_nontemporal_if_large(s, out);
}

}  // namespace weft::topi
