// The ONNX importer's converters: one per ONNX op type, each adding graph nodes
// (graph/graph.hpp, docs/graph.md) with the semantics of the node's opset. The converters
// live in ops_attention.hpp, ops_control.hpp, ops_elementwise.hpp, ops_index.hpp, ops_nn.hpp, ops_norm.hpp,
// ops_quantize.hpp, ops_rnn.hpp, ops_sequence.hpp, ops_shape.hpp and ops_signal.hpp; this file
// is their table.
#pragma once
#include <map>

#include "weft/frontend/onnx/impl/ops_attention.hpp"
#include "weft/frontend/onnx/impl/ops_control.hpp"
#include "weft/frontend/onnx/impl/ops_conv_transpose.hpp"
#include "weft/frontend/onnx/impl/ops_deform_conv.hpp"
#include "weft/frontend/onnx/impl/ops_det.hpp"
#include "weft/frontend/onnx/impl/ops_elementwise.hpp"
#include "weft/frontend/onnx/impl/ops_index.hpp"
#include "weft/frontend/onnx/impl/ops_norm.hpp"
#include "weft/frontend/onnx/impl/ops_nn.hpp"
#include "weft/frontend/onnx/impl/ops_quantize.hpp"
#include "weft/frontend/onnx/impl/ops_rnn.hpp"
#include "weft/frontend/onnx/impl/ops_sequence.hpp"
#include "weft/frontend/onnx/impl/ops_signal.hpp"
#include "weft/frontend/onnx/impl/ops_shape.hpp"

