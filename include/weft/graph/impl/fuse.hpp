// Definitions of graph/fuse.hpp: the indexed forward graph, the post-dominator tree and the
// two fusion phases (after TVM's GraphPartitioner, for nodes with one output each).
#pragma once
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "weft/graph/fuse.hpp"
#include "weft/graph/impl/guards.hpp"

namespace weft::graph {

namespace fuse_detail {

inline OpPattern combine(OpPattern a, OpPattern b) { return int(a) > int(b) ? a : b; }

// The operator nodes with their users and the pattern of each edge.
struct ForwardGraph {
    struct Edge {
        int user;
        OpPattern pattern;
    };
    std::vector<int> order;                 // operator nodes, topological
    std::vector<int> position;              // node id -> index in order (-1: not an operator)
    std::vector<OpPattern> pattern;         // by node id
    std::vector<std::vector<Edge>> users;   // by node id
    std::vector<bool> extern_ref;           // by node id: a graph output (read after the run)

    ForwardGraph(const Graph& g, const std::vector<int>& topo) {
        const size_t n = size_t(g.size());
        position.assign(n, -1);
        pattern.assign(n, OpPattern::Opaque);
        users.resize(n);
        extern_ref.assign(n, false);
        for (int id : topo) {
            const Node& node = g.node(id);
            if (!node.is_op()) continue;
            position[size_t(id)] = int(order.size());
            order.push_back(id);
            OpPattern p = op_def(node.op).pattern;
            pattern[size_t(id)] = p;
            const bool selects = detail::selects_on_flag(g, node);
            for (size_t k = 0; k < node.inputs.size(); ++k) {
                const Value v = node.inputs[k];
                if (!g.node(v).is_op()) continue;
                // A broadcast op reading an input of its own output's shape reads it element-wise.
                OpPattern edge = p;
                if (p == OpPattern::Broadcast && g.type(v).shape == node.type.shape) edge = OpPattern::ElemWise;
                // A branch of a where on a flag stays out of the where's kernel: it may be skipped.
                if (selects && k > 0) edge = OpPattern::Opaque;
                users[size_t(v.id)].push_back({id, edge});
            }
        }
        for (auto& [name, v] : g.outputs()) extern_ref[size_t(v.id)] = true;
    }
};

// Immediate post-dominators: parent[id] (-1: none, the node's value leaves every group) and
// the combined pattern of the paths from the node to it.
struct PostDominatorTree {
    std::vector<int> parent, depth;
    std::vector<OpPattern> pattern;

    explicit PostDominatorTree(const ForwardGraph& fg) {
        const size_t n = fg.position.size();
        parent.assign(n, -1);
        depth.assign(n, 0);
        pattern.assign(n, OpPattern::ElemWise);
        for (auto it = fg.order.rbegin(); it != fg.order.rend(); ++it) {
            int id = *it;
            const auto& users = fg.users[size_t(id)];
            if (fg.extern_ref[size_t(id)] || users.empty()) continue;  // a root
            int lca = users[0].user;
            OpPattern p = users[0].pattern;
            bool rooted = true;
            for (size_t k = 1; k < users.size() && rooted; ++k) {
                p = combine(p, users[k].pattern);
                lca = common_ancestor(lca, users[k].user, p);
                rooted = lca >= 0;
            }
            if (!rooted) continue;
            parent[size_t(id)] = lca;
            depth[size_t(id)] = depth[size_t(lca)] + 1;
            pattern[size_t(id)] = p;
        }
    }

private:
    int common_ancestor(int a, int b, OpPattern& p) const {
        while (a != b) {
            if (a < 0 || b < 0) return -1;
            if (depth[size_t(a)] < depth[size_t(b)]) {
                p = combine(p, pattern[size_t(b)]);
                b = parent[size_t(b)];
            } else {
                p = combine(p, pattern[size_t(a)]);
                a = parent[size_t(a)];
            }
        }
        return a;
    }
};

// Union-find over node ids; each root knows its group's pattern, master and members.
struct Groups {
    std::vector<int> up, master;
    std::vector<OpPattern> pattern;
    std::vector<std::vector<int>> members;  // by root

    explicit Groups(const ForwardGraph& fg)
        : up(fg.position.size()), master(fg.position.size(), -1), pattern(fg.pattern), members(fg.position.size()) {
        for (size_t i = 0; i < up.size(); ++i) {
            up[i] = int(i);
            members[i] = {int(i)};
        }
        for (int id : fg.order)
            if (int(fg.pattern[size_t(id)]) >= int(OpPattern::CommReduce)) master[size_t(id)] = id;
    }
    int find(int x) {
        while (up[size_t(x)] != x) x = up[size_t(x)] = up[size_t(up[size_t(x)])];
        return x;
    }
    void merge_into(int child, int parent) {
        child = find(child);
        parent = find(parent);
        if (child == parent) return;
        up[size_t(child)] = parent;
        auto& into = members[size_t(parent)];
        into.insert(into.end(), members[size_t(child)].begin(), members[size_t(child)].end());
        members[size_t(child)].clear();
        pattern[size_t(parent)] = combine(pattern[size_t(parent)], pattern[size_t(child)]);
        if (master[size_t(child)] >= 0) master[size_t(parent)] = master[size_t(child)];
    }
};

using PathCondition = std::function<bool(OpPattern, bool is_sink)>;

class Partitioner {
public:
    Partitioner(const Graph& g, const ForwardGraph& fg, const PostDominatorTree& pdom, int64_t max_expression)
        : g_(g), fg_(fg), pdom_(pdom), groups_(fg), max_expression_(max_expression) {}

