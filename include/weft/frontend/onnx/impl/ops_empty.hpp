// Empty tensors at import: weft's tensors are never empty, so a value with a 0 in its shape
// (a graph input or initializer without elements, or what an element-wise operator makes of
// one) is held by the importer as a type only. Element-wise operators of empty inputs give
// empty results here; reductions over an empty set give their identity (ops_nn.hpp, reduce);
// CastLike reads only the dtype of its `like` input (Ctx::onnx_dtype).
#pragma once
#include <set>
#include <string>

#include "weft/frontend/onnx/impl/context.hpp"

namespace weft::onnx::detail {

// Broadcasts shapes with numpy's rule, where 0 is an extent like any other (0 with 1 is 0).
inline std::vector<int64_t> broadcast_with_empty(const std::vector<std::vector<int64_t>>& shapes) {
    size_t rank = 0;
    for (const auto& s : shapes) rank = std::max(rank, s.size());
    std::vector<int64_t> out(rank, 1);
    for (const auto& s : shapes)
        for (size_t k = 0; k < s.size(); ++k) {
            int64_t& o = out[rank - s.size() + k];
            const int64_t d = s[k];
            if (d == o || d == 1) continue;
            if (o != 1) malformed("the shapes " + graph::shape_str(shapes[0]) + " and " + graph::shape_str(s) + " do not broadcast");
            o = d;
        }
    return out;
}

// When an element-wise operator has an empty input, sets its output as an empty value of the
// broadcast shape and returns true; false leaves the node to its converter.
inline bool convert_empty_elementwise(Ctx& c, const std::string& op) {
    static const std::set<std::string> unary = {"Abs",   "Neg",      "Exp",   "Log",   "Sqrt",  "Reciprocal", "Relu",
                                                "Sigmoid", "Tanh",   "Floor", "Ceil",  "Round", "Sign",       "Sin",
                                                "Cos",   "Not",      "Identity", "IsNaN", "IsInf", "Erf",     "Cast",
                                                "CastLike"};
    static const std::set<std::string> binary = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Equal", "Less",
                                                 "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};
    const bool is_unary = unary.count(op) != 0;
    if (!is_unary && !binary.count(op)) return false;
    const size_t data_inputs = op == "CastLike" ? 1 : is_unary ? 1 : c.n_in();
    bool any_empty = false;
    for (size_t k = 0; k < data_inputs; ++k) any_empty = any_empty || c.empty_type(k);
    if (!any_empty) return false;
    std::vector<std::vector<int64_t>> shapes;
    DataType dtype;
    for (size_t k = 0; k < data_inputs; ++k) {
        const graph::TensorType* e = c.empty_type(k);
        const graph::TensorType t = e ? *e : c.type(c.in(k));
        if (k == 0) dtype = t.dtype;
        shapes.push_back(t.shape);
    }
    if (op == "Cast") dtype = to_dtype(int(c.i("to")), "the 'to' attribute");
    if (op == "CastLike") dtype = c.onnx_dtype(1);
    if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual" ||
        op == "IsNaN" || op == "IsInf")
        dtype = DataType::bool_();
    c.ignore({"saturate", "round_mode", "detect_negative", "detect_positive"});
    for (size_t k = 0; k < c.n_in(); ++k) c.mark_read(k);
    c.empty_outs = {1};
    c.empty_out_types[0] = graph::TensorType{broadcast_with_empty(shapes), dtype};
    return true;
}

}  // namespace weft::onnx::detail
