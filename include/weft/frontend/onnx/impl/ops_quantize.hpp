// The ONNX importer's quantization operators as float compositions: QuantizeLinear,
// DequantizeLinear, DynamicQuantizeLinear, and the integer products MatMulInteger, ConvInteger
// QLinearMatMul and QLinearConv (computed in float64, exact for 8-bit operands); parameters per
// tensor, or per axis with 1-D scales and zero points. Rounding is to nearest even, as ONNX
// specifies; results saturate to the integer type.
#pragma once
#include <cmath>

#include "weft/frontend/onnx/impl/ops_nn.hpp"

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

// The range of the ONNX element type `elem` held in t: a sub-byte integer's, else t's.
inline std::pair<double, double> quantized_range(DataType t, int elem) {
    if (const int bits = subbyte_bits(elem))
        return subbyte_signed(elem) ? std::pair<double, double>{-double(1 << (bits - 1)), double((1 << (bits - 1)) - 1)}
                                    : std::pair<double, double>{0, double((1 << bits) - 1)};
    return integer_range(t);
}

// saturate(round(x / scale) + zero_point) in `t` (the ONNX type `elem` where it is a
// sub-byte one), computed in float32.
inline Value quantize(Ctx& c, Value x, Value scale, std::optional<Value> zero_point, DataType t, const std::string& name,
                      int elem = 0) {
    const DataType f32 = DataType::float_(32);
    auto [lo, hi] = quantized_range(t, elem);
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
    int elem = 0;  // a narrow output type's ONNX element type (proto.hpp, is_narrow)
    const int64_t out = c.opset >= 21 ? c.i("output_dtype", 0) : 0;
    if (out != 0) {
        t = to_dtype(int(out), "output_dtype");
        elem = is_narrow(int(out)) ? int(out) : 0;
    }
    if (c.has(2) && !c.is_empty(2)) {
        zp = along_axis(c, c.in(2), x, axis);
        if (out != 0 && (c.dtype(c.in(2)) != t || c.narrow_in(2) != elem))
            malformed("output_dtype " + std::string(elem_type_name(int(out))) + " but the zero point is " +
                      (c.narrow_in(2) ? elem_type_name(c.narrow_in(2)) : c.dtype(c.in(2)).str().c_str()));
        t = c.dtype(c.in(2));
        elem = c.narrow_in(2);
    }
    if (elem) c.narrow_outs[0] = elem;
    if (elem == kFloat8E8M0) unsupported("QuantizeLinear to float8e8m0");
    if (const SmallFloat* f = small_float(elem)) {  // no rounding to integers: x / scale + zero_point as f
        Value y = c.add("div", {x, scale});
        if (zp) y = c.add("add", {y, *zp});
        return {cast_to_small_float(c, y, *f, c.i("saturate", 1) != 0, c.out())};
    }
    return {quantize(c, x, scale, zp, t, c.out(), elem)};
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



namespace quantize_detail {

// Input k in float64, shaped to broadcast along `axis` of a tensor of rank r when it has one
// entry per index there (a per-axis scale or zero point).
inline Value wide_param(Ctx& c, size_t k, int64_t rank, int64_t axis) {
    Value v = c.g.cast(c.in(k), DataType::float_(64), c.fresh("wide"));
    if (c.rank(v) == 1 && c.shape(v)[0] > 1) {
        std::vector<int64_t> s(size_t(rank), 1);
        s[size_t(norm_axis(axis, rank))] = c.shape(v)[0];
        v = reshape(c, v, s);
    }
    return v;
}

// saturate(round(acc * a_scale * b_scale / y_scale) + y_zero_point), the scales inputs
// sa, sb (per axis a_axis / b_axis), sy and zy; output type that of y_zero_point.
// round(v) + the zero point of input zy, saturated to its type: the node's output.
inline Value to_output_type(Ctx& c, Value v, size_t zy) {
    const DataType t = c.dtype(c.in(zy));
    auto [lo, hi] = integer_range(t);
    Value q = c.add("add", {c.add("round", {v}), wide_param(c, zy, c.rank(v), -1)});
    return c.g.cast(c.g.clip(q, lo, hi, c.fresh("saturated")), t, c.out());
}

inline Value requantize(Ctx& c, Value acc, size_t sa, int64_t a_axis, size_t sb, int64_t b_axis, size_t sy, size_t zy) {
    const int64_t r = c.rank(acc);
    Value scale = c.add("div", {c.add("mul", {wide_param(c, sa, r, a_axis), wide_param(c, sb, r, b_axis)}), wide_param(c, sy, r, -1)});
    return to_output_type(c, c.add("mul", {acc, scale}), zy);
}

// Input k less the zero point of input zp (absent: 0; per `axis` entry or per tensor), in
// float64: the products and sums of 8-bit values stay exact there.
inline Value centred(Ctx& c, size_t k, size_t zp, int64_t axis) {
    const int64_t r = c.rank(c.in(k));
    Value f = wide_param(c, k, r, -1);
    return c.has(zp) ? c.add("sub", {f, wide_param(c, zp, r, axis)}) : f;
}

// (A - a_zero_point) x (B - b_zero_point) in int32 on the 8-bit kernels (graph's matmul_u8s8:
// VNNI's vpdpbusd where the target has it), for A of 8-bit integers [..., M, K] and B a
// constant [K, N] of them (K a multiple of 4, N of 16; its data `b`), A's zero point one value
// (known or not), B's constant per tensor or per column (`zb`, or undefined); nullopt
// otherwise (the float64 composition then). vpdpbusd multiplies unsigned by
// signed bytes: an int8 A is shifted by +128 and a uint8 B by -128, their zero points with
// them, and (A - za)(B - zb) = A B - za colsum(B) - rowsum(A) zb + K za zb.
inline std::optional<Value> integer_matmul_8bit(Ctx& c, Value a, std::optional<Value> za_in, const BufferRef& b,
                                                const BufferRef& zb) {
    const DataType u8 = DataType::uint(8), s8 = DataType::int_(8), i32 = DataType::int_(32);
    const DataType at = c.dtype(a);
    if ((at != u8 && at != s8) || c.rank(a) < 2) return std::nullopt;
    if (!b.defined() || b.ndim() != 2 || (b.dtype() != u8 && b.dtype() != s8)) return std::nullopt;
    const int64_t K = b.shape()[0], N = b.shape()[1];
    if (c.shape(a).back() != K || K % 4 != 0 || N % 16 != 0) return std::nullopt;
    if (za_in && c.type(*za_in).size() != 1) return std::nullopt;
    std::vector<int32_t> zero_b(size_t(N), 0);
    if (zb.defined()) {
        const std::vector<double> z = buffer_floats(zb);
        if (z.size() != 1 && int64_t(z.size()) != N) return std::nullopt;
        for (int64_t n = 0; n < N; ++n) zero_b[size_t(n)] = int32_t(z.size() == 1 ? z[0] : z[size_t(n)]);
    }
    BufferRef bq = BufferRef::allocate(s8, {K, N}), colsum = BufferRef::allocate(i32, {N});
    auto* q = static_cast<int8_t*>(bq.data());
    auto* sums = static_cast<int32_t*>(colsum.data());
    for (int64_t n = 0; n < N; ++n) sums[n] = 0;
    for (int64_t i = 0; i < K * N; ++i) {
        const int v = b.dtype() == u8 ? int(static_cast<const uint8_t*>(b.data())[i]) - 128
                                      : int(static_cast<const int8_t*>(b.data())[i]);
        q[i] = int8_t(v);
        sums[i % N] += v;
    }
    if (b.dtype() == u8)
        for (int32_t& z : zero_b) z -= 128;
    const std::vector<int64_t> shape = c.shape(a);
    int64_t M = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d) M *= shape[d];
    Value rows = reshape(c, a, {M, K});
    std::optional<Value> za;  // A's zero point as int32 [1], shifted with A
    if (za_in) za = c.g.cast(reshape(c, *za_in, {1}), i32, c.fresh("a_zero_point"));
    if (at == s8) {
        rows = c.g.cast(c.add("add", {c.g.cast(rows, i32, c.fresh("a_wide")), c.scalar(128, i32, "shift")}), u8,
                        c.fresh("a_unsigned"));
        za = za ? c.add("add", {*za, c.scalar(128, i32, "shift")}) : c.scalar(128, i32, "a_zero_point");
    }
    Value p = c.add("matmul_u8s8", {rows, c.add("pack_vnni_weight", {c.constant(bq, "b_int8")})});
    if (za) p = c.add("sub", {p, c.add("mul", {*za, c.constant(colsum, "b_column_sums")})});
    if (std::any_of(zero_b.begin(), zero_b.end(), [](int32_t z) { return z != 0; })) {
        BufferRef zbuf = BufferRef::allocate(i32, {N}), kzb = BufferRef::allocate(i32, {N});
        for (int64_t n = 0; n < N; ++n) {
            static_cast<int32_t*>(zbuf.data())[n] = zero_b[size_t(n)];
            static_cast<int32_t*>(kzb.data())[n] = int32_t(K) * zero_b[size_t(n)];
        }
        Value rowsum = c.g.sum(c.g.cast(rows, i32, c.fresh("a_wide")), {1}, true, c.fresh("a_row_sums"));
        p = c.add("sub", {p, c.add("mul", {rowsum, c.constant(zbuf, "b_zero_point")})});
        if (za) p = c.add("add", {p, c.add("mul", {*za, c.constant(kzb, "k_b_zero_point")})});
    }
    std::vector<int64_t> out(shape.begin(), shape.end() - 1);
    out.push_back(N);
    return reshape(c, p, out);
}

// integer_matmul_8bit of a node's inputs a, a_zp, b, b_zp at positions ak, azk, bk, bzk.
inline std::optional<Value> integer_matmul_vnni(Ctx& c, size_t ak, size_t azk, size_t bk, size_t bzk) {
    Value a = c.in(ak);
    BufferRef b, zb;
    try {
        b = c.const_value(bk, "B");
        if (c.has(bzk)) zb = c.const_value(bzk, "b_zero_point");
    } catch (const UnsupportedError&) {  // B computed at run time: the composition
        return std::nullopt;
    }
    return integer_matmul_8bit(c, a, c.has(azk) ? std::optional<Value>(c.in(azk)) : std::nullopt, b, zb);
}

// A value DequantizeLinear made (convert_dequantize_linear: mul(cast(q) [- cast(zero point)],
// scale), the parameters reshaped along an axis where they have one entry per index): its
// 8-bit q, zero point (undefined: none) and scale.
struct Dequantized {
    Value q;
    std::optional<Value> zero_point;
    Value scale;
};

inline std::optional<Dequantized> as_dequantized(Ctx& c, Value v) {
    const graph::Node& m = c.g.node(v);
    if (m.op != "mul" || m.inputs.size() != 2 || c.dtype(v) != DataType::float_(32)) return std::nullopt;
    Dequantized d{Value{}, std::nullopt, m.inputs[1]};
    const graph::Node* body = &c.g.node(m.inputs[0]);
    if (body->op == "sub") {
        const graph::Node& z = c.g.node(body->inputs[1]);
        if (z.op != "cast") return std::nullopt;
        d.zero_point = z.inputs[0];
        body = &c.g.node(body->inputs[0]);
    }
    if (body->op != "cast") return std::nullopt;
    d.q = body->inputs[0];
    const DataType t = c.dtype(d.q);
    if (t != DataType::uint(8) && t != DataType::int_(8)) return std::nullopt;
    return d;
}

// The data of a constant reached through reshapes (a per-axis parameter), flattened; undefined
// for anything else.
inline BufferRef constant_data(Ctx& c, Value v) {
    const graph::Node* n = &c.g.node(v);
    while (n->op == "reshape") n = &c.g.node(n->inputs[0]);
    if (!n->is_constant()) return {};
    return BufferRef(n->value.data(), n->value.dtype(), {n->value.size()});
}

}  // namespace quantize_detail

