// The graph's neural-network operators: conv2d, dense, matmul, batch_matmul, pooling,
// softmax, layer_norm, batch_norm, bias_add and the reductions.
#pragma once
#include "weft/graph/impl/op_helpers.hpp"
#include "weft/topi/cuda.hpp"
#include "weft/topi/topi.hpp"

namespace weft::graph::ops {

// ---- conv2d ---------------------------------------------------------------------------------
// Attributes: strides {h, w}, pads {top, left, bottom, right}, dilations {h, w}, groups.
// x [N, C, H, W], w [O, C / groups, KH, KW].

inline topi::Conv2dParams conv2d_params(const Attrs& a) {
    auto s = pair_attr(a, "strides", 1), d = pair_attr(a, "dilations", 1), p = pads_attr(a);
    return {.stride = {s[0], s[1]}, .padding = {p[0], p[1], p[2], p[3]}, .dilation = {d[0], d[1]},
            .groups = a.get_int("groups", 1)};
}

// A depthwise convolution (groups = C, one input channel per group) gets topi's own kernel.
inline bool is_depthwise(int64_t channels, const std::vector<int64_t>& w, int64_t groups) {
    return groups > 1 && groups == channels && w[1] == 1 && w[0] % channels == 0;
}

inline TensorType infer_conv2d(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType &x = in[0], &w = in[1];
    check_rank(x, 4, "the data");
    check_rank(w, 4, "the weight");
    check_float(x, "the data");
    check_same_dtype(x, w, "the data", "the weight");
    topi::Conv2dParams p = conv2d_params(a);
    int64_t g = p.groups;
    WEFT_CHECK(g >= 1 && x.shape[1] % g == 0 && w.shape[0] % g == 0, "groups = ", g, " must divide the ",
               x.shape[1], " input channels and the ", w.shape[0], " output channels");
    WEFT_CHECK(w.shape[1] * g == x.shape[1], "the weight has ", w.shape[1], " input channels per group; data with ",
               x.shape[1], " channels in ", g, " group(s) needs ", x.shape[1] / g);
    // topi's own output size and window checks: what this accepts, the computes build.
    const topi::Size2d out = topi::conv2d_out_size(x.shape[2], x.shape[3], w.shape[2], w.shape[3], p);
    return {{x.shape[0], w.shape[0], out.h, out.w}, x.dtype};
}

inline Tensor compute_conv2d(const std::vector<Tensor>& in, const Attrs& a) {
    topi::Conv2dParams p = conv2d_params(a);
    if (is_depthwise(const_dim(in[0], 1), const_shape(in[1]), p.groups))
        return topi::depthwise_conv2d_nchw(in[0], in[1], p);
    return topi::conv2d_nchw(in[0], in[1], p);
}

inline void schedule_conv2d(Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>& in,
                            const Attrs& a, const OpContext& c) {
    if (is_depthwise(const_dim(in[0], 1), const_shape(in[1]), a.get_int("groups", 1)))
        topi::schedule_depthwise_conv2d_nchw(s, op, out, c.target, c.config);
    else
        topi::schedule_conv2d_nchw(s, op, out, c.target, c.config);
}

// One GPU thread per output element, its window summed in a register; the padding stage
// inlined: the default of 1x1 strided convolutions (cuda.conv.strided_tiled = 0). topi::cuda's
// tiled schedule once did not build for strides (its shared tile's bounds grew with the block
// index) and does since it reads the window's steps. Threads are
// a tile of output pixels whose sizes divide the image (no tail: the register's region
// stays one element), blocks the rest. Knobs: cuda.conv_untiled.tx (the most threads along
// a row) and .threads (the most in a block).
inline void gpu_schedule_conv2d_untiled(Schedule& s, const Tensor& op, const Tensor& out, const Config& config) {
    for (const Tensor& t : op.op().input_tensors())
        if (t.op()->is_compute()) s[t].compute_inline();  // the padding
    auto divisor_at_most = [](int64_t n, int64_t cap) {
        for (int64_t d = std::min(n, cap); d > 1; --d)
            if (n % d == 0) return d;
        return int64_t(1);
    };
    std::vector<int64_t> shape = const_shape(out);
    const int64_t tx_cap = config.define("cuda.conv_untiled.tx", {8, 16, 32, 64, 128}, 64);
    const int64_t threads_cap = config.define("cuda.conv_untiled.threads", {64, 128, 256, 512}, 256);
    const int64_t tx = divisor_at_most(shape[3], std::min(tx_cap, threads_cap)),
                  ty = divisor_at_most(shape[2], std::max<int64_t>(1, threads_cap / tx));
    Stage o = s[out];
    auto [yo, yi] = o.split(out.axis(2), ty);
    auto [xo, xi] = o.split(out.axis(3), tx);
    o.reorder({out.axis(0), out.axis(1), yo, xo, yi, xi});
    IterVar nc = o.fuse(out.axis(0), out.axis(1));
    o.bind(nc, block_z());
    o.bind(yo, block_y());
    o.bind(xo, block_x());
    o.bind(yi, thread_y());
    o.bind(xi, thread_x());
    if (!out.same_as(op)) {
        s[op].set_scope("local");
        s[op].compute_at(o, xi);
    }
}

inline void gpu_schedule_conv2d(Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>& in,
                                const Attrs& a, const OpContext& context) {
    auto strides = pair_attr(a, "strides", 1);
    // Strided: topi's tiled schedule (window_steps sizes its shared tile for the stride) or one
    // thread per output (cuda.conv.strided_tiled; the tiled one's own knobs then keep their
    // hand-chosen values). Tiled by default for windows wider than 1x1, where the tuner took it
    // on ResNet-50's layers; its 1x1 ones gained little (docs/tuning.md, "Tuning for CUDA").
    const int64_t kh = const_shape(in[1])[2];
    if ((strides[0] > 1 || strides[1] > 1) && !context.config.define_bool("cuda.conv.strided_tiled", kh > 1))
        return gpu_schedule_conv2d_untiled(s, op, out, context.config);
    if (is_depthwise(const_dim(in[0], 1), const_shape(in[1]), a.get_int("groups", 1)))
        topi::cuda::schedule_depthwise_conv2d_nchw(s, op, out, context.config);
    else
        topi::cuda::schedule_conv2d_nchw(s, op, out, context.config);
}

// recurrent's attributes: kind ("RNN", "GRU", "LSTM"), activations (comma-separated ONNX
// names), alphas, betas, clip, linear_before_reset, input_forget, reverse
// (topi::RecurrentParams).
inline topi::RecurrentParams recurrent_params(const Attrs& a) {
    topi::RecurrentParams p;
    p.kind = a.get_string("kind", "LSTM");
    std::string names = a.get_string("activations", "");
    for (size_t at = 0; !names.empty() && at <= names.size();) {
        size_t comma = names.find(',', at);
        if (comma == std::string::npos) comma = names.size();
        p.activations.push_back(names.substr(at, comma - at));
        at = comma + 1;
    }
    p.alphas = a.get_floats("alphas");
    p.betas = a.get_floats("betas");
    p.clip = a.get_float("clip", 0.0);
    p.linear_before_reset = a.get_int("linear_before_reset", 0) != 0;
    p.input_forget = a.get_int("input_forget", 0) != 0;
    p.reverse = a.get_int("reverse", 0) != 0;
    return p;
}

// recurrent's inputs: xw, rt, rb, h0, for LSTM c0 and the peepholes, then optionally the
// sequence lengths.
inline Tensor compute_recurrent(const std::vector<Tensor>& in, const Attrs& a) {
    const topi::RecurrentParams p = recurrent_params(a);
    const size_t states = p.kind == "LSTM" ? 6 : 4;
    WEFT_CHECK(in.size() == states || in.size() == states + 1, p.kind, " takes ", states, " inputs (", states + 1,
               " with the sequence lengths), got ", in.size());
    return topi::recurrent(in[0], in[1], in[2], in[3], states == 6 ? in[4] : Tensor(), states == 6 ? in[5] : Tensor(),
                           in.size() > states ? in[states] : Tensor(), p);
}

inline void schedule_recurrent_group(Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>&,
                                     const Attrs&, const OpContext& context) {
    WEFT_ICHECK(op.same_as(out), "recurrent is opaque: nothing fuses into it");
    topi::schedule_recurrent(s, op, context.target);
}

// The GPU schedule of an operator whose topi::cuda schedule is a template of (s, op, out, config).
template <void (*F)(Schedule&, const Tensor&, const Tensor&, const Config&)>
void gpu_schedule_template(Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>&, const Attrs&,
                           const OpContext& context) {
    F(s, op, out, context.config);
}

// The CPU schedule of an operator whose topi schedule is a template of (s, op, out, target, config).
template <void (*F)(Schedule&, const Tensor&, const Tensor&, const Target&, const Config&)>
void schedule_template(Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>&, const Attrs&,
                       const OpContext& context) {
    F(s, op, out, context.target, context.config);
}

// The target the CPU-planned computes (linalg's packed layouts, softmax's exp) plan for: the
// group's CPU target; for CUDA, an AVX-512 CPU's (panels of 64 columns, the layout
// topi::cuda's GEMM schedules read through and were measured with), whatever CPU builds it.
inline Target compute_target(const Target& target) { return target.is_cuda() ? Target::x86_avx512() : target; }

// ---- bias_add, batch_norm ------------------------------------------------------------------

inline TensorType infer_bias_add(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType &x = in[0], &b = in[1];
    int64_t axis = normalize_axis(a.get_int("axis", 1), x.shape.size());
    WEFT_CHECK(b.shape.size() == 1 && b.shape[0] == x.shape[size_t(axis)], "the bias must have shape [",
               x.shape[size_t(axis)], "] (the data's extent along axis ", axis, "), got ", b.str());
    check_same_dtype(x, b, "the data", "the bias");
    return x;
}

inline Tensor compute_bias_add(const std::vector<Tensor>& in, const Attrs& a) {
    const Tensor &x = in[0], &b = in[1];
    size_t axis = size_t(normalize_axis(a.get_int("axis", 1), size_t(x.ndim())));
    return te::compute(
        x.shape(), [&](const std::vector<Expr>& i) { return x.at(i) + b(i[axis]); }, "bias_add");
}

// Inputs x, gamma, beta, mean, var (each [C], C = x's axis 1); attribute epsilon.
inline TensorType infer_batch_norm(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType& x = in[0];
    WEFT_CHECK(x.shape.size() >= 2, "the data must have at least 2 dimensions (N, C, ...), got ", x.str());
    check_float(x, "the data");
    const char* names[] = {"gamma", "beta", "mean", "var"};
    for (size_t k = 1; k < 5; ++k) {
        WEFT_CHECK(in[k].shape == std::vector<int64_t>{x.shape[1]}, names[k - 1], " must have shape [", x.shape[1],
                   "], got ", in[k].str());
        check_same_dtype(x, in[k], "the data", names[k - 1]);
    }
    topi::check_norm_epsilon(a.get_float("epsilon", 1e-5), "batch_norm");
    return x;
}

inline Tensor compute_batch_norm(const std::vector<Tensor>& in, const Attrs& a) {
    const Tensor &x = in[0], &gamma = in[1], &beta = in[2], &mean = in[3], &var = in[4];
    Expr eps = ir::make_const(x.dtype(), a.get_float("epsilon", 1e-5));
    return te::compute(
        x.shape(),
        [&](const std::vector<Expr>& i) {
            Expr c = i[1];
            return (x.at(i) - mean(c)) * (gamma(c) / ir::sqrt(var(c) + eps)) + beta(c);
        },
        "batch_norm");
}

// ---- dense, matmul, batch_matmul ----------------------------------------------------------

inline TensorType infer_dense(const std::vector<TensorType>& in, const Attrs&) {
    const TensorType &x = in[0], &w = in[1];
    check_rank(x, 2, "the data");
    check_rank(w, 2, "the weight");
    check_same_dtype(x, w, "the data", "the weight");
    WEFT_CHECK(x.shape[1] == w.shape[1], "the data has ", x.shape[1], " features, the weight [N, K] expects K = ",
               w.shape[1]);
    return {{x.shape[0], w.shape[0]}, x.dtype};
}

inline TensorType infer_matmul(const std::vector<TensorType>& in, const Attrs&) {
    const TensorType &a = in[0], &b = in[1];
    check_rank(a, 2, "A");
    check_rank(b, 2, "B");
    check_same_dtype(a, b, "A", "B");
    WEFT_CHECK(a.shape[1] == b.shape[0], "A's columns (", a.shape[1], ") must equal B's rows (", b.shape[0], ")");
    return {{a.shape[0], b.shape[1]}, a.dtype};
}

inline TensorType infer_batch_matmul(const std::vector<TensorType>& in, const Attrs&) {
    const TensorType &a = in[0], &b = in[1];
    check_rank(a, 3, "A");
    check_rank(b, 3, "B");
    check_same_dtype(a, b, "A", "B");
    WEFT_CHECK(a.shape[0] == b.shape[0] || a.shape[0] == 1 || b.shape[0] == 1, "batches ", a.shape[0], " and ",
               b.shape[0], " differ");
    WEFT_CHECK(a.shape[2] == b.shape[1], "A's columns (", a.shape[2], ") must equal B's rows (", b.shape[1], ")");
    return {{std::max(a.shape[0], b.shape[0]), a.shape[1], b.shape[2]}, a.dtype};
}

// ---- pooling --------------------------------------------------------------------------------
// Attributes: kernel {h, w} (required), strides, pads, dilations, count_include_pad (avg).

inline topi::Pool2dParams pool_params(const Attrs& a) {
    auto k = a.get_ints("kernel"), s = pair_attr(a, "strides", 1), p = pads_attr(a), d = pair_attr(a, "dilations", 1);
    WEFT_CHECK(k.size() == 2, "attribute 'kernel' must have 2 values {h, w}");
    return {.kernel = {k[0], k[1]}, .stride = {s[0], s[1]}, .padding = {p[0], p[1], p[2], p[3]},
            .count_include_pad = a.get_int("count_include_pad", 0) != 0, .dilation = {d[0], d[1]},
            .ceil_mode = a.get_int("ceil_mode", 0) != 0};
}

// NCHW [N, C, H, W] or NCHW[x]c [N, C/x, H, W, x] (convert_conv_layout keeps pools blocked).
inline void check_pool_rank(const TensorType& x) {
    WEFT_CHECK(x.shape.size() == 4 || x.shape.size() == 5, "the data must be NCHW (4 dimensions) or NCHW[x]c (5), got ",
               x.str());
}

// max_pool2d takes integers too, avg_pool2d floats.
template <bool Integers>
inline TensorType infer_pool2d(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType& x = in[0];
    check_pool_rank(x);
    WEFT_CHECK(x.dtype.is_float() || (Integers && x.dtype.is_integer() && !x.dtype.is_bool()), "the data must be ",
               Integers ? "floats or integers" : "floats", ", got ", x.dtype.str());
    // topi's own output size and checks (padding smaller than the window, ...): before, a
    // pad the window could not reach past was accepted here and refused by the compute, an
    // internal error.
    const topi::Size2d size = topi::pool2d_out_size(x.shape[2], x.shape[3], pool_params(a));
    TensorType out{{x.shape[0], x.shape[1], size.h, size.w}, x.dtype};
    if (x.shape.size() == 5) out.shape.push_back(x.shape[4]);
    return out;
}

inline TensorType infer_global_pool(const std::vector<TensorType>& in, const Attrs&) {
    check_pool_rank(in[0]);
    TensorType out{{in[0].shape[0], in[0].shape[1], 1, 1}, in[0].dtype};
    if (in[0].shape.size() == 5) out.shape.push_back(in[0].shape[4]);
    return out;
}

// ---- softmax, layer_norm --------------------------------------------------------------------

inline TensorType infer_softmax(const std::vector<TensorType>& in, const Attrs& a) {
    check_float(in[0], "the data");
    WEFT_CHECK(!in[0].shape.empty(), "the data must have at least one dimension");
    normalize_axis(a.get_int("axis", -1), in[0].shape.size());
    return in[0];
}

inline TensorType infer_layer_norm(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType &x = in[0], &g = in[1], &b = in[2];
    check_float(x, "the data");
    WEFT_CHECK(g.shape.size() >= 1 && g.shape.size() <= x.shape.size() &&
                   std::equal(g.shape.begin(), g.shape.end(), x.shape.end() - int64_t(g.shape.size())),
               "gamma ", g.str(), " must have the shape of the data's trailing dimensions ", x.str());
    WEFT_CHECK(b.shape == g.shape, "beta ", b.str(), " must have gamma's shape ", g.str());
    check_same_dtype(x, g, "the data", "gamma");
    check_same_dtype(x, b, "the data", "beta");
    topi::check_norm_epsilon(a.get_float("epsilon", 1e-5), "layer_norm");
    return x;
}

// ---- reductions -----------------------------------------------------------------------------
// Attributes: axes (empty: all), keepdims.

inline std::vector<int64_t> reduce_axes(const TensorType& x, const Attrs& a) {
    std::vector<int64_t> axes = a.get_ints("axes", {});
    for (size_t k = 0; k < axes.size(); ++k) {
        int64_t d = normalize_axis(axes[k], x.shape.size());
        WEFT_CHECK(std::find(axes.begin(), axes.begin() + int64_t(k), d) == axes.begin() + int64_t(k), "axis ",
                   axes[k], " is listed twice (as dimension ", d, ")");
        axes[k] = d;
    }
    if (axes.empty())
        for (size_t d = 0; d < x.shape.size(); ++d) axes.push_back(int64_t(d));
    return axes;
}

inline TensorType infer_reduce(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType& x = in[0];
    std::vector<int64_t> axes = reduce_axes(x, a);
    bool keep = a.get_int("keepdims", 0) != 0;
    std::vector<int64_t> shape;
    for (size_t d = 0; d < x.shape.size(); ++d) {
        bool reduced = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
        if (!reduced) shape.push_back(x.shape[d]);
        else if (keep) shape.push_back(1);
    }
    if (shape.empty()) shape.push_back(1);  // every dimension dropped: [1], as topi's reductions give
    return {shape, x.dtype};
}

template <Tensor (*F)(const Tensor&, const std::vector<int>&, bool)>
Tensor compute_reduce(const std::vector<Tensor>& in, const Attrs& a) {
    return F(in[0], to_ints(a.get_ints("axes", {})), a.get_int("keepdims", 0) != 0);
}

// argmax / argmin: attributes axis (0), keepdims (1), select_last_index (0); int64 indices.
inline TensorType infer_arg_extreme(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType& x = in[0];
    WEFT_CHECK(!x.dtype.is_bool(), "the input must be numbers, got bool");
    const int64_t d = normalize_axis(a.get_int("axis", 0), x.shape.size());
    std::vector<int64_t> shape;
    for (size_t k = 0; k < x.shape.size(); ++k)
        if (int64_t(k) != d) shape.push_back(x.shape[k]);
        else if (a.get_int("keepdims", 1)) shape.push_back(1);
    if (shape.empty()) shape.push_back(1);
    return {shape, DataType::int_(64)};
}

template <Tensor (*F)(const Tensor&, int, bool, bool)>
Tensor compute_arg_extreme(const std::vector<Tensor>& in, const Attrs& a) {
    return F(in[0], int(a.get_int("axis", 0)), a.get_int("keepdims", 1) != 0, a.get_int("select_last_index", 0) != 0);
}

// ---- registration ---------------------------------------------------------------------------

inline void register_nn_ops() {
    using P = OpPattern;
    register_op({.name = "conv2d", .pattern = P::OutEWiseFusable, .min_inputs = 2, .max_inputs = 2,
                 .infer = infer_conv2d, .compute = compute_conv2d, .schedule = schedule_conv2d,
                 .gpu_schedule = gpu_schedule_conv2d});
    register_op({.name = "bias_add", .pattern = P::Broadcast, .min_inputs = 2, .max_inputs = 2,
                 .infer = infer_bias_add, .compute = compute_bias_add});
    register_op({.name = "batch_norm", .pattern = P::Broadcast, .min_inputs = 5, .max_inputs = 5,
                 .infer = infer_batch_norm, .compute = compute_batch_norm});
    register_op({.name = "dense", .pattern = P::OutEWiseFusable, .min_inputs = 2, .max_inputs = 2,
                 .infer = infer_dense,
                 .compute =
                     [](const std::vector<Tensor>& in, const Attrs&, const OpContext& c) {
                         return topi::dense(in[0], in[1], Tensor(), "dense", compute_target(c.target), c.config);
                     },
                 .schedule = schedule_template<topi::schedule_dense>,
                 .gpu_schedule = gpu_schedule_template<topi::cuda::schedule_dense>});
    register_op({.name = "matmul", .pattern = P::OutEWiseFusable, .min_inputs = 2, .max_inputs = 2,
                 .infer = infer_matmul,
                 .compute =
                     [](const std::vector<Tensor>& in, const Attrs&, const OpContext& c) {
                         return topi::matmul(in[0], in[1], "matmul", compute_target(c.target), c.config);
                     },
                 .schedule = schedule_template<topi::schedule_matmul>,
                 .gpu_schedule = gpu_schedule_template<topi::cuda::schedule_matmul>});
    register_op({.name = "batch_matmul", .pattern = P::OutEWiseFusable, .min_inputs = 2, .max_inputs = 2,
                 .infer = infer_batch_matmul,
                 .compute =
                     [](const std::vector<Tensor>& in, const Attrs&, const OpContext& c) {
                         return topi::batch_matmul(in[0], in[1], "batch_matmul", compute_target(c.target),
                                                   c.config);
                     },
                 .schedule = schedule_template<topi::schedule_batch_matmul>,
                 .gpu_schedule = gpu_schedule_template<topi::cuda::schedule_batch_matmul>});
    register_op({.name = "max_pool2d", .pattern = P::OutEWiseFusable, .infer = infer_pool2d<true>,
                 .compute = [](const std::vector<Tensor>& in,
                               const Attrs& a) { return topi::max_pool2d(in[0], pool_params(a)); },
                 .schedule = schedule_of<topi::schedule_pool2d>,
                 .gpu_schedule = schedule_of<topi::cuda::schedule_pool2d>});
    register_op({.name = "avg_pool2d", .pattern = P::OutEWiseFusable, .infer = infer_pool2d<false>,
                 .compute = [](const std::vector<Tensor>& in,
                               const Attrs& a) { return topi::avg_pool2d(in[0], pool_params(a)); },
                 .schedule = schedule_of<topi::schedule_pool2d>,
                 .gpu_schedule = schedule_of<topi::cuda::schedule_pool2d>});
    // DeformConv's sampling: x, offset[, mask]; conv2d's attributes, `kernel` {kh, kw},
    // `offset_group` (1).
    auto deformable = [](const std::vector<Tensor>& t, const Attrs& a) {
        const std::vector<int64_t> k = a.get_ints("kernel");
        WEFT_CHECK(k.size() == 2, "attribute 'kernel' must have 2 values {h, w}");
        return topi::deformable_im2col(t[0], t[1], t.size() > 2 ? t[2] : Tensor(), conv2d_params(a), k[0], k[1],
                                       a.get_int("offset_group", 1));
    };
    register_op({.name = "deformable_im2col", .pattern = P::Opaque, .min_inputs = 2, .max_inputs = 3,
                 .infer =
                     [deformable](const std::vector<TensorType>& in, const Attrs& a) {
                         return traced_type(in, [&](const std::vector<Tensor>& t) { return deformable(t, a); });
                     },
                 .compute = [deformable](const std::vector<Tensor>& in, const Attrs& a) { return deformable(in, a); }});
    // MaxPool's Indices: inputs the data and its max_pool2d (same attributes), `column_major`.
    register_op({.name = "max_pool2d_indices", .pattern = P::Opaque, .min_inputs = 2, .max_inputs = 2,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         return traced_type(in, [&](const std::vector<Tensor>& t) {
                             return topi::max_pool2d_indices(t[0], t[1], pool_params(a),
                                                             a.get_int("column_major", 0) != 0);
                         });
                     },
                 .compute =
                     [](const std::vector<Tensor>& in, const Attrs& a) {
                         return topi::max_pool2d_indices(in[0], in[1], pool_params(a),
                                                         a.get_int("column_major", 0) != 0);
                     },
                 .schedule = schedule_of<topi::schedule_pool2d>});
    // MaxUnpool of max_pool2d_indices: inputs values and indices, the pool's attributes and
    // `size` {H, W} (its input's).
    register_op({.name = "max_unpool2d", .pattern = P::Opaque, .min_inputs = 2, .max_inputs = 2,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         return traced_type(in, [&](const std::vector<Tensor>& t) {
                             const std::vector<int64_t> hw = a.get_ints("size");
                             WEFT_CHECK(hw.size() == 2, "attribute 'size' must have 2 values {H, W}");
                             return topi::max_unpool2d(t[0], t[1], pool_params(a), hw[0], hw[1]);
                         });
                     },
                 .compute =
                     [](const std::vector<Tensor>& in, const Attrs& a) {
                         const std::vector<int64_t> hw = a.get_ints("size");
                         return topi::max_unpool2d(in[0], in[1], pool_params(a), hw.at(0), hw.at(1));
                     },
                 .schedule = schedule_of<topi::schedule_pool2d>});
    register_op({.name = "global_avg_pool2d", .pattern = P::OutEWiseFusable, .infer = infer_global_pool,
                 .compute = [](const std::vector<Tensor>& in, const Attrs&) { return topi::global_avg_pool2d(in[0]); },
                 .schedule = schedule_of<topi::schedule_global_pool2d>,
                 .gpu_schedule = schedule_of<topi::cuda::schedule_global_pool2d>});
    register_op({.name = "softmax", .pattern = P::Opaque, .infer = infer_softmax,
                 .compute =
                     [](const std::vector<Tensor>& in, const Attrs& a, const OpContext& c) {
                         return topi::softmax(in[0], int(a.get_int("axis", -1)), compute_target(c.target));
                     },
                 .schedule = schedule_template<topi::schedule_softmax>,
                 .gpu_schedule = schedule_of<topi::cuda::schedule_softmax>});
    register_op({.name = "layer_norm", .pattern = P::Opaque, .min_inputs = 3, .max_inputs = 3,
                 .infer = infer_layer_norm,
                 .compute = [](const std::vector<Tensor>& in,
                               const Attrs& a) { return topi::layer_norm(in[0], in[1], in[2], a.get_float("epsilon", 1e-5)); },
                 .schedule = schedule_template<topi::schedule_layer_norm>,
                 .gpu_schedule = schedule_of<topi::cuda::schedule_layer_norm>});
    register_op({.name = "recurrent", .pattern = P::Opaque, .min_inputs = 4, .max_inputs = 7,
                 .infer = [](const std::vector<TensorType>& in,
                             const Attrs& a) { return traced_type(in, [&](const std::vector<Tensor>& t) { return compute_recurrent(t, a); }); },
                 .compute = compute_recurrent,
                 .schedule = schedule_recurrent_group});
    register_op({.name = "sum", .pattern = P::CommReduce, .infer = infer_reduce,
                 .compute = compute_reduce<topi::sum>, .schedule = schedule_template<topi::schedule_reduce>,
                 .gpu_schedule = schedule_of<topi::cuda::schedule_reduce>});
    register_op({.name = "mean", .pattern = P::CommReduce, .infer = infer_reduce,
                 .compute = compute_reduce<topi::mean>, .schedule = schedule_template<topi::schedule_reduce>,
                 .gpu_schedule = schedule_of<topi::cuda::schedule_reduce>});
    register_op({.name = "prod", .pattern = P::CommReduce, .infer = infer_reduce,
                 .compute = compute_reduce<topi::prod>, .schedule = schedule_template<topi::schedule_reduce>});
    register_op({.name = "argmax", .pattern = P::CommReduce, .infer = infer_arg_extreme,
                 .compute = compute_arg_extreme<topi::argmax>});
    register_op({.name = "argmin", .pattern = P::CommReduce, .infer = infer_arg_extreme,
                 .compute = compute_arg_extreme<topi::argmin>});
    register_op({.name = "max", .pattern = P::CommReduce, .infer = infer_reduce,
                 .compute = compute_reduce<topi::max>, .schedule = schedule_template<topi::schedule_reduce>,
                 .gpu_schedule = schedule_of<topi::cuda::schedule_reduce>});
    register_op({.name = "min", .pattern = P::CommReduce, .infer = infer_reduce,
                 .compute = compute_reduce<topi::min>, .schedule = schedule_template<topi::schedule_reduce>,
                 .gpu_schedule = schedule_of<topi::cuda::schedule_reduce>});
}

}  // namespace weft::graph::ops
