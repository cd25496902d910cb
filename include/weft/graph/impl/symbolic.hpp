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
#include "weft/graph/impl/symbolic_floor.hpp"
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

// One dimension: the sum of coefficient * (the product of the symbols in mask), plus floor
// terms of single symbols (a strided convolution's output height; graph/impl/symbolic_floor.hpp).
struct SymbolicDim {
    std::vector<std::pair<uint32_t, int64_t>> terms;  // (mask, coefficient); mask 0: the constant
    std::vector<FloorTerm> floors;

    bool is_constant() const {
        for (auto& [mask, c] : terms)
            if (mask && c) return false;
        return floors.empty();
    }
    // Whether symbol s appears in a product term (its floor terms use derived variables).
    bool uses(size_t s) const {
        for (auto& [mask, c] : terms)
            if (c && (mask >> s & 1)) return true;
        return false;
    }
    int64_t eval(const std::vector<int64_t>& values) const {
        int64_t sum = 0;
        for (auto& [mask, c] : terms) {
            int64_t t = c;
            for (size_t s = 0; s < values.size(); ++s)
                if (mask >> s & 1) t *= values[s];
            sum += t;
        }
        for (const FloorTerm& f : floors) sum += f.eval(values[f.symbol]);
        return sum;
    }
    // The product terms (the floor terms are SymbolicShapes::dim_expr's, as derived
    // variables). `values`: each symbol's expression (its Var, or max(Var, c) for a kernel
    // that may assume the symbol is at least c).
    Expr expr(const std::vector<Expr>& vars) const {
        Expr sum;
        int64_t constant = 0;
        auto add = [&](Expr t) { sum = sum.defined() ? sum + t : t; };
        for (auto& [mask, c] : terms) {
            if (!c) continue;
            if (!mask) {
                constant += c;
                continue;
            }
            Expr t;
            for (size_t s = 0; s < vars.size(); ++s)
                if (mask >> s & 1) t = t.defined() ? t * vars[s] : vars[s];
            add(c != 1 ? t * make_int(c) : t);
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
    // The floor terms of the extents (each with scale 1: floor((num * symbol + offset) / den)),
    // in the order of their first use, each a scalar argument of the kernels whose tensors
    // use it (derived_vars, estimated at the symbols' max): in a kernel, an extent that is a
    // plain variable tiles as one of a symbol does, where a division of it left every tile
    // symbolic (RESULTS.md, "Symbolic dimensions against fixed sizes"). collect_derived() makes them.
    std::vector<FloorTerm> derived;
    std::vector<Var> derived_vars;

    bool empty() const { return symbols.empty(); }
    // A kernel's scalar arguments are ids < 0: -1 - s for symbol s, derived_id(j) for derived
    // term j.
    static int derived_id(size_t j) { return -1 - int(kMaxSymbols) - int(j); }
    static bool is_base_id(int id) { return id < 0 && id >= -int(kMaxSymbols); }
    int64_t scalar_value(int id, const std::vector<int64_t>& values) const {
        if (is_base_id(id)) return values[size_t(-1 - id)];
        const FloorTerm& f = derived[size_t(derived_id(0) - id)];
        return f.eval(values[f.symbol]);
    }
    Var scalar_var(int id) const { return is_base_id(id) ? vars[size_t(-1 - id)] : derived_vars[size_t(derived_id(0) - id)]; }
    // The derived term a floor term multiplies (its scale set to 1), or -1.
    int derived_of(FloorTerm f) const {
        f.scale = 1;
        for (size_t j = 0; j < derived.size(); ++j)
            if (derived[j] == f) return int(j);
        return -1;
    }
    void collect_derived() {
        derived.clear();
        derived_vars.clear();
        for (const std::vector<SymbolicDim>& node : dims)
            for (const SymbolicDim& d : node)
                for (FloorTerm f : d.floors) {
                    if (derived_of(f) >= 0) continue;
                    f.scale = 1;
                    const Symbol& s = symbols[f.symbol];
                    derived.push_back(f);
                    derived_vars.push_back(Var::sized(s.name + ".d" + std::to_string(derived.size()),
                                                      std::max<int64_t>(1, f.eval(s.max))));
                }
    }
    // An extent in the tensor language: its products of the symbols' expressions, and its floor
    // terms as multiples of their derived variables.
    Expr dim_expr(const SymbolicDim& d) const {
        Expr e = d.expr(symbol_exprs);
        for (const FloorTerm& f : d.floors) {
            const int j = derived_of(f);
            WEFT_ICHECK(j >= 0, "a floor term without its derived variable");
            Expr t = f.scale != 1 ? derived_vars[size_t(j)] * make_int(f.scale) : Expr(derived_vars[size_t(j)]);
            e = ir::is_zero(e) ? t : e + t;
        }
        return e;
    }
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
    // Whether any of `nodes` has an extent with a floor term (a derived variable).
    bool any_floor_term(const std::vector<int>& nodes) const {
        if (empty()) return false;
        for (int id : nodes)
            for (const SymbolicDim& d : dims[size_t(id)])
                if (!d.floors.empty()) return true;
        return false;
    }
    // Node `node`'s shape in the tensor language (the symbols' Vars where it depends on them).
    std::vector<Expr> shape_expr(const Graph& g, int node) const {
        std::vector<Expr> shape;
        if (!is_symbolic(node)) {
            for (int64_t d : g.node(node).type.shape) shape.push_back(make_int(d));
            return shape;
        }
        for (const SymbolicDim& d : dims[size_t(node)]) shape.push_back(dim_expr(d));
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
            for (SymbolicDim& d : r.dims[size_t(id)]) d = SymbolicDim{{{0u, d.eval(values)}}, {}};
        for (auto& per_node : r.attrs)
            for (auto& [key, entries] : per_node)
                for (SymbolicDim& d : entries) d = SymbolicDim{{{0u, d.eval(values)}}, {}};
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

// Node `i`'s extents from its operator's type inference, sampled along each symbol with the
// others at their max (its inputs' extents at each value from `r`), each fitted as a constant
// plus one floor term per symbol (symbolic_floor.hpp); none where an extent is no such
// function, depends on two symbols at once, or the node's inputs or attributes are not known
// as functions of the symbols. The caller checks the sum against the graphs made at other
// values.
inline std::optional<std::vector<SymbolicDim>> dims_from_inference(const Graph& g, int i, const SymbolicShapes& r) {
    const Node& n = g.node(i);
    if (!n.is_op() || r.attrs_vary[size_t(i)]) return std::nullopt;
    for (Value v : n.inputs)
        if (r.is_per_size(v.id)) return std::nullopt;
    const OpDef& def = op_def(n.op);
    auto infer_at = [&](const std::vector<int64_t>& values) -> std::optional<std::vector<int64_t>> {
        std::vector<TensorType> in;
        for (Value v : n.inputs) in.push_back(TensorType{r.shape_at(g, v.id, values), g.type(v).dtype});
        try {
            return def.infer(in, n.attrs).shape;
        } catch (const Error&) {
            return std::nullopt;
        }
    };
    const std::vector<int64_t>& at_max = n.type.shape;
    std::vector<int64_t> max_values;
    for (const Symbol& sym : r.symbols) max_values.push_back(sym.max);
    std::vector<SymbolicDim> dims(at_max.size());
    std::vector<int64_t> constant = at_max;
    std::vector<int> symbol_of(at_max.size(), -1);
    for (size_t s = 0; s < r.symbols.size(); ++s) {
        const Symbol& sym = r.symbols[s];
        // A run of consecutive values up to the max (a fit needs 2 * kMaxFloorDen), then
        // values near the min and between, which the fit must also give where the operator
        // takes them (a size the operator refuses is one the module refuses too).
        std::vector<int64_t> at;
        for (int64_t v = std::max(sym.min, sym.max - 2 * kMaxFloorDen + 1); v <= sym.max; ++v) at.push_back(v);
        const size_t run = at.size();
        for (int64_t v : {sym.min, sym.min + 1, sym.min + 2, sym.min + 3, sym.max / 2, sym.max / 3, sym.max / 4})
            if (v >= sym.min && v < at.front() && std::find(at.begin(), at.end(), v) == at.end()) at.push_back(v);
        // (Values the operator refuses, a window larger than its input, are left out: the
        // module refuses them at run time, where a floor term gives an extent below 1.)
        std::vector<std::vector<std::pair<int64_t, int64_t>>> samples(at_max.size());
        size_t in_run = 0;
        for (size_t k = 0; k < at.size(); ++k) {
            std::vector<int64_t> values = max_values;
            values[s] = at[k];
            std::optional<std::vector<int64_t>> shape = infer_at(values);
            if (!shape || shape->size() != at_max.size()) continue;
            in_run += k < run;
            for (size_t d = 0; d < at_max.size(); ++d) samples[d].emplace_back(at[k], (*shape)[d]);
        }
        if (in_run < std::min<size_t>(run, 8)) return std::nullopt;
        for (size_t d = 0; d < at_max.size(); ++d) {
            std::vector<std::pair<int64_t, int64_t>>& xs = samples[d];
            bool varies = false;
            for (auto [v, y] : xs) varies |= y != at_max[d];
            if (!varies) continue;
            if (symbol_of[d] >= 0) return std::nullopt;  // a product of symbols
            symbol_of[d] = int(s);
            std::sort(xs.begin(), xs.end());
            std::optional<FloorFit> fit = fit_floor(xs, uint32_t(s));
            if (!fit) return std::nullopt;
            const FloorTerm& t = fit->term;
            constant[d] -= t.eval(sym.max);
            if (t.den == 1) {
                constant[d] += t.scale * t.offset;
                dims[d].terms.emplace_back(uint32_t(1) << s, t.scale * t.num);
            } else {
                dims[d].floors.push_back(t);
            }
        }
    }
    for (size_t d = 0; d < at_max.size(); ++d) dims[d].terms.insert(dims[d].terms.begin(), {0u, constant[d]});
    return dims;
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
        r.vars.push_back(Var::sized(s.name, s.max));
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
        bool fitted = true;
        for (size_t d = 0; varies && d < rank; ++d) {
            std::vector<int64_t> c(probes);
            for (size_t p = 0; p < probes; ++p) c[p] = shape(p, i)[d];
            if (std::optional<SymbolicDim> dim = fit(std::move(c))) r.dims[size_t(i)].push_back(std::move(*dim));
            else fitted = false;
        }
        // Below a strided convolution (an input with floor terms), or where no sum of products
        // fits, the operator's type inference says how the extents follow the symbols.
        bool floor_inputs = false;
        for (Value v : compiled.node(i).inputs)
            for (const SymbolicDim& d : r.dims[size_t(v.id)]) floor_inputs |= !d.floors.empty();
        if (varies && (!fitted || floor_inputs)) {
            std::optional<std::vector<SymbolicDim>> inferred = dims_from_inference(compiled, i, r);
            for (size_t p = 0; inferred && p < probes; ++p) {
                std::vector<int64_t> got;
                for (const SymbolicDim& d : *inferred) got.push_back(d.eval(values_of(p)));
                if (got != shape(p, i)) inferred.reset();
            }
            if (inferred) {
                r.dims[size_t(i)] = std::move(*inferred);
                fitted = true;
            }
        }
        if (!fitted) r.per_size[size_t(i)] = true;
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
    r.collect_derived();
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
        if (!dims[0].floors.empty() || dims[0].terms.size() != 2 || dims[0].terms[0] != std::pair<uint32_t, int64_t>{0u, 0} ||
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
