// The graph's element-wise operators: broadcasting binary arithmetic and the unary
// activations and math functions, each a topi compute.
#pragma once
#include "weft/graph/impl/host_evaluate.hpp"
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

inline TensorType infer_compare(const std::vector<TensorType>& in, const Attrs& a) {
    return {infer_broadcast(in, a).shape, DataType::bool_()};
}

// The input's type when `ok`, else an error saying what it must be.
inline TensorType input_if(const TensorType& t, bool ok, const char* must_be) {
    WEFT_CHECK(ok, "the input must be ", must_be, ", got ", t.dtype.str());
    return t;
}

// Numpy broadcasting of operands that must each satisfy `ok` (saying what they must be).
inline TensorType infer_broadcast_of(const std::vector<TensorType>& in, const Attrs& a, bool (*ok)(DataType),
                                     const char* must_be) {
    for (const TensorType& t : in) WEFT_CHECK(ok(t.dtype), "the operands must be ", must_be, ", got ", t.dtype.str());
    return infer_broadcast(in, a);
}
inline bool is_bool(DataType t) { return t.is_bool(); }
inline bool is_integer(DataType t) { return t.is_integer(); }
inline bool is_integer_not_bool(DataType t) { return t.is_integer() && !t.is_bool(); }

inline TensorType infer_bits(const std::vector<TensorType>& in, const Attrs& a) {
    return infer_broadcast_of(in, a, is_integer, "integers or bools");
}
inline TensorType infer_shift(const std::vector<TensorType>& in, const Attrs& a) {
    return infer_broadcast_of(in, a, is_integer_not_bool, "integers");
}
inline TensorType infer_logic(const std::vector<TensorType>& in, const Attrs& a) {
    return infer_broadcast_of(in, a, is_bool, "bool");
}

inline TensorType infer_mod(const std::vector<TensorType>& in, const Attrs& a) {
    TensorType t = infer_broadcast(in, a);
    WEFT_CHECK(!t.dtype.is_bool(), "mod needs numbers, got bool");
    return t;
}

inline TensorType infer_float_test(const std::vector<TensorType>& in, const Attrs&) {
    check_float(in[0], "the input");
    WEFT_CHECK(in[0].dtype.bits == 32 || in[0].dtype.bits == 64, "the input must be float32 or float64, got ",
               in[0].dtype.str());
    return {in[0].shape, DataType::bool_()};
}

inline void register_elementwise_ops() {
    using P = OpPattern;
    using Binary = Tensor (*)(const Tensor&, const Tensor&);
    using Infer = TensorType (*)(const std::vector<TensorType>&, const Attrs&);
    // Equal shapes make an element-wise op; different ones broadcast.
    using Evaluate = decltype(OpDef::evaluate);
    auto binary_as = [](const char* name, Binary f, Infer infer, Evaluate evaluate = {}) {
        register_op({.name = name, .pattern = P::Broadcast, .min_inputs = 2, .max_inputs = 2, .infer = infer,
                     .compute = [f](const std::vector<Tensor>& in, const Attrs&) { return f(in[0], in[1]); },
                     .evaluate = std::move(evaluate)});
    };
    auto binary = [&](const char* name, Binary f, Evaluate evaluate = {}) {
        binary_as(name, f, infer_broadcast, std::move(evaluate));
    };
    auto unary_as = [](const char* name, Tensor (*f)(const Tensor&), Infer infer) {
        register_op({.name = name, .pattern = P::ElemWise, .infer = infer,
                     .compute = [f](const std::vector<Tensor>& in, const Attrs&) { return f(in[0]); }});
    };
    // (Shapes' arithmetic and comparisons are folded on the host: an importer's Shape -> Gather
    // -> Mul -> Concat, a Loop's condition.)
    binary("add", topi::add, host::arithmetic<'+'>);
    binary("sub", topi::sub, host::arithmetic<'-'>);
    binary("mul", topi::mul, host::arithmetic<'*'>);
    binary("div", topi::div, host::arithmetic<'/'>);
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
    unary("floor", topi::floor, true);
    unary("ceil", topi::ceil, true);
    unary("round", topi::round, true);
    unary("sin", topi::sin, true);
    unary("cos", topi::cos, true);
    unary("tan", topi::tan, true);
    unary("asin", topi::asin, true);
    unary("acos", topi::acos, true);
    unary("atan", topi::atan, true);
    unary("sinh", topi::sinh, true);
    unary("cosh", topi::cosh, true);
    unary("asinh", topi::asinh, true);
    unary("acosh", topi::acosh, true);
    unary("atanh", topi::atanh, true);
    unary_as("sign", topi::sign, [](const std::vector<TensorType>& in, const Attrs&) {
        return input_if(in[0], !in[0].dtype.is_bool(), "numbers");
    });
    register_op({.name = "isnan", .pattern = P::ElemWise, .infer = infer_float_test,
                 .compute = [](const std::vector<Tensor>& in, const Attrs&) { return topi::isnan(in[0]); }});
    register_op({.name = "isinf", .pattern = P::ElemWise, .infer = infer_float_test,
                 .compute = [](const std::vector<Tensor>& in, const Attrs& a) {
                     return topi::isinf(in[0], a.get_int("positive", 1) != 0, a.get_int("negative", 1) != 0);
                 }});
    unary_as("logical_not", topi::logical_not, [](const std::vector<TensorType>& in, const Attrs&) {
        return input_if(in[0], in[0].dtype.is_bool(), "bool");
    });

    binary_as("equal", topi::equal, infer_compare, host::compare<'='>);
    binary_as("not_equal", topi::not_equal, infer_compare, host::compare<'!'>);
    binary_as("greater", topi::greater, infer_compare, host::compare<'>'>);
    binary_as("greater_equal", topi::greater_equal, infer_compare, host::compare<'g'>);
    binary_as("less", topi::less, infer_compare, host::compare<'<'>);
    binary_as("less_equal", topi::less_equal, infer_compare, host::compare<'l'>);
    binary_as("logical_and", topi::logical_and, infer_logic);
    binary_as("logical_or", topi::logical_or, infer_logic);
    binary_as("logical_xor", topi::logical_xor, infer_logic);
    binary_as("bitwise_and", topi::bitwise_and, infer_bits);
    binary_as("bitwise_or", topi::bitwise_or, infer_bits);
    binary_as("bitwise_xor", topi::bitwise_xor, infer_bits);
    binary_as("shift_left", topi::shift_left, infer_shift);
    binary_as("shift_right", topi::shift_right, infer_shift);
    unary_as("bitwise_not", topi::bitwise_not, [](const std::vector<TensorType>& in, const Attrs&) {
        return input_if(in[0], in[0].dtype.is_integer(), "integers or bools");
    });
    register_op({.name = "mod", .pattern = P::Broadcast, .min_inputs = 2, .max_inputs = 2, .infer = infer_mod,
                 .compute = [](const std::vector<Tensor>& in, const Attrs& a) {
                     return topi::mod(in[0], in[1], a.get_int("fmod", 0) != 0);
                 }});
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
