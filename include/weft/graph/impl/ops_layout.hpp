// The operators of the blocked layout NCHW[x]c (the TVM paper's data layout transformation),
// which the convert_conv_layout pass introduces: layout_transform between NCHW and NCHW[x]c,
// pack_conv2d_weight (OIHW -> the blocked weight layout, folded at build time when the
// weight is a constant) and conv2d_nchwc (topi's blocked convolution, depthwise included).
#pragma once
#include "weft/graph/impl/host_evaluate.hpp"
#include "weft/graph/impl/op_helpers.hpp"
#include "weft/graph/impl/ops_nn.hpp"
#include "weft/topi/conv.hpp"
#include "weft/topi/x86.hpp"

namespace weft::graph::ops {

// ---- layout_transform ----------------------------------------------------------------
// Attributes: to = "NCHWc" (block: channels per block) or "NCHW" (channels: the count to
// keep). NCHW [N, C, H, W] <-> NCHW[b]c [N, ceil(C / b), H, W, b].

inline TensorType infer_layout_transform(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType& x = in[0];
    std::string to = a.get_string("to");
    if (to == "NCHWc") {
        check_rank(x, 4, "the NCHW data");
        int64_t b = a.get_int("block");
        WEFT_CHECK(b >= 1, "block must be positive, got ", b);
        return {{x.shape[0], (x.shape[1] + b - 1) / b, x.shape[2], x.shape[3], b}, x.dtype};
    }
    WEFT_CHECK(to == "NCHW", "attribute 'to' must be \"NCHW\" or \"NCHWc\", got \"", to, "\"");
    check_rank(x, 5, "the NCHW[x]c data");
    int64_t c = a.get_int("channels");
    WEFT_CHECK(c >= 1 && c <= x.shape[1] * x.shape[4], "channels = ", c, " must be in 1..", x.shape[1] * x.shape[4]);
    return {{x.shape[0], c, x.shape[2], x.shape[3]}, x.dtype};
}

inline Tensor compute_layout_transform(const std::vector<Tensor>& in, const Attrs& a) {
    if (a.get_string("to") == "NCHWc") return topi::layout_transform_nchw_to_nchwc(in[0], a.get_int("block"));
    return topi::layout_transform_nchwc_to_nchw(in[0], a.get_int("channels"));
}

// ---- pack_conv2d_weight --------------------------------------------------------------
// OIHW [O, I, KH, KW] -> [ceil(O/oc_bn), ceil(I/ic_bn), KH, KW, ic_bn, oc_bn]; with
// depthwise = 1, [C, 1, KH, KW] -> [ceil(C/oc_bn), 1, KH, KW, 1, oc_bn].

inline TensorType infer_pack_weight(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType& w = in[0];
    check_rank(w, 4, "the OIHW weight");
    int64_t ib = a.get_int("ic_bn", 1), ob = a.get_int("oc_bn");
    WEFT_CHECK(ib >= 1 && ob >= 1, "ic_bn and oc_bn must be positive");
    if (a.get_int("depthwise", 0)) {
        WEFT_CHECK(w.shape[1] == 1, "a depthwise weight has 1 input channel per group, got ", w.str());
        return {{(w.shape[0] + ob - 1) / ob, 1, w.shape[2], w.shape[3], 1, ob}, w.dtype};
    }
    return {{(w.shape[0] + ob - 1) / ob, (w.shape[1] + ib - 1) / ib, w.shape[2], w.shape[3], ib, ob}, w.dtype};
}

inline Tensor compute_pack_weight(const std::vector<Tensor>& in, const Attrs& a) {
    if (a.get_int("depthwise", 0)) return topi::pack_depthwise_weight_nchwc(in[0], a.get_int("oc_bn"));
    return topi::pack_conv2d_weight_nchwc(in[0], a.get_int("ic_bn"), a.get_int("oc_bn"));
}

// ---- conv2d_nchwc ----------------------------------------------------------------------
// data [N, C/ic_bn, H, W, ic_bn], packed weight; conv2d's attributes (groups 1, or the
// channel count with depthwise = 1), block_groups (1: groups of whole blocks, topi's
// conv2d_nchwc groups) -> [N, O/oc_bn, OH, OW, oc_bn].

inline TensorType infer_conv2d_nchwc(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType &x = in[0], &w = in[1];
    check_rank(x, 5, "the NCHW[x]c data");
    check_rank(w, 6, "the packed weight");
    check_same_dtype(x, w, "the data", "the weight");
    topi::Conv2dParams p = conv2d_params(a);
    bool depthwise = a.get_int("depthwise", 0) != 0;
    if (depthwise) {
        WEFT_CHECK(w.shape[0] == x.shape[1] && w.shape[5] == x.shape[4], "the packed depthwise weight ", w.str(),
                   " does not match the data's channel blocks ", x.str());
    } else {
        // The weights' input channel block is the data's or a multiple of it, or the real
        // channels of data that holds them all in one block (topi::conv2d_nchwc).
        const int64_t G = a.get_int("block_groups", 1);
        const bool real_channels = G == 1 && x.shape[1] == 1 && w.shape[1] == 1 && w.shape[4] < x.shape[4];
        WEFT_CHECK(G >= 1 && w.shape[0] % G == 0 &&
                       (real_channels ||
                        (w.shape[4] % x.shape[4] == 0 && G * w.shape[1] * w.shape[4] == x.shape[1] * x.shape[4])),
                   "the packed weight ", w.str(), " does not match the data's channel blocks ", x.str(),
                   G > 1 ? " in " + std::to_string(G) + " block groups" : "");
    }
    // topi's own output size and window checks (a stride of 0 divided by zero here before).
    const topi::Size2d out = topi::conv2d_out_size(x.shape[2], x.shape[3], w.shape[2], w.shape[3], p);
    return {{x.shape[0], w.shape[0], out.h, out.w, w.shape[5]}, x.dtype};
}

inline Tensor compute_conv2d_nchwc(const std::vector<Tensor>& in, const Attrs& a) {
    topi::Conv2dParams p = conv2d_params(a);
    // Depthwise: one group per channel of the blocked data, the zero channels that fill up
    // its last block included (the graph's groups attribute counts the real ones).
    if (a.get_int("depthwise", 0)) {
        p.groups = const_dim(in[0], 1) * const_dim(in[0], 4);
        return topi::depthwise_conv2d_nchwc(in[0], in[1], p);
    }
    p.groups = a.get_int("block_groups", 1);
    return topi::conv2d_nchwc(in[0], in[1], p);
}

inline void schedule_conv2d_nchwc(Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>&,
                                  const Attrs& a, const OpContext& c) {
    if (a.get_int("depthwise", 0)) topi::schedule_depthwise_conv2d_nchwc(s, op, out, c.target, c.config);
    else topi::schedule_conv2d_nchwc(s, op, out, c.target, c.config);
}

// ---- matmul with packed weights -----------------------------------------------------------
// pack_matmul_weight: B [K, N], width -> [ceil(N / width), K, width] (zeros past N);
// matmul_packed: x [M, K], those panels; n (N) -> x B [M, N] (topi::dense_packed): a matmul
// whose constant B the build packs once (pack_matmul_weights) instead of every run.

inline TensorType infer_pack_matmul_weight(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType& b = in[0];
    check_rank(b, 2, "B");
    const int64_t w = a.get_int("width");
    WEFT_CHECK(w >= 1, "the panel width must be positive, got ", w);
    return {{(b.shape[1] + w - 1) / w, b.shape[0], w}, b.dtype};
}

inline Tensor compute_pack_matmul_weight(const std::vector<Tensor>& in, const Attrs& a) {
    const Tensor& b = in[0];
    const int64_t w = a.get_int("width");
    const Expr N = b.shape()[1];
    return compute({make_int((const_shape(b)[1] + w - 1) / w), b.shape()[0], make_int(w)},
                   [&](Expr p, Expr k, Expr c) {
                       Expr j = p * make_int(w) + c;
                       return if_then_else(j < N, b(k, ir::min(j, N - 1)), ir::make_zero(b.dtype()));
                   },
                   "matmul_weight_packed");
}

inline TensorType infer_matmul_packed(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType &x = in[0], &p = in[1];
    check_rank(x, 2, "x");
    check_rank(p, 3, "the packed weight");
    check_same_dtype(x, p, "x", "the packed weight");
    const int64_t n = a.get_int("n");
    WEFT_CHECK(n >= 1 && p.shape[0] == (n + p.shape[2] - 1) / p.shape[2] && p.shape[1] == x.shape[1],
               "the packed weight ", p.str(), " is not the panels of a [", x.shape[1], ", ", n, "] matrix");
    return {{x.shape[0], n}, x.dtype};
}

// ---- matmuls on dot-product instructions ------------------------------------------------------
// bfloat16 (BuildOptions::precision = bf16): pack_bf16_weight B bf16 [K, N] -> [N/16, K/2, 16,
// 2]; matmul_bf16 x bf16 [M, K], those blocks -> float32 [M, N] (vdpbf16ps where the target has
// AVX512_BF16). 8-bit integers: pack_vnni_weight B int8 [K, N] -> [N/16, K/4, 16, 4];
// matmul_u8s8 x uint8 [M, K], those blocks -> int32 [M, N] (vpdpbusd where the target has
// AVX-512 VNNI, int32 multiply-adds elsewhere; the ONNX importer's MatMulInteger and QDQ
// MatMuls, precision int8). topi::pack_*_weight, matmul_bf16, matmul_u8s8.

// B [K, N] of `dtype` -> [N/16, K/step, 16, step].
inline auto infer_pack_dot_weight(int64_t step, DataType dtype) {
    return [step, dtype](const std::vector<TensorType>& in, const Attrs&) -> TensorType {
        const TensorType& b = in[0];
        check_rank(b, 2, "B");
        WEFT_CHECK(b.dtype == dtype, "B must be ", dtype.str(), ", got ", b.str());
        WEFT_CHECK(b.shape[0] % step == 0 && b.shape[1] % 16 == 0, "B ", b.str(), " must have a multiple of ", step,
                   " rows and of 16 columns");
        return {{b.shape[1] / 16, b.shape[0] / step, 16, step}, dtype};
    };
}

// x [M, K] of `a` times such blocks of `b` -> [M, N] of `out`.
inline auto infer_dot_matmul(int64_t step, DataType a, DataType b, DataType out) {
    return [=](const std::vector<TensorType>& in, const Attrs&) -> TensorType {
        const TensorType &x = in[0], &p = in[1];
        check_rank(x, 2, "x");
        WEFT_CHECK(x.dtype == a && p.dtype == b, "x must be ", a.str(), " and the packed weight ", b.str(), ", got ",
                   x.str(), " and ", p.str());
        WEFT_CHECK(p.shape.size() == 4 && p.shape[1] * step == x.shape[1] && p.shape[2] == 16 && p.shape[3] == step,
                   "the packed weight ", p.str(), " is not the blocks of a [", x.shape[1], ", N] matrix");
        return {{x.shape[0], p.shape[0] * 16}, out};
    };
}

// conv2d_nchwc on dot-product instructions: pack_conv2d_nchwc_bf16_weight /
// pack_conv2d_nchwc_u8s8_weight (ib: the data's channel block) re-block conv2d_nchwc's packed
// weight (float32 / int8) as pairs / quads of input channels; conv2d_nchwc_bf16 takes data
// bf16 [N, C/ib, H, W, ib] and that weight -> float32 [N, O/ob, OH, OW, ob]; conv2d_nchwc_u8s8
// data uint8 (its padding the attribute zero_point) -> int32 (precision int8).

inline auto infer_pack_conv2d_nchwc_dot_weight(int64_t step, DataType from, DataType to) {
    return [=](const std::vector<TensorType>& in, const Attrs& a) -> TensorType {
        const TensorType& w = in[0];
        check_rank(w, 6, "the packed weight");
        WEFT_CHECK(w.dtype == from, "the packed weight must be ", from.str(), ", got ", w.str());
        const int64_t ib = a.get_int("ib");
        WEFT_CHECK(ib >= step && ib % step == 0 && w.shape[4] % ib == 0 && w.shape[5] % 16 == 0, "the packed weight ",
                   w.str(), " cannot take steps of ", step, " of a data block of ", ib,
                   " channels in vectors of 16 output channels");
        return {{w.shape[0], w.shape[1] * w.shape[4] / ib, w.shape[2], w.shape[3], ib / step, w.shape[5], step}, to};
    };
}

inline auto infer_conv2d_nchwc_dot(int64_t step, DataType data, DataType weight, DataType out_type) {
    return [=](const std::vector<TensorType>& in, const Attrs& a) -> TensorType {
        const TensorType &x = in[0], &w = in[1];
        check_rank(x, 5, "the NCHW[x]c data");
        check_rank(w, 7, "the packed weight");
        WEFT_CHECK(x.dtype == data && w.dtype == weight, "the data must be ", data.str(), " and the weight ",
                   weight.str(), ", got ", x.str(), " and ", w.str());
        WEFT_CHECK(w.shape[1] == x.shape[1] && w.shape[4] * step == x.shape[4] && w.shape[6] == step, "the weight ",
                   w.str(), " does not match the data's channel blocks ", x.str());
        const topi::Conv2dParams p = conv2d_params(a);
        WEFT_CHECK(p.groups == 1 && p.dilation.h == 1 && p.dilation.w == 1, "groups and dilation must be 1");
        const int64_t zero_point = a.get_int("zero_point", 0);
        WEFT_CHECK(zero_point >= 0 && zero_point <= 255, "zero_point must be in [0, 255], got ", zero_point);
        const topi::Size2d out = topi::conv2d_out_size(x.shape[2], x.shape[3], w.shape[2], w.shape[3], p);
        return {{x.shape[0], w.shape[0], out.h, out.w, w.shape[5]}, out_type};
    };
}

// Whether a conv2d_nchwc_bf16 / _u8s8 of `data` reads a padded copy of it: where the
// target's AMX tiles (`amx`) will run it, which needs whole rows of the window (data blocks
// of a multiple of `channels`: 32 bytes).
inline bool amx_reads_padded_copy(const Tensor& data, bool amx, int64_t channels) {
    int64_t ib = 0;
    return amx && data.ndim() == 5 && ir::as_const_int(data.shape()[4], &ib) && ib % channels == 0;
}

inline void register_layout_ops() {
    register_op({.name = "pack_conv2d_nchwc_bf16_weight", .pattern = OpPattern::Injective,
                 .infer = infer_pack_conv2d_nchwc_dot_weight(2, f32, bf16),
                 .compute = [](const std::vector<Tensor>& in,
                               const Attrs& a) { return topi::pack_conv2d_nchwc_bf16_weight(in[0], a.get_int("ib")); },
                 .made_by_passes = true, .evaluate = host::pack_conv2d_nchwc_dot_weight});
    register_op({.name = "conv2d_nchwc_bf16", .pattern = OpPattern::OutEWiseFusable, .min_inputs = 2, .max_inputs = 2,
                 .infer = infer_conv2d_nchwc_dot(2, bf16, bf16, f32),
                 .compute =
                     [](const std::vector<Tensor>& in, const Attrs& a, const OpContext& c) {
                         return topi::conv2d_nchwc_bf16(in[0], in[1], conv2d_params(a), "conv2d_bf16",
                                                        amx_reads_padded_copy(in[0], topi::has_amx_bf16(c.target), 16));
                     },
                 .schedule = [](Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>&,
                                const Attrs&, const OpContext& c) { topi::schedule_conv2d_nchwc_bf16(s, op, out, c.target); },
                 .made_by_passes = true});
    register_op({.name = "pack_conv2d_nchwc_u8s8_weight", .pattern = OpPattern::Injective,
                 .infer = infer_pack_conv2d_nchwc_dot_weight(4, DataType::int_(8), DataType::int_(8)),
                 .compute = [](const std::vector<Tensor>& in,
                               const Attrs& a) { return topi::pack_conv2d_nchwc_u8s8_weight(in[0], a.get_int("ib")); },
                 .made_by_passes = true, .evaluate = host::pack_conv2d_nchwc_dot_weight});
    register_op({.name = "conv2d_nchwc_u8s8", .pattern = OpPattern::OutEWiseFusable, .min_inputs = 2, .max_inputs = 2,
                 .infer = infer_conv2d_nchwc_dot(4, DataType::uint(8), DataType::int_(8), DataType::int_(32)),
                 .compute =
                     [](const std::vector<Tensor>& in, const Attrs& a, const OpContext& c) {
                         return topi::conv2d_nchwc_u8s8(in[0], in[1], conv2d_params(a), a.get_int("zero_point", 0),
                                                        "conv2d_u8s8",
                                                        amx_reads_padded_copy(in[0], topi::has_amx_int8(c.target), 32));
                     },
                 .schedule = [](Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>&,
                                const Attrs&, const OpContext& c) { topi::schedule_conv2d_nchwc_u8s8(s, op, out, c.target); },
                 .made_by_passes = true});
    register_op({.name = "pack_bf16_weight", .pattern = OpPattern::Injective, .infer = infer_pack_dot_weight(2, bf16),
                 .compute = [](const std::vector<Tensor>& in, const Attrs&) { return topi::pack_bf16_weight(in[0]); },
                 .made_by_passes = true, .evaluate = host::pack_dot_weight});
    register_op({.name = "pack_vnni_weight", .pattern = OpPattern::Injective, .infer = infer_pack_dot_weight(4, DataType::int_(8)),
                 .compute = [](const std::vector<Tensor>& in, const Attrs&) { return topi::pack_vnni_weight(in[0]); },
                 .evaluate = host::pack_dot_weight});
    register_op({.name = "matmul_u8s8", .pattern = OpPattern::OutEWiseFusable, .min_inputs = 2, .max_inputs = 2,
                 .infer = infer_dot_matmul(4, DataType::uint(8), DataType::int_(8), DataType::int_(32)),
                 .compute = [](const std::vector<Tensor>& in,
                               const Attrs&) { return topi::matmul_u8s8(in[0], in[1], "matmul_u8s8"); },
                 .schedule = [](Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>&,
                                const Attrs&, const OpContext& c) { topi::schedule_matmul_u8s8(s, op, out, c.target); }});
    register_op({.name = "matmul_bf16", .pattern = OpPattern::OutEWiseFusable, .min_inputs = 2, .max_inputs = 2,
                 .infer = infer_dot_matmul(2, bf16, bf16, f32),
                 .compute = [](const std::vector<Tensor>& in,
                               const Attrs&) { return topi::matmul_bf16(in[0], in[1], "matmul_bf16"); },
                 .schedule = [](Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>&,
                                const Attrs&, const OpContext& c) { topi::schedule_matmul_bf16(s, op, out, c.target); },
                 .made_by_passes = true});
    using P = OpPattern;
    register_op({.name = "layout_transform", .pattern = P::Injective, .infer = infer_layout_transform,
                 .compute = compute_layout_transform, .made_by_passes = true, .evaluate = host::layout_transform});
    register_op({.name = "pack_conv2d_weight", .pattern = P::Injective, .infer = infer_pack_weight,
                 .compute = compute_pack_weight, .made_by_passes = true, .evaluate = host::pack_conv2d_weight});
    register_op({.name = "pack_matmul_weight", .pattern = P::Injective, .infer = infer_pack_matmul_weight,
                 .compute = compute_pack_matmul_weight, .made_by_passes = true, .evaluate = host::pack_matmul_weight});
    register_op({.name = "matmul_packed", .pattern = P::OutEWiseFusable, .min_inputs = 2, .max_inputs = 2,
                 .infer = infer_matmul_packed,
                 .compute =
                     [](const std::vector<Tensor>& in, const Attrs& a) {
                         return topi::dense_packed(in[0], in[1], a.get_int("n"), Tensor(), "matmul");
                     },
                 .schedule = schedule_template<topi::schedule_dense>, .made_by_passes = true});
    register_op({.name = "conv2d_nchwc", .pattern = P::OutEWiseFusable, .min_inputs = 2, .max_inputs = 2,
                 .infer = infer_conv2d_nchwc, .compute = compute_conv2d_nchwc, .schedule = schedule_conv2d_nchwc,
                 .made_by_passes = true});
}

}  // namespace weft::graph::ops
