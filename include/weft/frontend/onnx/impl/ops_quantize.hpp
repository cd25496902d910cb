// The ONNX importer's quantization operators as float compositions: QuantizeLinear,
// DequantizeLinear and DynamicQuantizeLinear (per tensor, or per axis with 1-D scales and
// zero points). Rounding is to nearest even, as ONNX specifies; results saturate to the
// integer type.
#pragma once
#include "weft/frontend/onnx/impl/ops_elementwise.hpp"

namespace weft::onnx::detail {

namespace quantize_detail {

// A per-axis [C] parameter reshaped to broadcast along `axis` of a rank-r tensor; a scalar
// ([1]) as it is. With a block size (opset 21), p has x's rank with ceil(extent / block)
// entries along axis, each repeated for its block.
inline Value along_axis(Ctx& c, Value p, Value x, int64_t axis) {
    const int64_t block = c.opset >= 21 ? c.i("block_size", 0) : 0;
    if (block < 0) malformed("block_size " + std::to_string(block) + " is negative");
    if (block > 0) {
        const int64_t r = c.rank(x), a = norm_axis(axis, r), n = c.shape(x)[size_t(a)];
        std::vector<int64_t> want = c.shape(x);
        want[size_t(a)] = (n + block - 1) / block;
        if (c.shape(p) != want)
            malformed("a blocked scale or zero point has shape " + graph::shape_str(c.shape(p)) + ", want " +
                      graph::shape_str(want) + " (block_size " + std::to_string(block) + ")");
        std::vector<int64_t> owner;
        for (int64_t k = 0; k < n; ++k) owner.push_back(k / block);
        Value idx = c.constant(int64_buffer(owner, {n}), "block_of");
        return c.add("gather", {p, idx}, {{"axis", a}});
    }
    if (c.rank(p) == 1 && c.shape(p)[0] == 1) return p;
    if (c.rank(p) != 1) malformed("a scale or zero point must be a scalar or 1-D, got " + graph::shape_str(c.shape(p)));
    const int64_t r = c.rank(x), a = norm_axis(axis, r);
    if (c.shape(p)[0] != c.shape(x)[size_t(a)])
        malformed("a per-axis scale or zero point has " + std::to_string(c.shape(p)[0]) + " entries for axis " +
                  std::to_string(a) + " of extent " + std::to_string(c.shape(x)[size_t(a)]));
    std::vector<int64_t> s(size_t(r), 1);
    s[size_t(a)] = c.shape(p)[0];
    return reshape(c, p, s);
}

inline std::pair<double, double> integer_range(DataType t) {
    if (t == DataType::uint(8)) return {0, 255};
    if (t == DataType::int_(8)) return {-128, 127};
    if (t == DataType::uint(16)) return {0, 65535};
    if (t == DataType::int_(16)) return {-32768, 32767};
    unsupported("quantization to " + t.str() + " (weft quantizes to 8- and 16-bit integers)");
}

// The attributes of later opsets that change nothing for the integer types weft has:
// saturate (float8 only) and a precision of float32 (what weft computes in).
inline void read_quantize_extras(Ctx& c) {
    c.ignore({"saturate"});
    const int64_t precision = c.i("precision", 0);
    if (precision != 0 && precision != pb::TensorProto::FLOAT)
        unsupported("precision " + std::string(elem_type_name(int(precision))) + " (weft computes in float32)");
}

// saturate(round(x / scale) + zero_point) in `t`, computed in float32.
inline Value quantize(Ctx& c, Value x, Value scale, std::optional<Value> zero_point, DataType t, const std::string& name) {
    const DataType f32 = DataType::float_(32);
    auto [lo, hi] = integer_range(t);
    Value q = c.add("round", {c.add("div", {x, scale})});
    if (zero_point) q = c.add("add", {q, c.g.cast(*zero_point, f32, c.fresh("zero_point_f"))});
    return c.g.cast(c.g.clip(q, lo, hi, c.fresh("saturated")), t, name);
}

}  // namespace quantize_detail

inline std::vector<Value> convert_quantize_linear(Ctx& c) {
    using namespace quantize_detail;
    Value x = c.in(0);
    if (c.dtype(x) != DataType::float_(32)) unsupported("QuantizeLinear of " + c.dtype(x).str());
    read_quantize_extras(c);
    const int64_t axis = c.i("axis", 1);
    Value scale = along_axis(c, c.in(1), x, axis);
    std::optional<Value> zp;
    DataType t = DataType::uint(8);
    if (const int64_t out = c.opset >= 21 ? c.i("output_dtype", 0) : 0; out != 0) t = to_dtype(int(out), "output_dtype");
    if (c.has(2) && !c.is_empty(2)) {
        zp = along_axis(c, c.in(2), x, axis);
        if (c.i("output_dtype", 0) != 0 && c.dtype(c.in(2)) != t)
            malformed("output_dtype " + t.str() + " but the zero point is " + c.dtype(c.in(2)).str());
        t = c.dtype(c.in(2));
    }
    return {quantize(c, x, scale, zp, t, c.out())};
}

inline std::vector<Value> convert_dequantize_linear(Ctx& c) {
    using namespace quantize_detail;
    const DataType f32 = DataType::float_(32);
    Value x = c.in(0);
    const int64_t axis = c.i("axis", 1);
    if (const int64_t out = c.opset >= 23 ? c.i("output_dtype", 0) : 0; out != 0 && out != pb::TensorProto::FLOAT)
        unsupported("DequantizeLinear to " + std::string(elem_type_name(int(out))) + " (weft dequantizes to float32)");
    if (c.dtype(c.in(1)) != f32) unsupported("DequantizeLinear with a " + c.dtype(c.in(1)).str() + " scale");
    Value v = c.g.cast(x, f32, c.fresh("x_f"));
    if (c.has(2) && !c.is_empty(2))
        v = c.add("sub", {v, c.g.cast(along_axis(c, c.in(2), x, axis), f32, c.fresh("zero_point_f"))});
    return {c.add("mul", {v, along_axis(c, c.in(1), x, axis)}, {}, c.out())};
}

// DynamicQuantizeLinear: uint8 with the scale and zero point from x's range widened to hold 0:
// scale = (max(x, 0) - min(x, 0)) / 255, zero point = saturate(round(-min(x, 0) / scale)).
inline std::vector<Value> convert_dynamic_quantize_linear(Ctx& c) {
    using namespace quantize_detail;
    const DataType f32 = DataType::float_(32), u8 = DataType::uint(8);
    Value x = c.in(0);
    if (c.dtype(x) != f32) unsupported("DynamicQuantizeLinear of " + c.dtype(x).str());
    Attrs all{{"keepdims", int64_t(0)}};
    Value zero = c.scalar(0, f32, "zero");
    Value hi = c.add("maximum", {c.add("max", {x}, all), zero});
    Value lo = c.add("minimum", {neg(c, c.add("max", {neg(c, x)}, all)), zero});
    Value scale = c.add("div", {c.add("sub", {hi, lo}), c.scalar(255, f32, "range")}, {}, c.out(1));
    Value zp_f = c.g.clip(c.add("round", {c.add("div", {neg(c, lo), scale})}), 0, 255, c.fresh("zero_point_f"));
    Value zp = c.g.cast(zp_f, u8, c.out(2));
    Value y = quantize(c, x, scale, zp, u8, c.out(0));
    return {y, c.mark_scalar(scale), c.mark_scalar(zp)};
}

}  // namespace weft::onnx::detail
