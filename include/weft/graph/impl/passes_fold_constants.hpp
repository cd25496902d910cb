// Definition of graph/pass.hpp's fold_constants: the constant part of the graph is
// evaluated and the values the rest of the graph reads become constants. Operators that
// only move data (OpDef::evaluate: weight packings, transposes, reshapes) are evaluated on
// the host; the rest of the part is one small graph, built with graph::build (passes off)
// and run once. Compiling a kernel per distinct weight shape was most of a CNN's folding
// (benchmarks/RESULTS.md, "Start-up: constants folded on the host").
#pragma once
#include <algorithm>

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
    // Nothing to fold unless a foldable node's value is read by the rest of the graph.
    if (std::none_of(order.begin(), order.end(),
                     [&](int id) { return foldable[size_t(id)] && read_outside[size_t(id)]; }))
        return g;

    // On the host: each foldable node whose operator has an evaluate and whose inputs are
    // constants or evaluated here already (in order, so a chain is evaluated whole).
    std::vector<BufferRef> value(size_t(g.size()));
    for (int id = 0; id < g.size(); ++id)
        if (g.node(id).is_constant()) value[size_t(id)] = g.node(id).value;
    for (int id : order) {
        const Node& n = g.node(id);
        if (!foldable[size_t(id)]) continue;
        const OpDef& def = op_def(n.op);
        if (!def.evaluate) continue;
        std::vector<BufferRef> in;
        for (Value v : n.inputs) in.push_back(value[size_t(v.id)]);
        if (std::any_of(in.begin(), in.end(), [](const BufferRef& b) { return !b.defined(); })) continue;
        try {
            value[size_t(id)] = def.evaluate(in, n.attrs, n.type);
        } catch (const Error& e) {
            ::weft::detail::rethrow_with_context(e, "graph pass 'fold_constants': evaluating " + describe(n));
        }
    }

    // The rest of the constant part as a graph of its own (host values as its constants); its
    // outputs: its nodes the rest of the graph reads.
    Graph part;
    part.set_limits(g.limits());
    std::vector<Value> in_part(size_t(g.size()));
    std::vector<int> results;
    for (int id : order) {
        if (!foldable[size_t(id)] || value[size_t(id)].defined()) continue;
        const Node& n = g.node(id);
        std::vector<Value> in;
        for (Value v : n.inputs) {
            if (!in_part[size_t(v.id)].defined())  // a constant, or a value evaluated on the host
                in_part[size_t(v.id)] = part.constant_shared(g.node(v).name, value[size_t(v.id)]);
            in.push_back(in_part[size_t(v.id)]);
        }
        in_part[size_t(id)] = part.add_node(n.op, std::move(in), n.attrs, n.name);
        if (read_outside[size_t(id)]) {
            part.output(in_part[size_t(id)]);
            results.push_back(id);
        }
    }
    Module m;
    if (!results.empty()) {
        BuildOptions off{.eliminate_dead_code = false, .eliminate_common_subexpressions = false,
                         .fold_constants = false, .fold_scale_axis = false, .simplify_operators = false};
        try {
            m = build(part, Target::host(), off);
            m.run();
        } catch (const Error& e) {
            ::weft::detail::rethrow_with_context(e, "graph pass 'fold_constants': evaluating the constant subgraph");
        }
    }
    std::vector<int> result_of(size_t(g.size()), -1);
    for (size_t k = 0; k < results.size(); ++k) result_of[size_t(results[k])] = int(k);

    pass_detail::GraphRewriter r(g);
    for (int id : order) {
        if (!foldable[size_t(id)]) {
            r.copy(id);
        } else if (result_of[size_t(id)] >= 0) {
            r.set(id, r.out().constant(g.node(id).name, m.get_output(result_of[size_t(id)])));
        } else if (read_outside[size_t(id)] && value[size_t(id)].defined()) {
            r.set(id, r.out().constant_shared(g.node(id).name, value[size_t(id)]));
        }
    }
    return r.finish();
}

}  // namespace weft::graph
