// Definitions of graph/pass.hpp's PassPipeline and default_pipeline, and what the passes
// share: the order they walk a graph in, use counts, and GraphRewriter, which builds the
// rewritten graph node by node.
#pragma once
#include <chrono>
#include <set>

#include "weft/graph/pass.hpp"

namespace weft::graph {

namespace pass_detail {

// A topological order of g (the stored order when it is one), checked like Graph::check()
// (cycles, missing inputs, unknown operators, types): a malformed graph is a weft::Error
// naming the pass and the node.
inline std::vector<int> walk_order(const Graph& g, const char* pass) {
    Graph copy = g;
    std::vector<int> order;
    try {
        order = copy.check();
    } catch (const Error& e) {
        std::string what = ::weft::detail::unprefixed(e.what());
        if (what.rfind("graph: ", 0) == 0) what = what.substr(7);
        if (dynamic_cast<const InternalError*>(&e)) ::weft::detail::rethrow_with_context(e, std::string("graph pass '") + pass + "'");
        e.rethrow_with(std::string("weft: graph pass '") + pass + "': " + what);
    }
    if (g.is_ordered())
        for (int i = 0; i < g.size(); ++i) order[size_t(i)] = i;
    return order;
}

// How many times each node is read: once per input slot that names it, once per output.
inline std::vector<int> use_counts(const Graph& g) {
    std::vector<int> uses(size_t(g.size()), 0);
    for (const Node& n : g.nodes())
        for (Value v : n.inputs) ++uses[size_t(v.id)];
    for (auto& [name, v] : g.outputs()) ++uses[size_t(v.id)];
    return uses;
}

// Builds the rewritten graph: map[old id] is the node's value in the new graph (undefined
// while not emitted, or when dropped). New nodes get names that no node of either graph has.
class GraphRewriter {
public:
    explicit GraphRewriter(const Graph& old) : old_(old), map_(size_t(old.size())) {
        out_.set_limits(old.limits());
        out_.inherit_shapes_at_max(old);
        for (const Node& n : old.nodes()) taken_.insert(n.name);
    }

    const Graph& old() const { return old_; }
    Graph& out() { return out_; }
    Value mapped(Value old_value) const {
        Value v = map_[size_t(old_value.id)];
        WEFT_ICHECK(v.defined(), describe(old_.node(old_value)), " is read before it is emitted");
        return v;
    }
    void set(int old_id, Value v) { map_[size_t(old_id)] = v; }

    // Emits old node `id` as it is, its inputs mapped.
    Value copy(int id) {
        const Node& n = old_.node(id);
        Value v;
        if (n.is_input()) {
            v = out_.input(n.name, n.type.shape, n.type.dtype);
            for (const SymbolicAxis& a : old_.symbolic_axes())  // (a rewrite keeps the symbols)
                if (a.input == n.name)
                    for (const Symbol& s : old_.symbols())
                        if (s.name == a.symbol) out_.set_symbolic(v, a.axis, s);
        } else if (n.is_constant()) {
            v = out_.constant_shared(n.name, n.value);  // graph constants are never written
        } else {
            std::vector<Value> in;
            for (Value x : n.inputs) in.push_back(mapped(x));
            v = out_.add_node(n.op, std::move(in), n.attrs, n.name);
        }
        set(id, v);
        return v;
    }

    // A name based on `wanted` that no node of the old or the new graph has.
    std::string fresh_name(const std::string& wanted) {
        std::string name = wanted;
        for (int k = 1; taken_.count(name) || out_.find(name); ++k) name = wanted + "_" + std::to_string(k);
        taken_.insert(name);
        return name;
    }

