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
    c.narrow_outs[0] = elem;
    return c.g.cast(v, to_dtype(elem, "the target"), name);
}

// x as float32 (cast if it is not), its bits as int32 and its biased exponent (bits 23-30).
struct Float32Bits {
    Value x, bits, exponent;
};
inline Float32Bits float32_bits(Ctx& c, Value x) {
    const DataType f32 = DataType::float_(32), i32 = DataType::int_(32);
    if (c.dtype(x) != f32) x = c.g.cast(x, f32, c.fresh("x_f"));
    Value bits = c.add("bitcast", {x}, {{"dtype", i32.str()}});
    Value e = c.add("bitwise_and", {c.add("shift_right", {bits, c.scalar(23, i32, "mantissa_bits")}),
                                    c.scalar(255, i32, "exponent_mask")});
    return {x, bits, e};
}

// x rounded to the small float `f` (to nearest, ties to even), as the float32 it stands for.
// The quantum of x's binade (its float32 exponent, clamped to f's smallest normal one) over
// f's mantissa bits divides x exactly, so round(x / q) * q rounds once. Beyond f's largest
// value: that value with x's sign where `saturate` (and always for float4, which has neither
// infinities nor NaN), else infinity (E5M2) or NaN.
inline Value cast_to_small_float(Ctx& c, Value x, const SmallFloat& f, bool saturate, const std::string& name) {
    const DataType f32 = DataType::float_(32), i32 = DataType::int_(32);
    auto i = [&](int64_t v, const char* what) { return c.scalar(double(v), i32, what); };
    auto fl = [&](double v, const char* what) { return c.scalar(v, f32, what); };
    Float32Bits in = float32_bits(c, x);
    x = in.x;
    Value e = c.add("maximum", {in.exponent, i(1 - f.bias + 127, "smallest_exponent")});
    Value q = c.add("shift_left", {c.add("sub", {e, i(f.man_bits, "man_bits")}), i(23, "mantissa_bits")});
    q = c.add("bitcast", {q}, {{"dtype", f32.str()}});
    Value y = c.add("mul", {c.add("round", {c.add("div", {x, q})}), q});
    Value over = c.add("greater", {abs_of(c, y), fl(f.max, "largest")});
    Value negative = c.add("less", {x, fl(0, "zero")});
    const bool float4 = f.elem == kFloat4E2M1;
    Value beyond = saturate || float4 ? c.g.where(negative, fl(-f.max, "lowest"), fl(f.max, "largest"), c.fresh("max"))
                   : f.has_inf ? c.g.where(negative, fl(-INFINITY, "minus_inf"), fl(INFINITY, "inf"), c.fresh("inf"))
                               : fl(NAN, "nan");
    y = c.g.where(over, beyond, y, c.fresh("in_range"));
    if (f.uz) y = c.add("add", {y, fl(0, "zero")});  // no negative zero: -0 + 0 is +0
    if (float4) y = c.g.where(c.add("not_equal", {x, x}), fl(-0.0, "nan_as"), y, c.fresh("no_nan"));  // as ml_dtypes
    c.narrow_outs[0] = f.elem;
    return reshape(c, y, c.shape(y), name);
}

// x as E8M0, a power of two from x's float32 exponent bits alone (the sign dropped, as
// ONNX's reference does): round_mode up (any fraction bumps the exponent), down (none) or
// nearest (the float32 guard, round and sticky bits); saturate keeps 2^127 from rounding
// into the NaN code 0xff; infinities and NaN give NaN.
inline Value cast_to_e8m0(Ctx& c, Value x, bool saturate, const std::string& mode, const std::string& name) {
    const DataType f32 = DataType::float_(32), i32 = DataType::int_(32);
    if (mode != "up" && mode != "down" && mode != "nearest")
        malformed("round_mode must be up, down or nearest, got '" + mode + "'");
    auto i = [&](int64_t v, const char* what) { return c.scalar(double(v), i32, what); };
    auto any = [&](Value bits, int64_t mask) {
        return c.add("not_equal", {c.add("bitwise_and", {bits, i(mask, "mask")}), i(0, "zero")});
    };
    const Float32Bits in = float32_bits(c, x);
    Value bits = in.bits, e = in.exponent;
    Value special = c.add("equal", {e, i(255, "special")});
    if (mode != "down") {
        // nearest: the guard bit, and a round or sticky bit or a nonzero exponent (ONNX's rule).
        Value up = mode == "up" ? any(bits, 0x7FFFFF)
                                : c.add("logical_and", {any(bits, 0x400000),
                                                        c.add("logical_or", {any(bits, 0x3FFFFF), c.add("greater", {e, i(0, "zero")})})});
        if (saturate) up = c.add("logical_and", {up, c.add("not_equal", {e, i(254, "largest")})});
        e = c.add("add", {e, c.g.cast(up, i32, c.fresh("bump"))});
    }
    Value v = c.add("bitcast", {c.add("shift_left", {e, i(23, "mantissa_bits")})}, {{"dtype", f32.str()}});
    v = c.g.where(c.add("equal", {e, i(0, "zero")}), c.scalar(0x1p-127, f32, "smallest"), v, c.fresh("power"));
    Value nan = c.add("logical_or", {special, c.add("equal", {e, i(255, "special")})});
    c.narrow_outs[0] = kFloat8E8M0;
    return c.g.where(nan, c.scalar(NAN, f32, "nan"), v, name);
}

// Cast, and CastLike (the type of input 1).
inline std::vector<Value> convert_cast(Ctx& c) {
    const bool like = c.node.op_type() == "CastLike";
    c.ignore({"saturate", "round_mode"});  // for small floats only (read there)
    const int elem = like ? c.narrow_in(1) : int(c.i("to"));
    if (subbyte_bits(elem)) return {cast_to_subbyte(c, c.in(0), elem, c.out())};
    if (elem == kFloat8E8M0)
        return {cast_to_e8m0(c, c.in(0), c.i("saturate", 1) != 0, c.s("round_mode", "up"), c.out())};
    if (const SmallFloat* f = small_float(elem)) return {cast_to_small_float(c, c.in(0), *f, c.i("saturate", 1) != 0, c.out())};
    const DataType t = like ? c.onnx_dtype(1) : to_dtype(elem, "the 'to' attribute");  // before widening
    return {c.g.cast(c.in(0), t, c.out())};
}

}  // namespace weft::onnx::detail