// MatMul of two DequantizeLinear outputs (a QDQ model: an activation quantized to 8 bits and a
// constant 8-bit weight), A's scale and zero point one value each, B's per tensor or per
// column: the integer product on the 8-bit kernels (integer_matmul_8bit) times a_scale *
// b_scale, instead of a float matmul of the dequantized values; otherwise MatMul as usual.
inline std::vector<Value> convert_matmul_of_dequantized(Ctx& c) {
    using namespace quantize_detail;
    const std::optional<Dequantized> a = as_dequantized(c, c.in(0)), b = as_dequantized(c, c.in(1));
    if (a && b && c.type(a->scale).size() == 1) {
        const BufferRef bq = constant_data(c, b->q), bs = constant_data(c, b->scale);
        const BufferRef bz = b->zero_point ? constant_data(c, *b->zero_point) : BufferRef();
        const int64_t N = c.rank(b->q) == 2 ? c.shape(b->q)[1] : 0;
        // One value, or one per column: a scale along B's rows (axis 0) of a square B has N
        // values too, but is not the columns'.
        auto per_column = [&](Value p) {
            const graph::TensorType& t = c.type(p);
            return t.size() == 1 || (t.size() == N && t.shape.back() == N);
        };
        const bool fits = bq.defined() && bs.defined() && (!b->zero_point || bz.defined()) && per_column(b->scale) &&
                          (!b->zero_point || per_column(*b->zero_point)) && bs.dtype() == DataType::float_(32);
        if (fits)
            if (std::optional<Value> p = integer_matmul_8bit(
                    c, a->q, a->zero_point,
                    BufferRef(bq.data(), bq.dtype(), c.shape(b->q)), bz)) {
                Value scaled = c.add("mul", {c.g.cast(*p, DataType::float_(32), c.fresh("product_f")),
                                             reshape(c, a->scale, {1})});
                BufferRef own = BufferRef::allocate(bs.dtype(), bs.shape());  // (bs views another node's data)
                std::memcpy(own.data(), bs.data(), size_t(bs.size_bytes()));
                return {c.add("mul", {scaled, c.constant(own, "b_scale")}, {}, c.out())};
            }
    }
    return convert_matmul(c);
}

