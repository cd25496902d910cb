// Definition of graph/pass.hpp's simplify_operators: operators replaced by cheaper ones that
// compute the same values, whoever built the graph (the ONNX importer, the builder API).
#pragma once
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
        r.copy(id);
    }
    return changed ? r.finish() : g;
}

}  // namespace weft::graph
