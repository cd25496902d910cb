// One fused group → one kernel: the nodes' computes chained in the tensor language (the
// group's external inputs become placeholders), every stage but the master and the root
// inlined, the master's default schedule (or the injective one) applied, then build().
#pragma once
#include <map>

#include "weft/codegen/build.hpp"
#include "weft/graph/fuse.hpp"
#include "weft/graph/op_registry.hpp"
#include "weft/topi/injective.hpp"

namespace weft::graph::detail {

struct CompiledGroup {
    Kernel kernel;
    std::vector<int> args;  // the node ids whose buffers the kernel takes, in order (the root last)
};

inline CompiledGroup compile_group(const Graph& g, const FusedGroup& group, const Target& target) {
    std::map<int, Tensor> tensors;  // node id -> its tensor in this kernel
    std::vector<Argument> args;
    CompiledGroup result;
    auto tensor_of = [&](Value v) -> Tensor {
        auto it = tensors.find(v.id);
        if (it != tensors.end()) return it->second;
        const Node& n = g.node(v);  // an external input of the group: a placeholder
        std::vector<Expr> shape;
        for (int64_t d : n.type.shape) shape.push_back(make_int(d));
        Tensor p = placeholder(shape, n.type.dtype, n.name);
        tensors[v.id] = p;
        args.emplace_back(p);
        result.args.push_back(v.id);
        return p;
    };
    std::map<int, std::vector<Tensor>> inputs_of;
    for (int id : group.nodes) {
        const Node& n = g.node(id);
        std::vector<Tensor> in;
        for (Value v : n.inputs) in.push_back(tensor_of(v));
        try {
            tensors[id] = op_def(n.op).compute(in, n.attrs);
        } catch (const Error& e) {
            std::string what = e.what();
            ::weft::detail::throw_user_error(describe(n) + ": " + (what.rfind("weft: ", 0) == 0 ? what.substr(6) : what));
        }
        inputs_of[id] = std::move(in);
    }
    Tensor out = tensors[group.root()];
    args.emplace_back(out);
    result.args.push_back(group.root());

    Schedule s = create_schedule(out);
    for (int id : group.nodes)
        if (id != group.master && id != group.root()) s[tensors[id]].compute_inline();
    if (group.master >= 0) {
        const Node& m = g.node(group.master);
        const OpDef& def = op_def(m.op);
        if (def.schedule) def.schedule(s, tensors[group.master], out, inputs_of[group.master], m.attrs);
        else topi::schedule_injective(s, out);
    } else {
        topi::schedule_injective(s, out);
    }
    result.kernel = build(s, args, target);
    return result;
}

}  // namespace weft::graph::detail
