// Definitions of graph/inspect.hpp's Graphviz output: to_dot and Module::to_dot.
#pragma once
#include <sstream>

#include "weft/graph/impl/module.hpp"
#include "weft/graph/inspect.hpp"

namespace weft::graph {

namespace dot_detail {

// A dot string literal's contents: quotes and backslashes escaped.
inline std::string escape(const std::string& s) {
    std::string r;
    for (char c : s) {
        if (c == '"' || c == '\\') r += '\\';
        r += c;
    }
    return r;
}

inline std::string shape_text(const TensorType& t) {
    std::string s = "[";
    for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
    s += "]";
    if (t.dtype != DataType::float_(32)) s = t.dtype.str() + s;
    return s;
}

}  // namespace dot_detail

std::string to_dot(const Graph& g, const std::vector<FusedGroup>& groups, const DotOptions& options) {
    using dot_detail::escape;
    using dot_detail::shape_text;
    std::ostringstream os;
    os << "digraph graph_ {\n"
          "  rankdir=TB;\n"
          "  newrank=true;\n"
          "  node [fontname=\"Helvetica\", fontsize=11, shape=box, style=\"rounded,filled\", fillcolor=white];\n"
          "  edge [color=\"#555555\", arrowsize=0.7];\n";
    if (!options.title.empty()) os << "  label=\"" << escape(options.title) << "\";\n  labelloc=b;\n  fontname=\"Helvetica\";\n";
    std::vector<int> group_of(size_t(g.size()), -1);
    for (size_t k = 0; k < groups.size(); ++k)
        for (int id : groups[k].nodes) group_of[size_t(id)] = int(k);
    auto node_line = [&](int id) {
        const Node& n = g.node(id);
        std::ostringstream line;
        line << "n" << id << " [";
        if (n.is_constant()) {
            line << "label=\"" << escape(shape_text(n.type)) << "\", tooltip=\"" << escape(n.name)
                 << "\", fontsize=8, height=0.2, margin=\"0.04,0.02\", color=gray70, fontcolor=gray45, fillcolor=gray95";
        } else if (n.is_input()) {
            line << "label=\"" << escape(n.name) << "\\n" << escape(shape_text(n.type))
                 << "\", shape=ellipse, style=filled, fillcolor=\"#fff2cc\"";
        } else {
            const bool master = group_of[size_t(id)] >= 0 && groups[size_t(group_of[size_t(id)])].master == id;
            line << "label=\"" << escape(n.op) << "\\n" << escape(shape_text(n.type)) << "\", tooltip=\""
                 << escape(n.name) << "\"";
            if (master) line << ", penwidth=2";
        }
        line << "];\n";
        return line.str();
    };
    auto shown = [&](int id) { return options.constants || !g.node(id).is_constant(); };
    // Clusters first, then the nodes outside every group.
    for (size_t k = 0; k < groups.size(); ++k) {
        const FusedGroup& group = groups[k];
        os << "  subgraph cluster_" << k << " {\n"
           << "    label=\"kernel " << k << ": " << escape(group_name(g, group)) << "\";\n"
           << "    labelloc=t; fontname=\"Helvetica\"; fontsize=10; fontcolor=\"#1f4e79\";\n"
           << "    style=\"rounded,filled\"; color=\"#6c8ebf\"; fillcolor=\"#dae8fc\";\n";
        for (int id : group.nodes) os << "    " << node_line(id);
        os << "  }\n";
    }
    for (int id = 0; id < g.size(); ++id)
        if (group_of[size_t(id)] < 0 && shown(id)) os << "  " << node_line(id);
    for (int id = 0; id < g.size(); ++id)
        for (Value v : g.node(id).inputs) {
            if (!shown(v.id)) continue;
            os << "  n" << v.id << " -> n" << id;
            if (g.node(v).is_constant()) os << " [color=gray70, arrowsize=0.5]";
            os << ";\n";
        }
    for (size_t k = 0; k < g.outputs().size(); ++k) {
        auto& [name, v] = g.outputs()[k];
        os << "  out" << k << " [label=\"" << escape(name) << "\", shape=plaintext, style=\"\"];\n";
        os << "  n" << v.id << " -> out" << k << ";\n";
    }
    os << "}\n";
    return os.str();
}

std::string Module::to_dot(const DotOptions& options) const { return graph::to_dot(state().graph, state().groups, options); }

}  // namespace weft::graph