namespace weft::onnx::detail {

// ---- the table ----------------------------------------------------------------------------------

inline std::map<std::string, OpEntry> make_converters() {
    std::map<std::string, OpEntry> t;
    auto fn = [](std::vector<Value> (*f)(Ctx&)) { return Converter(f); };
    t["Add"] = {binary("add")};
    t["Sub"] = {binary("sub")};
    t["Mul"] = {binary("mul")};
    t["Div"] = {binary("div")};
    t["Pow"] = {binary("pow")};
    t["Max"] = {variadic("maximum")};
    t["Min"] = {variadic("minimum")};
    t["Sum"] = {variadic("add")};
    t["Mean"] = {variadic("add", true)};
    t["Relu"] = {unary("relu")};
    t["Sigmoid"] = {unary("sigmoid")};
    t["Tanh"] = {unary("tanh")};
    t["Erf"] = {unary("erf"), 9};
    t["Exp"] = {unary("exp")};
    t["Log"] = {unary("log")};
    t["Sqrt"] = {unary("sqrt")};
    t["HardSwish"] = {unary("hard_swish"), 14};
    t["Neg"] = {[](Ctx& c) -> std::vector<Value> { return {neg(c, c.in(0), c.out())}; }};
    t["Abs"] = {[](Ctx& c) -> std::vector<Value> { return {abs_of(c, c.in(0), c.out())}; }};
    t["Reciprocal"] = {[](Ctx& c) -> std::vector<Value> {
        return {c.add("div", {c.scalar(1, c.dtype(c.in(0)), "one"), c.in(0)}, {}, c.out())};
    }};
    t["LeakyRelu"] = {[](Ctx& c) -> std::vector<Value> {
        return {c.g.leaky_relu(c.in(0), c.f("alpha", 0.01), c.out())};
    }};
    t["PRelu"] = {[](Ctx& c) -> std::vector<Value> {
        Value x = c.in(0), slope = legacy_broadcast(c, x, c.in(1));
        DataType t = c.dtype(x);
        // Opsets before 7 take a slope [C] for data [N, C, ...] (unidirectional broadcast).
        if (c.opset < 7 && c.rank(slope) == 1 && c.rank(x) > 2 && c.shape(slope)[0] == c.shape(x)[1]) {
            std::vector<int64_t> s{c.shape(slope)[0]};
            for (int64_t k = 2; k < c.rank(x); ++k) s.push_back(1);
            slope = reshape(c, slope, s);
        }
        Value pos = c.add("maximum", {x, c.scalar(0, t, "zero")});
        Value negp = c.add("mul", {c.add("minimum", {x, c.scalar(0, t, "zero")}), slope});
        return {c.add("add", {pos, negp}, {}, c.out())};
    }};
    t["Elu"] = {[](Ctx& c) -> std::vector<Value> {
        Value x = c.in(0);
        Value pos = c.add("relu", {x});
        return {c.add("add", {pos, elu_negative(c, x, c.f("alpha", 1.0))}, {}, c.out())};
    }};
    t["Selu"] = {[](Ctx& c) -> std::vector<Value> {
        Value x = c.in(0);
        double alpha = c.f("alpha", 1.67326319217681884765625), gamma = c.f("gamma", 1.05070102214813232421875);
        Value s = c.add("add", {c.add("relu", {x}), elu_negative(c, x, alpha)});
        return {c.add("mul", {s, c.scalar(gamma, c.dtype(x), "gamma")}, {}, c.out())};
    }};
    t["Softplus"] = {[](Ctx& c) -> std::vector<Value> { return {softplus(c, c.in(0), c.out())}; }};
    t["Mish"] = {[](Ctx& c) -> std::vector<Value> {  // x tanh(softplus(x))
        Value x = c.in(0);
        return {c.add("mul", {x, c.add("tanh", {softplus(c, x)})}, {}, c.out())};
    }, 18};
    t["Swish"] = {[](Ctx& c) -> std::vector<Value> { return {swish(c, c.in(0), c.f("alpha", 1.0), c.out())}; }, 24};
    t["Gelu"] = {fn(convert_gelu), 20};
    t["Celu"] = {fn(convert_celu), 12};
    t["SwiGLU"] = {fn(convert_swiglu), 28};
    t["HardSigmoid"] = {[](Ctx& c) -> std::vector<Value> {
        Value x = c.in(0);
        DataType t = c.dtype(x);
        Value y = c.add("add", {c.add("mul", {x, c.scalar(c.f("alpha", 0.2), t, "alpha")}),
                                c.scalar(c.f("beta", 0.5), t, "beta")});
        return {c.g.clip(y, 0.0, 1.0, c.out())};
    }};
    t["Floor"] = {unary("floor")};
    t["Ceil"] = {unary("ceil")};
    t["Round"] = {unary("round"), 11};
    t["Sign"] = {unary("sign"), 9};
    t["Sin"] = {unary("sin"), 7};
    t["Cos"] = {unary("cos"), 7};
    t["Tan"] = {unary("tan"), 7};
    t["Asin"] = {unary("asin"), 7};
    t["Acos"] = {unary("acos"), 7};
    t["Atan"] = {unary("atan"), 7};
    t["Sinh"] = {unary("sinh"), 9};
    t["Cosh"] = {unary("cosh"), 9};
    t["Asinh"] = {unary("asinh"), 9};
    t["Acosh"] = {unary("acosh"), 9};
    t["Atanh"] = {unary("atanh"), 9};
    t["IsNaN"] = {unary("isnan"), 9};
    t["IsInf"] = {[](Ctx& c) -> std::vector<Value> {
        return {c.add("isinf", {c.in(0)}, {{"positive", c.i("detect_positive", 1)}, {"negative", c.i("detect_negative", 1)}},
                      c.out())};
    }, 10};
    t["Not"] = {unary("logical_not")};
    t["Equal"] = {binary("equal")};
    t["Greater"] = {binary("greater")};
    t["Less"] = {binary("less")};
    t["GreaterOrEqual"] = {binary("greater_equal"), 12};
    t["LessOrEqual"] = {binary("less_equal"), 12};
    t["And"] = {binary("logical_and")};
    t["Or"] = {binary("logical_or")};
    t["Xor"] = {binary("logical_xor")};
    t["Mod"] = {[](Ctx& c) -> std::vector<Value> {
        return {c.add("mod", {c.in(0), c.in(1)}, {{"fmod", c.i("fmod", 0)}}, c.out())};
    }, 10};
    t["Softsign"] = {[](Ctx& c) -> std::vector<Value> {  // x / (1 + |x|)
        Value x = c.in(0);
        return {c.add("div", {x, c.add("add", {abs_of(c, x), c.scalar(1, c.dtype(x), "one")})}, {}, c.out())};
    }};
    t["ThresholdedRelu"] = {[](Ctx& c) -> std::vector<Value> {  // x where x > alpha, else 0
        Value x = c.in(0);
        DataType t = c.dtype(x);
        Value above = c.add("greater", {x, c.scalar(c.f("alpha", 1.0), t, "alpha")});
        return {c.g.where(above, x, c.scalar(0, t, "zero"), c.out())};
    }, 10};
    t["Shrink"] = {[](Ctx& c) -> std::vector<Value> {  // x + bias below -lambd, x - bias above lambd, else 0
        Value x = c.in(0);
        DataType t = c.dtype(x);
        const double lambd = c.f("lambd", 0.5), bias = c.f("bias", 0.0);
        Value below = c.add("less", {x, c.scalar(-lambd, t, "minus_lambd")});
        Value above = c.add("greater", {x, c.scalar(lambd, t, "lambd")});
        Value zero = c.scalar(0, t, "zero");
        Value hi = c.g.where(above, c.add("sub", {x, c.scalar(bias, t, "bias")}), zero, c.fresh("shrink"));
        return {c.g.where(below, c.add("add", {x, c.scalar(bias, t, "bias")}), hi, c.out())};
    }, 9};
    t["CastLike"] = {fn(convert_cast), 15};
    t["Clip"] = {fn(convert_clip)};
    t["Cast"] = {fn(convert_cast)};
    t["BitCast"] = {[](Ctx& c) -> std::vector<Value> {
        const DataType t = to_dtype(int(c.i("to")), "the 'to' attribute");
        const DataType from = c.onnx_dtype(0);
        if (from.is_float() && from.bits == 16) unsupported("BitCast of " + from.str() + " (computed in float32 here)");
        return {c.add("bitcast", {c.in(0)}, {{"dtype", t.str()}}, c.out())};
    }, 26};
    t["Gemm"] = {fn(convert_gemm)};
    t["MatMul"] = {fn(convert_matmul_of_dequantized)};
    t["RNN"] = {[](Ctx& c) { return convert_rnn(c, "RNN"); }};
    t["GRU"] = {[](Ctx& c) { return convert_rnn(c, "GRU"); }, 3};
    t["LSTM"] = {[](Ctx& c) { return convert_rnn(c, "LSTM"); }};
    t["QuantizeLinear"] = {fn(convert_quantize_linear), 10};
    t["DequantizeLinear"] = {fn(convert_dequantize_linear), 10};
    t["DynamicQuantizeLinear"] = {fn(convert_dynamic_quantize_linear), 11};
    t["MatMulInteger"] = {fn(convert_matmul_integer), 10};
    t["ConvInteger"] = {fn(convert_conv_integer), 10};
    t["QLinearMatMul"] = {fn(convert_qlinear_matmul), 10};
    t["QLinearConv"] = {fn(convert_qlinear_conv), 10};
    t["Attention"] = {fn(convert_attention), 23};
    t["RotaryEmbedding"] = {fn(convert_rotary_embedding), 23};
    t["CausalConvWithState"] = {fn(convert_causal_conv_with_state), 27};
    t["LinearAttention"] = {fn(convert_linear_attention), 27};
    t["Einsum"] = {fn(convert_einsum), 12};
    t["BitShift"] = {[](Ctx& c) -> std::vector<Value> {
        const std::string dir = c.s("direction");
        if (dir != "LEFT" && dir != "RIGHT") malformed("direction '" + dir + "' is neither LEFT nor RIGHT");
        // Unsigned types until opset 28, every integer type from it (an arithmetic right shift).
        if (c.opset < 28 && !c.dtype(c.in(0)).is_uint()) malformed("BitShift before opset 28 needs unsigned integers");
        return {c.add(dir == "LEFT" ? "shift_left" : "shift_right", {c.in(0), c.in(1)}, {}, c.out())};
    }, 11};
    t["BitwiseAnd"] = {binary("bitwise_and"), 18};
    t["BitwiseOr"] = {binary("bitwise_or"), 18};
    t["BitwiseXor"] = {binary("bitwise_xor"), 18};
    t["BitwiseNot"] = {unary("bitwise_not"), 18};
    t["Conv"] = {fn(convert_conv_of_dequantized)};
    t["ConvTranspose"] = {fn(convert_conv_transpose)};
    t["MaxPool"] = {[](Ctx& c) { return convert_pool(c, PoolKind::Max); }};
    t["MaxUnpool"] = {fn(convert_max_unpool), 9};
    t["DeformConv"] = {fn(convert_deform_conv), 19};
    t["Det"] = {fn(convert_det), 11};
    t["AveragePool"] = {[](Ctx& c) { return convert_pool(c, PoolKind::Average); }};
    t["LpPool"] = {[](Ctx& c) { return convert_pool(c, PoolKind::Lp); }, 2};
    t["GlobalAveragePool"] = {[](Ctx& c) { return convert_global_pool(c, false); }};
    t["GlobalMaxPool"] = {[](Ctx& c) { return convert_global_pool(c, true); }};
    t["BatchNormalization"] = {fn(convert_batch_norm)};
    t["InstanceNormalization"] = {fn(convert_instance_norm)};
    t["LayerNormalization"] = {fn(convert_layer_norm), 17};
    t["RMSNormalization"] = {fn(convert_rms_norm), 23};
    t["LpNormalization"] = {fn(convert_lp_norm)};
    t["MeanVarianceNormalization"] = {fn(convert_mvn), 9};
    t["GroupNormalization"] = {fn(convert_group_norm), 18};
    t["Softmax"] = {[](Ctx& c) { return convert_softmax(c, false); }};
    t["LogSoftmax"] = {[](Ctx& c) { return convert_softmax(c, true); }};
    t["NegativeLogLikelihoodLoss"] = {fn(convert_nll_loss), 12};
    t["SoftmaxCrossEntropyLoss"] = {fn(convert_softmax_cross_entropy), 12};
    t["ArgMax"] = {arg_extreme("argmax")};
    t["ArgMin"] = {arg_extreme("argmin")};
    t["ReduceProd"] = {reduction("prod", 18)};
    t["ReduceSum"] = {reduction("sum", 13)};
    t["ReduceMean"] = {reduction("mean", 18)};
    t["ReduceMax"] = {reduction("max", 18)};
    t["ReduceMin"] = {reduction("min", 18)};
    t["ReduceSumSquare"] = {reduction("sum", 18, 2)};
    t["ReduceL2"] = {reduction("sum", 18, 3)};
    t["ReduceL1"] = {reduction("sum", 18, 4)};
    t["ReduceLogSum"] = {reduction("sum", 18, 5)};
    t["ReduceLogSumExp"] = {reduction("sum", 18, 6)};
    t["Reshape"] = {fn(convert_reshape)};
    t["Flatten"] = {[](Ctx& c) -> std::vector<Value> { return {c.g.flatten(c.in(0), c.i("axis", 1), c.out())}; }};
    t["Transpose"] = {[](Ctx& c) -> std::vector<Value> { return {c.g.transpose(c.in(0), c.ints("perm"), c.out())}; }};
    t["Concat"] = {fn(convert_concat)};
    t["CenterCropPad"] = {fn(convert_center_crop_pad), 18};
    t["Split"] = {fn(convert_split), 2};
    t["Slice"] = {fn(convert_slice)};
    t["Pad"] = {fn(convert_pad), 2};
    t["Squeeze"] = {[](Ctx& c) { return convert_squeeze(c, false); }};
    t["Unsqueeze"] = {[](Ctx& c) { return convert_squeeze(c, true); }};
    t["Gather"] = {fn(convert_gather)};
    t["Where"] = {[](Ctx& c) -> std::vector<Value> { return {c.g.where(c.in(0), c.in(1), c.in(2), c.out())}; }, 9};
    t["Expand"] = {fn(convert_expand), 8};
    t["Tile"] = {fn(convert_tile)};
    t["Identity"] = {fn(convert_identity)};
    t["Dropout"] = {fn(convert_identity)};
    t["GatherElements"] = {fn(convert_gather_elements), 11};
    t["ScatterElements"] = {fn(convert_scatter_elements), 11};
    t["Scatter"] = {fn(convert_scatter_elements), 9};
    t["ScatterND"] = {fn(convert_scatter_nd), 11};
    t["TopK"] = {fn(convert_topk)};
    t["TensorScatter"] = {fn(convert_tensor_scatter), 24};
    t["Compress"] = {fn(convert_compress), 9};
    t["ReverseSequence"] = {fn(convert_reverse_sequence), 10};
    t["LRN"] = {fn(convert_lrn)};
    t["GatherND"] = {[](Ctx& c) -> std::vector<Value> {
        return {c.add("gather_nd", {c.in(0), c.in(1)}, {{"batch_dims", c.i("batch_dims", 0)}}, c.out())};
    }, 11};
    t["CumSum"] = {[](Ctx& c) { return convert_cumulative(c, "cumsum"); }, 11};
    t["CumProd"] = {[](Ctx& c) { return convert_cumulative(c, "cumprod"); }, 26};
    t["Trilu"] = {fn(convert_trilu), 14};
    t["DepthToSpace"] = {fn(convert_depth_to_space)};
    t["SpaceToDepth"] = {fn(convert_space_to_depth)};
    t["Range"] = {fn(convert_range), 11};
    t["EyeLike"] = {fn(convert_eye_like), 9};
    t["HannWindow"] = {window(Window::Hann), 17};
    t["HammingWindow"] = {window(Window::Hamming), 17};
    t["BlackmanWindow"] = {window(Window::Blackman), 17};
    t["OneHot"] = {fn(convert_one_hot), 9};
    t["Hardmax"] = {fn(convert_hardmax)};
    t["Resize"] = {[](Ctx& c) { return convert_resize(c, false); }, 10};
    t["GridSample"] = {fn(convert_grid_sample), 16};
    t["RoiAlign"] = {fn(convert_roi_align), 10};
    t["DFT"] = {fn(convert_dft), 17};
    t["STFT"] = {fn(convert_stft), 17};
    t["MelWeightMatrix"] = {fn(convert_mel_weight_matrix), 17};
    t["Col2Im"] = {fn(convert_col2im), 18};
    t["AffineGrid"] = {fn(convert_affine_grid), 20};
    t["Upsample"] = {[](Ctx& c) { return convert_resize(c, true); }, 7};
    t["If"] = {fn(convert_if)};
    t["Loop"] = {fn(convert_loop)};
    t["Scan"] = {fn(convert_scan)};
    t["SequenceEmpty"] = {fn(convert_sequence_empty), 11};
    t["SequenceConstruct"] = {fn(convert_sequence_construct), 11};
    t["SequenceAt"] = {fn(convert_sequence_at), 11};
    t["SequenceInsert"] = {fn(convert_sequence_insert), 11};
    t["SequenceErase"] = {fn(convert_sequence_erase), 11};
    t["SequenceLength"] = {fn(convert_sequence_length), 11};
    t["ConcatFromSequence"] = {fn(convert_concat_from_sequence), 11};
    t["SplitToSequence"] = {fn(convert_split_to_sequence), 11};
    t["Constant"] = {fn(convert_constant)};
    t["ConstantOfShape"] = {fn(convert_constant_of_shape), 9};
    t["Shape"] = {fn(convert_shape)};
    t["Size"] = {[](Ctx& c) -> std::vector<Value> {
        return {c.named_constant(0, int64_buffer({product(c.shape(c.in(0)))}, {}))};
    }};
    return t;
}

inline std::map<std::string, OpEntry>& converters() {
    static std::map<std::string, OpEntry> table = make_converters();
    return table;
}

}  // namespace weft::onnx::detail
