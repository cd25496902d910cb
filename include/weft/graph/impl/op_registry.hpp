// Definitions of graph/op_registry.hpp: the table of operators, filled on first use by the
// register_*_ops functions of the impl/ops_*.hpp files (explicit calls, not static
// initializers, which a static library's linker may drop).
#pragma once
#include <map>
#include <mutex>

#include "weft/graph/impl/ops_elementwise.hpp"
#include "weft/graph/impl/ops_layout.hpp"
#include "weft/graph/impl/ops_loop.hpp"
#include "weft/graph/impl/ops_nn.hpp"
#include "weft/graph/impl/ops_transform.hpp"
#include "weft/graph/op_registry.hpp"
#include "weft/autotune/sketch.hpp"

namespace weft::graph {

namespace detail {

struct OpTable {
    std::mutex mutex;
    std::map<std::string, OpDef> ops;
};

inline OpTable& op_table() {
    static OpTable* table = new OpTable();  // never destroyed: kernels may outlive statics
    return *table;
}

inline void register_builtin_ops() {
    static std::once_flag once;
    std::call_once(once, [] {
        ops::register_elementwise_ops();
        ops::register_nn_ops();
        ops::register_transform_ops();
        ops::register_layout_ops();
        ops::register_loop_ops();
    });
}

}  // namespace detail

const char* pattern_name(OpPattern p) {
    switch (p) {
        case OpPattern::ElemWise: return "elemwise";
        case OpPattern::Broadcast: return "broadcast";
        case OpPattern::Injective: return "injective";
        case OpPattern::CommReduce: return "reduce";
        case OpPattern::OutEWiseFusable: return "out-elemwise-fusable";
        case OpPattern::Opaque: return "opaque";
    }
    return "?";
}

void register_op(OpDef def) {
    WEFT_CHECK(!def.name.empty(), "register_op: the operator needs a name");
    WEFT_CHECK(def.infer && def.compute, "register_op: operator '", def.name, "' needs infer and compute functions");
    WEFT_CHECK(def.min_inputs >= 0 && def.min_inputs <= def.max_inputs, "register_op: operator '", def.name,
               "' has min_inputs > max_inputs");
    auto& table = detail::op_table();
    std::lock_guard lock(table.mutex);
    table.ops[def.name] = std::move(def);
}

const OpDef* find_op(const std::string& name) {
    detail::register_builtin_ops();
    auto& table = detail::op_table();
    std::lock_guard lock(table.mutex);
    auto it = table.ops.find(name);
    return it == table.ops.end() ? nullptr : &it->second;
}

const OpDef& op_def(const std::string& name) {
    const OpDef* def = find_op(name);
    WEFT_CHECK(def, "graph: unknown operator '", name, "'");
    return *def;
}

std::vector<std::string> registered_ops() {
    detail::register_builtin_ops();
    auto& table = detail::op_table();
    std::lock_guard lock(table.mutex);
    std::vector<std::string> names;
    for (auto& [name, def] : table.ops) names.push_back(name);
    return names;
}

void auto_schedule_op(Schedule& s, const Tensor&, const Tensor& out, const std::vector<Tensor>&, const Attrs&,
                      const OpContext& context) {
    autotune::auto_schedule(s, out, context.target, context.config);
}

}  // namespace weft::graph
