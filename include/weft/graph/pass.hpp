// Graph passes: functions Graph -> Graph that graph::build runs, in order, before fusion.
//
//   graph::PassPipeline p = graph::default_pipeline({});   // what build() runs for the CPU
//   std::cout << p.str();          // "eliminate_dead_code -> eliminate_common_subexpressions -> ..."
//   graph::Graph h = p.run(g);     // or one pass: graph::fold_constants(g)
//
// Each pass returns a new graph and leaves its argument alone. A rewritten graph keeps the
// names of the nodes it keeps, the outputs (names, order, types) and the inputs (all of
// them, in order, even the ones no output reads). A pass that finds nothing to do returns a
// copy of its argument (constants' data shared, not copied). A malformed graph (a cycle, a
// missing input, an unknown operator) is a weft::Error naming the pass and the node.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "weft/graph/graph.hpp"
#include "weft/graph/module.hpp"

namespace weft::graph {

struct Pass {
    std::string name;
    std::function<Graph(const Graph&)> function;
};

class PassPipeline {
public:
    PassPipeline() = default;
    explicit PassPipeline(std::vector<Pass> passes) : passes_(std::move(passes)) {}

    PassPipeline& add(Pass p);
    const std::vector<Pass>& passes() const { return passes_; }
    bool empty() const { return passes_.empty(); }
    // The pass names in order: "eliminate_dead_code -> fold_constants" ("(no passes)" if none).
    std::string str() const;
    // Applies every pass in order. A pass that changes the outputs' names or types is an
    // internal error naming it. With `phases`, appends each pass's time ("pass <name>").
    Graph run(const Graph& g, std::vector<BuildPhase>* phases = nullptr) const;

private:
    std::vector<Pass> passes_;
};

// ---- the passes ------------------------------------------------------------------------

// Removes the operator nodes and constants that no output depends on (inputs stay).
Graph eliminate_dead_code(const Graph& g);

// Merges operator nodes with the same operator, attributes and inputs into the first of
// them; with `merge_constants`, also constants of the same dtype, shape and bytes.
Graph eliminate_common_subexpressions(const Graph& g, bool merge_constants = true);

// Evaluates every operator node whose inputs are all constants (transitively) at build
// time: the constant part of the graph is compiled with graph::build (passes off) and run
// once on the host, and each of its values that the rest of the graph (or an output) reads
// becomes a constant of the same name.
Graph fold_constants(const Graph& g);

// Folds a chain of per-channel affine steps after a conv2d or dense with a constant
// weight into that weight and one bias_add: batch_norm, bias_add, and add / sub / mul / div
// by a constant that varies only along the channel axis (axis 1). Each step must be the
// only reader of the one before (and not an output); float32 and float64 only.
//   conv2d(x, w) -> batch_norm(g, b, m, v)   =>  conv2d(x, w * k) -> bias_add(b - m * k),
//   k = g / sqrt(v + eps), per output channel.
// The new conv2d / dense keeps its name and the bias_add takes the last step's; without a
// shift (only mul / div) there is no bias_add and the conv2d / dense takes the last step's.
Graph fold_scale_axis(const Graph& g);

// Replaces operators by cheaper ones that compute the same values: pow(x, 2) by x * x, and
// dense(x, W) with a constant W by matmul(x, W^T) with W^T a transpose that fold_constants
// evaluates at build time (matmul reads few rows of x against an operand in place; dense
// packs W on every run); a pad by zeros is dropped, or folded into the average pool after
// it (the padding counted); a conv2d's outer window taps that read
// only padding at every output are cut (its constant weight sliced, the padding moved: an
// atrous conv whose rate reaches past the map is a smaller window).
Graph simplify_operators(const Graph& g);

// Converts convolutions to the blocked layout NCHW[x]c (conv2d_nchwc, weights packed by
// pack_conv2d_weight nodes), keeping element-wise operators and pools between them
// blocked, with layout_transform nodes only where a blocked chain meets an operator that
// works in NCHW (dense, reshape, softmax, the graph's outputs). Depthwise convolutions included; grouped
// ones and channel counts no block divides stay in NCHW.
// The channel blocks are planned for `target` (its vector width; Target::host() by default).
Graph convert_conv_layout(const Graph& g, const Target& target = Target::host());

// A matmul whose right operand B is a constant (a linear layer's weight) packs B into column
// panels on every run, or reads it in place for a few rows; it becomes matmul_packed of x and
// pack_matmul_weight(B), which fold_constants packs once at build: faster at every row count
// measured (benchmarks/RESULTS.md, "Matmul weights packed at build"). Panels
// for `target`'s vector width; CPU only, with convert_conv_layout (BuildOptions::convert_layout).
Graph pack_matmul_weights(const Graph& g, const Target& target = Target::host());

// BuildOptions::precision = bf16: each matmul whose right operand is constant float32 (a
// linear layer's weight, after simplify_operators), with an even K and N a multiple of 16,
// becomes matmul_bf16 of cast(x, bfloat16) and pack_bf16_weight(cast(B, bfloat16)), which
// fold_constants converts and packs once; its float32 result and what follows are unchanged.
// Other layers stay float32.
Graph convert_matmul_bf16(const Graph& g);
// ... and each conv2d_nchwc (after convert_conv_layout) of constant weights, groups and
// dilation 1, whose data blocks hold pairs of channels and output blocks vectors of 16,
// becomes conv2d_nchwc_bf16 of cast(data, bfloat16) and its weight re-blocked in bfloat16
// pairs (pack_conv2d_nchwc_bf16_weight); depthwise and grouped convolutions stay float32.
Graph convert_conv_bf16(const Graph& g);

// BuildOptions::precision = int8: each matmul of a float32 x [M, K] and a constant float32
// weight [K, N] (K % 4 = 0, N % 16 = 0), and each conv2d_nchwc (after convert_conv_layout) of
// a constant weight, groups and dilation 1, data blocks of a multiple of 4 channels and output
// blocks of 16 (not depthwise), runs on 8-bit integers: x quantized to uint8 with the scale and
// zero point of its range over `calibration` (the float32 graph run on each input map;
// min-max, widened to hold 0), the weight to int8 per output channel (symmetric, max |W| /
// 127 over the channel), matmul_u8s8 / conv2d_nchwc_u8s8 (its padding the zero point), then
// the zero point's correction and the scales as its epilogue (float32 out). A weft::Error
// where `calibration` is empty or lacks an input.
// A layer whose quantization its model gives (a conv2d with the attributes
// quantized_input_scale, quantized_input_zero_point and quantized_weight_scales, as the ONNX
// importer writes them for a QDQ model's Conv) is quantized at those rather than calibrated.
// `percentile` (BuildOptions::calibration_percentile): 100 is min-max; below, each range
// leaves out (100 - percentile) / 2 percent of the calibration values at each end. A layer
// `ranges` has (by its name: calibrate_int8) is not calibrated; the others are, on g.
Graph quantize_int8(const Graph& g, const std::vector<std::map<std::string, BufferRef>>& calibration,
                    double percentile = 100.0, const ActivationRanges& ranges = {});
// The activation ranges quantize_int8 gives g's layers when g is built with `options`
// (options.calibration, options.calibration_percentile): g made at each calibration input's
// sizes (a graph with symbolic dimensions takes inputs of any size within its bounds), the
// float32 passes, the layers' inputs measured. build() calls it for Precision::int8; keep its
// result in BuildOptions::activation_ranges to build again without calibrating.
ActivationRanges calibrate_int8(const Graph& g, const BuildOptions& options, const Target& target = Target::host());
// Whatever the precision (CPU, after convert_conv_layout): only the layers whose quantization
// their model gives run on the 8-bit kernels, as quantize_int8 runs them; no calibration.
Graph convert_quantized_convs(const Graph& g);

// The passes `options` switches on, in the order build() runs them:
// eliminate_dead_code, eliminate_common_subexpressions, fold_constants, fold_scale_axis,
// simplify_operators, convert_matmul_bf16 (with BuildOptions::precision = bf16, CPU only),
// convert_conv_layout, convert_conv_bf16 (bf16 again), quantize_int8 (precision = int8, CPU
// only; else convert_quantized_convs), pack_matmul_weights and fold_constants again (the
// transposed and packed weights), then
// eliminate_dead_code again (the folds leave the constants they replaced unread).
// `target` is what the graph is built for: convert_conv_layout runs for a CPU only (the
// blocked layout's channel block is a CPU's vector width; topi::cuda keeps NCHW).
PassPipeline default_pipeline(const BuildOptions& options, const Target& target = Target::host());

}  // namespace weft::graph
