// Definitions of the builder functions of graph/graph.hpp: each turns its arguments into
// the operator's attributes and calls add_node.
#pragma once
#include "weft/graph/graph.hpp"

namespace weft::graph {

namespace detail {

// A {h, w} list from a scalar, or the list when one is given.
inline std::vector<int64_t> pair_or(const std::vector<int64_t>& list, int64_t scalar) {
    return list.empty() ? std::vector<int64_t>{scalar, scalar} : list;
}

inline std::vector<int64_t> pads_or(const std::vector<int64_t>& list, int64_t scalar) {
    return list.empty() ? std::vector<int64_t>{scalar, scalar, scalar, scalar} : list;
}

}  // namespace detail

Value Graph::conv2d(Value x, Value w, const Conv2dAttrs& a, std::string name) {
    Attrs attrs{{"strides", detail::pair_or(a.strides, a.stride)},
                {"pads", detail::pads_or(a.pads, a.pad)},
                {"dilations", detail::pair_or(a.dilations, a.dilation)},
                {"groups", a.groups}};
    return add_node("conv2d", {x, w}, std::move(attrs), std::move(name));
}

Value Graph::conv2d(Value x, Value w, Value bias, const Conv2dAttrs& a, std::string name) {
    Value y = conv2d(x, w, a, name);
    return bias_add(y, bias, 1, name.empty() ? "" : name + ".bias");
}

Value Graph::dense(Value x, Value w, std::string name) { return add_node("dense", {x, w}, {}, std::move(name)); }

Value Graph::dense(Value x, Value w, Value bias, std::string name) {
    Value y = dense(x, w, name);
    return bias_add(y, bias, -1, name.empty() ? "" : name + ".bias");
}

Value Graph::matmul(Value a, Value b, std::string name) { return add_node("matmul", {a, b}, {}, std::move(name)); }
Value Graph::batch_matmul(Value a, Value b, std::string name) {
    return add_node("batch_matmul", {a, b}, {}, std::move(name));
}

Value Graph::add(Value a, Value b, std::string name) { return add_node("add", {a, b}, {}, std::move(name)); }
Value Graph::sub(Value a, Value b, std::string name) { return add_node("sub", {a, b}, {}, std::move(name)); }
Value Graph::mul(Value a, Value b, std::string name) { return add_node("mul", {a, b}, {}, std::move(name)); }
Value Graph::div(Value a, Value b, std::string name) { return add_node("div", {a, b}, {}, std::move(name)); }
Value Graph::pow(Value a, Value b, std::string name) { return add_node("pow", {a, b}, {}, std::move(name)); }
Value Graph::maximum(Value a, Value b, std::string name) { return add_node("maximum", {a, b}, {}, std::move(name)); }
Value Graph::minimum(Value a, Value b, std::string name) { return add_node("minimum", {a, b}, {}, std::move(name)); }

Value Graph::relu(Value x, std::string name) { return add_node("relu", {x}, {}, std::move(name)); }
Value Graph::leaky_relu(Value x, double alpha, std::string name) {
    return add_node("leaky_relu", {x}, {{"alpha", alpha}}, std::move(name));
}
Value Graph::clip(Value x, double lo, double hi, std::string name) {
    return add_node("clip", {x}, {{"min", lo}, {"max", hi}}, std::move(name));
}
Value Graph::sigmoid(Value x, std::string name) { return add_node("sigmoid", {x}, {}, std::move(name)); }
Value Graph::tanh(Value x, std::string name) { return add_node("tanh", {x}, {}, std::move(name)); }
Value Graph::gelu(Value x, std::string name) { return add_node("gelu", {x}, {}, std::move(name)); }
Value Graph::hard_swish(Value x, std::string name) { return add_node("hard_swish", {x}, {}, std::move(name)); }
Value Graph::exp(Value x, std::string name) { return add_node("exp", {x}, {}, std::move(name)); }
Value Graph::log(Value x, std::string name) { return add_node("log", {x}, {}, std::move(name)); }
Value Graph::sqrt(Value x, std::string name) { return add_node("sqrt", {x}, {}, std::move(name)); }

Value Graph::bias_add(Value x, Value bias, int64_t axis, std::string name) {
    return add_node("bias_add", {x, bias}, {{"axis", axis}}, std::move(name));
}

Value Graph::batch_norm(Value x, Value gamma, Value beta, Value mean, Value var, double epsilon, std::string name) {
    return add_node("batch_norm", {x, gamma, beta, mean, var}, {{"epsilon", epsilon}}, std::move(name));
}

Value Graph::layer_norm(Value x, Value gamma, Value beta, double epsilon, std::string name) {
    return add_node("layer_norm", {x, gamma, beta}, {{"epsilon", epsilon}}, std::move(name));
}

Value Graph::softmax(Value x, int axis, std::string name) {
    return add_node("softmax", {x}, {{"axis", int64_t(axis)}}, std::move(name));
}

namespace detail {
inline Attrs pool_attrs(const Pool2dAttrs& a) {
    return {{"kernel", pair_or(a.kernels, a.kernel)},
            {"strides", pair_or(a.strides, a.stride)},
            {"pads", pads_or(a.pads, a.pad)},
            {"count_include_pad", int64_t(a.count_include_pad)}};
}
}  // namespace detail

Value Graph::max_pool2d(Value x, const Pool2dAttrs& a, std::string name) {
    return add_node("max_pool2d", {x}, detail::pool_attrs(a), std::move(name));
}
Value Graph::avg_pool2d(Value x, const Pool2dAttrs& a, std::string name) {
    return add_node("avg_pool2d", {x}, detail::pool_attrs(a), std::move(name));
}
Value Graph::global_avg_pool2d(Value x, std::string name) {
    return add_node("global_avg_pool2d", {x}, {}, std::move(name));
}

Value Graph::sum(Value x, std::vector<int64_t> axes, bool keepdims, std::string name) {
    return add_node("sum", {x}, {{"axes", std::move(axes)}, {"keepdims", int64_t(keepdims)}}, std::move(name));
}
Value Graph::mean(Value x, std::vector<int64_t> axes, bool keepdims, std::string name) {
    return add_node("mean", {x}, {{"axes", std::move(axes)}, {"keepdims", int64_t(keepdims)}}, std::move(name));
}
Value Graph::max(Value x, std::vector<int64_t> axes, bool keepdims, std::string name) {
    return add_node("max", {x}, {{"axes", std::move(axes)}, {"keepdims", int64_t(keepdims)}}, std::move(name));
}

}  // namespace weft::graph
