// Definitions of graph/pass.hpp's eliminate_dead_code and eliminate_common_subexpressions.
#pragma once
#include <cstring>
#include <map>

#include "weft/graph/impl/passes_pipeline.hpp"
#include "weft/runtime/bytes.hpp"

namespace weft::graph {

Graph eliminate_dead_code(const Graph& g) {
    std::vector<int> order = pass_detail::walk_order(g, "eliminate_dead_code");
    std::vector<bool> live(size_t(g.size()), false);
    for (auto& [name, v] : g.outputs()) live[size_t(v.id)] = true;
    for (auto it = order.rbegin(); it != order.rend(); ++it)
        if (live[size_t(*it)])
            for (Value v : g.node(*it).inputs) live[size_t(v.id)] = true;
    bool dead = false;
    for (int id = 0; id < g.size(); ++id) dead |= !live[size_t(id)] && !g.node(id).is_input();
    if (!dead) return g;
    pass_detail::GraphRewriter r(g);
    for (int id : order)
        if (live[size_t(id)] || g.node(id).is_input()) r.copy(id);
    return r.finish();
}

namespace pass_detail {

inline bool same_constant(const Node& a, const Node& b) {
    return a.type == b.type && std::memcmp(a.value.data(), b.value.data(), size_t(a.type.bytes())) == 0;
}

// A cheap fingerprint of a constant's bytes (FNV-1a over at most 4096 bytes spread over it).
inline uint64_t constant_fingerprint(const Node& n) {
    const int64_t bytes = n.type.bytes(), step = std::max<int64_t>(1, bytes / 4096);
    return ::weft::detail::fnv1a64(std::string_view(static_cast<const char*>(n.value.data()), size_t(bytes)),
                                   size_t(step));
}

}  // namespace pass_detail

Graph eliminate_common_subexpressions(const Graph& g, bool merge_constants) {
    std::vector<int> order = pass_detail::walk_order(g, "eliminate_common_subexpressions");
    // First pass on the old graph: rep[id] is the node id stands for (itself when unique).
    std::vector<int> rep(size_t(g.size()));
    std::map<std::pair<std::string, std::vector<int>>, std::vector<int>> ops;  // (op, rep'd inputs) -> nodes
    std::map<std::pair<uint64_t, int64_t>, std::vector<int>> constants;         // (fingerprint, bytes) -> nodes
    bool merged = false;
    for (int id : order) {
        const Node& n = g.node(id);
        rep[size_t(id)] = id;
        if (n.is_input()) continue;
        if (n.is_constant()) {
            if (!merge_constants) continue;
            auto& same = constants[{pass_detail::constant_fingerprint(n), n.type.bytes()}];
            for (int other : same)
                if (pass_detail::same_constant(g.node(other), n)) {
                    rep[size_t(id)] = other;
                    break;
                }
            if (rep[size_t(id)] == id) same.push_back(id);
        } else {
            std::vector<int> in;
            for (Value v : n.inputs) in.push_back(rep[size_t(v.id)]);
            auto& same = ops[{n.op, std::move(in)}];
            for (int other : same)
                if (g.node(other).attrs == n.attrs) {
                    rep[size_t(id)] = other;
                    break;
                }
            if (rep[size_t(id)] == id) same.push_back(id);
        }
        merged |= rep[size_t(id)] != id;
    }
    if (!merged) return g;
    pass_detail::GraphRewriter r(g);
    for (int id : order) {
        if (rep[size_t(id)] == id) r.copy(id);
        else r.set(id, r.mapped(Value{rep[size_t(id)]}));
    }
    return r.finish();
}

}  // namespace weft::graph
