// The ONNX importer's converters: element-wise arithmetic, activations, Clip and Cast.
#pragma once
#include <cmath>

#include "weft/frontend/onnx/impl/ops_common.hpp"

namespace weft::onnx::detail {

// ---- element-wise ---------------------------------------------------------------------------

// Opsets before 7: `broadcast` = 1 aligns B with A at `axis` (default: the trailing axes).
inline Value legacy_broadcast(Ctx& c, Value a, Value b) {
    if (c.opset >= 7 || c.i("broadcast", 0) == 0) return b;
    int64_t ra = c.rank(a), rb = c.rank(b);
    if (!c.has_attr("axis")) return b;
    int64_t axis = norm_axis(c.i("axis"), ra);
    std::vector<int64_t> s = c.shape(b);
    for (int64_t k = axis + rb; k < ra; ++k) s.push_back(1);
    return reshape(c, b, s);
}

inline Converter binary(const char* op) {
    return [op](Ctx& c) -> std::vector<Value> {
        Value a = c.in(0), b = legacy_broadcast(c, c.in(0), c.in(1));
        if (std::string(op) == "pow") {
            DataType t = c.dtype(a);
            if (!t.is_float()) {  // integer powers in float64, cast back
                Value a64 = c.g.cast(a, DataType::float_(64), c.fresh("cast"));
                Value b64 = c.g.cast(b, DataType::float_(64), c.fresh("cast"));
                return {c.g.cast(c.add("pow", {a64, b64}), t, c.out())};
            }
            if (c.dtype(b) != t) b = c.g.cast(b, t, c.fresh("cast"));
            // x^2 (a decomposed LayerNorm's variance) becomes x * x in the graph layer
            // (graph::simplify_operators).
        }
        return {c.add(op, {a, b}, {}, c.out())};
    };
}

// Max, Min, Sum, Mean: any number of inputs, folded pairwise.
inline Converter variadic(const char* op, bool mean = false) {
    return [op, mean](Ctx& c) -> std::vector<Value> {
        if (c.n_in() == 0) malformed("needs at least one input");
        Value r = c.in(0);
        for (size_t k = 1; k < c.n_in(); ++k)
            r = c.add(op, {r, c.in(k)}, {}, k + 1 == c.n_in() && !mean ? c.out() : "");
        if (mean)
            r = c.add("div", {r, c.scalar(double(c.n_in()), c.dtype(r), "count")}, {}, c.out());
        else if (c.n_in() == 1)
            r = reshape(c, r, c.shape(r), c.out());
        return {r};
    };
}

inline Converter unary(const char* op) {
    return [op](Ctx& c) -> std::vector<Value> { return {c.add(op, {c.in(0)}, {}, c.out())}; };
}

inline Value neg(Ctx& c, Value x, std::string name = "") {
    return c.add("mul", {x, c.scalar(-1, c.dtype(x), "minus_one")}, {}, std::move(name));
}
inline Value abs_of(Ctx& c, Value x, std::string name = "") {
    return c.add("maximum", {x, neg(c, x)}, {}, std::move(name));
}

// alpha * (exp(min(x, 0)) - 1): Elu's negative part.
inline Value elu_negative(Ctx& c, Value x, double alpha) {
    DataType t = c.dtype(x);
    Value m = c.add("minimum", {x, c.scalar(0, t, "zero")});
    Value e = c.add("sub", {c.add("exp", {m}), c.scalar(1, t, "one")});
    return c.add("mul", {e, c.scalar(alpha, t, "alpha")});
}

inline std::vector<Value> convert_clip(Ctx& c) {
    Value x = c.in(0);
    const double inf = std::numeric_limits<double>::infinity();
    double lo = -inf, hi = inf;
    std::optional<Value> lo_v, hi_v;
    if (c.opset < 11) {
        lo = c.f("min", -inf);
        hi = c.f("max", inf);
    } else {
        // min / max inputs: constants become clip's attributes, values computed at run time
        // (a graph input, or ReduceMax(x) - 80 as a mel spectrogram clips) maximum / minimum.
        auto bound = [&](size_t k, double& v, std::optional<Value>& val) {
            if (!c.has(k)) return;
            const graph::Node& n = c.g.node(c.in(k));
            if (n.is_constant()) v = c.const_floats(k, k == 1 ? "min" : "max").at(0);
            else val = c.in(k);
        };
        bound(1, lo, lo_v);
        bound(2, hi, hi_v);
    }
    if (lo_v || hi_v) {
        if (lo_v) x = c.add("maximum", {x, *lo_v}, {}, hi_v ? "" : c.out());
        if (hi_v) x = c.add("minimum", {x, *hi_v}, {}, c.out());
        if (lo != -inf || hi != inf) x = c.add("clip", {x}, {{"min", lo}, {"max", hi}});
        return {x};
    }
    DataType t = c.dtype(x);
    if (t.is_integer()) {  // infinite bounds: the dtype's range
        double tmin = t.is_int() ? -std::ldexp(1.0, t.bits - 1) : 0.0;
        double tmax = t.is_int() ? std::ldexp(1.0, t.bits - 1) - 1 : std::ldexp(1.0, t.bits) - 1;
        lo = std::max(lo, tmin);
        hi = std::min(hi, tmax);
    }
    if (lo > hi) {  // ONNX: every element becomes max
        return {c.add("clip", {x}, {{"min", hi}, {"max", hi}}, c.out())};
    }
    return {c.add("clip", {x}, {{"min", lo}, {"max", hi}}, c.out())};
}

// ---- activations without a graph op of their own ------------------------------------------

// x * sigmoid(alpha * x) (Swish; SiLU at alpha 1).
inline Value swish(Ctx& c, Value x, double alpha, std::string name = "") {
    Value ax = alpha == 1.0 ? x : c.add("mul", {x, c.scalar(alpha, c.dtype(x), "alpha")});
    return c.add("mul", {x, c.add("sigmoid", {ax})}, {}, std::move(name));
}

// log(1 + exp(x)) as max(x, 0) + log(1 + exp(-|x|)): no overflow.
inline Value softplus(Ctx& c, Value x, std::string name = "") {
    Value e = c.add("exp", {neg(c, abs_of(c, x))});
    Value l = c.add("log", {c.add("add", {e, c.scalar(1, c.dtype(x), "one")})});
    return c.add("add", {c.add("relu", {x}), l}, {}, std::move(name));
}

// Gelu (opset 20): exact (erf) or approximate = "tanh".
inline std::vector<Value> convert_gelu(Ctx& c) {
    Value x = c.in(0);
    const std::string approx = c.s("approximate", "none");
    if (approx == "none") return {c.g.gelu(x, c.out())};
    if (approx != "tanh") malformed("approximate '" + approx + "' is neither none nor tanh");
    // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    const DataType t = c.dtype(x);
    Value cube = c.add("mul", {c.add("mul", {x, x}), x});
    Value inner = c.add("add", {x, c.add("mul", {cube, c.scalar(0.044715, t, "k")})});
    Value th = c.add("tanh", {c.add("mul", {inner, c.scalar(std::sqrt(2.0 / M_PI), t, "sqrt_2_over_pi")})});
    Value half_x = c.add("mul", {x, c.scalar(0.5, t, "half")});
    return {c.add("mul", {half_x, c.add("add", {th, c.scalar(1, t, "one")})}, {}, c.out())};
}

// Celu: max(0, x) + min(0, alpha (exp(x / alpha) - 1)).
inline std::vector<Value> convert_celu(Ctx& c) {
    Value x = c.in(0);
    const DataType t = c.dtype(x);
    const double alpha = c.f("alpha", 1.0);
    Value e = c.add("sub", {c.add("exp", {c.add("div", {x, c.scalar(alpha, t, "alpha")})}), c.scalar(1, t, "one")});
    Value negative = c.add("minimum", {c.add("mul", {e, c.scalar(alpha, t, "alpha")}), c.scalar(0, t, "zero")});
    return {c.add("add", {c.add("relu", {x}), negative}, {}, c.out())};
}

// SwiGLU (opset 28): swish(a, alpha) * b, a and b of one shape.
inline std::vector<Value> convert_swiglu(Ctx& c) {
    Value a = c.in(0), b = c.in(1);
    if (c.shape(a) != c.shape(b)) malformed("A and B must have one shape (SwiGLU does not broadcast)");
    return {c.add("mul", {swish(c, a, c.f("alpha", 1.0)), b}, {}, c.out())};
}

// x cast to the sub-byte integer type `elem` (held in a byte): its low bits, sign-extended
// for the signed ones, as ONNX's Cast wraps (an integral float first truncates to an integer).
inline Value cast_to_subbyte(Ctx& c, Value x, int elem, const std::string& name) {
    const DataType i32 = DataType::int_(32);
    const int bits = subbyte_bits(elem);
    Value v = c.g.cast(x, i32, c.fresh("wide"));
    v = c.add("bitwise_and", {v, c.scalar(double((1 << bits) - 1), i32, "mask")});
    if (subbyte_signed(elem)) {
        Value sign = c.scalar(double(1 << (bits - 1)), i32, "sign");
        v = c.add("sub", {c.add("bitwise_xor", {v, sign}), sign});
    }
    c.subbyte_outs[0] = elem;
    return c.g.cast(v, to_dtype(elem, "the target"), name);
}

// Cast, and CastLike (the type of input 1).
inline std::vector<Value> convert_cast(Ctx& c) {
    const bool like = c.node.op_type() == "CastLike";
    c.ignore({"saturate", "round_mode"});  // float8's (opsets 19 and 24), which weft lacks
    const int elem = like ? c.subbyte_in(1) : int(c.i("to"));
    if (subbyte_bits(elem)) return {cast_to_subbyte(c, c.in(0), elem, c.out())};
    const DataType t = like ? c.onnx_dtype(1) : to_dtype(elem, "the 'to' attribute");  // before widening
    return {c.g.cast(c.in(0), t, c.out())};
}

}  // namespace weft::onnx::detail
