// Definition of graph/pass.hpp's convert_conv_layout: convolutions to the blocked layout
// NCHW[x]c, with layout_transform nodes only where a chain of blocked operators meets one
// that works in NCHW.
//
// Every node of the old graph may have two forms in the new one: NCHW and blocked (with
// its block size). Convolutions produce the blocked form; element-wise operators whose
// inputs have it keep it (unary ops, and binary ops whose operands are blocked alike or
// per-channel bias constants), and so do pools and concats along the channels of inputs
// blocked alike; anything else asks for the NCHW form, and
// the first such request emits the layout_transform back. Weights are packed by pack_conv2d_weight nodes,
// which fold_constants turns into constants when the weight is one.
#pragma once
#include <map>
#include <numeric>

#include "weft/graph/impl/ops_nn.hpp"
#include "weft/graph/impl/passes_fold_scale_axis.hpp"
#include "weft/graph/impl/passes_pipeline.hpp"
#include "weft/topi/conv.hpp"
#include "weft/topi/linalg.hpp"

namespace weft::graph {

namespace layout_detail {

// The channel block for `channels`: `preferred` or 16 when one divides them (whole
// vectors); else, past one vector, where whole vectors stay at least 7/8 full: up to 16
// vectors, all the channels in one block filled up with zero channels to whole vectors (72
// -> 80: NHWC with a padded channel stride), so that a convolution reading it sums over the
// real channels only; past that, 16 with the last block filled up (1000 -> 63 blocks: whole
// vectors beat exact half-vector blocks of 8); else 8 when it divides them (24 and 40
// channels: two blocks of 16 would be a third more work), or all of them when they fit one
// vector; 0: none (the conv stays in NCHW). Figures: docs/graph.md#data-layout-nchwxc and
// docs/performance.md, "Odd channel counts".
inline int64_t channel_block(int64_t channels, int64_t preferred) {
    for (int64_t b : {preferred, int64_t(16)})
        if (b >= 16 && channels % b == 0) return b;
    const int64_t whole_vectors = (channels + 15) / 16 * 16;
    if (channels > 16 && 8 * channels >= 7 * whole_vectors) return whole_vectors <= 256 ? whole_vectors : 16;
    if (channels % 8 == 0) return 8;
    return channels <= 16 ? channels : 0;
}

// Element-wise operators that keep the zero channels that fill up a last block finite (a
// convolution multiplies them by zero weights, so they must not become inf or NaN; a
// division or a log of zero would): these may run on a blocked form whose channels do not
// fill its blocks.
// A convolution's output width as its blocking is chosen by: at the symbols' max where the
// graph is a symbolic one made at other sizes (Graph::shape_at_max), so that every size
// gets the blocks (and packed weights) of the compiled graph.
inline int64_t width_at_max(const Graph& g, const Node& n) {
    const std::vector<int64_t>* at_max = g.shape_at_max(n.name);
    return at_max && at_max->size() == n.type.shape.size() ? (*at_max)[3] : n.type.shape[3];
}

inline bool finite_at_zero(const std::string& op) {
    static const char* ops[] = {"relu", "leaky_relu", "clip", "sigmoid", "tanh", "gelu", "hard_swish", "exp",
                                "sqrt", "erf", "add", "sub", "mul", "maximum", "minimum"};
    for (const char* o : ops)
        if (op == o) return true;
    return false;
}

class Converter {
public:
    Converter(const Graph& g, const Target& target)
        : r_(g), target_(target), blocked_(size_t(g.size())), block_(size_t(g.size()), 0) {}

    Graph run() {
        const Graph& g = r_.old();
        for (int id : pass_detail::walk_order(g, "convert_conv_layout")) {
            const Node& n = g.node(id);
            if (n.is_op() && (n.op == "conv2d"     ? conv(id)
                              : n.op == "bias_add" ? bias_add(id)
                              : n.op == "batch_norm" ? batch_norm(id)
                              : n.op == "concat"   ? concat(id)
                              : is_pool(n.op)      ? pool(id)
                                                   : elementwise(id)))
                continue;
            copy_nchw(id);
        }
        for (auto& [name, v] : g.outputs()) nchw(v.id);
        return r_.finish();
    }

private:
    // The node's NCHW form in the new graph, converting its blocked form on first request.
    Value nchw(int id) {
        auto it = nchw_.find(id);
        if (it != nchw_.end()) return it->second;
        const Node& n = r_.old().node(id);
        WEFT_ICHECK(blocked_[size_t(id)].defined(), describe(n), " has no form in the converted graph");
        Value v = r_.out().add_node("layout_transform", {blocked_[size_t(id)]},
                                    {{"to", std::string("NCHW")}, {"channels", n.type.shape[1]}},
                                    r_.fresh_name(n.name + ".to_nchw"));
        nchw_[id] = v;
        r_.set(id, v);
        return v;
    }

