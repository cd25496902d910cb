// Kernels compiled per size (CompiledGroup::per_size; docs/graph.md, "Kernels compiled per
// size"): the graph a module was built from made again at the symbols' values a run brings,
// checked against the compiled graph, and its per-size groups compiled for it. build()
// hands the module these steps (Module::State::graph_at, compile_at); run() calls them
// the first time it meets a set of values.
#pragma once
#include <map>
#include <string>

#include "weft/graph/impl/build_steps.hpp"

namespace weft::graph::detail {

// The kernels compiled per size (CompiledGroup::per_size) at the symbols' `values`: the
// graph made there (`source` instantiated, then the same passes), checked against the
// compiled one (the same nodes; every shape build() fitted as fitted), and its per-size
// groups compiled (the kernel cache serves sizes met before, in this process or on disk).
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

inline SizeKernels compile_at_values(const ModuleAccess::State& st, const Graph& g, const BuildOptions& options,
                                     const std::vector<int64_t>& values) {
    const SymbolicShapes& sym = st.symbolic;
    const std::string at = values_str(sym.symbols, values);
    std::vector<bool> attrs_vary(size_t(g.size()), false), per_size = sym.per_size;
    match_structure(st.graph, g, at, attrs_vary, per_size);
    SizeKernels r;
    r.values = values;
    r.kernels.resize(st.kernels.size());
    r.shapes.resize(size_t(g.size()));
    r.constants.resize(size_t(g.size()));
    for (int id = 0; id < g.size(); ++id) {
        const Node& n = g.node(id);
        if (sym.is_per_size(id)) {
            r.shapes[size_t(id)] = n.type.shape;
            if (n.is_constant()) r.constants[size_t(id)] = n.value;
            continue;
        }
        const std::vector<int64_t> fitted = sym.shape_at(st.graph, id, values);
        WEFT_CHECK(!per_size[size_t(id)] && n.type.shape == fitted, "graph::Module::run: at ", at, ", ", describe(n),
                   " is ", n.type.str(), (per_size[size_t(id)] ? " with other data" : ""),
                   ", not what graph::build found at other sizes (", TensorType{fitted, n.type.dtype}.str(),
                   "): give the symbols fixed values, or bounds that keep the graph alike");
    }
    std::vector<FusedGroup> groups;
    std::vector<size_t> which;
    for (size_t k = 0; k < st.per_size.size(); ++k)
        if (st.per_size[k]) {
            groups.push_back(st.groups[k]);
            which.push_back(k);
        }
    CompileClock clock;
    std::vector<GroupBuild> built = compile_groups(g, groups, st.target, options, nullptr, clock);
    for (size_t i = 0; i < which.size(); ++i) {
        WEFT_ICHECK(built[i].compiled.args == st.arg_ids[which[i]], "graph::Module::run: the kernel of '",
                    st.infos[which[i]].name, "' at ", at, " takes other arguments than at the symbols' max");
        r.kernels[which[i]] = std::move(built[i].compiled.kernel);
    }
    return r;
}

}  // namespace weft::graph::detail