namespace quantize_detail {

// Whether every value of an int8 zero point is 0 (undefined: none given).
inline bool zero_or_none(const BufferRef& zero_point) {
    for (int64_t i = 0; zero_point.defined() && i < zero_point.size(); ++i)
        if (static_cast<const int8_t*>(zero_point.data())[i] != 0) return false;
    return true;
}

// The attributes a conv2d carries for the graph's quantize passes (graph/pass.hpp), which
// run it on the 8-bit kernels: an 8-bit input of type `xt` at scale `sx` and zero point `zx`
// (as uint8 there: an int8 input's plus 128), the weight's steps `sw` (one or one per output
// channel). Empty where sx is 0, below 0 or not finite: what the 8-bit kernel cannot
// requantize (the float convolution then).
inline Attrs conv2d_quantization(DataType xt, float sx, int64_t zx, const float* sw, int64_t steps) {
    if (!(sx > 0) || !std::isfinite(sx) || !std::isnormal(1.0f / sx)) return {};
    return {{"quantized_input_scale", double(sx)},
            {"quantized_input_zero_point", xt == DataType::int_(8) ? zx + 128 : zx},
            {"quantized_weight_scales", std::vector<double>(sw, sw + steps)}};
}

// An 8-bit zero point's value.
inline int64_t zero_point_value(const BufferRef& zp) {
    return zp.dtype() == DataType::uint(8) ? int64_t(*static_cast<const uint8_t*>(zp.data()))
                                           : int64_t(*static_cast<const int8_t*>(zp.data()));
}

// The quantization a QDQ model gives a Conv whose data is a DequantizeLinear output (one scale
// and zero point) and whose weight is a constant 8-bit weight DequantizeLinear made (zero
// point 0, one scale or one per output channel): conv2d_quantization's. Empty where the Conv
// is not of that form.
inline Attrs conv_quantization(Ctx& c) {
    const std::optional<Dequantized> x = as_dequantized(c, c.in(0)), w = as_dequantized(c, c.in(1));
    if (!x || !w || c.rank(w->q) < 3) return {};
    const BufferRef xs = constant_data(c, x->scale), xz = x->zero_point ? constant_data(c, *x->zero_point) : BufferRef();
    const BufferRef wq = constant_data(c, w->q), ws = constant_data(c, w->scale);
    const BufferRef wz = w->zero_point ? constant_data(c, *w->zero_point) : BufferRef();
    const int64_t O = c.shape(w->q)[0];
    const graph::TensorType& ws_type = c.type(w->scale);
    if (!xs.defined() || xs.size() != 1 || xs.dtype() != DataType::float_(32) || (x->zero_point && !xz.defined()) ||
        (xz.defined() && xz.size() != 1) || !wq.defined() || wq.dtype() != DataType::int_(8) || !ws.defined() ||
        ws.dtype() != DataType::float_(32) || (ws.size() != 1 && (ws.size() != O || ws_type.shape[0] != O)) ||
        (w->zero_point && !wz.defined()) || !zero_or_none(wz))
        return {};
    return conv2d_quantization(c.dtype(x->q), *static_cast<const float*>(xs.data()), xz.defined() ? zero_point_value(xz) : 0,
                               static_cast<const float*>(ws.data()), ws.size());
}

}  // namespace quantize_detail