    // Its blocked form with block b (converting the NCHW form if it has no such form yet).
    Value blocked(int id, int64_t b) {
        if (block_[size_t(id)] == b) return blocked_[size_t(id)];
        auto key = std::make_pair(id, b);
        auto it = converted_.find(key);
        if (it != converted_.end()) return it->second;
        const Node& n = r_.old().node(id);
        Value v = r_.out().add_node("layout_transform", {nchw(id)}, {{"to", std::string("NCHWc")}, {"block", b}},
                                    r_.fresh_name(n.name + ".to_nchw" + std::to_string(b) + "c"));
        converted_[key] = v;
        return v;
    }

    void copy_nchw(int id) {
        const Node& n = r_.old().node(id);
        if (!n.is_op()) {
            nchw_[id] = r_.copy(id);
            return;
        }
        std::vector<Value> in;
        for (Value x : n.inputs) in.push_back(nchw(x.id));
        Value v = r_.out().add_node(n.op, std::move(in), n.attrs, n.name);
        nchw_[id] = v;
        r_.set(id, v);
    }

    void set_blocked(int id, Value v, int64_t b) {
        blocked_[size_t(id)] = v;
        block_[size_t(id)] = b;
        r_.set(id, v);
    }

    bool conv(int id) {
        const Graph& g = r_.old();
        const Node& n = g.node(id);
        const TensorType &x = g.type(n.inputs[0]), &w = g.type(n.inputs[1]);
        if (x.dtype != DataType::float_(32)) return false;
        const int64_t C = x.shape[1], O = w.shape[0], groups = n.attrs.get_int("groups", 1);
        const bool depthwise = groups > 1 && groups == C && O == C && w.shape[1] == 1;
        if (groups != 1 && !depthwise) return grouped_conv(id);
        const int64_t width = width_at_max(g, n);
        topi::Conv2dBlocking pick = topi::conv2d_nchwc_blocking(C, O, width, {}, 1, target_);
        // The input keeps the block its producer gave it (its last block may be filled up
        // with zero channels; the packed weights get zero input channels to match). A
        // depthwise conv keeps it for its output too (its channels are its input's).
        const int64_t have = block_[size_t(n.inputs[0].id)];
        const int64_t ob = depthwise && have > 0 ? have
                           : channel_block(O, depthwise ? topi::depthwise_conv2d_nchwc_block(C, target_) : pick.oc_bn);
        if (ob == 0) return false;
        const int64_t ib = depthwise ? ob : have > 0 ? have : channel_block(C, pick.ic_bn);
        if (ib == 0) return false;
        Value data = blocked(n.inputs[0].id, ib);
        // The weights' input channel block may be larger than the data's (a longer reduction
        // over a copy of the input, padded and re-blocked), or, where the data holds all its
        // channels in one block filled up with zeros, the real channels (the sum skips the zeros).
        const int64_t wb = depthwise ? ib
                           : ib > C  ? C
                                     : topi::conv2d_nchwc_weight_ic_bn(C, ib, width,
                                                                       ops::conv2d_params(n.attrs).padding, w.shape[3]);
        Attrs pack{{"ic_bn", wb}, {"oc_bn", ob}, {"depthwise", int64_t(depthwise)}};
        Value weight = r_.out().add_node("pack_conv2d_weight", {nchw(n.inputs[1].id)}, std::move(pack),
                                         r_.fresh_name(g.node(n.inputs[1]).name + ".packed"));
        Attrs attrs = n.attrs;
        attrs.set("depthwise", int64_t(depthwise));
        set_blocked(id, r_.out().add_node("conv2d_nchwc", {data, weight}, std::move(attrs), n.name), ob);
        return true;
    }

