// The ONNX importer's normalizations: BatchNormalization and LayerNormalization (graph ops of
// their own), and as compositions InstanceNormalization, RMSNormalization, LpNormalization,
// MeanVarianceNormalization, GroupNormalization and LRN.
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

inline std::vector<Value> convert_batch_norm(Ctx& c) {
    if (c.i("training_mode", 0)) unsupported("BatchNormalization in training mode");
    if (c.opset < 9 && c.i("spatial", 1) == 0) unsupported("BatchNormalization with spatial = 0");
    c.ignore({"momentum", "is_test"});  // training's; inference normalizes with the given statistics
    std::vector<Value> r{c.g.batch_norm(c.in(0), c.in(1), c.in(2), c.in(3), c.in(4), c.f("epsilon", 1e-5), c.out())};
    r.resize(size_t(std::max(1, c.node.output_size())));
    return r;
}

inline std::vector<Value> convert_instance_norm(Ctx& c) {
    Value x = c.in(0);
    int64_t r = c.rank(x);
    if (r < 3) malformed("the data must have at least 3 dimensions [N, C, ...]");
    std::vector<int64_t> cs{c.shape(x)[1]};
    for (int64_t k = 2; k < r; ++k) cs.push_back(1);
    Value z = norm_detail::standardize(c, x, iota_vec(2, r), c.f("epsilon", 1e-5));
    Value y = c.add("mul", {z, reshape(c, c.in(1), cs)});
    return {c.add("add", {y, reshape(c, c.in(2), cs)}, {}, c.out())};
}

inline std::vector<Value> convert_layer_norm(Ctx& c) {
    Value x = c.in(0);
    int64_t r = c.rank(x), axis = norm_axis(c.i("axis", -1), r);
    std::vector<int64_t> norm(c.shape(x).begin() + axis, c.shape(x).end());
    DataType t = c.dtype(x);
    auto full = [&](Value v) { return c.shape(v) == norm ? v : expand_to(c, v, norm); };
    Value gamma = full(c.in(1));
    checked_elements(norm, c.limit, "the normalized shape");
    Value beta = c.has(2) ? full(c.in(2)) : c.constant(filled_buffer(t, norm, 0), "beta");
    double eps = c.f("epsilon", 1e-5);
    norm_detail::read_stash_type(c);
    std::vector<Value> out{c.g.layer_norm(x, gamma, beta, eps, c.out())};
    // Mean and InvStdDev (the statistics, normalized axes kept as 1), when asked for.
    if (c.wants(1) || c.wants(2)) {
        const Attrs axes = norm_detail::over(iota_vec(axis, r));
        Value mu = c.add("mean", {x}, axes, c.wants(1) ? c.out(1) : "");
        out.push_back(mu);
        if (c.wants(2)) {
            Value d = c.add("sub", {x, mu});
            Value var = c.add("mean", {c.add("mul", {d, d})}, axes);
            Value sd = c.add("sqrt", {c.add("add", {var, c.scalar(eps, t, "epsilon")})});
            out.push_back(c.add("div", {c.scalar(1, t, "one"), sd}, {}, c.out(2)));
        }
    }
    return out;
}

// LRN: x / (bias + alpha / size * sum of x^2 over `size` neighbouring channels)^beta, the
// window from c - (size - 1) / 2 to c + size / 2 (zeros past the edges).
inline std::vector<Value> convert_lrn(Ctx& c) {
    Value x = c.in(0);
    const std::vector<int64_t> s = c.shape(x);
    if (s.size() < 3) malformed("LRN needs [N, C, ...], got " + graph::shape_str(s));
    const int64_t size = c.i("size"), channels = s[1];
    if (size < 1) malformed("size must be positive, got " + std::to_string(size));
    const DataType t = c.dtype(x);
    std::vector<int64_t> pads(2 * s.size(), 0);
    pads[1] = (size - 1) / 2;
    pads[s.size() + 1] = size / 2;
    Value sq = c.g.pad(c.add("mul", {x, x}), pads, 0.0, c.fresh("squares"));
    Value sum;
    for (int64_t k = 0; k < size; ++k) {
        Value part = c.g.slice(sq, {k}, {k + channels}, {1}, {1}, c.fresh("window"));
        sum = k ? c.add("add", {sum, part}) : part;
    }
    Value scaled = c.add("add", {c.add("mul", {sum, c.scalar(c.f("alpha", 1e-4) / double(size), t, "alpha")}),
                                 c.scalar(c.f("bias", 1.0), t, "bias")});
    return {c.add("div", {x, c.add("pow", {scaled, c.scalar(c.f("beta", 0.75), t, "beta")})}, {}, c.out())};
}

}  // namespace weft::onnx::detail