// Conv, with a QDQ model's quantization kept on the conv2d where its data and weight are
// DequantizeLinear outputs (quantize_detail::conv_quantization): the float convolution of the
// dequantized values, which the graph's passes put on the 8-bit kernels.
inline std::vector<Value> convert_conv_of_dequantized(Ctx& c) {
    return {conv_of(c, c.in(0), c.in(1), c.has(2) ? std::optional<Value>(c.in(2)) : std::nullopt, c.out(),
                    quantize_detail::conv_quantization(c))};
}

// MatMulInteger: (A - a_zero_point) x (B - b_zero_point) in int32 (zero points per tensor, per
// row of A or per column of B): on the 8-bit kernels where B is a constant that fits them.
inline std::vector<Value> convert_matmul_integer(Ctx& c) {
    using namespace quantize_detail;
    if (std::optional<Value> p = integer_matmul_vnni(c, 0, 2, 1, 3)) return {renamed(c, *p, c.out())};
    Value a = centred(c, 0, 2, -2), b = centred(c, 1, 3, -1);
    return {c.g.cast(matmul_of(c, a, b, c.fresh("product")), DataType::int_(32), c.out())};
}

// ConvInteger: the convolution of (x - x_zero_point) and (w - w_zero_point) in int32 (the
// padding is the zero point: 0 after centring).
inline std::vector<Value> convert_conv_integer(Ctx& c) {
    using namespace quantize_detail;
    Value x = centred(c, 0, 2, 1), w = centred(c, 1, 3, 0);
    return {c.g.cast(conv_of(c, x, w, std::nullopt, c.fresh("conv")), DataType::int_(32), c.out())};
}


