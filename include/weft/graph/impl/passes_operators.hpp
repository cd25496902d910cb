// Definition of graph/pass.hpp's simplify_operators: operators replaced by cheaper ones that
// compute the same values, whoever built the graph (the ONNX importer, the builder API).
#pragma once
#include <algorithm>
#include <optional>
#include <set>

#include "weft/graph/impl/ops_nn.hpp"
#include "weft/graph/impl/passes_pipeline.hpp"

namespace weft::graph {

namespace pass_detail {

// Whether node n is a floating-point constant all of whose elements equal `v`.
inline bool is_constant_equal_to(const Node& n, double v) {
    if (!n.is_constant() || n.value.size() == 0) return false;
    auto all = [&](const auto* p) {
        for (int64_t i = 0; i < n.value.size(); ++i)
            if (double(p[i]) != v) return false;
        return true;
    };
    if (n.type.dtype == DataType::float_(32)) return all(static_cast<const float*>(n.value.data()));
    if (n.type.dtype == DataType::float_(64)) return all(static_cast<const double*>(n.value.data()));
    return false;
}

// The window taps along one axis that read the input at some output position, [first,
// last]; first > last where none does. Taps at the ends that read only padding can go.
struct TapRange {
    int64_t first = 0, last = -1;
};

inline TapRange reading_taps(int64_t in, int64_t out, int64_t taps, int64_t stride, int64_t dilation, int64_t pad) {
    auto reads = [&](int64_t t) {
        const int64_t lo = t * dilation - pad;                       // the tap's position at output 0
        const int64_t y = lo >= 0 ? 0 : (-lo + stride - 1) / stride;  // the first output where it is >= 0
        return y < out && lo + y * stride < in;
    };
    TapRange r{0, taps - 1};
    while (r.first < taps && !reads(r.first)) ++r.first;
    while (r.last > r.first && !reads(r.last)) --r.last;
    return r;
}

// conv2d's attributes with the window cut to taps [h.first, h.last] x [w.first, w.last] and
// the padding moved with them (the same outputs), or nullopt where a padding would turn
// negative or nothing reads the input.
inline std::optional<Attrs> trimmed_conv(const Graph& g, const Node& n, TapRange& h, TapRange& w) {
    const std::vector<int64_t>& x = g.type(n.inputs[0]).shape;
    const std::vector<int64_t>& k = g.type(n.inputs[1]).shape;
    const std::vector<int64_t>& y = n.type.shape;
    topi::Conv2dParams p = ops::conv2d_params(n.attrs);
    h = reading_taps(x[2], y[2], k[2], p.stride.h, p.dilation.h, p.padding.top);
    w = reading_taps(x[3], y[3], k[3], p.stride.w, p.dilation.w, p.padding.left);
    if (h.first > h.last || w.first > w.last) return std::nullopt;
    if (h.first == 0 && h.last == k[2] - 1 && w.first == 0 && w.last == k[3] - 1) return std::nullopt;
    // New padding: before, the taps cut from the front; after, what keeps the output's extent.
    auto cut = [&](TapRange r, int64_t in, int64_t out, int64_t stride, int64_t dil, int64_t& before, int64_t& after) {
        before -= r.first * dil;
        after = (out - 1) * stride + dil * (r.last - r.first) + 1 - in - before;
        return before >= 0 && after >= 0;
    };
    if (!cut(h, x[2], y[2], p.stride.h, p.dilation.h, p.padding.top, p.padding.bottom) ||
        !cut(w, x[3], y[3], p.stride.w, p.dilation.w, p.padding.left, p.padding.right))
        return std::nullopt;
    Attrs a = n.attrs;
    a.set("pads", std::vector<int64_t>{p.padding.top, p.padding.left, p.padding.bottom, p.padding.right});
    return a;
}

// avg_pool2d of a pad by zeros along H and W only -> the pool's attributes with that padding
// counted, or nullopt (another pad, a pool that pads without counting it, dilation, or a pad
// as wide as the window: topi's rule).
inline std::optional<Attrs> pool_with_pad(const Node& pool, const Node& pad) {
    if (pad.op != "pad" || pad.attrs.get_string("mode", "constant") != "constant" ||
        pad.attrs.get_float("value", 0.0) != 0.0)
        return std::nullopt;
    const std::vector<int64_t> pp = pad.attrs.get_ints("pads", {});
    if (pp.size() != 8 || pp[0] || pp[1] || pp[4] || pp[5] || std::any_of(pp.begin(), pp.end(), [](int64_t v) {
            return v < 0;
        }))
        return std::nullopt;
    topi::Pool2dParams p = ops::pool_params(pool.attrs);
    if (!p.padding.none() && !p.count_include_pad) return std::nullopt;
    if (p.dilation.h != 1 || p.dilation.w != 1) return std::nullopt;
    const std::vector<int64_t> all{p.padding.top + pp[2], p.padding.left + pp[3], p.padding.bottom + pp[6],
                                   p.padding.right + pp[7]};
    if (all[0] >= p.kernel.h || all[2] >= p.kernel.h || all[1] >= p.kernel.w || all[3] >= p.kernel.w)
        return std::nullopt;
    Attrs a = pool.attrs;
    a.set("pads", all);
    a.set("count_include_pad", int64_t(1));
    return a;
}

// Element-wise operators whose meaning does not depend on their operands' shapes beyond
// broadcasting (no axis attribute): what a reshape may move past.
inline bool is_shape_free_elementwise(const std::string& op) {
    static const std::set<std::string> ops = {
        "add", "sub", "mul", "div", "pow", "maximum", "minimum", "relu", "leaky_relu", "clip", "sigmoid", "tanh",
        "gelu", "hard_swish", "exp", "log", "sqrt", "erf", "cast", "where"};
    return ops.count(op) != 0;
}

// An element-wise node of a reshape that keeps the last dimension (a matmul's rows split back
// into [batch, sequence] by an importer), its other operands varying along the last dimension
// at most (a bias, a scalar), or reshapes of the same shape too (a residual): the operator
// applied before the reshape, the reshape after it. The reshape between a matmul and its bias
// and activation ended the matmul's kernel (the GELU of a transformer's feed-forward in a
// kernel of its own: benchmarks/RESULTS.md, "int8: ONNX Runtime's dynamically quantized
// models"); moved past them, the matmul takes them as its epilogue. nullopt where it does not
// apply.
inline std::optional<Value> reshape_moved_past(const Graph& g, const Node& n, GraphRewriter& r) {
    // (Not in a graph of symbolic dimensions, nor one made from it at a size: the graphs made
    // at other sizes would differ where a reshape's extents do.)
    if (!is_shape_free_elementwise(n.op) || n.type.shape.empty() || g.from_symbolic()) return std::nullopt;
    const Graph& out = r.out();
    std::optional<std::vector<int64_t>> source;  // the shape before the reshapes
    std::vector<Value> inputs;
    std::vector<bool> last_axis;  // an operand to reshape to its last axis ([1, 1, N] -> [N])
    for (Value v : n.inputs) {
        Value m = r.mapped(v);
        const Node& in = out.node(m);
        if (in.op == "reshape" && in.type.shape == n.type.shape) {
            Value before = in.inputs[0];  // (through a chain of reshapes: an importer's renaming)
            while (out.node(before).op == "reshape") before = out.node(before).inputs[0];
            const std::vector<int64_t>& s = out.type(before).shape;
            if (s.empty() || s.back() != n.type.shape.back() || (source && *source != s)) return std::nullopt;
            source = s;
            inputs.push_back(before);
            last_axis.push_back(false);
            continue;
        }
        const std::vector<int64_t>& s = in.type.shape;
        if (s.size() > n.type.shape.size() || std::any_of(s.begin(), s.end() - 1, [](int64_t d) { return d != 1; }))
            return std::nullopt;
        inputs.push_back(m);
        last_axis.push_back(s.size() > 1);
    }
    if (!source || source->size() == n.type.shape.size()) return std::nullopt;
    // (Nothing is added to the new graph before the rewrite is known to apply.)
    for (size_t k = 0; k < inputs.size(); ++k)
        if (last_axis[k])
            inputs[k] = r.out().add_node("reshape", {inputs[k]}, {{"shape", std::vector<int64_t>{out.type(inputs[k]).shape.back()}}},
                                         r.fresh_name(out.node(inputs[k]).name + ".last_axis"));
    Value moved = r.out().add_node(n.op, std::move(inputs), n.attrs, r.fresh_name(n.name + ".before_reshape"));
    return r.out().add_node("reshape", {moved}, {{"shape", n.type.shape}}, n.name);
}

}  // namespace pass_detail

Graph simplify_operators(const Graph& g) {
    std::vector<int> order = pass_detail::walk_order(g, "simplify_operators");
    pass_detail::GraphRewriter r(g);
    bool changed = false;
    for (int id : order) {
        const Node& n = g.node(id);
        // pow(x, 2) -> x * x: the same correctly rounded value (x^2 is exactly x*x), without a
        // call to powf per element (a decomposed LayerNorm's variance); pow(x, 3) -> (x * x) * x,
        // within an ulp of powf's (GPT-2's tanh GELU). Figures: docs/graph.md, "Passes".
        const bool cube = n.op == "pow" && pass_detail::is_constant_equal_to(g.node(n.inputs[1]), 3.0);
        if (n.op == "pow" && n.type.dtype.is_float() && g.type(n.inputs[0]) == n.type &&
            (cube || pass_detail::is_constant_equal_to(g.node(n.inputs[1]), 2.0))) {
            Value x = r.mapped(n.inputs[0]);
            Value square = r.out().add_node("mul", {x, x}, {}, cube ? r.fresh_name(n.name + ".square") : n.name);
            r.set(id, cube ? r.out().add_node("mul", {square, x}, {}, n.name) : square);
            changed = true;
            continue;
        }
        // dense(x, W) with a constant W [N, K] -> matmul(x, W^T), the transpose a constant that
        // fold_constants evaluates once: dense packs W into panels inside the kernel, on every
        // run, which costs more than the product itself for a few rows (37x on a batch-1 MLP),
        // while matmul reads a [K, N] operand in place for a few rows.
        if (n.op == "dense" && g.node(n.inputs[1]).is_constant()) {
            Value w = r.mapped(n.inputs[1]);
            Value wt = r.out().add_node("transpose", {w}, {{"perm", std::vector<int64_t>{1, 0}}},
                                        r.fresh_name(n.name + ".weight_t"));
            r.set(id, r.out().add_node("matmul", {r.mapped(n.inputs[0]), wt}, {}, n.name));
            changed = true;
            continue;
        }
        // pad by zero everywhere (exporters put one before an average pool) -> its input: a
        // node that is no op for the layout pass keeps the chain out of the blocked layout.
        if (n.op == "pad" && g.type(n.inputs[0]) == n.type) {
            const std::vector<int64_t> pads = n.attrs.get_ints("pads", {});
            if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) {
                r.set(id, r.mapped(n.inputs[0]));
                changed = true;
                continue;
            }
        }
        // avg_pool2d of a pad by zeros along H and W (torch exports avg_pool2d with
        // count_include_pad so: Inception's branches) -> avg_pool2d with that padding counted
        // (count_include_pad): the same windows, zeros summed, each divided by its size. The
        // pool stays one operator the layout pass keeps blocked.
        if (n.op == "avg_pool2d" && n.type.shape.size() == 4)
            if (std::optional<Attrs> a = pass_detail::pool_with_pad(n, g.node(n.inputs[0]))) {
                r.set(id, r.out().add_node("avg_pool2d", {r.mapped(g.node(n.inputs[0]).inputs[0])}, *a, n.name));
                changed = true;
                continue;
            }
        // conv2d whose outer window taps read only padding at every output (an atrous conv
        // whose rate reaches past the map: DeepLabV3's ASPP over 14x14 with rates 24 and 36 is
        // a 1x1 conv) -> the taps that read the input, the weight sliced (folded on the host).
        pass_detail::TapRange th, tw;
        if (n.op == "conv2d" && g.node(n.inputs[1]).is_constant())
            if (std::optional<Attrs> a = pass_detail::trimmed_conv(g, n, th, tw)) {
                Value w = r.out().add_node("slice", {r.mapped(n.inputs[1])},
                                           {{"starts", std::vector<int64_t>{th.first, tw.first}},
                                            {"ends", std::vector<int64_t>{th.last + 1, tw.last + 1}},
                                            {"axes", std::vector<int64_t>{2, 3}}},
                                           r.fresh_name(n.name + ".taps"));
                r.set(id, r.out().add_node("conv2d", {r.mapped(n.inputs[0]), w}, *a, n.name));
                changed = true;
                continue;
            }
        if (std::optional<Value> v = pass_detail::reshape_moved_past(g, n, r)) {
            r.set(id, *v);
            changed = true;
            continue;
        }
        r.copy(id);
    }
    return changed ? r.finish() : g;
}

}  // namespace weft::graph
