// The graph's element-wise operators: broadcasting binary arithmetic and the unary
// activations and math functions, each a topi compute.
#pragma once
#include "weft/graph/impl/op_helpers.hpp"
#include "weft/topi/topi.hpp"

namespace weft::graph::ops {

inline TensorType infer_broadcast(const std::vector<TensorType>& in, const Attrs&) {
    check_same_dtype(in[0], in[1], "the left operand", "the right operand");
    return {broadcast_shapes(in[0].shape, in[1].shape), in[0].dtype};
}

inline TensorType infer_unary_float(const std::vector<TensorType>& in, const Attrs&) {
    check_float(in[0], "the input");
    return in[0];
}

inline void register_elementwise_ops() {
    using P = OpPattern;
    using Binary = Tensor (*)(const Tensor&, const Tensor&);
    auto binary = [](const char* name, Binary f) {
        // Equal shapes make an element-wise op; different ones broadcast.
        register_op({.name = name, .pattern = P::Broadcast, .min_inputs = 2, .max_inputs = 2,
                     .infer = infer_broadcast,
                     .compute = [f](const std::vector<Tensor>& in, const Attrs&) { return f(in[0], in[1]); }});
    };
    binary("add", topi::add);
    binary("sub", topi::sub);
    binary("mul", topi::mul);
    binary("div", topi::div);
    binary("pow", topi::pow);
    binary("maximum", topi::maximum);
    binary("minimum", topi::minimum);

    using Unary = Tensor (*)(const Tensor&);
    auto unary = [](const char* name, Unary f, bool needs_float) {
        register_op({.name = name, .pattern = P::ElemWise, .infer = needs_float ? infer_unary_float : same_type,
                     .compute = [f](const std::vector<Tensor>& in, const Attrs&) { return f(in[0]); }});
    };
    unary("relu", topi::relu, false);
    unary("sigmoid", topi::sigmoid, true);
    unary("tanh", topi::tanh, true);
    unary("gelu", topi::gelu, true);
    unary("hard_swish", topi::hard_swish, true);
    unary("exp", topi::exp, true);
    unary("log", topi::log, true);
    unary("sqrt", topi::sqrt, true);
    unary("erf", topi::erf, true);
    register_op({.name = "leaky_relu", .pattern = P::ElemWise,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         topi::check_leaky_relu_alpha(a.get_float("alpha", 0.01), in[0].dtype);
                         return in[0];
                     },
                 .compute = [](const std::vector<Tensor>& in,
                               const Attrs& a) { return topi::leaky_relu(in[0], a.get_float("alpha", 0.01)); }});
    register_op({.name = "clip", .pattern = P::ElemWise,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         WEFT_CHECK(a.get_float("min") <= a.get_float("max"), "min (", a.get_float("min"),
                                    ") must not exceed max (", a.get_float("max"), ")");
                         return in[0];
                     },
                 .compute = [](const std::vector<Tensor>& in, const Attrs& a) {
                     return topi::clip(in[0], a.get_float("min"), a.get_float("max"));
                 }});
}

}  // namespace weft::graph::ops
