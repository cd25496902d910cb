// The ONNX importer's normalizations that graph/ has no single op for, as compositions:
// RMSNormalization, LpNormalization, MeanVarianceNormalization, GroupNormalization.
// (BatchNormalization, InstanceNormalization and LayerNormalization: ops_nn.hpp.)
#pragma once
#include "weft/frontend/onnx/impl/ops_nn.hpp"

namespace weft::onnx::detail {

namespace norm_detail {

inline Attrs over(std::vector<int64_t> axes) { return {{"axes", std::move(axes)}, {"keepdims", int64_t(1)}}; }

// (x - mean) / sqrt(var + eps) over `axes` (kept as 1).
inline Value standardize(Ctx& c, Value x, const std::vector<int64_t>& axes, double eps) {
    const DataType t = c.dtype(x);
    Value d = c.add("sub", {x, c.add("mean", {x}, over(axes))});
    Value var = c.add("mean", {c.add("mul", {d, d})}, over(axes));
    return c.add("div", {d, c.add("sqrt", {c.add("add", {var, c.scalar(eps, t, "epsilon")})})});
}

// stash_type: the type statistics are computed in; weft computes them in the input's type,
// float32 at least (float16 inputs arrive widened), which is what stash_type 1 asks for.
inline void read_stash_type(Ctx& c) {
    const int64_t stash = c.i("stash_type", 1);
    if (stash != 1 && stash != pb::TensorProto::DOUBLE && stash != pb::TensorProto::FLOAT16 &&
        stash != pb::TensorProto::BFLOAT16)
        malformed("stash_type " + std::to_string(stash) + " is not a floating-point type");
}

}  // namespace norm_detail

// RMSNormalization (opset 23): x / sqrt(mean(x^2 over axis..) + epsilon) * scale.
inline std::vector<Value> convert_rms_norm(Ctx& c) {
    using namespace norm_detail;
    Value x = c.in(0);
    const int64_t r = c.rank(x), axis = norm_axis(c.i("axis", -1), r);
    read_stash_type(c);
    const DataType t = c.dtype(x);
    Value ms = c.add("mean", {c.add("mul", {x, x})}, over(iota_vec(axis, r)));
    Value rms = c.add("sqrt", {c.add("add", {ms, c.scalar(c.f("epsilon", 1e-5), t, "epsilon")})});
    return {c.add("mul", {c.add("div", {x, rms}), c.in(1)}, {}, c.out())};
}

// LpNormalization: x / ||x||_p along axis (p 1 or 2); 0 where the norm is 0.
inline std::vector<Value> convert_lp_norm(Ctx& c) {
    using namespace norm_detail;
    Value x = c.in(0);
    const int64_t axis = norm_axis(c.i("axis", -1), c.rank(x)), p = c.i("p", 2);
    if (p != 1 && p != 2) malformed("p must be 1 or 2, got " + std::to_string(p));
    const DataType t = c.dtype(x);
    Value norm = p == 1 ? c.add("sum", {abs_of(c, x)}, over({axis}))
                        : c.add("sqrt", {c.add("sum", {c.add("mul", {x, x})}, over({axis}))});
    Value zero = c.scalar(0, t, "zero");
    Value is_zero = c.add("equal", {norm, zero});
    Value safe = c.g.where(is_zero, c.scalar(1, t, "one"), norm, c.fresh("norm"));
    return {c.g.where(is_zero, zero, c.add("div", {x, safe}), c.out())};
}

// MeanVarianceNormalization: (x - mean) / sqrt(var) over axes (default 0, 2, 3), with ONNX's
// epsilon of 1e-9 inside the root.
inline std::vector<Value> convert_mvn(Ctx& c) {
    Value x = c.in(0);
    std::vector<int64_t> axes = c.ints("axes", {0, 2, 3});
    for (int64_t& a : axes) a = norm_axis(a, c.rank(x));
    return {reshape(c, norm_detail::standardize(c, x, axes, 1e-9), c.shape(x), c.out())};
}

// GroupNormalization: x [N, C, ...] standardized per (n, group of C / num_groups channels),
// then scale and bias: per channel from opset 21, per group in opset 18.
inline std::vector<Value> convert_group_norm(Ctx& c) {
    using namespace norm_detail;
    Value x = c.in(0);
    const std::vector<int64_t> s = c.shape(x);
    if (s.size() < 3) malformed("GroupNormalization needs [N, C, D...], got " + graph::shape_str(s));
    const int64_t groups = c.i("num_groups"), channels = s[1];
    if (groups <= 0 || channels % groups) malformed(std::to_string(groups) + " groups do not divide " + std::to_string(channels) + " channels");
    if (c.opset >= 21) read_stash_type(c);
    std::vector<int64_t> grouped{s[0], groups, -1};
    grouped[2] = product(s) / (s[0] * groups);
    Value g = standardize(c, reshape(c, x, grouped), {2}, c.f("epsilon", 1e-5));
    Value y = reshape(c, g, s);
    std::vector<int64_t> per_channel(s.size(), 1);
    per_channel[1] = channels;
    auto affine = [&](Value p) {
        const int64_t n = c.shape(p)[0];
        if (c.rank(p) != 1 || (n != channels && n != groups))
            malformed("scale and bias must have C or num_groups entries, got " + graph::shape_str(c.shape(p)));
        if (n == groups && n != channels) {  // opset 18: one per group, spread over its channels
            Value wide = expand_to(c, reshape(c, p, {groups, 1}), {groups, channels / groups});
            return reshape(c, wide, per_channel);
        }
        return reshape(c, p, per_channel);
    };
    return {c.add("add", {c.add("mul", {y, affine(c.in(1))}), affine(c.in(2))}, {}, c.out())};
}

}  // namespace weft::onnx::detail
