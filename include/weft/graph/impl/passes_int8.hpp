// Definition of graph/pass.hpp's quantize_int8 (BuildOptions::precision = int8): post-training
// quantization of linear layers and convolutions. The activations' ranges come from running
// the float32 graph on calibration inputs; each matmul or conv2d_nchwc of a constant float32
// weight then runs on the 8-bit kernels (matmul_u8s8, conv2d_nchwc_u8s8: VNNI's vpdpbusd
// where the target has it):
//   x -> uint8 with the scale and zero point of its calibrated range (min-max, widened to 0),
//   W -> int8 per output channel, symmetric (scale max |W[:, n]| / 127),
//   y = float(x_q * W_q - zero_point * sum(W_q[n])) * x_scale * w_scale[n],
// the correction and the scaling fused into the kernel. A convolution's padding holds the
// zero point (a quantized 0.0), so the correction is the same at every pixel.
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

// The layers quantize_int8 converts: a matmul of a float32 x [M, K] and a constant float32
// weight [K, N], K a multiple of 4 and N of 16 (the 8-bit kernel's blocks); a conv2d_nchwc of
// a constant weight, groups and dilation 1, whose data blocks hold quads of channels and whose
// output blocks vectors of 16 (not depthwise: that kernel has no 8-bit form).
inline bool quantizable(const Graph& g, const Node& n) {
    if ((n.op != "matmul" && n.op != "conv2d_nchwc") || n.type.dtype != DataType::float_(32) ||
        g.node(n.inputs[0]).is_constant() || !layout_detail::from_constants(g, n.inputs[1]))
        return false;
    const std::vector<int64_t>& w = g.type(n.inputs[1]).shape;
    if (n.op == "matmul") return w[0] % 4 == 0 && w[1] % 16 == 0;
    if (n.inputs.size() != 2 || n.attrs.get_int("depthwise", 0) ||
        n.attrs.get_int("block_groups", 1) != 1)
        return false;
    const std::vector<int64_t>& x = g.type(n.inputs[0]).shape;
    const topi::Conv2dParams p = ops::conv2d_params(n.attrs);
    return x[4] % 4 == 0 && w[4] % x[4] == 0 && w[1] * w[4] == x[1] * x[4] && w[5] % 16 == 0 && p.groups == 1 &&
           p.dilation.h == 1 && p.dilation.w == 1;
}

using layout_detail::carries_quantization;

using Sample = std::map<std::string, BufferRef>;

// A graph with the inputs of the layers to measure as extra outputs, built once (the fast
// tier), and the calibration inputs it runs on (of its input shapes).
struct Probe {
    Module module;
    std::map<std::string, std::vector<std::string>> layers_of;  // per extra output: the layers it is the input of
    std::vector<const Sample*> samples;
};

// The probe of g for the layers `pick` selects; none where it selects none. `passed`: g is
// what the passes made already (built without running them again).
template <class Pick>
std::optional<Probe> make_probe(const Graph& g, Pick pick, std::vector<const Sample*> samples, bool passed = false) {
    Graph probe = g;
    Probe p;
    for (const Node& n : g.nodes()) {
        if (!pick(g, n)) continue;
        const std::string out = "weft.calibrate." + std::to_string(n.inputs[0].id);
        if (!p.layers_of.count(out)) probe.output(n.inputs[0], out);
        p.layers_of[out].push_back(n.name);
    }
    if (p.layers_of.empty()) return std::nullopt;
    WEFT_CHECK(!samples.empty(), "graph::build: precision int8 needs calibration inputs (BuildOptions::calibration: "
               "a few typical inputs, each a map from input name to value), to choose the activations' scales");
    BuildOptions o{.tier = CompileTier::fast};
    if (passed)
        o.eliminate_dead_code = o.eliminate_common_subexpressions = o.fold_constants = o.fold_scale_axis =
            o.simplify_operators = o.convert_layout = false;
    p.module = build(probe, Target::host(), o);
    p.samples = std::move(samples);
    return p;
}