    // The new graph, with the old one's outputs (mapped).
    Graph finish() {
        for (auto& [name, v] : old_.outputs()) out_.output(mapped(v), name);
        return std::move(out_);
    }

private:
    const Graph& old_;
    Graph out_;
    std::vector<Value> map_;
    std::set<std::string> taken_;
};

// g with each node that `replace(id)` gives a value for (built in r.out()) replaced by it and
// the others copied, in walk order; g itself when no node was replaced.
template <class F>
Graph rewrite_nodes(const Graph& g, GraphRewriter& r, const char* pass, F&& replace) {
    bool changed = false;
    for (int id : walk_order(g, pass)) {
        if (std::optional<Value> v = replace(id)) {
            r.set(id, *v);
            changed = true;
        } else {
            r.copy(id);
        }
    }
    return changed ? r.finish() : g;
}

}  // namespace pass_detail

PassPipeline& PassPipeline::add(Pass p) {
    WEFT_CHECK(!p.name.empty(), "PassPipeline::add: a pass needs a name");
    WEFT_CHECK(bool(p.function), "PassPipeline::add: pass '", p.name, "' has no function");
    passes_.push_back(std::move(p));
    return *this;
}

std::string PassPipeline::str() const {
    if (passes_.empty()) return "(no passes)";
    std::string s;
    for (const Pass& p : passes_) s += (s.empty() ? "" : " -> ") + p.name;
    return s;
}

Graph PassPipeline::run(const Graph& g, std::vector<BuildPhase>* phases) const {
    Graph cur = g;
    for (const Pass& p : passes_) {
        const auto t0 = std::chrono::steady_clock::now();
        Graph next = p.function(cur);
        if (phases)
            phases->push_back(
                {"pass " + p.name, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()});
        const auto &before = cur.outputs(), &after = next.outputs();
        WEFT_ICHECK(before.size() == after.size(), "graph pass '", p.name, "' changed the number of outputs");
        for (size_t i = 0; i < before.size(); ++i)
            WEFT_ICHECK(before[i].first == after[i].first && cur.type(before[i].second) == next.type(after[i].second),
                        "graph pass '", p.name, "' changed output '", before[i].first, "'");
        WEFT_ICHECK(cur.inputs().size() == next.inputs().size(), "graph pass '", p.name, "' changed the inputs");
        cur = std::move(next);
    }
    return cur;
}

PassPipeline default_pipeline(const BuildOptions& o, const Target& target) {
    PassPipeline p;
    const bool convert_layout = o.convert_layout && target.is_cpu();
    if (o.eliminate_dead_code) p.add({"eliminate_dead_code", eliminate_dead_code});
    if (o.eliminate_common_subexpressions) {
        bool constants = o.merge_equal_constants;
        p.add({"eliminate_common_subexpressions",
               [constants](const Graph& g) { return eliminate_common_subexpressions(g, constants); }});
    }
    if (o.fold_constants) p.add({"fold_constants", fold_constants});
    if (o.fold_scale_axis) p.add({"fold_scale_axis", fold_scale_axis});
    if (o.simplify_operators) p.add({"simplify_operators", simplify_operators});
    const bool bf16 = o.precision == Precision::bf16 && target.is_cpu();
    const bool int8 = o.precision == Precision::int8 && target.is_cpu();
    if (bf16) p.add({"convert_matmul_bf16", convert_matmul_bf16});
    if (convert_layout) {
        p.add({"convert_conv_layout", [target](const Graph& g) { return convert_conv_layout(g, target); }});
        if (bf16) p.add({"convert_conv_bf16", convert_conv_bf16});
    }
    // (After the layout conversion: the convolutions it quantizes are conv2d_nchwc.)
    if (int8) {
        const auto calibration = o.calibration;
        const auto ranges = o.activation_ranges;
        const double percentile = o.calibration_percentile;
        p.add({"quantize_int8", [calibration, percentile, ranges](const Graph& g) {
                   return quantize_int8(g, calibration, percentile, ranges);
               }});
    } else if (convert_layout) {
        p.add({"convert_quantized_convs", convert_quantized_convs});
    }
    if (convert_layout) p.add({"pack_matmul_weights", [target](const Graph& g) { return pack_matmul_weights(g, target); }});
    // (The low-precision passes leave weight conversions and packings for the second fold.)
    if (o.fold_constants && (o.simplify_operators || convert_layout || bf16 || int8))
        p.add({"fold_constants", fold_constants});
    if (o.eliminate_dead_code &&
        (o.fold_constants || o.fold_scale_axis || o.simplify_operators || convert_layout || bf16 || int8))
        p.add({"eliminate_dead_code", eliminate_dead_code});
    return p;
}

}  // namespace weft::graph
