// conv2d and depthwise conv2d in the plain NCHW layout, bias_add, and their schedules.
#pragma once
#include "weft/topi/impl/conv_checks.hpp"
#include "weft/topi/impl/conv_schedule_util.hpp"

namespace weft::topi {

Tensor conv2d_nchw(const Tensor& data, const Tensor& weight, const Conv2dParams& p, const std::string& name) {
    using namespace conv_detail;
    const std::string op = "conv2d_nchw '" + name + "'";
    auto d = const_shape(op, data, 4, "data [N, C, H, W]");
    auto w = const_shape(op, weight, 4, "weight [O, C/groups, KH, KW]");
    check_same_dtype(op, data, weight);
    const int64_t N = d[0], C = d[1], O = w[0], KH = w[2], KW = w[3], g = p.groups;
    WEFT_CHECK(g >= 1, op, ": groups must be positive, got ", g);
    WEFT_CHECK(C % g == 0 && O % g == 0, op, ": groups (", g, ") must divide the input channels (", C,
               ") and the output channels (", O, ")");
    check_dim(op, weight, "dimension 1 (C/groups)", w[1], C / g, "input channels / groups");
    const Size2d os = conv2d_out_size(d[2], d[3], KH, KW, p, op);
    const int64_t OH = os.h, OW = os.w;
    Tensor padded = pad_spatial(data, p.padding, 2, name + ".pad");
    const int64_t cpg = C / g, opg = O / g;
    IterVar rc = reduce_axis(0, cpg, "rc"), rh = reduce_axis(0, KH, "rh"), rw = reduce_axis(0, KW, "rw");
    return compute(
        {N, O, OH, OW},
        [&](Expr n, Expr o, Expr y, Expr x) {
            Expr c = g == 1 ? Expr(rc) : (o / opg) * cpg + rc;
            return sum(padded(n, c, y * p.stride.h + rh * p.dilation.h, x * p.stride.w + rw * p.dilation.w) *
                           weight(o, rc, rh, rw),
                       {rc, rh, rw});
        },
        name);
}

Tensor depthwise_conv2d_nchw(const Tensor& data, const Tensor& weight, Conv2dParams p, const std::string& name) {
    using namespace conv_detail;
    const std::string op = "depthwise_conv2d_nchw '" + name + "'";
    auto d = const_shape(op, data, 4, "data [N, C, H, W]");
    auto w = const_shape(op, weight, 4, "weight [C * multiplier, 1, KH, KW]");
    check_dim(op, weight, "dimension 1", w[1], 1, "one input channel per group");
    WEFT_CHECK(w[0] % d[1] == 0, op, ": dimension 0 of '", weight.name(), "' (", w[0],
               ") must be a multiple of the input channels (", d[1], ")");
    WEFT_CHECK(p.groups == 1 || p.groups == d[1], op, ": groups is the number of channels (", d[1], "), got ",
               p.groups);
    p.groups = d[1];
    return conv2d_nchw(data, weight, p, name);
}

Tensor bias_add_nchw(const Tensor& conv, const Tensor& bias, bool relu, const std::string& name) {
    using namespace conv_detail;
    const std::string op = "bias_add_nchw '" + name + "'";
    auto c = const_shape(op, conv, 4, "the input [N, O, H, W]");
    auto b = const_shape(op, bias, 1, "bias [O]");
    check_same_dtype(op, conv, bias);
    check_dim(op, bias, "dimension 0", b[0], c[1], "the output channels");
    return compute(
        {c[0], c[1], c[2], c[3]},
        [&](Expr n, Expr o, Expr y, Expr x) {
            Expr v = conv(n, o, y, x) + bias(o);
            return relu ? max(v, ir::make_zero(v.type())) : v;
        },
        name);
}

// Output channels x a vector (or two) of output columns per tile; the reduction outside
// the tile, so the tile's accumulators stay in registers. Stride > 1 makes the input loads
// strided: correct, but the blocked layout is the fast path.
void schedule_conv2d_nchw(Schedule& s, const Tensor& op, const Tensor& out, const Target& target, const Config&) {
    using namespace conv_detail;
    check_epilogue("schedule_conv2d_nchw", op, out);
    const int64_t lanes = target_lanes(target);
    int64_t O = 0, OW = 0;
    ir::as_const_int(op.shape()[1], &O);
    ir::as_const_int(op.shape()[3], &OW);
    Tensor pad = pad_stage_of(op);
    Tensor acc = tile_accumulator(s, op, out);

    const int64_t xt = tile_extent(OW, OW >= 2 * lanes ? 2 * lanes : lanes);
    const int64_t ot = largest_divisor_at_most(O, 4);
    auto [oo, oi] = s[out].split(out.axis(1), ot);
    auto [xo, xi] = s[out].split(out.axis(3), xt);
    s[out].reorder({out.axis(0), oo, out.axis(2), xo, oi, xi});
    s[out].vectorize(xi);
    IterVar rows = s[out].fuse(s[out].fuse(out.axis(0), oo), out.axis(2));
    s[out].parallel(rows);

    s[acc].compute_at(s[out], xo);
    IterVar rc = acc.reduce_axis(0), rh = acc.reduce_axis(1), rw = acc.reduce_axis(2);
    s[acc].reorder({rc, rh, rw, acc.axis(1), acc.axis(3)});
    s[acc].unroll(acc.axis(1));
    s[acc].vectorize(acc.axis(3));
    if (pad.defined()) s[pad].compute_at(s[acc], rc);
}

// One output row of a channel per parallel iteration; the padded rows it reads are copied
// once per row, the taps unrolled, vectors along the row.
void schedule_depthwise_conv2d_nchw(Schedule& s, const Tensor& op, const Tensor& out, const Target& target,
                                    const Config&) {
    using namespace conv_detail;
    check_epilogue("schedule_depthwise_conv2d_nchw", op, out);
    const int64_t lanes = target_lanes(target);
    int64_t OW = 0;
    ir::as_const_int(op.shape()[3], &OW);
    Tensor pad = pad_stage_of(op);
    Tensor acc = tile_accumulator(s, op, out);

    auto [xo, xi] = s[out].split(out.axis(3), tile_extent(OW, lanes));
    IterVar rows = s[out].fuse(s[out].fuse(out.axis(0), out.axis(1)), out.axis(2));
    s[out].parallel(rows);
    s[out].vectorize(xi);
    s[acc].compute_at(s[out], xo);
    IterVar rc = acc.reduce_axis(0), rh = acc.reduce_axis(1), rw = acc.reduce_axis(2);
    s[acc].reorder({rc, rh, rw, acc.axis(3)});
    s[acc].unroll(rh);
    s[acc].unroll(rw);
    s[acc].vectorize(acc.axis(3));
    if (pad.defined()) s[pad].compute_at(s[out], rows);
}

}  // namespace weft::topi