    Groups run() {
        for (int phase = 0; phase < 2; ++phase)
            for (int id : fg_.order) visit(id, phase);
        return groups_;
    }

private:
    void visit(int id, int phase) {
        int dom = pdom_.parent[size_t(id)];
        if (dom < 0) return;
        int group = groups_.find(id);
        if (groups_.find(dom) == group) return;  // already together
        OpPattern gp = groups_.pattern[size_t(group)];
        OpPattern path = pdom_.pattern[size_t(id)];
        if (gp == OpPattern::OutEWiseFusable) {
            if (phase != 0 || path != OpPattern::ElemWise) return;
            // Every op between it and its post-dominator must be element-wise or broadcast.
            fuse_if(id, dom, [](OpPattern k, bool) { return int(k) <= int(OpPattern::Broadcast); });
        } else if (int(gp) <= int(OpPattern::Broadcast)) {
            if (!(int(path) <= int(OpPattern::Injective) || path == OpPattern::CommReduce)) return;
            fuse_if(id, dom, [](OpPattern k, bool is_sink) {
                if (!is_sink) return int(k) <= int(OpPattern::Injective);
                return int(k) <= int(OpPattern::Injective) || k == OpPattern::CommReduce ||
                       k == OpPattern::OutEWiseFusable;
            });
        } else if (gp == OpPattern::Injective) {
            if (phase != 1) return;
            fuse_if(id, dom, [](OpPattern k, bool) { return int(k) <= int(OpPattern::Injective); });
        }
        // Reductions and opaque ops take nothing after them.
    }

    void fuse_if(int src, int sink, const PathCondition& cond) {
        std::set<int> seen;
        if (!check_path(src, sink, cond, seen, true)) return;
        // A group whose sink would carry a second master (two reductions) stays apart.
        int a = groups_.master[size_t(groups_.find(src))], b = groups_.master[size_t(groups_.find(sink))];
        if (a >= 0 && b >= 0 && a != b) return;
        // seen holds the nodes on the paths: with the sink's group, the merged group.
        std::vector<int> merged = groups_.members[size_t(groups_.find(sink))];
        for (int node : seen)
            if (node != sink)
                for (int m : groups_.members[size_t(groups_.find(node))]) merged.push_back(m);
        if (inlined_size(merged) > double(max_expression_)) return;
        seen.clear();
        commit(src, sink, groups_.find(sink), seen);
    }

    // The operator applications of the group's root once the rest is inlined (see
    // kMaxFusedExpression): each node counts once per path to the root.
    double inlined_size(std::vector<int> nodes) const {
        std::sort(nodes.begin(), nodes.end(), [&](int x, int y) { return fg_.position[size_t(x)] < fg_.position[size_t(y)]; });
        nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
        std::map<int, double> size;
        for (int id : nodes) size[id] = 0;
        double root = 0;
        for (int id : nodes) {  // inputs first
            double s = 1;
            for (Value v : g_.node(id).inputs)
                if (auto it = size.find(v.id); it != size.end()) s += it->second;
            size[id] = root = s;
        }
        return root;
    }

    bool check_path(int node, int sink, const PathCondition& cond, std::set<int>& seen, bool is_src) {
        if (!seen.insert(node).second) return true;
        OpPattern p = groups_.pattern[size_t(groups_.find(node))];
        if (node == sink) return cond(p, true);
        if (!is_src && !cond(p, false)) return false;
        for (auto& e : fg_.users[size_t(node)])
            if (!check_path(e.user, sink, cond, seen, false)) return false;
        return true;
    }

    void commit(int node, int sink, int target, std::set<int>& seen) {
        if (node == sink || !seen.insert(node).second) return;
        groups_.merge_into(node, target);
        for (auto& e : fg_.users[size_t(node)]) commit(e.user, sink, target, seen);
    }

    const Graph& g_;
    const ForwardGraph& fg_;
    const PostDominatorTree& pdom_;
    Groups groups_;
    int64_t max_expression_;
};

}  // namespace fuse_detail

std::vector<FusedGroup> fuse_ops(const Graph& g, const std::vector<int>& order, bool enable, int64_t max_expression) {
    fuse_detail::ForwardGraph fg(g, order);
    std::vector<FusedGroup> result;
    if (!enable) {
        for (int id : fg.order) {
            OpPattern p = fg.pattern[size_t(id)];
            result.push_back({{id}, int(p) >= int(OpPattern::CommReduce) ? id : -1, p});
        }
        return result;
    }
    fuse_detail::PostDominatorTree pdom(fg);
    fuse_detail::Groups groups = fuse_detail::Partitioner(g, fg, pdom, max_expression).run();
    // Collect each group's nodes in topological order; a group is emitted where its root
    // (its last node) is, so it follows every group it reads from.
    std::vector<int> slot(size_t(g.size()), -1);
    std::vector<FusedGroup> by_root;
    for (int id : fg.order) {
        int r = groups.find(id);
        if (slot[size_t(r)] < 0) {
            slot[size_t(r)] = int(by_root.size());
            by_root.push_back({{}, groups.master[size_t(r)], groups.pattern[size_t(r)]});
        }
        by_root[size_t(slot[size_t(r)])].nodes.push_back(id);
    }
    std::vector<std::pair<int, int>> roots;  // (position of the root, group)
    for (size_t k = 0; k < by_root.size(); ++k) roots.emplace_back(fg.position[size_t(by_root[k].root())], int(k));
    std::sort(roots.begin(), roots.end());
    for (auto& [pos, k] : roots) result.push_back(std::move(by_root[size_t(k)]));
    return result;
}

std::string group_name(const Graph& g, const FusedGroup& group) {
    std::string name;
    for (int id : group.nodes) name += (name.empty() ? "" : "_") + g.node(id).op;
    if (name.size() > 60) name = name.substr(0, 60);
    return name;
}

}  // namespace weft::graph
