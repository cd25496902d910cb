// Kernels compiled for one set of the symbols' values (docs/graph.md, "Kernels compiled per
// size" and "Kernels specialized for a size"): the graph a module was built from made again
// at those values, checked against the compiled graph, and its groups compiled for it: the
// groups compiled per size (CompiledGroup::per_size), which run() compiles the first time it
// meets a set of values, and, for a specialization, every group whose tensors follow the
// symbols (constant extents there: the speed of a build for that size).
#pragma once
#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "weft/graph/impl/build_steps.hpp"

namespace weft::graph::detail {

// The graph `source` at the symbols' `values`, after build()'s passes.
inline Graph graph_at_values(const SymbolicShapes& sym, const Graph& source, const Target& target,
                             const BuildOptions& options, const std::vector<int64_t>& values) {
    std::map<std::string, int64_t> named;
    for (size_t s = 0; s < sym.symbols.size(); ++s) named[sym.symbols[s].name] = values[s];
    Graph g;
    try {
        g = source.instantiate(named);
        run_passes(g, target, options);
    } catch (const Error& e) {
        ::weft::detail::rethrow_with_context(e, "graph::Module::run: making the graph at " + values_str(sym.symbols, values));
    }
    return g;
}

inline Graph SizeCompiler::graph_at(const std::vector<int64_t>& values) const {
    return graph_at_values(symbolic, source, target, options, values);
}

inline SizeKernels SizeCompiler::compile(const std::vector<int64_t>& values, bool specialize,
                                         const std::atomic<bool>* cancel, int compile_threads) const {
    const Graph g = graph_at(values);
    const std::string at = values_str(symbolic.symbols, values);
    std::vector<bool> attrs_vary(size_t(g.size()), false), per_size_nodes = symbolic.per_size;
    match_structure(compiled, g, at, attrs_vary, per_size_nodes);
    SizeKernels r;
    r.values = values;
    r.specialized = specialize;
    r.kernels.resize(arg_ids.size());
    r.args.resize(arg_ids.size());
    r.shapes.resize(size_t(g.size()));
    r.constants.resize(size_t(g.size()));
    for (int id = 0; id < g.size(); ++id) {
        const Node& n = g.node(id);
        if (symbolic.is_per_size(id)) {
            r.shapes[size_t(id)] = n.type.shape;
            if (n.is_constant()) r.constants[size_t(id)] = n.value;
            continue;
        }
        const std::vector<int64_t> fitted = symbolic.shape_at(compiled, id, values);
        WEFT_CHECK(!per_size_nodes[size_t(id)] && n.type.shape == fitted, "graph::Module::run: at ", at, ", ",
                   describe(n), " is ", n.type.str(), (per_size_nodes[size_t(id)] ? " with other data" : ""),
                   ", not what graph::build found at other sizes (", TensorType{fitted, n.type.dtype}.str(),
                   "): give the symbols fixed values, or bounds that keep the graph alike");
    }
    std::vector<FusedGroup> chosen;
    std::vector<size_t> which;
    for (size_t k = 0; k < arg_ids.size(); ++k)
        if (compiles(k, specialize)) {
            chosen.push_back(groups[k]);
            which.push_back(k);
        }
    CompileClock clock;
    BuildOptions o = options;
    if (compile_threads > 0) o.compile_threads = compile_threads;
    std::vector<GroupBuild> built = compile_groups(g, chosen, target, o, nullptr, clock, cancel);
    if (cancel && cancel->load()) return r;
    for (size_t i = 0; i < which.size(); ++i) {
        const size_t k = which[i];
        // A kernel compiled per size takes what the one at the max takes; a specialized one
        // the same tensors, without the symbols' scalars.
        std::vector<int> tensors;
        for (int id : arg_ids[k])
            if (id >= 0) tensors.push_back(id);
        WEFT_ICHECK(built[i].compiled.args == tensors, "graph::Module::run: the kernel of '", names[k], "' at ", at,
                    " takes other arguments than at the symbols' max");
        r.kernels[k] = std::move(built[i].compiled.kernel);
        r.args[k] = std::move(built[i].compiled.args);
    }
    return r;
}

}  // namespace weft::graph::detail
