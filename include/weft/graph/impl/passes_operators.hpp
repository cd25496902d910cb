// Definition of graph/pass.hpp's simplify_operators: operators replaced by cheaper ones that
// compute the same values, whoever built the graph (the ONNX importer, the builder API).
#pragma once
#include <algorithm>
#include <optional>

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
    const std::vector<int64_t> s = n.attrs.get_ints("strides", {1, 1}), d = n.attrs.get_ints("dilations", {1, 1});
    std::vector<int64_t> p = n.attrs.get_ints("pads", {0, 0, 0, 0});
    if (s.size() != 2 || d.size() != 2 || p.size() != 4) return std::nullopt;
    h = reading_taps(x[2], y[2], k[2], s[0], d[0], p[0]);
    w = reading_taps(x[3], y[3], k[3], s[1], d[1], p[1]);
    if (h.first > h.last || w.first > w.last) return std::nullopt;
    if (h.first == 0 && h.last == k[2] - 1 && w.first == 0 && w.last == k[3] - 1) return std::nullopt;
    // New padding: before, the taps cut from the front; after, what keeps the output's extent.
    auto cut = [&](TapRange r, int64_t in, int64_t out, int64_t stride, int64_t dil, int64_t& before, int64_t& after) {
        before -= r.first * dil;
        after = (out - 1) * stride + dil * (r.last - r.first) + 1 - in - before;
        return before >= 0 && after >= 0;
    };
    if (!cut(h, x[2], y[2], s[0], d[0], p[0], p[2]) || !cut(w, x[3], y[3], s[1], d[1], p[1], p[3])) return std::nullopt;
    Attrs a = n.attrs;
    a.set("pads", p);
    return a;
}

}  // namespace pass_detail

Graph simplify_operators(const Graph& g) {
    std::vector<int> order = pass_detail::walk_order(g, "simplify_operators");
    pass_detail::GraphRewriter r(g);
    bool changed = false;
    for (int id : order) {
        const Node& n = g.node(id);
        // pow(x, 2) -> x * x: the same correctly rounded value (x^2 is exactly x*x), without a
        // call to powf per element (a decomposed LayerNorm's variance: 160x faster).
        if (n.op == "pow" && n.type.dtype.is_float() && g.type(n.inputs[0]) == n.type &&
            pass_detail::is_constant_equal_to(g.node(n.inputs[1]), 2.0)) {
            Value x = r.mapped(n.inputs[0]);
            r.set(id, r.out().add_node("mul", {x, x}, {}, n.name));
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
        if (n.op == "avg_pool2d" && n.type.shape.size() == 4) {
            const Node& pad = g.node(n.inputs[0]);
            const std::vector<int64_t> pp = pad.op == "pad" ? pad.attrs.get_ints("pads", {}) : std::vector<int64_t>{};
            const std::vector<int64_t> pool = n.attrs.get_ints("pads", {0, 0, 0, 0});
            const std::vector<int64_t> kernel = n.attrs.get_ints("kernel", {});
            const std::vector<int64_t> dil = n.attrs.get_ints("dilations", {1, 1});
            const bool zeros = pp.size() == 8 && pad.attrs.get_string("mode", "constant") == "constant" &&
                               pad.attrs.get_float("value", 0.0) == 0.0 && pp[0] == 0 && pp[1] == 0 && pp[4] == 0 &&
                               pp[5] == 0 && pp[2] >= 0 && pp[3] >= 0 && pp[6] >= 0 && pp[7] >= 0;
            const bool counted = n.attrs.get_int("count_include_pad", 0) != 0 ||
                                 std::all_of(pool.begin(), pool.end(), [](int64_t v) { return v == 0; });
            if (zeros && counted && pool.size() == 4 && kernel.size() == 2 && dil == std::vector<int64_t>{1, 1}) {
                // {top, left, bottom, right}; every pad smaller than the window (topi's rule).
                const std::vector<int64_t> all{pool[0] + pp[2], pool[1] + pp[3], pool[2] + pp[6], pool[3] + pp[7]};
                if (all[0] < kernel[0] && all[2] < kernel[0] && all[1] < kernel[1] && all[3] < kernel[1]) {
                    Attrs a = n.attrs;
                    a.set("pads", all);
                    a.set("count_include_pad", int64_t(1));
                    r.set(id, r.out().add_node("avg_pool2d", {r.mapped(pad.inputs[0])}, a, n.name));
                    changed = true;
                    continue;
                }
            }
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
        r.copy(id);
    }
    return changed ? r.finish() : g;
}

}  // namespace weft::graph
