// The graph's loop (Graph::loop): an operator whose kernel runs a body graph's module once
// per iteration (graph/impl/loop_kernel.hpp), with the builder that checks the body fits.
// Attributes: body (the graph), carried (how many carried values), output (which one the
// node gives), max_iterations (0: no bound), limit_message. Inputs: trips (int64 [1]),
// condition (bool [1]), the carried values, the captured values.
#pragma once
#include "weft/graph/impl/loop_kernel.hpp"
#include "weft/graph/impl/op_helpers.hpp"

namespace weft::graph {

namespace ops {

inline TensorType infer_loop(const std::vector<TensorType>& in, const Attrs& a) {
    const int64_t carried = a.get_int("carried"), output = a.get_int("output", 0);
    WEFT_CHECK(carried >= 1 && carried <= int64_t(in.size()) - 2, "a loop needs 1 to ", int64_t(in.size()) - 2,
               " carried values, got ", carried);
    WEFT_CHECK(output >= 0 && output < carried, "the loop's output ", output, " is not one of its ", carried,
               " carried values");
    WEFT_CHECK(in[0] == (TensorType{{1}, DataType::int_(64)}), "the trip count must be int64[1], got ", in[0].str());
    WEFT_CHECK(in[1] == (TensorType{{1}, DataType::bool_()}), "the condition must be bool[1], got ", in[1].str());
    WEFT_CHECK(a.get_int("max_iterations", 0) >= 0, "max_iterations must not be negative");
    return in[size_t(2 + output)];
}

inline void register_loop_ops() {
    register_op({.name = "loop", .pattern = OpPattern::Opaque, .min_inputs = 3, .max_inputs = 1 << 16,
                 .infer = infer_loop,
                 .compute = [](const std::vector<Tensor>&, const Attrs&) -> Tensor {
                     ::weft::detail::throw_internal_error("a loop is not a computation in the tensor language");
                 },
                 .make_kernel = detail::make_loop_kernel});
}

}  // namespace ops

Value Graph::loop(const Graph& body, Value trips, Value condition, std::vector<Value> carried,
                  std::vector<Value> captured, const LoopAttrs& attrs, std::string name) {
    return loop(std::make_shared<const Graph>(body), trips, condition, std::move(carried), std::move(captured), attrs,
                std::move(name));
}

Value Graph::loop(std::shared_ptr<const Graph> body_graph, Value trips, Value condition, std::vector<Value> carried,
                  std::vector<Value> captured, const LoopAttrs& attrs, std::string name) {
    WEFT_CHECK(body_graph, "graph::Graph::loop: the body is null");
    const Graph& body = *body_graph;
    const std::string what = "graph::Graph::loop" + (name.empty() ? std::string() : " '" + name + "'");
    WEFT_CHECK(!carried.empty(), what, ": a loop needs at least one carried value");
    WEFT_CHECK(body.symbols().empty(), what, ": the body has symbolic dimensions; a loop's body has fixed shapes");
    // The body's inputs, each named for what it is bound to and of its type.
    std::map<std::string, TensorType> expected{{detail::kLoopIteration, {{1}, DataType::int_(64)}},
                                                {detail::kLoopCondition, {{1}, DataType::bool_()}}};
    for (size_t k = 0; k < carried.size(); ++k) expected[detail::loop_carried_name(k)] = type(own(carried[k], what));
    for (size_t j = 0; j < captured.size(); ++j) expected[detail::loop_captured_name(j)] = type(own(captured[j], what));
    for (Value v : body.inputs()) {
        const Node& n = body.node(v);
        auto it = expected.find(n.name);
        WEFT_CHECK(it != expected.end(), what, ": the body's input '", n.name, "' is none of iteration, condition, carried0..",
                   carried.size() - 1, captured.empty() ? std::string() : ", captured0.." + std::to_string(captured.size() - 1));
        WEFT_CHECK(it->second == n.type, what, ": the body's input '", n.name, "' is ", n.type.str(), " but is bound to ",
                   it->second.str());
    }
    std::map<std::string, TensorType> outputs{{detail::kLoopCondition, {{1}, DataType::bool_()}}};
    for (size_t k = 0; k < carried.size(); ++k) outputs[detail::loop_carried_name(k)] = expected[detail::loop_carried_name(k)];
    for (const auto& [out, t] : outputs) {
        bool found = false;
        for (const auto& [oname, v] : body.outputs())
            if (oname == out) {
                found = true;
                WEFT_CHECK(body.type(v) == t, what, ": the body's output '", out, "' is ", body.type(v).str(),
                           " but must be ", t.str(), " (the next iteration reads it)");
            }
        WEFT_CHECK(found, what, ": the body has no output '", out, "'");
    }
    std::vector<Value> inputs{trips, condition};
    inputs.insert(inputs.end(), carried.begin(), carried.end());
    inputs.insert(inputs.end(), captured.begin(), captured.end());
    Attrs a{{"body", std::move(body_graph)},
            {"carried", int64_t(carried.size())},
            {"output", attrs.output},
            {"max_iterations", attrs.max_iterations}};
    if (!attrs.limit_message.empty()) a.set("limit_message", attrs.limit_message);
    return add_node("loop", std::move(inputs), std::move(a), std::move(name));
}

}  // namespace weft::graph