// Each probed layer's input range over its probe's calibration inputs (min-max, or the
// `percentile` share of the values: graph/pass.hpp; holding 0), by layer name: every probe
// run on each of its inputs (twice below 100: the min-max range, then a histogram over it).
inline ActivationRanges measured_ranges(std::vector<Probe>& probes, double percentile) {
    WEFT_CHECK(percentile >= 50 && percentile <= 100, "graph::build: the calibration percentile "
               "(BuildOptions::calibration_percentile) must be from 50 to 100, got ", percentile);
    ActivationRanges ranges;
    // `seen(layers, values, count)` per probed value of every probe run on each of its inputs.
    auto for_each_value = [&](auto seen) {
        for (Probe& p : probes)
            for (const Sample* sample : p.samples) {
                for (const std::string& name : p.module.input_names()) {
                    auto it = sample->find(name);
                    WEFT_CHECK(it != sample->end(),
                               "graph::build: a calibration input (BuildOptions::calibration) has no value for '", name,
                               "'");
                    const std::vector<int64_t>& want = p.module.input(name).shape();
                    WEFT_CHECK(it->second.shape() == want, "graph::build: the calibration input '", name, "' is ",
                               shape_str(it->second.shape()), " but the graph takes ", shape_str(want),
                               " (BuildOptions::calibration: inputs of the graph's shapes, or within its symbolic "
                               "dimensions' bounds)");
                    p.module.set_input(name, it->second);
                }
                p.module.run();
                for (const auto& [out, layers] : p.layers_of) {
                    const BufferRef& x = p.module.get_output(out);
                    seen(layers, static_cast<const float*>(x.data()), x.size());
                }
            }
    };
    // (Values that are not finite say nothing of a range: left out.)
    for_each_value([&](const std::vector<std::string>& layers, const float* p, int64_t n) {
        for (const std::string& layer : layers) {
            auto& [lo, hi] = ranges.try_emplace(layer, 0.0f, 0.0f).first->second;
            for (int64_t i = 0; i < n; ++i)
                if (std::isfinite(p[i])) lo = std::min(lo, p[i]), hi = std::max(hi, p[i]);
        }
    });
    if (percentile >= 100) return ranges;
    constexpr int64_t kBins = 2048;
    std::map<std::string, std::vector<int64_t>> histograms;
    for_each_value([&](const std::vector<std::string>& layers, const float* p, int64_t n) {
        for (const std::string& layer : layers) {
            const auto [lo, hi] = ranges[layer];
            std::vector<int64_t>& h = histograms.try_emplace(layer, kBins, 0).first->second;
            const double width = (double(hi) - double(lo)) / kBins;
            for (int64_t i = 0; i < n; ++i)
                if (std::isfinite(p[i]))
                    ++h[size_t(std::clamp(width > 0 ? (double(p[i]) - lo) / width : 0.0, 0.0, double(kBins - 1)))];
        }
    });
    for (auto& [layer, range] : ranges) {
        const std::vector<int64_t>& h = histograms[layer];
        int64_t total = 0;
        for (int64_t c : h) total += c;
        const double cut = double(total) * (100.0 - percentile) / 200.0, width = (double(range.second) - range.first) / kBins;
        int64_t first = 0, last = kBins - 1;
        for (double below = 0; first < kBins - 1 && below + double(h[size_t(first)]) <= cut; ++first) below += double(h[size_t(first)]);
        for (double above = 0; last > first && above + double(h[size_t(last)]) <= cut; --last) above += double(h[size_t(last)]);
        range = {std::min(0.0f, float(range.first + width * double(first))),
                 std::max(0.0f, float(range.first + width * double(last + 1)))};
    }
    return ranges;
}

// A float32 weight in int8 per output channel, and each channel's sum of the int8 values (the
// zero point's correction). `channel_of(i)`: the output channel of element i.
struct Int8Weight {
    BufferRef values;
    std::vector<float> scales;
    std::vector<int32_t> sums;
};

