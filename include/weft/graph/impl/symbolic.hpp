// Symbolic dimensions (graph/graph.hpp, Symbol): which dimensions of the compiled graph's
// nodes depend on the symbols, and how. build() makes the graph again at other values of the
// symbols (Graph::instantiate, then the same passes) and fits every dimension as a
// multilinear function of them (batch, seq, batch * seq * 64, seq + 1): one set of values
// per subset of the symbols determines it, and one more set checks it. A node with a
// dimension that is no such function (a strided convolution over an image size), or a
// constant whose data changes with the values (weights packed for a convolution's width), is
// marked per size: its kernels are compiled for each set of values the module runs at
// (graph/impl/size_kernels.hpp). A graph whose structure changes with the values is refused,
// naming the node: a module never runs a kernel at a size it was not built for.
#pragma once
#include <bit>
#include <cstring>
#include <functional>
#include <map>
#include <optional>

#include "weft/graph/graph.hpp"
#include "weft/graph/op_registry.hpp"
#include "weft/ir/op.hpp"

namespace weft::graph::detail {

// The most symbols a graph may have: build() makes the graph again at 2^k sets of values.
inline constexpr size_t kMaxSymbols = 4;

// An integer attribute's entries (one for an integer); empty for another kind.
inline std::vector<int64_t> int_entries(const AttrValue& v) {
    if (const int64_t* x = std::get_if<int64_t>(&v)) return {*x};
    if (const auto* xs = std::get_if<std::vector<int64_t>>(&v)) return *xs;
    return {};
}

// One dimension: the sum of coefficient * (the product of the symbols in mask).
struct SymbolicDim {
    std::vector<std::pair<uint32_t, int64_t>> terms;  // (mask, coefficient); mask 0: the constant

    bool is_constant() const {
        for (auto& [mask, c] : terms)
            if (mask && c) return false;
        return true;
    }
    int64_t eval(const std::vector<int64_t>& values) const {
        int64_t sum = 0;
        for (auto& [mask, c] : terms) {
            int64_t t = c;
            for (size_t s = 0; s < values.size(); ++s)
                if (mask >> s & 1) t *= values[s];
            sum += t;
        }
        return sum;
    }
    // `values`: each symbol's expression (its Var, or max(Var, c) for a kernel that may
    // assume the symbol is at least c).
    Expr expr(const std::vector<Expr>& vars) const {
        Expr sum;
        int64_t constant = 0;
        for (auto& [mask, c] : terms) {
            if (!c) continue;
            if (!mask) {
                constant += c;
                continue;
            }
            Expr t;
            for (size_t s = 0; s < vars.size(); ++s)
                if (mask >> s & 1) t = t.defined() ? t * vars[s] : vars[s];
            if (c != 1) t = t * make_int(c);
            sum = sum.defined() ? sum + t : t;
        }
        if (!sum.defined()) return make_int(constant);
        return constant ? sum + make_int(constant) : sum;
    }
};

// What build() learnt about the compiled graph's symbolic dimensions.
struct SymbolicShapes {
    std::vector<Symbol> symbols;
    std::vector<SymbolicAxis> axes;              // where the inputs hold them
    std::vector<Var> vars;                       // one per symbol, a scalar argument of the kernels that use it
    std::vector<Expr> symbol_exprs;              // what the extents use for each symbol: its Var (see at_least)
    std::vector<std::vector<SymbolicDim>> dims;  // per node: its shape; empty for a node of constant shape
    std::vector<bool> attrs_vary;                // per node: its attributes change with the symbols
    // Per node: its integer attributes that change with the symbols, entry by entry.
    std::vector<std::map<std::string, std::vector<SymbolicDim>>> attrs;
    // Per node: its shape (or attributes) is no sum of products of the symbols, or it is a
    // constant whose data changes with them: known only in the graph made at the values
    // (dims[] empty). The kernels that read or write it are compiled per size.
    std::vector<bool> per_size;

