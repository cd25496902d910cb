// The ONNX importer's DeformConv (opset 19): the taps sampled where the offsets move them
// (deformable_im2col), then one matmul per group with the weights, as a convolution is an
// im2col and a matmul; the bias added after.
#pragma once
#include "weft/frontend/onnx/impl/ops_nn.hpp"

namespace weft::onnx::detail {

inline std::vector<Value> convert_deform_conv(Ctx& c) {
    Value x = c.in(0), w = c.in(1), offset = c.in(2);
    if (c.rank(x) != 4) unsupported("DeformConv over " + std::to_string(c.rank(x) - 2) + " spatial dimensions (weft has 2-D)");
    if (!c.dtype(x).is_float()) unsupported("DeformConv on " + c.dtype(x).str());
    const std::vector<int64_t> xs = c.shape(x), ws = c.shape(w);
    if (ws.size() != 4) malformed("W must be [O, C / group, kH, kW]");
    const int64_t group = c.i("group", 1), offset_group = c.i("offset_group", 1);
    const std::vector<int64_t> kernel = c.ints("kernel_shape", {ws[2], ws[3]});
    if (kernel != std::vector<int64_t>{ws[2], ws[3]}) malformed("kernel_shape must be W's spatial extents");
    if (group < 1 || xs[1] != ws[1] * group || ws[0] % group != 0)
        malformed("X's " + std::to_string(xs[1]) + " channels, W " + ::weft::detail::shape_string(ws) +
                  " and group " + std::to_string(group) + " do not fit");
    if (offset_group < 1 || xs[1] % offset_group != 0)
        malformed("offset_group " + std::to_string(offset_group) + " must divide the " + std::to_string(xs[1]) +
                  " channels");
    graph::Attrs a{{"kernel", kernel},
                   {"strides", c.ints("strides", {1, 1})},
                   {"pads", c.ints("pads", {0, 0, 0, 0})},
                   {"dilations", c.ints("dilations", {1, 1})},
                   {"offset_group", offset_group}};
    const std::vector<int64_t> os = c.shape(offset);
    if (os.size() != 4) malformed("the offset must be [N, offset_group * 2 * kH * kW, OH, OW]");
    checked_elements({xs[0], xs[1], kernel[0], kernel[1], os[2], os[3]}, c.limit, "DeformConv's sampled columns");
    std::vector<Value> ins{x, offset};
    if (c.has(4)) ins.push_back(c.in(4));
    Value cols = c.add("deformable_im2col", ins, a);  // [N, C kh kw, OH OW]
    const int64_t N = xs[0], O = ws[0], per_group = ws[1] * ws[2] * ws[3], OH = os[2], OW = os[3];
    Value grouped = reshape(c, cols, {N, group, per_group, OH * OW});
    Value weights = reshape(c, w, {group, O / group, per_group});
    Value y = reshape(c, matmul_of(c, weights, grouped, c.fresh("matmul")), {N, O, OH, OW}, c.has(3) ? "" : c.out());
    if (!c.has(3)) return {y};
    if (c.shape(c.in(3)) != std::vector<int64_t>{O}) malformed("B must be [O]");
    return {c.add("add", {y, reshape(c, c.in(3), {1, O, 1, 1})}, {}, c.out())};
}

}  // namespace weft::onnx::detail