// QLinearMatMul: saturate(round((A - a_zp) x (B - b_zp) * a_scale * b_scale / y_scale) + y_zp).
inline std::vector<Value> convert_qlinear_matmul(Ctx& c) {
    using namespace quantize_detail;
    if (std::optional<Value> p = integer_matmul_vnni(c, 0, 2, 3, 5)) {
        c.ignore_input(1);
        return {requantize(c, c.g.cast(*p, DataType::float_(64), c.fresh("product")), 1, -2, 4, -1, 6, 7)};
    }
    Value a = centred(c, 0, 2, -2), b = centred(c, 3, 5, -1);
    return {requantize(c, matmul_of(c, a, b, c.fresh("product")), 1, -2, 4, -1, 6, 7)};
}

namespace quantize_detail {

// A float32 constant [n] (or a scalar's [1]) of `v`.
inline Value f32_constant(Ctx& c, const std::vector<float>& v, const std::string& what) {
    BufferRef b = BufferRef::allocate(DataType::float_(32), {int64_t(v.size())});
    std::copy(v.begin(), v.end(), static_cast<float*>(b.data()));
    return c.constant(b, what);
}

// QLinearConv on the blocked 8-bit convolution where it fits (x of 8 bits with one constant
// scale and zero point, a constant int8 weight of zero point 0 with one scale or one per
// output channel, an int32 bias, groups 1, C % 4 = 0, O % 16 = 0): the conv2d of the
// dequantized x and w carrying their quantization (as a QDQ Conv: conv_quantization), its
// float32 result requantized in float64. Exact but where a value lies within about 1e-7 of a
// rounding boundary of y_scale; std::nullopt otherwise (the exact float64 composition then).
inline std::optional<Value> qlinear_conv_8bit(Ctx& c) {
    const DataType u8 = DataType::uint(8), s8 = DataType::int_(8), f32 = DataType::float_(32);
    const Value x = c.in(0);
    const DataType xt = c.dtype(x);
    if ((xt != u8 && xt != s8) || c.rank(x) != 4 || c.i("group", 1) != 1) return std::nullopt;
    const BufferRef xs = constant_data(c, c.in(1)), xz = constant_data(c, c.in(2)), w = constant_data(c, c.in(3)),
                    ws = constant_data(c, c.in(4));
    const BufferRef wz = c.has(5) ? constant_data(c, c.in(5)) : BufferRef();
    const BufferRef bias = c.has(8) ? constant_data(c, c.in(8)) : BufferRef();
    if (!xs.defined() || xs.size() != 1 || xs.dtype() != f32 || !xz.defined() || xz.size() != 1 || xz.dtype() != xt ||
        !w.defined() || w.dtype() != s8 || c.rank(c.in(3)) != 4 || !ws.defined() || ws.dtype() != f32 ||
        (c.has(5) && !wz.defined()) || (c.has(8) && (!bias.defined() || bias.dtype() != DataType::int_(32))))
        return std::nullopt;
    const std::vector<int64_t> shape = c.shape(c.in(3));  // [O, C, KH, KW]
    const int64_t O = shape[0], C = shape[1], taps = w.size() / O;
    if (c.shape(x)[1] != C || C % 4 != 0 || O % 16 != 0 || (ws.size() != 1 && ws.size() != O) ||
        (bias.defined() && bias.size() != O))
        return std::nullopt;
    if (!zero_or_none(wz)) return std::nullopt;
    const float sx = *static_cast<const float*>(xs.data());
    const int64_t zx = zero_point_value(xz);
    const float* sw = static_cast<const float*>(ws.data());
    const Attrs quantization = conv2d_quantization(xt, sx, zx, sw, ws.size());
    if (quantization.items().empty()) return std::nullopt;
    auto scale_of = [&](int64_t o) { return sw[ws.size() == 1 ? 0 : o]; };
    BufferRef wd = BufferRef::allocate(f32, shape);
    for (int64_t i = 0; i < w.size(); ++i)
        static_cast<float*>(wd.data())[i] = float(static_cast<const int8_t*>(w.data())[i]) * scale_of(i / taps);
    std::vector<float> b(size_t(O), 0.0f);
    for (int64_t o = 0; o < O && bias.defined(); ++o)
        b[size_t(o)] = float(double(static_cast<const int32_t*>(bias.data())[o]) * double(sx) * double(scale_of(o)));
    Value xd = c.add("mul", {c.add("sub", {c.g.cast(x, f32, c.fresh("x_float")), f32_constant(c, {float(zx)}, "x_zero_point")}),
                             f32_constant(c, {sx}, "x_scale")});
    Value y = conv_of(c, xd, c.constant(wd, "w_float"), f32_constant(c, b, "bias_float"), c.fresh("conv"), quantization);
    return to_output_type(c, c.add("div", {c.g.cast(y, DataType::float_(64), c.fresh("conv_f64")), wide_param(c, 6, 4, -1)}),
                          7);
}

}  // namespace quantize_detail

// QLinearConv: on the 8-bit convolution where it fits (quantize_detail::qlinear_conv_8bit);
// else the convolution of the centred x and w plus the int32 bias (in x_scale * w_scale
// units), requantized like QLinearMatMul; w's scale and zero point per output channel.
inline std::vector<Value> convert_qlinear_conv(Ctx& c) {
    using namespace quantize_detail;
    if (std::optional<Value> y = qlinear_conv_8bit(c)) return {*y};
    Value x = centred(c, 0, 2, 1), w = centred(c, 3, 5, 0);
    std::optional<Value> bias;
    if (c.has(8)) bias = c.g.cast(c.in(8), DataType::float_(64), c.fresh("bias"));
    return {requantize(c, conv_of(c, x, w, bias, c.fresh("conv")), 1, 1, 4, 1, 6, 7)};
}

}  // namespace weft::onnx::detail