    bool empty() const { return symbols.empty(); }
    bool is_symbolic(int node) const { return !dims[size_t(node)].empty(); }
    bool is_per_size(int node) const { return !per_size.empty() && per_size[size_t(node)]; }
    // Whether node `node` depends on the symbols: its shape, an input's or its attributes.
    bool touches(const Graph& g, int node) const {
        if (is_symbolic(node) || is_per_size(node) || attrs_vary[size_t(node)]) return true;
        for (Value v : g.node(node).inputs)
            if (is_symbolic(v.id) || is_per_size(v.id)) return true;
        return false;
    }
    // Whether any of `nodes` or their inputs is per size (a group that reads or writes one
    // has kernels per size).
    bool any_per_size(const Graph& g, const std::vector<int>& nodes) const {
        for (int id : nodes) {
            if (is_per_size(id)) return true;
            for (Value v : g.node(id).inputs)
                if (is_per_size(v.id)) return true;
        }
        return false;
    }
    // Node `node`'s shape in the tensor language (the symbols' Vars where it depends on them).
    std::vector<Expr> shape_expr(const Graph& g, int node) const {
        std::vector<Expr> shape;
        if (!is_symbolic(node)) {
            for (int64_t d : g.node(node).type.shape) shape.push_back(make_int(d));
            return shape;
        }
        for (const SymbolicDim& d : dims[size_t(node)]) shape.push_back(d.expr(symbol_exprs));
        return shape;
    }
    // Node `node`'s integer attributes that change with the symbols, as expressions.
    std::map<std::string, std::vector<Expr>> attr_exprs(int node) const {
        std::map<std::string, std::vector<Expr>> r;
        for (auto& [key, entries] : attrs[size_t(node)])
            for (const SymbolicDim& d : entries) r[key].push_back(d.expr(symbol_exprs));
        return r;
    }
    // The same shapes with symbol `s` at `count` (the others at their max), every extent a
    // constant: a kernel for `count` samples of a group that runs on them in turn.
    SymbolicShapes at_samples(size_t s, int64_t count) const {
        std::vector<int64_t> values;
        for (const Symbol& sym : symbols) values.push_back(sym.max);
        values[s] = count;
        return at_values(values);
    }
    // The same shapes with the symbols at `values`, every extent a constant.
    SymbolicShapes at_values(const std::vector<int64_t>& values) const {
        SymbolicShapes r = *this;
        for (int id = 0; id < int(dims.size()); ++id)
            for (SymbolicDim& d : r.dims[size_t(id)]) d.terms = {{0u, d.eval(values)}};
        for (auto& per_node : r.attrs)
            for (auto& [key, entries] : per_node)
                for (SymbolicDim& d : entries) d.terms = {{0u, d.eval(values)}};
        return r;
    }
    // The same shapes for a kernel that runs only where symbol s is at least `c`: its extents
    // say max(s, c), from which the lowering proves that a tile of up to c rows fits (a GEMM's
    // register tile: TailStrategy::ShiftInwards), as it does for a constant extent.
    SymbolicShapes at_least(size_t s, int64_t c) const {
        SymbolicShapes r = *this;
        r.symbol_exprs[s] = ir::max(vars[s], make_int(c));
        return r;
    }
    // Node `node`'s shape when the symbols have `values`.
    std::vector<int64_t> shape_at(const Graph& g, int node, const std::vector<int64_t>& values) const {
        if (!is_symbolic(node)) return g.node(node).type.shape;
        std::vector<int64_t> shape;
        for (const SymbolicDim& d : dims[size_t(node)]) shape.push_back(d.eval(values));
        return shape;
    }
};

// "batch = 2, seq = 7": the symbols at `values`, for messages.
inline std::string values_str(const std::vector<Symbol>& symbols, const std::vector<int64_t>& values) {
    std::string s;
    for (size_t i = 0; i < symbols.size(); ++i) s += (i ? ", " : "") + symbols[i].name + " = " + std::to_string(values[i]);
    return s;
}

// The values build() makes the graph at for symbol s besides its max: `fit` (with max, it
// determines a linear function) and `check` (a third value that confirms it), both >= 2
// where the bounds allow (a 1 could broadcast where the max does not), each -1 where the
// bounds leave no other value.
struct ProbeValues {
    int64_t fit = -1, check = -1;
};

inline ProbeValues probe_values(const Symbol& s) {
    std::vector<int64_t> candidates;
    for (int64_t v : {s.max / 2, s.max - 1, (s.max * 3) / 4, s.max / 4, int64_t(2), s.min})
        if (v >= s.min && v < s.max && v >= std::min<int64_t>(2, s.max - 1) &&
            std::find(candidates.begin(), candidates.end(), v) == candidates.end())
            candidates.push_back(v);
    if (candidates.empty() && s.min < s.max) candidates.push_back(s.min);
    ProbeValues p;
    if (!candidates.empty()) p.fit = candidates[0];
    if (candidates.size() > 1) p.check = candidates[1];
    return p;
}

// Whether constant b (at other values of the symbols) is constant a (at their max), or the
// first elements of it in row-major order: a table read up to a symbolic length (BERT's
// position embeddings: an arange of the sequence, gathered and folded) or one value
// broadcast to a symbolic shape (an Expand of a scalar, folded). The module reads such a
// constant through a view of its first elements; every value the graph is made at checks it.
inline bool same_or_prefix(const Node& a, const Node& b) {
    if (a.type.dtype != b.type.dtype || a.type.shape.size() != b.type.shape.size() || b.type.bytes() > a.type.bytes())
        return false;
    return !std::memcmp(a.value.data(), b.value.data(), size_t(b.type.bytes()));
}

// Compares the compiled graph `g` with `other` (the same after the passes at other values):
// the same nodes, inputs, dtypes and ranks; marks the nodes whose attributes differ, and the
// constants whose data differs (other than by a prefix) as per size.
inline void match_structure(const Graph& g, const Graph& other, const std::string& at, std::vector<bool>& attrs_vary,
                            std::vector<bool>& per_size) {
    auto refuse = [&](const std::string& what) {
        ::weft::detail::throw_user_error("graph::build: symbolic dimensions: " + what + " (with the symbols at " + at +
                                         "); a module cannot follow a graph whose structure changes with the symbols: "
                                         "give the symbols fixed values instead");
    };
    if (g.size() != other.size())
        refuse("the graph has " + std::to_string(other.size()) + " nodes after the passes, not " + std::to_string(g.size()));
    for (int i = 0; i < g.size(); ++i) {
        const Node &a = g.node(i), &b = other.node(i);
        if (a.op != b.op || a.inputs.size() != b.inputs.size())
            refuse(describe(a) + " becomes " + describe(b));
        for (size_t k = 0; k < a.inputs.size(); ++k)
            if (a.inputs[k].id != b.inputs[k].id) refuse(describe(a) + " reads another input " + std::to_string(k));
        if (a.type.dtype != b.type.dtype || a.type.shape.size() != b.type.shape.size())
            refuse(describe(a) + " has the type " + b.type.str() + ", not of the kind of " + a.type.str());
        if (a.is_constant() && !same_or_prefix(a, b)) per_size[size_t(i)] = true;
        if (!(a.attrs == b.attrs)) attrs_vary[size_t(i)] = true;
    }
    if (g.outputs().size() != other.outputs().size()) refuse("the outputs differ");
}

// build()'s analysis: `compiled` is `original` at the symbols' max after `passes`.
inline SymbolicShapes analyze_symbols(const Graph& original, const Graph& compiled,
                                      const std::function<Graph(Graph)>& passes) {
    SymbolicShapes r;
    r.symbols = original.symbols();
    r.axes = original.symbolic_axes();
    const size_t k = r.symbols.size();
    WEFT_CHECK(k <= kMaxSymbols, "graph::build: symbolic dimensions: the graph has ", k, " symbols; at most ",
               kMaxSymbols, " are supported");
    for (const Symbol& s : r.symbols) {
        r.vars.emplace_back(s.name);
        r.symbol_exprs.push_back(r.vars.back());
    }
    std::vector<ProbeValues> probe;
    for (const Symbol& s : r.symbols) probe.push_back(probe_values(s));
    auto at_str = [&](const std::vector<int64_t>& v) { return values_str(r.symbols, v); };
    auto graph_at = [&](const std::vector<int64_t>& v) {
        std::map<std::string, int64_t> values;
        for (size_t i = 0; i < k; ++i) values[r.symbols[i].name] = v[i];
        try {
            return passes(original.instantiate(values));
        } catch (const Error& e) {
            ::weft::detail::rethrow_with_context(e, "graph::build: symbolic dimensions: the graph at " + at_str(v) +
                                                        " (attributes that give shapes must follow the inputs: in a "
                                                        "reshape, 0 copies an extent and -1 infers one)");
        }
    };
    const int n = compiled.size();
    r.attrs_vary.assign(size_t(n), false);
    r.per_size.assign(size_t(n), false);
    // at[p]: the compiled graph at probe p, where bit s of p puts symbol s at its fit value
    // (`compiled` itself where every symbol stays at its max).
    const size_t probes = size_t(1) << k;
    std::vector<Graph> made;
    made.reserve(probes);
    std::vector<const Graph*> at(probes, &compiled);
    std::vector<int64_t> max_values;
    for (const Symbol& s : r.symbols) max_values.push_back(s.max);
    auto values_of = [&](size_t p) {
        std::vector<int64_t> v = max_values;
        for (size_t s = 0; s < k; ++s)
            if (p >> s & 1 && probe[s].fit >= 0) v[s] = probe[s].fit;
        return v;
    };
    for (size_t p = 1; p < probes; ++p) {
        std::vector<int64_t> v = values_of(p);
        if (v == max_values) continue;  // a symbol without another value
        made.push_back(graph_at(v));
        at[p] = &made.back();
        match_structure(compiled, made.back(), at_str(v), r.attrs_vary, r.per_size);
    }
    auto shape = [&](size_t p, int i) -> const std::vector<int64_t>& { return at[p]->node(i).type.shape; };
    // Fit: along each symbol, a value at max and at fit give slope and intercept; none where
    // the slope is no integer.
    auto fit = [&](std::vector<int64_t> c) -> std::optional<SymbolicDim> {
        for (size_t s = 0; s < k; ++s) {
            const int64_t hi = r.symbols[s].max, lo = probe[s].fit;
            for (size_t p = 0; p < probes; ++p) {
                if (p >> s & 1) continue;
                const int64_t at_hi = c[p], at_lo = c[p | size_t(1) << s];
                int64_t slope = 0;
                if (lo >= 0) {
                    if ((at_hi - at_lo) % (hi - lo) != 0) return std::nullopt;
                    slope = (at_hi - at_lo) / (hi - lo);
                }
                c[p] = at_hi - slope * hi;      // the intercept, without symbol s
                c[p | size_t(1) << s] = slope;  // the coefficient of symbol s
            }
        }
        SymbolicDim dim;
        for (size_t p = 0; p < probes; ++p)
            if (c[p] || p == 0) dim.terms.emplace_back(uint32_t(p), c[p]);
        return dim;
    };
    r.dims.assign(size_t(n), {});
    r.attrs.assign(size_t(n), {});
    for (int i = 0; i < n; ++i) {
        const size_t rank = shape(0, i).size();
        bool varies = false;
        for (size_t p = 1; p < probes; ++p) varies |= shape(p, i) != shape(0, i);
        for (size_t d = 0; varies && d < rank; ++d) {
            std::vector<int64_t> c(probes);
            for (size_t p = 0; p < probes; ++p) c[p] = shape(p, i)[d];
            if (std::optional<SymbolicDim> dim = fit(std::move(c))) r.dims[size_t(i)].push_back(std::move(*dim));
            else r.per_size[size_t(i)] = true;
        }
        if (r.per_size[size_t(i)]) r.dims[size_t(i)].clear();
        if (!r.attrs_vary[size_t(i)] || r.per_size[size_t(i)]) continue;
        // Integer attributes that change (a slice's starts and ends) are fitted the same way.
        for (auto& [key, value] : compiled.node(i).attrs.items()) {
            std::vector<std::vector<int64_t>> entries_at(probes);
            for (size_t p = 0; p < probes; ++p) {
                const std::map<std::string, AttrValue>& items = at[p]->node(i).attrs.items();
                auto found = items.find(key);
                if (found == items.end()) break;
                entries_at[p] = int_entries(found->second);
            }
            bool same = true;
            for (size_t p = 1; p < probes; ++p) same &= entries_at[p] == entries_at[0];
            if (same || entries_at[0].empty()) continue;
            std::vector<SymbolicDim> entries;
            for (size_t e = 0; e < entries_at[0].size(); ++e) {
                std::vector<int64_t> c(probes);
                for (size_t p = 0; p < probes && e < entries_at[p].size(); ++p) c[p] = entries_at[p][e];
                std::optional<SymbolicDim> dim = fit(std::move(c));
                if (!dim) break;
                entries.push_back(std::move(*dim));
            }
            if (entries.size() != entries_at[0].size()) r.per_size[size_t(i)] = true;
            else r.attrs[size_t(i)][key] = std::move(entries);
        }
        if (r.per_size[size_t(i)]) {
            r.dims[size_t(i)].clear();
            r.attrs[size_t(i)].clear();
        }
    }
    // Check at third values, where the bounds have them.
    std::vector<int64_t> check = max_values;
    bool any_check = false;
    for (size_t s = 0; s < k; ++s)
        if (probe[s].check >= 0) {
            check[s] = probe[s].check;
            any_check = true;
        }
    if (any_check) {
        Graph g = graph_at(check);
        const std::vector<bool> varied = r.attrs_vary;
        match_structure(compiled, g, at_str(check), r.attrs_vary, r.per_size);
        for (int i = 0; i < n; ++i) {
            if (r.per_size[size_t(i)]) continue;
            bool fits = r.attrs_vary[size_t(i)] == varied[size_t(i)] &&
                        g.node(i).type.shape == r.shape_at(compiled, i, check);
            for (auto& [key, entries] : r.attrs[size_t(i)]) {
                std::vector<int64_t> fitted_attr;
                for (const SymbolicDim& d : entries) fitted_attr.push_back(d.eval(check));
                fits &= int_entries(g.node(i).attrs.items().at(key)) == fitted_attr;
            }
            if (fits) continue;
            r.per_size[size_t(i)] = true;
            r.dims[size_t(i)].clear();
            r.attrs[size_t(i)].clear();
        }
    }
    return r;
}

// The symbol a group may run once per value of, as one kernel per sample, or -1: every
// tensor of the group that depends on the symbols has a multiple of that symbol as its
// first dimension and constant extents elsewhere, and no node works along that dimension (an
// axis attribute naming it). build() compiles such a group for one sample where its
// operators need constant extents (convolutions and pools: the batch of a CNN).
inline int per_sample_symbol(const Graph& g, const SymbolicShapes& sym, const std::vector<int>& ids) {
    int symbol = -1;
    for (int id : ids) {
        if (!sym.is_symbolic(id)) continue;
        const std::vector<SymbolicDim>& dims = sym.dims[size_t(id)];
        // dims[0] = c * symbol: a sample is c rows.
        if (dims[0].terms.size() != 2 || dims[0].terms[0] != std::pair<uint32_t, int64_t>{0u, 0} ||
            dims[0].terms[1].second < 1 || std::popcount(dims[0].terms[1].first) != 1)
            return -1;
        const int s = std::countr_zero(dims[0].terms[1].first);
        if (symbol >= 0 && s != symbol) return -1;
        symbol = s;
        for (size_t d = 1; d < dims.size(); ++d)
            if (!dims[d].is_constant()) return -1;
        const Node& n = g.node(id);
        if (!n.is_op()) continue;
        const int64_t rank = int64_t(n.type.shape.size());
        auto names_first = [&](int64_t a) { return a == 0 || a == -rank; };
        for (auto& [key, value] : n.attrs.items()) {
            if (key != "axis" && key != "axes") continue;
            if (const int64_t* a = std::get_if<int64_t>(&value); a && names_first(*a)) return -1;
            if (const auto* list = std::get_if<std::vector<int64_t>>(&value))
                for (int64_t a : *list)
                    if (names_first(a)) return -1;
        }
    }
    return symbol;
}

}  // namespace weft::graph::detail