// w's int8 values at the channels' `scales` (rounded, saturated to [-128, 127]); with
// `on_grid`, std::nullopt where a value is not within 1e-3 of a step of int8's range (a
// weight a pass changed: fold_scale_axis) or a scale is not > 0.
template <class ChannelOf>
std::optional<Int8Weight> weight_at(const BufferRef& w, ChannelOf channel_of, std::vector<float> scales, bool on_grid) {
    const size_t channels = scales.size();
    Int8Weight q{BufferRef::allocate(DataType::int_(8), w.shape()), std::move(scales), std::vector<int32_t>(channels, 0)};
    const float* wp = static_cast<const float*>(w.data());
    auto* values = static_cast<int8_t*>(q.values.data());
    for (int64_t i = 0; i < w.size(); ++i) {
        const size_t c = channel_of(i);
        // (The grid test in double; a range's steps as float32 divides, as the kernels' tests do.)
        const double steps = on_grid ? double(wp[i]) / double(q.scales[c]) : double(wp[i] / q.scales[c]);
        const double nearest = std::nearbyint(steps);
        if (on_grid && (!(q.scales[c] > 0) || std::abs(steps - nearest) > 1e-3 || nearest < -128 || nearest > 127))
            return std::nullopt;
        values[i] = int8_t(std::clamp(nearest, -128.0, 127.0));
        q.sums[c] += values[i];
    }
    return q;
}

// A matmul's weight [K, N]: per column. A conv2d_nchwc's [O/ob, C/wib, KH, KW, wib, ob]: per
// output channel (the first and last indices), in that order; at `given` scales where the
// weight lies on their grid (a QDQ model's), else symmetric over each channel's range.
inline Int8Weight quantized_weight(const BufferRef& w, bool conv, const std::vector<double>& given = {}) {
    const std::vector<int64_t>& s = w.shape();
    auto quantize = [&](int64_t channels, auto channel_of) {
        if (given.size() == 1 || int64_t(given.size()) == channels) {
            std::vector<float> steps(static_cast<size_t>(channels));
            for (size_t c = 0; c < steps.size(); ++c) steps[c] = float(given[given.size() == 1 ? 0 : c]);
            if (std::optional<Int8Weight> q = weight_at(w, channel_of, std::move(steps), true)) return std::move(*q);
        }
        // Symmetric over each channel's range: max |w| / 127, the values in [-127, 127].
        std::vector<float> scales(static_cast<size_t>(channels), 0.0f);
        const float* wp = static_cast<const float*>(w.data());
        for (int64_t i = 0; i < w.size(); ++i) scales[channel_of(i)] = std::max(scales[channel_of(i)], std::abs(wp[i]));
        for (float& m : scales) m = m > 0 ? m / 127.0f : 1.0f;
        return *weight_at(w, channel_of, std::move(scales), false);
    };
    if (!conv) return quantize(s[1], [N = s[1]](int64_t i) { return size_t(i % N); });
    const int64_t ob = s[5], block = w.size() / s[0];
    return quantize(s[0] * ob, [=](int64_t i) { return size_t(i / block * ob + i % ob); });
}

inline BufferRef f32_vector(const std::vector<float>& v) {
    BufferRef b = BufferRef::allocate(DataType::float_(32), {int64_t(v.size())});
    std::copy(v.begin(), v.end(), static_cast<float*>(b.data()));
    return b;
}

// x as uint8 at `scale` and `zero_point`: round(x / scale) + zero_point, saturated.
inline Value quantized_input(Graph& o, pass_detail::GraphRewriter& r, Value x, float scale, float zero_point) {
    const std::string base = o.node(x).name + ".uint8";
    Value steps = o.add_node("div", {x, o.constant(r.fresh_name(base + ".scale"), f32_vector({scale}))}, {},
                             r.fresh_name(base + ".steps"));
    Value shifted = o.add_node("add", {o.add_node("round", {steps}, {}, r.fresh_name(base + ".round")),
                                       o.constant(r.fresh_name(base + ".zero_point"), f32_vector({zero_point}))},
                               {}, r.fresh_name(base + ".shifted"));
    return o.cast(o.clip(shifted, 0, 255, r.fresh_name(base + ".saturated")), DataType::uint(8), r.fresh_name(base));
}