    // A grouped conv (not depthwise): m of its groups together span whole blocks of input
    // and output channels (ResNeXt's groups of 4 to 32 channels, RegNet's of 8 to 24), so
    // with each group's weight on the diagonal of such a coarse group's (zeros elsewhere) it
    // is conv2d_nchwc over groups of whole blocks: m times the multiply-adds of the grouped
    // conv, vectorized as any blocked conv. Where m > 4 (groups of 1 or 2 channels) the zeros
    // cost more than the NCHW conv saves.
    bool grouped_conv(int id) {
        const Graph& g = r_.old();
        const Node& n = g.node(id);
        const TensorType &x = g.type(n.inputs[0]), &w = g.type(n.inputs[1]);
        const int64_t C = x.shape[1], O = w.shape[0], G = n.attrs.get_int("groups", 1), KH = w.shape[2], KW = w.shape[3];
        if (x.dtype != DataType::float_(32) || G < 2 || C % G || O % G) return false;
        const int64_t ki = C / G, ko = O / G;
        // The block: a whole vector, or half of one where that wastes fewer zeros (groups of 8
        // in blocks of 8 against 2 groups per block of 16), a half-vector block costing a
        // quarter more (docs/graph.md#data-layout-nchwxc has the measurement).
        const int64_t lanes = topi::conv2d_nchwc_blocking(C, O, width_at_max(g, n), {}, 1, target_).ic_bn;
        int64_t b = 0, m = 0;
        for (int64_t candidate : {lanes, lanes / 2}) {
            if (candidate < 8 || C % candidate || O % candidate) continue;
            const int64_t k = std::lcm(candidate / std::gcd(candidate, ki), candidate / std::gcd(candidate, ko));
            if (k > 4 || G % k) continue;
            if (b == 0 || k * (candidate < lanes ? 5 : 4) < m * (b < lanes ? 5 : 4)) b = candidate, m = k;
        }
        if (b == 0) return false;
        // The weight [O, m ki, KH, KW]: [G/m, m, ko, 1, ki, KH, KW] times the identity over the
        // two m axes, [1, m, 1, m, 1, 1, 1] (host folding evaluates both where W is a constant).
        const std::string wname = g.node(n.inputs[1]).name;
        Value w7 = r_.out().add_node("reshape", {nchw(n.inputs[1].id)},
                                     {{"shape", std::vector<int64_t>{G / m, m, ko, 1, ki, KH, KW}}},
                                     r_.fresh_name(wname + ".groups"));
        BufferRef eye = BufferRef::allocate(w.dtype, {1, m, 1, m, 1, 1, 1});
        for (int64_t i = 0; i < m; ++i) static_cast<float*>(eye.data())[i * m + i] = 1.f;
        Value diagonal = r_.out().add_node("mul", {w7, r_.out().constant(r_.fresh_name(wname + ".diagonal"), eye)}, {},
                                           r_.fresh_name(wname + ".on_diagonal"));
        Value wide = r_.out().add_node("reshape", {diagonal}, {{"shape", std::vector<int64_t>{O, m * ki, KH, KW}}},
                                       r_.fresh_name(wname + ".grouped"));
        Value weight = r_.out().add_node("pack_conv2d_weight", {wide},
                                         {{"ic_bn", b}, {"oc_bn", b}, {"depthwise", int64_t(0)}},
                                         r_.fresh_name(wname + ".packed"));
        Attrs attrs = n.attrs;
        attrs.set("depthwise", int64_t(0));
        attrs.set("block_groups", G / m);
        set_blocked(id, r_.out().add_node("conv2d_nchwc", {blocked(n.inputs[0].id, b), weight}, std::move(attrs), n.name), b);
        return true;
    }

