// Identical fused groups scheduled, lowered and compiled once. A network's repeated blocks
// and a Loop's unrolled iterations fuse into groups with the same operators, attributes and
// input types; they lower to the same function, which the kernel cache compiled once, but
// each was still scheduled and lowered (a 221-group loop model with 11 distinct kernels
// spent most of its build there: benchmarks/RESULTS.md, "Start-up: identical groups").
// A group's signature holds everything its kernel is made from; groups with the same
// signature take the first one's compiled kernel, their own nodes as its arguments.
#pragma once
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "weft/graph/graph.hpp"
#include "weft/graph/fuse.hpp"

namespace weft::graph::detail {

struct GroupSignature {
    std::string key;
    // The group's external inputs in the order its computation first reads them, then its
    // root: the kernel's arguments (schedule_group makes its placeholders in this order).
    std::vector<int> arg_ids;
};

// An attribute written exactly (a double's bits, not its printed digits: 0.1 and
// 0.1000000001 must not share a kernel).
inline void append_exact(std::string& key, const AttrValue& value) {
    auto number = [&](auto x) {
        char bytes[sizeof x];
        std::memcpy(bytes, &x, sizeof x);
        key.append(bytes, sizeof x);
    };
    key += char('0' + value.index());
    std::visit(
        [&](const auto& x) {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, std::string>) {
                number(uint64_t(x.size()));
                key += x;
            } else if constexpr (std::is_arithmetic_v<T>) {
                number(x);
            } else if constexpr (std::is_same_v<T, std::shared_ptr<const Graph>>) {
                number(reinterpret_cast<uintptr_t>(x.get()));  // the same body, not an equal one
            } else {
                number(uint64_t(x.size()));
                for (auto e : x) number(e);
            }
        },
        value);
}

inline GroupSignature group_signature(const Graph& g, const FusedGroup& group) {
    GroupSignature s;
    std::map<int, size_t> inside;  // node id -> its position in the group
    std::map<int, size_t> outside;  // external input id -> its argument position
    for (size_t i = 0; i < group.nodes.size(); ++i) {
        const Node& n = g.node(group.nodes[i]);
        s.key += n.op;
        s.key += group.nodes[i] == group.master ? "*{" : "{";
        for (const auto& [name, value] : n.attrs.items()) {
            s.key += name;
            s.key += '=';
            append_exact(s.key, value);
        }
        s.key += "}:" + n.type.str() + "(";
        for (Value v : n.inputs) {
            if (auto it = inside.find(v.id); it != inside.end()) {
                s.key += "#" + std::to_string(it->second) + ",";
                continue;
            }
            auto [it, added] = outside.emplace(v.id, s.arg_ids.size());
            if (added) s.arg_ids.push_back(v.id);
            s.key += "$" + std::to_string(it->second) + ":" + g.type(v).str() + ",";
        }
        s.key += ");";
        inside[group.nodes[i]] = i;
    }
    s.arg_ids.push_back(group.root());
    return s;
}

// For each group, the first group with its signature (itself when it is the first).
inline std::vector<size_t> first_of_signature(const std::vector<GroupSignature>& signatures) {
    std::map<std::string, size_t> first;
    std::vector<size_t> leader(signatures.size());
    for (size_t k = 0; k < signatures.size(); ++k) leader[k] = first.emplace(signatures[k].key, k).first->second;
    return leader;
}

}  // namespace weft::graph::detail
