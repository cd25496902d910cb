// Definitions of the builder functions of graph/graph.hpp: each turns its arguments into
// the operator's attributes and calls add_node.
#pragma once
#include "weft/graph/graph.hpp"
#include "weft/graph/impl/op_helpers.hpp"

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
    return bias_add(y, bias, 1, name.empty() ? "" : name + ".bias_add");
}

Value Graph::dense(Value x, Value w, std::string name) { return add_node("dense", {x, w}, {}, std::move(name)); }

Value Graph::dense(Value x, Value w, Value bias, std::string name) {
    Value y = dense(x, w, name);
    return bias_add(y, bias, -1, name.empty() ? "" : name + ".bias_add");
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
    Attrs r{{"kernel", pair_or(a.kernels, a.kernel)},
            {"strides", pair_or(a.strides, a.stride)},
            {"pads", pads_or(a.pads, a.pad)},
            {"dilations", pair_or(a.dilations, a.dilation)},
            {"count_include_pad", int64_t(a.count_include_pad)}};
    if (a.ceil_mode) r.set("ceil_mode", int64_t(1));
    return r;
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

Value Graph::reshape(Value x, std::vector<int64_t> shape, std::string name) {
    return add_node("reshape", {x}, {{"shape", std::move(shape)}}, std::move(name));
}
Value Graph::flatten(Value x, int64_t axis, std::string name) {
    return add_node("flatten", {x}, {{"axis", axis}}, std::move(name));
}
Value Graph::transpose(Value x, std::vector<int64_t> perm, std::string name) {
    return add_node("transpose", {x}, {{"perm", std::move(perm)}}, std::move(name));
}
Value Graph::concat(std::vector<Value> xs, int64_t axis, std::string name) {
    return add_node("concat", std::move(xs), {{"axis", axis}}, std::move(name));
}

std::vector<Value> Graph::split(Value x, int64_t axis, std::vector<int64_t> sizes, std::string name) {
    const Node& n = node(x);
    const std::string what = "graph: split" + (name.empty() ? "" : " '" + name + "'") + " of " + describe(n) + ": ";
    const int64_t rank = int64_t(n.type.shape.size());
    WEFT_CHECK(axis >= -rank && axis < rank, what, "axis ", axis, " is out of range for ", rank, " dimensions");
    const int64_t d = axis < 0 ? axis + rank : axis;
    int64_t total = 0;
    WEFT_CHECK(!sizes.empty(), what, "no sizes given");
    for (int64_t s : sizes) {
        WEFT_CHECK(s > 0, what, "sizes ", shape_str(sizes), " must be positive");
        total += s;
    }
    WEFT_CHECK(total == n.type.shape[size_t(d)], what, "sizes ", shape_str(sizes), " add up to ", total,
               " but axis ", axis, " of ", n.type.str(), " has extent ", n.type.shape[size_t(d)]);
    std::vector<Value> pieces;
    int64_t start = 0;
    for (size_t k = 0; k < sizes.size(); ++k) {
        pieces.push_back(slice(x, {start}, {start + sizes[k]}, {d}, {}, name.empty() ? "" : name + "_" + std::to_string(k)));
        start += sizes[k];
    }
    return pieces;
}

Value Graph::slice(Value x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                   std::vector<int64_t> steps, std::string name) {
    Attrs attrs{{"starts", std::move(starts)}, {"ends", std::move(ends)}};
    if (!axes.empty()) attrs.set("axes", std::move(axes));
    if (!steps.empty()) attrs.set("steps", std::move(steps));
    return add_node("slice", {x}, std::move(attrs), std::move(name));
}
Value Graph::pad(Value x, std::vector<int64_t> pads, double value, std::string name) {
    return add_node("pad", {x}, {{"pads", std::move(pads)}, {"value", value}}, std::move(name));
}
Value Graph::squeeze(Value x, std::vector<int64_t> axes, std::string name) {
    return add_node("squeeze", {x}, {{"axes", std::move(axes)}}, std::move(name));
}
Value Graph::unsqueeze(Value x, std::vector<int64_t> axes, std::string name) {
    return add_node("unsqueeze", {x}, {{"axes", std::move(axes)}}, std::move(name));
}
Value Graph::gather(Value data, Value indices, int64_t axis, std::string name) {
    return add_node("gather", {data, indices}, {{"axis", axis}}, std::move(name));
}
Value Graph::where(Value cond, Value a, Value b, std::string name) {
    return add_node("where", {cond, a, b}, {}, std::move(name));
}
Value Graph::cast(Value x, DataType dtype, std::string name) {
    return add_node("cast", {x}, {{"dtype", dtype.str()}}, std::move(name));
}
Value Graph::erf(Value x, std::string name) { return add_node("erf", {x}, {}, std::move(name)); }

}  // namespace weft::graph
