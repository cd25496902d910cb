// Definition of graph/pass.hpp's fold_scale_axis: per-channel affine steps after a conv2d
// or dense folded into its weight (a scale per output channel) and one bias_add (a shift).
#pragma once
#include <cmath>
#include <optional>

#include "weft/graph/impl/op_helpers.hpp"
#include "weft/graph/impl/passes_pipeline.hpp"

namespace weft::graph {

namespace pass_detail {

inline double load_element(const BufferRef& b, int64_t i) {
    if (b.dtype() == DataType::float_(64)) return static_cast<const double*>(b.data())[i];
    return static_cast<const float*>(b.data())[i];
}

inline void store_element(const BufferRef& b, int64_t i, double v) {
    if (b.dtype() == DataType::float_(64)) static_cast<double*>(b.data())[i] = v;
    else static_cast<float*>(b.data())[i] = float(v);
}

inline bool is_f32_or_f64(DataType t) { return t == DataType::float_(32) || t == DataType::float_(64); }

// The values of constant `c` along the channel axis (1) of `data`, when c broadcasts to
// `data` and varies along no other axis: one per channel; empty when it does not fit.
inline std::vector<double> per_channel(const Node& c, const TensorType& data) {
    const auto& s = c.type.shape;
    const size_t rank = data.shape.size();
    if (!c.is_constant() || c.type.dtype != data.dtype || s.size() > rank || rank < 2) return {};
    const int64_t channels = data.shape[1];
    int64_t stride = 0;  // elements between channels in c (0: one value for all)
    int64_t inner = 1;
    for (size_t j = s.size(); j-- > 0;) {
        size_t axis = j + (rank - s.size());
        if (s[j] != 1) {
            if (axis != 1 || s[j] != channels) return {};
            stride = inner;
        }
        inner *= s[j];
    }
    std::vector<double> v(static_cast<size_t>(channels));
    for (int64_t k = 0; k < channels; ++k) v[size_t(k)] = load_element(c.value, k * stride);
    return v;
}

// The values of constant `c` of shape [channels] (batch_norm's parameters, a bias); empty
// when c is no such constant.
inline std::vector<double> channel_vector(const Node& c, const TensorType& data) {
    if (!c.is_constant() || c.type.dtype != data.dtype || c.type.shape != std::vector<int64_t>{data.shape[1]}) return {};
    std::vector<double> v(size_t(data.shape[1]));
    for (size_t k = 0; k < v.size(); ++k) v[k] = load_element(c.value, int64_t(k));
    return v;
}

// One step of a chain: the node, and what it does per channel: y = x * scale + shift
// (an empty scale or shift: none).
struct AffineStep {
    int data = -1;  // the node it reads: the previous link
    std::vector<double> scale, shift;
};

// A batch_norm's per-channel scale and shift (y = x * scale + shift, its data input 0) from
// its constant parameters; nullopt where one is no constant of shape [C].
inline std::optional<AffineStep> batch_norm_affine(const Graph& g, const Node& n) {
    std::vector<double> p[4];  // gamma, beta, mean, var
    for (size_t k = 0; k < 4; ++k)
        if ((p[k] = channel_vector(g.node(n.inputs[k + 1]), n.type)).empty()) return std::nullopt;
    AffineStep step;
    const double eps = n.attrs.get_float("epsilon", 1e-5);
    for (size_t c = 0; c < p[0].size(); ++c) {
        const double k = p[0][c] / std::sqrt(p[3][c] + eps);
        step.scale.push_back(k);
        step.shift.push_back(p[1][c] - p[2][c] * k);
    }
    step.data = n.inputs[0].id;
    return step;
}

// The step node `id` of g makes when it reads a link of a chain (linked[v]): which input is
// the data and the per-channel scale and shift; nullopt when it is no such step.
inline std::optional<AffineStep> affine_step(const Graph& g, int id, const std::vector<int>& anchor_of) {
    const Node& n = g.node(id);
    if (!n.is_op() || n.inputs.empty() || !is_f32_or_f64(n.type.dtype) || n.type.shape.size() < 2)
        return std::nullopt;
    auto linked = [&](size_t k) { return k < n.inputs.size() && anchor_of[size_t(n.inputs[k].id)] >= 0; };
    auto constant = [&](size_t k) -> const Node& { return g.node(n.inputs[k]); };
    AffineStep step;
    if (n.op == "batch_norm" && linked(0)) return batch_norm_affine(g, n);
    if (n.inputs.size() != 2) return std::nullopt;
    if (n.op == "bias_add" && linked(0) && ops::normalize_axis(n.attrs.get_int("axis", 1), n.type.shape.size()) == 1) {
        step.data = 0;
        step.shift = channel_vector(constant(1), n.type);
    } else if ((n.op == "add" || n.op == "mul") && (linked(0) || linked(1))) {  // the data on either side
        size_t d = linked(0) ? 0 : 1;
        step.data = int(d);
        (n.op == "add" ? step.shift : step.scale) = per_channel(constant(1 - d), n.type);
    } else if ((n.op == "sub" || n.op == "div") && linked(0)) {
        step.data = 0;
        std::vector<double> v = per_channel(constant(1), n.type);
        for (double& x : v) {
            if (n.op == "div" && x == 0) return std::nullopt;
            x = n.op == "sub" ? -x : 1.0 / x;
        }
        (n.op == "sub" ? step.shift : step.scale) = std::move(v);
    } else {
        return std::nullopt;
    }
    // The data must have the step's own type (the constant only varies along the channels).
    if ((step.scale.empty() && step.shift.empty()) || g.type(n.inputs[size_t(step.data)]) != n.type) return std::nullopt;
    step.data = n.inputs[size_t(step.data)].id;
    return step;
}

}  // namespace pass_detail

Graph fold_scale_axis(const Graph& g) {
    using pass_detail::AffineStep;
    std::vector<int> order = pass_detail::walk_order(g, "fold_scale_axis");
    std::vector<int> uses = pass_detail::use_counts(g);
    // anchor_of[id]: the conv2d / dense whose chain node id ends (or is in); -1: none.
    std::vector<int> anchor_of(size_t(g.size()), -1), next(size_t(g.size()), -1);
    std::vector<std::optional<AffineStep>> step_of(size_t(g.size()));
    for (int id : order) {
        const Node& n = g.node(id);
        if ((n.op == "conv2d" || n.op == "dense") && n.inputs.size() == 2 && g.node(n.inputs[1]).is_constant() &&
            pass_detail::is_f32_or_f64(n.type.dtype)) {
            anchor_of[size_t(id)] = id;
            continue;
        }
        std::optional<AffineStep> step = pass_detail::affine_step(g, id, anchor_of);
        if (!step || uses[size_t(step->data)] != 1) continue;
        anchor_of[size_t(id)] = anchor_of[size_t(step->data)];
        next[size_t(step->data)] = id;
        step_of[size_t(id)] = std::move(step);
    }
    // Fold the chains that do more than a conv2d / dense and its bias_add already do.
    std::vector<bool> skip(size_t(g.size()), false), tail(size_t(g.size()), false);
    for (int id : order) {
        int a = anchor_of[size_t(id)];
        if (a < 0 || a == id || next[size_t(id)] >= 0) continue;
        if (step_of[size_t(id)]->data == a && g.node(id).op == "bias_add") continue;
        tail[size_t(id)] = true;
        for (int k = a; k != id; k = next[size_t(k)]) skip[size_t(k)] = true;
    }
    if (std::find(tail.begin(), tail.end(), true) == tail.end()) return g;

    pass_detail::GraphRewriter r(g);
    for (int id : order) {
        if (skip[size_t(id)]) continue;
        if (!tail[size_t(id)]) {
            r.copy(id);
            continue;
        }
        // y = anchor(x, w) * scale + shift per output channel.
        const int a = anchor_of[size_t(id)];
        const Node &anchor = g.node(a), &w = g.node(anchor.inputs[1]);
        const size_t channels = size_t(w.type.shape[0]);
        std::vector<double> scale(channels, 1.0), shift(channels, 0.0);
        bool shifted = false;
        for (int k = next[size_t(a)];; k = next[size_t(k)]) {
            const AffineStep& s = *step_of[size_t(k)];
            for (size_t c = 0; c < channels; ++c) {
                if (!s.scale.empty()) {
                    scale[c] *= s.scale[c];
                    shift[c] *= s.scale[c];
                }
                if (!s.shift.empty()) shift[c] += s.shift[c];
            }
            shifted |= !s.shift.empty();
            if (k == id) break;
        }
        BufferRef weight = BufferRef::allocate(w.type.dtype, w.type.shape);
        const int64_t per_channel = w.type.size() / int64_t(channels);
        for (int64_t i = 0; i < w.type.size(); ++i)
            pass_detail::store_element(weight, i, pass_detail::load_element(w.value, i) * scale[size_t(i / per_channel)]);
        Value wv = r.out().constant_shared(r.fresh_name(w.name + ".folded"), weight);
        // A QDQ model's weight (quantized_weight_scales, graph/pass.hpp's quantize_int8) stays
        // on a grid: its steps scaled as its values are.
        Attrs attrs = anchor.attrs;
        if (const std::vector<double> steps = attrs.get_floats("quantized_weight_scales"); !steps.empty()) {
            std::vector<double> folded(channels);
            for (size_t c = 0; c < channels; ++c) folded[c] = std::abs(steps[steps.size() == 1 ? 0 : c] * scale[c]);
            attrs.set("quantized_weight_scales", std::move(folded));
        }
        // Followed by a bias_add, the conv2d / dense keeps its name; alone it takes the tail's.
        Value y = r.out().add_node(anchor.op, {r.mapped(anchor.inputs[0]), wv}, std::move(attrs),
                                   shifted ? anchor.name : g.node(id).name);
        if (shifted) {
            BufferRef bias = BufferRef::allocate(w.type.dtype, {int64_t(channels)});
            for (size_t c = 0; c < channels; ++c) pass_detail::store_element(bias, int64_t(c), shift[c]);
            Value bv = r.out().constant_shared(r.fresh_name(g.node(id).name + ".bias"), bias);
            y = r.out().add_node("bias_add", {y, bv}, {{"axis", int64_t(1)}}, g.node(id).name);
        }
        r.set(id, y);
    }
    return r.finish();
}

}  // namespace weft::graph
