// Definition of graph/pass.hpp's fold_constants: the constant part of the graph is one
// small graph, built with graph::build (passes off) and run once; the values the rest of
// the graph reads become constants.
#pragma once
#include "weft/graph/impl/passes_pipeline.hpp"

namespace weft::graph {

Graph fold_constants(const Graph& g) {
    std::vector<int> order = pass_detail::walk_order(g, "fold_constants");
    // foldable: an operator node all of whose inputs are constants or foldable.
    std::vector<bool> foldable(size_t(g.size()), false), read_outside(size_t(g.size()), false);
    auto is_const = [&](Value v) { return g.node(v).is_constant() || foldable[size_t(v.id)]; };
    for (int id : order) {
        const Node& n = g.node(id);
        if (!n.is_op()) continue;
        bool all = true;
        for (Value v : n.inputs) all = all && is_const(v);
        foldable[size_t(id)] = all;
        if (!all)
            for (Value v : n.inputs) read_outside[size_t(v.id)] = true;
    }
    for (auto& [name, v] : g.outputs()) read_outside[size_t(v.id)] = true;

    // The constant part as a graph of its own; its outputs: the foldable nodes read outside it.
    Graph part;
    part.set_limits(g.limits());
    std::vector<Value> in_part(size_t(g.size()));
    std::vector<int> results;
    for (int id : order) {
        if (!foldable[size_t(id)]) continue;
        const Node& n = g.node(id);
        std::vector<Value> in;
        for (Value v : n.inputs) {
            if (!in_part[size_t(v.id)].defined()) in_part[size_t(v.id)] = part.constant_shared(g.node(v).name, g.node(v).value);
            in.push_back(in_part[size_t(v.id)]);
        }
        in_part[size_t(id)] = part.add_node(n.op, std::move(in), n.attrs, n.name);
        if (read_outside[size_t(id)]) {
            part.output(in_part[size_t(id)]);
            results.push_back(id);
        }
    }
    if (results.empty()) return g;

    BuildOptions off{.eliminate_dead_code = false, .eliminate_common_subexpressions = false,
                     .fold_constants = false, .fold_scale_axis = false, .simplify_operators = false};
    Module m;
    try {
        m = build(part, Target::host(), off);
        m.run();
    } catch (const Error& e) {
        ::weft::detail::rethrow_with_context(e, "graph pass 'fold_constants': evaluating the constant subgraph");
    }
    std::vector<int> result_of(size_t(g.size()), -1);
    for (size_t k = 0; k < results.size(); ++k) result_of[size_t(results[k])] = int(k);

    pass_detail::GraphRewriter r(g);
    for (int id : order) {
        if (!foldable[size_t(id)]) {
            r.copy(id);
        } else if (result_of[size_t(id)] >= 0) {
            r.set(id, r.out().constant(g.node(id).name, m.get_output(result_of[size_t(id)])));
        }
    }
    return r.finish();
}

}  // namespace weft::graph