// quantize_int8 (`calibrated`: every quantizable layer, at its model's quantization or else at
// its range) and convert_quantized_convs (the layers that carry their quantization only).
inline Graph quantize_layers(const Graph& g, const std::vector<Sample>& calibration, double percentile,
                             const ActivationRanges& given, bool calibrated, const char* pass) {
    // The layers `given` has no range for, measured on g (a graph of fixed shapes).
    ActivationRanges ranges = given;
    if (calibrated) {
        std::vector<const Sample*> samples;
        for (const Sample& s : calibration) samples.push_back(&s);
        std::vector<Probe> probes;
        if (std::optional<Probe> p = make_probe(
                g,
                [&](const Graph& h, const Node& n) {
                    return quantizable(h, n) && !carries_quantization(n) && !given.count(n.name);
                },
                samples))
            probes.push_back(std::move(*p));
        for (auto& [layer, range] : measured_ranges(probes, percentile)) ranges[layer] = range;
    }
    // The layers this pass converts: at their model's quantization, or at a range.
    auto takes = [&](const Node& n) {
        return quantizable(g, n) && (carries_quantization(n) || (calibrated && ranges.count(n.name)));
    };
    if (std::none_of(g.nodes().begin(), g.nodes().end(), takes)) return g;
    pass_detail::GraphRewriter r(g);
    // Per input node and quantization: its uint8 form (one per activation).
    std::map<std::tuple<int, float, float>, Value> quantized;
    return pass_detail::rewrite_nodes(g, r, pass, [&](int id) -> std::optional<Value> {
        const Node& n = g.node(id);
        if (!takes(n)) return std::nullopt;
        const BufferRef w = host_value(g, n.inputs[1]);
        if (!w.defined()) return std::nullopt;
        const bool conv = n.op == "conv2d_nchwc";
        float scale = 1.0f, zero_point = 0.0f;
        if (carries_quantization(n)) {
            scale = float(n.attrs.get_float("quantized_input_scale"));
            zero_point = float(n.attrs.get_int("quantized_input_zero_point", 0));
            WEFT_CHECK(scale > 0 && std::isfinite(scale) && zero_point >= 0 && zero_point <= 255, describe(n),
                       ": its quantized input's scale must be finite and > 0 and its zero point in [0, 255], got ",
                       scale, " and ", zero_point);
        } else {
            // x's scale and zero point: its range over 255 steps, 0 exactly representable.
            const auto [lo_in, hi_in] = ranges.at(n.name);
            const float lo = std::min(lo_in, 0.0f), hi = std::max(hi_in, 0.0f);
            WEFT_CHECK(std::isfinite(lo) && std::isfinite(hi), describe(n), ": its activation range [", lo, ", ", hi,
                       "] (BuildOptions::activation_ranges) must be finite");
            scale = hi > lo ? (hi - lo) / 255.0f : 1.0f;
            zero_point = std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
        }
        Graph& o = r.out();
        auto [at, fresh] = quantized.try_emplace({n.inputs[0].id, scale, zero_point});
        if (fresh) at->second = quantized_input(o, r, r.mapped(n.inputs[0]), scale, zero_point);
        const Int8Weight wq = quantized_weight(w, conv, n.attrs.get_floats("quantized_weight_scales"));
        const int64_t channels = int64_t(wq.scales.size());
        // The output's shape of per-channel constants: [N] for a matmul, [1, O/ob, 1, 1, ob].
        const std::vector<int64_t> per_channel =
            conv ? std::vector<int64_t>{1, w.shape()[0], 1, 1, w.shape()[5]} : std::vector<int64_t>{channels};
        BufferRef correction = BufferRef::allocate(DataType::int_(32), per_channel);  // zero point x channel sums
        BufferRef out_scale = BufferRef::allocate(DataType::float_(32), per_channel);
        for (int64_t j = 0; j < channels; ++j) {
            static_cast<int32_t*>(correction.data())[j] = int32_t(zero_point) * wq.sums[size_t(j)];
            static_cast<float*>(out_scale.data())[j] = scale * wq.scales[size_t(j)];
        }
        Value weight = o.constant(r.fresh_name(n.name + ".weight_int8"), wq.values);
        Value acc;
        if (conv) {
            const int64_t ib = g.type(n.inputs[0]).shape[4];
            Value packed = o.add_node("pack_conv2d_nchwc_u8s8_weight", {weight}, {{"ib", ib}},
                                      r.fresh_name(n.name + ".weight_packed"));
            Attrs attrs = n.attrs;
            attrs.set("zero_point", int64_t(zero_point));
            acc = o.add_node("conv2d_nchwc_u8s8", {at->second, packed}, attrs, r.fresh_name(n.name + ".int8"));
        } else {
            Value packed = o.add_node("pack_vnni_weight", {weight}, {}, r.fresh_name(n.name + ".weight_packed"));
            acc = o.add_node("matmul_u8s8", {at->second, packed}, {}, r.fresh_name(n.name + ".int8"));
        }
        Value exact = zero_point == 0.0f ? acc
                                         : o.sub(acc, o.constant(r.fresh_name(n.name + ".zero_point_correction"), correction),
                                                 r.fresh_name(n.name + ".int32"));
        return o.mul(o.cast(exact, DataType::float_(32), r.fresh_name(n.name + ".float")),
                     o.constant(r.fresh_name(n.name + ".scales"), out_scale), n.name);
    });
}

}  // namespace int8_detail