    // x + bias along the channels of a blocked x: the bias reshaped to [C/b, 1, 1, b] (padded
    // with zeros to whole blocks first where x's last block is filled up).
    bool bias_add(int id) {
        const Graph& g = r_.old();
        const Node& n = g.node(id);
        int x = n.inputs[0].id;
        int64_t b = block_[size_t(x)];
        if (b == 0 || n.type.shape.size() != 4 || normalize_axis(n.attrs.get_int("axis", 1)) != 1) return false;
        const int64_t C = n.type.shape[1], blocks = (C + b - 1) / b;
        Value bias = nchw(n.inputs[1].id);
        if (blocks * b != C)  // zero bias for the zero channels that fill up the last block
            bias = r_.out().add_node("pad", {bias}, {{"pads", std::vector<int64_t>{0, blocks * b - C}}},
                                     r_.fresh_name(g.node(n.inputs[1]).name + ".padded"));
        bias = r_.out().add_node("reshape", {bias}, {{"shape", std::vector<int64_t>{blocks, 1, 1, b}}},
                                 r_.fresh_name(g.node(n.inputs[1]).name + ".blocked"));
        set_blocked(id, r_.out().add_node("add", {blocked_[size_t(x)], bias}, {}, n.name), b);
        return true;
    }

    // A batch norm of a blocked x with constant parameters (one no conv absorbed: DenseNet's
    // norm before each conv, after a ReLU's reach): x * scale + shift with the per-channel
    // scale and shift blocked as bias_add's bias (zeros for the channels that fill up the last
    // block), so the chain stays blocked.
    bool batch_norm(int id) {
        const Graph& g = r_.old();
        const Node& n = g.node(id);
        const int x = n.inputs[0].id;
        const int64_t b = block_[size_t(x)];
        if (b == 0 || n.type.shape.size() != 4 || !pass_detail::is_f32_or_f64(n.type.dtype)) return false;
        const std::optional<pass_detail::AffineStep> affine = pass_detail::batch_norm_affine(g, n);
        if (!affine) return false;
        const int64_t C = n.type.shape[1], blocks = (C + b - 1) / b;
        BufferRef scale = BufferRef::allocate(n.type.dtype, {blocks, 1, 1, b});
        BufferRef shift = BufferRef::allocate(n.type.dtype, {blocks, 1, 1, b});
        for (int64_t c = 0; c < C; ++c) {
            pass_detail::store_element(scale, c, affine->scale[size_t(c)]);
            pass_detail::store_element(shift, c, affine->shift[size_t(c)]);
        }
        Value scaled = r_.out().add_node("mul", {blocked_[size_t(x)], r_.out().constant(r_.fresh_name(n.name + ".scale"), scale)},
                                         {}, r_.fresh_name(n.name + ".scaled"));
        set_blocked(id, r_.out().add_node("add", {scaled, r_.out().constant(r_.fresh_name(n.name + ".shift"), shift)}, {},
                                          n.name),
                    b);
        return true;
    }

    static bool is_pool(const std::string& op) {
        return op == "max_pool2d" || op == "avg_pool2d" || op == "global_avg_pool2d";
    }

    // Pooling runs on blocked data as it is (each channel lane on its own).
    bool pool(int id) {
        const Node& n = r_.old().node(id);
        int x = n.inputs[0].id;
        int64_t b = block_[size_t(x)];
        if (b == 0) return false;
        set_blocked(id, r_.out().add_node(n.op, {blocked_[size_t(x)]}, n.attrs, n.name), b);
        return true;
    }

    int64_t normalize_axis(int64_t axis) const { return axis < 0 ? axis + 4 : axis; }

    // A concat along the channels of inputs blocked alike, each a whole number of blocks
    // (SqueezeNet's fire modules, Inception's branches): the concat of the blocked forms
    // along the block axis is the blocked form of the result, so no layout transform. Inputs
    // in NCHW are converted to the block where the blocked ones hold at least half of the
    // channels (DeepLabV3's ASPP: four conv branches and an upsampled pooling branch), rather
    // than every blocked one converted back to NCHW and the result blocked again.
    bool concat(int id) {
        const Graph& g = r_.old();
        const Node& n = g.node(id);
        if (n.type.shape.size() != 4 || normalize_axis(n.attrs.get_int("axis", 0)) != 1) return false;
        // The smallest block among the inputs (DenseNet's concats mix the 64-channel blocks of
        // a wide conv with the 32-channel blocks of the 3x3 convs): larger ones are re-blocked.
        int64_t b = 0, blocked_channels = 0;
        for (Value v : n.inputs)
            if (block_[size_t(v.id)] > 0) {
                b = b == 0 ? block_[size_t(v.id)] : std::min(b, block_[size_t(v.id)]);
                blocked_channels += g.type(v).shape[1];
            }
        if (b == 0 || 2 * blocked_channels < n.type.shape[1]) return false;
        std::vector<Value> in;
        for (Value v : n.inputs) {
            if (g.type(v).shape[1] % b != 0) return false;
            in.push_back(blocked(v.id, b));
        }
        set_blocked(id, r_.out().add_node("concat", std::move(in), {{"axis", int64_t(1)}}, n.name), b);
        return true;
    }

