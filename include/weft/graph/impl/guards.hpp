// Which kernels a module may skip: a kernel whose output only a `where` on a one-element
// condition reads, through its then (or else) input, is needed only when that condition is
// true (false). An If on a condition the inputs decide becomes such wheres (the ONNX
// importer), and so does each iteration of a Loop that the inputs decide; a module reads the
// condition before the kernel and skips it when its branch is not taken, so a run computes
// the branch taken, not both. The where then selects from a buffer the skipped kernel did not
// write: a select never computes with the value it drops.
#pragma once
#include <vector>

#include "weft/graph/fuse.hpp"
#include "weft/graph/graph.hpp"

namespace weft::graph::detail {

// Kernel k runs only where the bool node `flag` (a graph input or constant, or a node an
// earlier kernel writes) is `when`; flag -1: always.
struct KernelGuard {
    int flag = -1;
    bool when = true;
};

namespace guard_detail {

// When a node's value is needed: never, always, or where a flag holds a value.
struct Need {
    enum Kind { Never, Always, When } kind = Never;
    int flag = -1;
    bool when = true;

    // Needed under this condition or under `other` (two different conditions: always; the
    // approximation only runs more kernels).
    void merge(const Need& other) {
        if (other.kind == Never || kind == Always) return;
        if (kind == Never || (other.kind == When && other.flag == flag && other.when == when)) *this = other;
        else *this = Need{Always};
    }
};

}  // namespace guard_detail

// Whether node n is a `where` on a one-element bool: its then and else inputs are branches
// (fusion keeps them out of its kernel, so that they can be skipped).
inline bool selects_on_flag(const Graph& g, const Node& n) {
    if (n.op != "where" || n.inputs.size() != 3) return false;
    const TensorType& t = g.type(n.inputs[0]);
    return t.dtype.is_bool() && t.size() == 1;
}

// Each kernel's guard, for the groups of `g` in their run order. A graph whose nodes are not
// stored in topological order gets no guards (every kernel runs).
inline std::vector<KernelGuard> kernel_guards(const Graph& g, const std::vector<FusedGroup>& groups) {
    using guard_detail::Need;
    std::vector<KernelGuard> guards(groups.size());
    if (!g.is_ordered()) return guards;
    std::vector<Need> need(size_t(g.size()));
    for (auto& [name, v] : g.outputs()) need[size_t(v.id)] = Need{Need::Always};
    for (int id = g.size() - 1; id >= 0; --id) {
        const Node& n = g.node(id);
        const Need& mine = need[size_t(id)];
        if (mine.kind == Need::Never) continue;
        const bool selects = selects_on_flag(g, n);
        for (size_t k = 0; k < n.inputs.size(); ++k) {
            Need use = mine;
            if (selects && k > 0 && mine.kind == Need::Always) use = Need{Need::When, n.inputs[0].id, k == 1};
            need[size_t(n.inputs[k].id)].merge(use);
        }
    }
    // A flag must hold its value before the kernel: an input, a constant, or an earlier
    // kernel's output.
    std::vector<int> written_by(size_t(g.size()), -1);
    for (size_t k = 0; k < groups.size(); ++k) written_by[size_t(groups[k].root())] = int(k);
    for (size_t k = 0; k < groups.size(); ++k) {
        const Need& n = need[size_t(groups[k].root())];
        if (n.kind != Need::When) continue;
        const Node& flag = g.node(n.flag);
        const int writer = written_by[size_t(n.flag)];
        if (flag.is_input() || flag.is_constant() || (writer >= 0 && writer < int(k))) guards[k] = {n.flag, n.when};
    }
    return guards;
}

}  // namespace weft::graph::detail