Graph quantize_int8(const Graph& g, const std::vector<std::map<std::string, BufferRef>>& calibration, double percentile,
                    const ActivationRanges& ranges) {
    return int8_detail::quantize_layers(g, calibration, percentile, ranges, true, "quantize_int8");
}

Graph convert_quantized_convs(const Graph& g) {
    return int8_detail::quantize_layers(g, {}, 100.0, {}, false, "convert_quantized_convs");
}

ActivationRanges calibrate_int8(const Graph& g, const BuildOptions& options, const Target& target) {
    using namespace int8_detail;
    WEFT_CHECK(!options.calibration.empty(), "graph::calibrate_int8: no calibration inputs (BuildOptions::calibration: "
               "a few typical inputs, each a map from input name to value)");
    // The float32 passes (a layer's name is the same there as where quantize_int8 runs), on
    // g made at each calibration input's sizes where its dimensions are symbolic.
    BuildOptions f32 = options;
    f32.precision = Precision::f32;
    std::map<std::map<std::string, int64_t>, std::vector<const Sample*>> by_sizes;
    for (const Sample& sample : options.calibration) {
        std::map<std::string, int64_t> values;
        for (const SymbolicAxis& a : g.symbolic_axes()) {
            auto it = sample.find(a.input);
            WEFT_CHECK(it != sample.end(), "graph::build: a calibration input (BuildOptions::calibration) has no value "
                       "for '", a.input, "'");
            WEFT_CHECK(a.axis < it->second.ndim(), "graph::build: the calibration input '", a.input, "' is ",
                       shape_str(it->second.shape()), "; its dimension ", a.axis, " is the symbol '", a.symbol, "'");
            values[a.symbol] = it->second.shape()[size_t(a.axis)];
        }
        by_sizes[values].push_back(&sample);
    }
    std::vector<Probe> probes;
    for (auto& [values, samples] : by_sizes) {
        Graph h = values.empty() ? g : g.instantiate(values);
        h = default_pipeline(f32, target).run(h);
        // The layers quantize_int8 takes (matmul_packed: a matmul pack_matmul_weights packed).
        auto pick = [](const Graph& x, const Node& n) {
            if (n.op == "matmul_packed")
                return n.type.dtype == DataType::float_(32) && !x.node(n.inputs[0]).is_constant();
            return quantizable(x, n) && !carries_quantization(n);
        };
        if (std::optional<Probe> p = make_probe(h, pick, samples, true)) probes.push_back(std::move(*p));
    }
    return measured_ranges(probes, options.calibration_percentile);
}

}  // namespace weft::graph