    // An element-wise operator whose inputs are all blocked alike (or, for a binary one,
    // one blocked and the other an NCHW tensor of the same shape, converted, or a single value:
    // a QDQ model's scale and zero point, broadcast as they are); where the channels do not
    // fill the blocks, only one of the finite_at_zero operators.
    bool elementwise(int id) {
        const Graph& g = r_.old();
        const Node& n = g.node(id);
        OpPattern p = op_def(n.op).pattern;
        if (p != OpPattern::ElemWise && p != OpPattern::Broadcast) return false;
        int64_t b = 0;
        for (Value v : n.inputs)
            if (block_[size_t(v.id)] > 0) b = block_[size_t(v.id)];
        if (b == 0 || n.type.shape.size() != 4 || (n.type.shape[1] % b != 0 && !finite_at_zero(n.op))) return false;
        std::vector<Value> in;
        for (Value v : n.inputs) {
            // The output's shape, or one value per channel ([N or 1, C, 1, 1]: a squeeze-excite
            // scale), blocked alike and broadcast over the pixels; any other broadcast stays NCHW.
            const std::vector<int64_t>& s = g.type(v).shape;
            const bool per_channel = s.size() == 4 && (s[0] == 1 || s[0] == n.type.shape[0]) &&
                                     s[1] == n.type.shape[1] && s[2] == 1 && s[3] == 1;
            if (block_[size_t(v.id)] == 0 && g.type(v).size() == 1 && s.size() <= 4) {
                in.push_back(r_.mapped(v));
                continue;
            }
            if (s != n.type.shape && !per_channel) return false;
            in.push_back(blocked(v.id, b));
        }
        set_blocked(id, r_.out().add_node(n.op, std::move(in), n.attrs, n.name), b);
        return true;
    }

