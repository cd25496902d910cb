// Layout transforms between NCHW and the blocked NCHW[x]c, and the weight packings the
// blocked convolutions read. Callers run the weight packing once, at build time.
#pragma once
#include "weft/topi/impl/conv_checks.hpp"
#include "weft/topi/impl/conv_schedule_util.hpp"

namespace weft::topi {

namespace conv_detail {

void check_block(const std::string& op, const char* what, int64_t bn) {
    WEFT_CHECK(bn >= 1, op, ": the ", what, " block size must be positive, got ", bn);
}

// t(idx) where `channel` < extent, else 0: the zero channels that round a count up to a block.
Expr zero_past(const Tensor& t, const std::vector<Expr>& idx, const std::vector<std::pair<Expr, int64_t>>& limits,
               bool padded) {
    if (!padded) return t.at(idx);
    Expr inside;
    for (auto& [c, extent] : limits) inside = inside.defined() ? (inside && c < extent) : (c < extent);
    return if_then_else(inside, t.at(idx), ir::make_zero(t.dtype()));
}
}  // namespace conv_detail

Tensor layout_transform_nchw_to_nchwc(const Tensor& data, int64_t bn, const std::string& name) {
    using namespace conv_detail;
    const std::string op = "layout_transform_nchw_to_nchwc '" + name + "'";
    // (Data movement: any number type; a QDQ model's uint8 values too.)
    const std::vector<Expr> ds = spatial_shape(op, data, 4, "data [N, C, H, W]", 2, true);
    check_block(op, "channel", bn);
    const int64_t C = extent_value(ds[1]), CB = ceil_div(C, bn);
    return compute(
        {plus(ds[0], 0), CB, plus(ds[2], 0), plus(ds[3], 0), bn},
        [&](Expr n, Expr cb, Expr y, Expr x, Expr c) {
            Expr ch = cb * bn + c;
            return zero_past(data, {n, ch, y, x}, {{ch, C}}, C % bn != 0);
        },
        name);
}

Tensor layout_transform_nchwc_to_nchw(const Tensor& data, int64_t channels, const std::string& name) {
    using namespace conv_detail;
    const std::string op = "layout_transform_nchwc_to_nchw '" + name + "'";
    const std::vector<Expr> ds = spatial_shape(op, data, 5, "data [N, C/bn, H, W, bn]", 2, true);
    const std::vector<int64_t> d = extent_values(ds);
    const int64_t bn = d[4];
    WEFT_CHECK(channels >= 1 && channels <= d[1] * bn, op, ": channels must be in [1, ", d[1] * bn,
               "] (the blocks of '", data.name(), "' hold ", d[1] * bn, "), got ", channels);
    return compute(
        {plus(ds[0], 0), channels, plus(ds[2], 0), plus(ds[3], 0)},
        [&](Expr n, Expr c, Expr y, Expr x) { return data(n, c / bn, y, x, c % bn); },
        name);
}

Tensor pack_conv2d_weight_nchwc(const Tensor& weight, int64_t ic_bn, int64_t oc_bn, const std::string& name) {
    using namespace conv_detail;
    const std::string op = "pack_conv2d_weight_nchwc '" + name + "'";
    auto w = const_shape(op, weight, 4, "weight [O, I, KH, KW]");
    check_block(op, "input channel", ic_bn);
    check_block(op, "output channel", oc_bn);
    const int64_t O = w[0], I = w[1];
    const bool padded = O % oc_bn != 0 || I % ic_bn != 0;
    return compute(
        {ceil_div(O, oc_bn), ceil_div(I, ic_bn), w[2], w[3], ic_bn, oc_bn},
        [&](Expr ob, Expr ib, Expr kh, Expr kw, Expr i, Expr o) {
            Expr oc = ob * oc_bn + o, ic = ib * ic_bn + i;
            return zero_past(weight, {oc, ic, kh, kw}, {{oc, O}, {ic, I}}, padded);
        },
        name);
}

Tensor pack_depthwise_weight_nchwc(const Tensor& weight, int64_t bn, const std::string& name) {
    using namespace conv_detail;
    const std::string op = "pack_depthwise_weight_nchwc '" + name + "'";
    auto w = const_shape(op, weight, 4, "weight [C, 1, KH, KW]");
    check_block(op, "channel", bn);
    check_dim(op, weight, "dimension 1", w[1], 1, "one input channel per output channel");
    const int64_t C = w[0];
    return compute(
        {ceil_div(C, bn), 1, w[2], w[3], 1, bn},
        [&](Expr cb, Expr, Expr kh, Expr kw, Expr, Expr c) {
            Expr ch = cb * bn + c;
            return zero_past(weight, {ch, 0, kh, kw}, {{ch, C}}, C % bn != 0);
        },
        name);
}

// The innermost dimension as vectors (when it is wide enough), everything above it fused
// into one parallel loop. Over a symbolic extent (an image size): parallel over the rows
// (dividing by a symbolic extent once per row, not per element), a channel block a vector
// per pixel, else each row's innermost two dimensions one run of vectors.
void schedule_layout_transform(Schedule& s, const Tensor& op, const Target& target) {
    WEFT_CHECK(op.op()->is_compute() && op.ndim() >= 2, "schedule_layout_transform: '", op.name(),
               "' must be a computed tensor of 2 or more dimensions");
    int64_t inner = 0;
    ir::as_const_int(op.shape().back(), &inner);
    const int64_t lanes = conv_detail::target_lanes(target);
    bool symbolic = false;
    for (int i = 0; i < op.ndim(); ++i) symbolic |= conv_detail::symbolic_dim(op, i);
    if (symbolic && op.ndim() >= 3) {
        IterVar rows = op.axis(0);
        for (int i = 1; i + 2 < op.ndim(); ++i) rows = s[op].fuse(rows, op.axis(i));
        s[op].parallel(rows);
        if (inner >= 1 && inner < lanes) {  // a narrow channel block: vectors along the row
            s[op].reorder({op.axis(op.ndim() - 1), op.axis(op.ndim() - 2)});
            auto [vo, vi] = s[op].split(op.axis(op.ndim() - 2), lanes);
            s[op].vectorize(vi);
            return;
        }
        IterVar run = s[op].fuse(op.axis(op.ndim() - 2), op.axis(op.ndim() - 1));
        auto [vo, vi] = s[op].split(run, lanes);
        s[op].vectorize(vi);
        return;
    }
    IterVar outer = op.axis(0);
    for (int i = 1; i + 1 < op.ndim(); ++i) outer = s[op].fuse(outer, op.axis(i));
    s[op].parallel(outer);
    if (inner >= 4) {
        auto [vo, vi] = s[op].split(op.axis(op.ndim() - 1), conv_detail::tile_extent(inner, lanes));
        s[op].vectorize(vi);
    }
}

}  // namespace weft::topi
