// Definition of graph/pass.hpp's quantize_matmul_int8 (BuildOptions::precision = int8):
// post-training quantization of linear layers. The activations' ranges come from running the
// float32 graph on calibration inputs; each matmul of a constant float32 weight then runs on
// the 8-bit kernels (matmul_u8s8: VNNI's vpdpbusd where the target has it):
//   x -> uint8 with the scale and zero point of its calibrated range (min-max, widened to 0),
//   W -> int8 per output column, symmetric (scale max |W[:, n]| / 127),
//   y = float(x_q W_q - zero_point * colsum(W_q)) * x_scale * w_scale[n],
// the correction and the scaling fused into the matmul's kernel.
#pragma once
#include <cmath>

#include "weft/graph/impl/passes_layout.hpp"

namespace weft::graph {

namespace int8_detail {

// The value of v where it is computed from constants by operators the host evaluates (a
// constant, its transpose: a linear layer's weight after simplify_operators); undefined
// otherwise.
inline BufferRef host_value(const Graph& g, Value v, int depth = 4) {
    const Node& n = g.node(v);
    if (n.is_constant()) return n.value;
    if (!n.is_op() || depth == 0) return {};
    const OpDef& def = op_def(n.op);
    if (!def.evaluate) return {};
    std::vector<BufferRef> in;
    for (Value x : n.inputs) {
        in.push_back(host_value(g, x, depth - 1));
        if (!in.back().defined()) return {};
    }
    return def.evaluate(in, n.attrs, n.type);
}

// The matmuls quantize_matmul_int8 converts: float32 x [M, K] times a constant float32
// weight [K, N], K a multiple of 4 and N of 16 (the 8-bit kernel's blocks).
inline bool quantizable(const Graph& g, const Node& n) {
    if (n.op != "matmul" || n.type.dtype != DataType::float_(32) || g.node(n.inputs[0]).is_constant()) return false;
    const std::vector<int64_t>& w = g.type(n.inputs[1]).shape;
    return layout_detail::from_constants(g, n.inputs[1]) && w[0] % 4 == 0 && w[1] % 16 == 0;
}

// The range of each quantizable matmul's input over the calibration inputs (min-max, holding
// 0), by the input's node id: the float32 graph with those inputs as extra outputs, built once
// (the fast tier: a few runs) and run on each. Empty where no matmul is quantizable.
inline std::map<int, std::pair<float, float>> calibrated_ranges(
    const Graph& g, const std::vector<std::map<std::string, BufferRef>>& calibration) {
    Graph probe = g;
    std::map<int, std::pair<float, float>> ranges;
    auto output_name = [](int id) { return "weft.calibrate." + std::to_string(id); };
    for (const Node& n : g.nodes())
        if (quantizable(g, n) && ranges.try_emplace(n.inputs[0].id, 0.0f, 0.0f).second)
            probe.output(n.inputs[0], output_name(n.inputs[0].id));
    if (ranges.empty()) return ranges;
    WEFT_CHECK(!calibration.empty(), "graph::build: precision int8 needs calibration inputs (BuildOptions::calibration: "
               "a few typical inputs, each a map from input name to value), to choose the activations' scales");
    Module m = build(probe, Target::host(), {.tier = CompileTier::fast});
    for (const std::map<std::string, BufferRef>& sample : calibration) {
        for (const std::string& name : m.input_names()) {
            auto it = sample.find(name);
            WEFT_CHECK(it != sample.end(), "graph::build: a calibration input (BuildOptions::calibration) has no value for '",
                       name, "'");
            m.set_input(name, it->second);
        }
        m.run();
        for (auto& [input, range] : ranges) {
            const BufferRef& x = m.get_output(output_name(input));
            const float* p = static_cast<const float*>(x.data());
            for (int64_t i = 0; i < x.size(); ++i) {
                range.first = std::min(range.first, p[i]);
                range.second = std::max(range.second, p[i]);
            }
        }
    }
    return ranges;
}

// A float32 weight [K, N] quantized per column, symmetric: int8 in [-127, 127] at
// max |W[:, n]| / 127, and each column's sum of the int8 values (the zero point's correction).
struct Int8Weight {
    BufferRef values;
    std::vector<float> column_scales;
    std::vector<int32_t> column_sums;
};

inline Int8Weight quantized_weight(const BufferRef& w) {
    const int64_t K = w.shape()[0], N = w.shape()[1];
    Int8Weight q{BufferRef::allocate(DataType::int_(8), {K, N}), std::vector<float>(size_t(N), 0.0f),
                 std::vector<int32_t>(size_t(N), 0)};
    const float* wp = static_cast<const float*>(w.data());
    for (int64_t i = 0; i < K * N; ++i) q.column_scales[size_t(i % N)] = std::max(q.column_scales[size_t(i % N)], std::abs(wp[i]));
    for (float& s : q.column_scales) s = s > 0 ? s / 127.0f : 1.0f;
    auto* values = static_cast<int8_t*>(q.values.data());
    for (int64_t i = 0; i < K * N; ++i) {
        values[i] = int8_t(std::clamp(std::nearbyint(wp[i] / q.column_scales[size_t(i % N)]), -127.0f, 127.0f));
        q.column_sums[size_t(i % N)] += values[i];
    }
    return q;
}

inline BufferRef f32_vector(const std::vector<float>& v) {
    BufferRef b = BufferRef::allocate(DataType::float_(32), {int64_t(v.size())});
    std::copy(v.begin(), v.end(), static_cast<float*>(b.data()));
    return b;
}

}  // namespace int8_detail

Graph quantize_matmul_int8(const Graph& g, const std::vector<std::map<std::string, BufferRef>>& calibration) {
    const std::map<int, std::pair<float, float>> ranges = int8_detail::calibrated_ranges(g, calibration);
    if (ranges.empty()) return g;
    pass_detail::GraphRewriter r(g);
    std::map<int, Value> quantized;  // per input node: its uint8 form (one per activation)
    return pass_detail::rewrite_nodes(g, r, "quantize_matmul_int8", [&](int id) -> std::optional<Value> {
        const Node& n = g.node(id);
        if (!int8_detail::quantizable(g, n)) return std::nullopt;
        auto range = ranges.find(n.inputs[0].id);
        const BufferRef w = int8_detail::host_value(g, n.inputs[1]);
        if (!w.defined()) return std::nullopt;
        const int64_t N = w.shape()[1];
        // x's scale and zero point: its range over 255 steps, 0 exactly representable.
        const auto [lo, hi] = range->second;
        const float scale = hi > lo ? (hi - lo) / 255.0f : 1.0f;
        const float zero_point = std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
        Value x = r.mapped(n.inputs[0]);
        auto [at, fresh] = quantized.try_emplace(n.inputs[0].id);
        if (fresh) {
            Graph& o = r.out();
            const std::string base = o.node(x).name + ".uint8";
            Value steps = o.add_node("div", {x, o.constant(r.fresh_name(base + ".scale"), int8_detail::f32_vector({scale}))},
                                     {}, r.fresh_name(base + ".steps"));
            Value shifted = o.add_node("add", {o.add_node("round", {steps}, {}, r.fresh_name(base + ".round")),
                                               o.constant(r.fresh_name(base + ".zero_point"), int8_detail::f32_vector({zero_point}))},
                                       {}, r.fresh_name(base + ".shifted"));
            at->second = o.cast(o.clip(shifted, 0, 255, r.fresh_name(base + ".saturated")), DataType::uint(8),
                                r.fresh_name(base));
        }
        const int8_detail::Int8Weight wq = int8_detail::quantized_weight(w);
        BufferRef correction = BufferRef::allocate(DataType::int_(32), {N});  // zero point x column sums
        std::vector<float> out_scale(static_cast<size_t>(N), 0.0f);
        for (int64_t j = 0; j < N; ++j) {
            static_cast<int32_t*>(correction.data())[j] = int32_t(zero_point) * wq.column_sums[size_t(j)];
            out_scale[size_t(j)] = scale * wq.column_scales[size_t(j)];
        }
        Graph& o = r.out();
        Value packed = o.add_node("pack_vnni_weight", {o.constant(r.fresh_name(n.name + ".weight_int8"), wq.values)}, {},
                                  r.fresh_name(n.name + ".weight_packed"));
        Value acc = o.add_node("matmul_u8s8", {at->second, packed}, {}, r.fresh_name(n.name + ".int8"));
        Value exact = o.sub(acc, o.constant(r.fresh_name(n.name + ".zero_point_correction"), correction),
                            r.fresh_name(n.name + ".int32"));
        return o.mul(o.cast(exact, DataType::float_(32), r.fresh_name(n.name + ".float")),
                     o.constant(r.fresh_name(n.name + ".scales"), int8_detail::f32_vector(out_scale)), n.name);
    });
}

}  // namespace weft::graph