    pass_detail::GraphRewriter r_;
    Target target_;  // the blocks are its vector width
    std::vector<Value> blocked_;
    std::vector<int64_t> block_;  // 0: no blocked form
    std::map<int, Value> nchw_;
    std::map<std::pair<int, int64_t>, Value> converted_;
};

}  // namespace layout_detail

namespace layout_detail {
// Whether a layer carries its model's quantization (the ONNX importer's QDQ Conv:
// quantized_input_scale, quantized_input_zero_point, quantized_weight_scales), which
// convert_quantized_convs / quantize_int8 run on the 8-bit kernels.
inline bool carries_quantization(const Node& n) { return n.attrs.has("quantized_input_scale"); }

// Whether v is a constant or computed from constants only (dense's weight transposed by
// simplify_operators, which the next fold_constants folds): at most `depth` operators deep.
inline bool from_constants(const Graph& g, Value v, int depth = 4) {
    const Node& n = g.node(v);
    if (n.is_constant()) return true;
    if (n.is_input() || depth == 0 || n.inputs.empty()) return false;
    for (Value x : n.inputs)
        if (!from_constants(g, x, depth - 1)) return false;
    return true;
}
}  // namespace layout_detail

Graph pack_matmul_weights(const Graph& g, const Target& target) {
    pass_detail::GraphRewriter r(g);
    return pass_detail::rewrite_nodes(g, r, "pack_matmul_weights", [&](int id) -> std::optional<Value> {
        const Node& n = g.node(id);
        if (n.op != "matmul" || !layout_detail::from_constants(g, n.inputs[1]) || !n.type.dtype.is_float())
            return std::nullopt;
        // Whatever the rows (measured faster from 1 row on, RESULTS.md), so that the graph's
        // structure does not change with a symbolic row count.
        const int64_t N = n.type.shape[1];
        const int64_t width = topi::dense_pack_width(N, target);
        Value panels = r.out().add_node("pack_matmul_weight", {r.mapped(n.inputs[1])}, {{"width", width}},
                                        r.fresh_name(n.name + ".weight_packed"));
        return r.out().add_node("matmul_packed", {r.mapped(n.inputs[0]), panels}, {{"n", N}}, n.name);
    });
}

namespace layout_detail {
// x rounded to bfloat16 once, however many converted layers read it (the query, key and value
// projections of one input; a fire module's two expand convolutions).
class Bf16Inputs {
public:
    explicit Bf16Inputs(pass_detail::GraphRewriter& r) : r_(r) {}
    Value of(Value x, const std::string& reader) {
        auto it = casts_.find(x.id);
        if (it != casts_.end()) return it->second;
        Value c = r_.out().add_node("cast", {r_.mapped(x)}, {{"dtype", std::string("bfloat16")}},
                                    r_.fresh_name(reader + ".input_bf16"));
        return casts_[x.id] = c;
    }

private:
    pass_detail::GraphRewriter& r_;
    std::map<int, Value> casts_;  // by the old graph's node
};
}  // namespace layout_detail

Graph convert_matmul_bf16(const Graph& g) {
    pass_detail::GraphRewriter r(g);
    layout_detail::Bf16Inputs inputs(r);
    return pass_detail::rewrite_nodes(g, r, "convert_matmul_bf16", [&](int id) -> std::optional<Value> {
        const Node& n = g.node(id);
        if (n.op != "matmul" || n.type.dtype != f32 || !layout_detail::from_constants(g, n.inputs[1]) ||
            g.type(n.inputs[1]).shape[0] % 2 != 0 || n.type.shape[1] % 16 != 0)
            return std::nullopt;
        Value x = inputs.of(n.inputs[0], n.name);
        Value w = r.out().add_node("cast", {r.mapped(n.inputs[1])}, {{"dtype", std::string("bfloat16")}},
                                   r.fresh_name(n.name + ".weight_bf16"));
        Value blocks = r.out().add_node("pack_bf16_weight", {w}, {}, r.fresh_name(n.name + ".weight_packed"));
        return r.out().add_node("matmul_bf16", {x, blocks}, {}, n.name);
    });
}

Graph convert_conv_bf16(const Graph& g) {
    pass_detail::GraphRewriter r(g);
    layout_detail::Bf16Inputs inputs(r);
    return pass_detail::rewrite_nodes(g, r, "convert_conv_bf16", [&](int id) -> std::optional<Value> {
        const Node& n = g.node(id);
        // (A quantized model's convolution stays for convert_quantized_convs: 8 bits.)
        if (n.op != "conv2d_nchwc" || n.type.dtype != f32 || n.attrs.get_int("depthwise", 0) ||
            n.attrs.get_int("block_groups", 1) != 1 || !layout_detail::from_constants(g, n.inputs[1]) ||
            layout_detail::carries_quantization(n))
            return std::nullopt;
        const std::vector<int64_t> &x = g.type(n.inputs[0]).shape, &w = g.type(n.inputs[1]).shape;
        const topi::Conv2dParams p = ops::conv2d_params(n.attrs);
        // Whole blocks of channel pairs (not the RGB stem's 3 channels in one block).
        if (x[4] % 2 != 0 || w[4] % x[4] != 0 || w[1] * w[4] != x[1] * x[4] || w[5] % 16 != 0 || p.groups != 1 ||
            p.dilation.h != 1 || p.dilation.w != 1)
            return std::nullopt;
        Value data = inputs.of(n.inputs[0], n.name);
        Value weight = r.out().add_node("pack_conv2d_nchwc_bf16_weight", {r.mapped(n.inputs[1])}, {{"ib", x[4]}},
                                        r.fresh_name(n.name + ".weight_bf16"));
        return r.out().add_node("conv2d_nchwc_bf16", {data, weight}, n.attrs, n.name);
    });
}

Graph convert_conv_layout(const Graph& g, const Target& target) {
    bool any = false;
    for (const Node& n : g.nodes()) any |= n.op == "conv2d";
    if (!any) return g;
    return layout_detail::Converter(g, target).run();
}

}  // namespace weft::graph
