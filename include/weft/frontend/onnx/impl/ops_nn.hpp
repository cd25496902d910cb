// The ONNX importer's converters: Gemm and MatMul, convolution and pooling, normalization,
// softmax and the reductions.
#pragma once
#include <optional>
#include "weft/frontend/onnx/impl/ops_elementwise.hpp"  // neg, abs_of (the reductions)

namespace weft::onnx::detail {

// ---- linear algebra ---------------------------------------------------------------------------

inline std::vector<Value> convert_gemm(Ctx& c) {
    Value a = c.in(0), b = c.in(1);
    if (c.rank(a) != 2 || c.rank(b) != 2) malformed("A and B must be matrices");
    c.ignore({"broadcast"});  // opsets < 7: C broadcasts where it says so; numpy rules are a superset
    if (c.i("transA", 0)) a = c.add("transpose", {a}, {{"perm", std::vector<int64_t>{1, 0}}});
    double alpha = c.f("alpha", 1.0), beta = c.f("beta", 1.0);
    bool more = alpha != 1.0 || (c.has(2) && beta != 0.0);
    // transB with a constant B (a Linear layer's weight): dense, which the graph layer turns
    // into a matmul with B transposed once at build time (graph::simplify_operators).
    bool trans_b = c.i("transB", 0) != 0;
    Value y = trans_b ? c.add("dense", {a, b}, {}, more ? "" : c.out())
                      : c.add("matmul", {a, b}, {}, more ? "" : c.out());
    DataType t = c.dtype(y);
    bool bias = c.has(2) && beta != 0.0;
    if (alpha != 1.0) y = c.add("mul", {y, c.scalar(alpha, t, "alpha")}, {}, bias ? "" : c.out());
    if (bias) {
        Value cc = c.in(2);
        if (beta != 1.0) cc = c.add("mul", {cc, c.scalar(beta, t, "beta")});
        y = c.add("add", {y, cc}, {}, c.out());
    }
    return {y};
}

// numpy's matmul of a and b (batch dimensions broadcast, 1-D operands as vectors), named
// `name`; a vector . vector result is a scalar.
inline Value matmul_of(Ctx& c, Value a, Value b, const std::string& name) {
    std::vector<int64_t> sa = c.shape(a), sb = c.shape(b);
    if (sa.empty() || sb.empty()) malformed("MatMul's operands must have at least one dimension");
    bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
    if (a_vec) sa.insert(sa.begin(), 1);
    if (b_vec) sb.push_back(1);
    int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
    if (sb[sb.size() - 2] != K)
        malformed("MatMul: A " + graph::shape_str(c.shape(a)) + " and B " + graph::shape_str(c.shape(b)) +
                  " do not fit");
    std::vector<int64_t> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
    std::vector<int64_t> batch = graph::ops::broadcast_shapes(ba, bb);  // the batch dimensions
    std::vector<int64_t> out = batch;
    if (!a_vec) out.push_back(M);
    if (!b_vec) out.push_back(N);
    Value y;
    if (product(bb) == 1) {
        // B is one matrix: fold A's batch into its rows.
        Value a2 = reshape(c, a, {product(ba) * M, K});
        Value b2 = reshape(c, b, {K, N});
        y = c.add("matmul", {a2, b2});
    } else {
        int64_t B = product(batch);
        auto batched = [&](Value v, const std::vector<int64_t>& vb, int64_t rows, int64_t cols) {
            std::vector<int64_t> s = vb;
            s.push_back(rows);
            s.push_back(cols);
            v = reshape(c, v, s);
            if (product(vb) != 1 && product(vb) != B) {  // partly broadcast: materialize
                std::vector<int64_t> full = batch;
                full.push_back(rows);
                full.push_back(cols);
                v = expand_to(c, v, full);
            }
            return reshape(c, v, {product(vb) == 1 ? 1 : B, rows, cols});
        };
        y = c.add("batch_matmul", {batched(a, ba, M, K), batched(b, bb, K, N)});
    }
    if (out.empty()) return c.mark_scalar(reshape(c, y, {1}, name));  // vector . vector
    return reshape(c, y, out, name);
}

inline std::vector<Value> convert_matmul(Ctx& c) { return {matmul_of(c, c.in(0), c.in(1), c.out())}; }

// ---- convolution and pooling ------------------------------------------------------------------

// Pads {begin..., end...} for `auto_pad` (or the `pads` attribute) of a window op.
inline std::vector<int64_t> window_pads(Ctx& c, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                                        const std::vector<int64_t>& strides, const std::vector<int64_t>& dil) {
    size_t n = kernel.size();
    for (size_t k = 0; k < n; ++k)
        if (kernel[k] < 1 || strides[k] < 1 || dil[k] < 1)
            malformed("kernel_shape, strides and dilations must be positive");
    std::string mode = c.s("auto_pad", "NOTSET");
    if (mode == "NOTSET") {
        std::vector<int64_t> p = c.ints("pads", std::vector<int64_t>(2 * n, 0));
        if (p.size() != 2 * n) malformed("'pads' must have " + std::to_string(2 * n) + " values");
        for (int64_t v : p)
            if (v < 0) malformed("'pads' must not be negative");
        return p;
    }
    if (mode == "VALID") return std::vector<int64_t>(2 * n, 0);
    if (mode != "SAME_UPPER" && mode != "SAME_LOWER") malformed("unknown auto_pad '" + mode + "'");
    std::vector<int64_t> p(2 * n);
    for (size_t k = 0; k < n; ++k) {
        // Attributes can be anything up to 2^63 - 1: no sum or product here may wrap.
        int64_t span = 0;  // the dilated window, (kernel - 1) * dilation + 1
        if (__builtin_mul_overflow(kernel[k] - 1, dil[k], &span) || __builtin_add_overflow(span, 1, &span))
            malformed("the window (kernel_shape " + std::to_string(kernel[k]) + ", dilation " + std::to_string(dil[k]) +
                      ") is too large to count in 64 bits");
        int64_t o = in[k] / strides[k] + (in[k] % strides[k] != 0);  // ceil(in / stride)
        int64_t total = std::max<int64_t>(0, span - (in[k] - (o - 1) * strides[k]));
        int64_t small = total / 2, big = total - small;
        p[k] = mode == "SAME_UPPER" ? small : big;
        p[k + n] = mode == "SAME_UPPER" ? big : small;
    }
    return p;
}

// A 1-D window op runs as 2-D over [N, C, 1, W]: the helpers insert and drop that row.
struct Spatial {
    size_t n = 2;
    bool one_d = false;
};

// 3-D windows where `three_d` (pools and Conv: decomposed into 2-D ones).
inline Spatial spatial_of(Ctx& c, Value x, const char* op, bool three_d = false) {
    int64_t r = c.rank(x);
    if (r == 4) return {2, false};
    if (r == 3) return {1, true};
    if (r == 5 && three_d) return {3, false};
    unsupported(std::string(op) + " over " + std::to_string(r - 2) +
                " spatial dimensions (weft has 1-D and 2-D windows)");
}

inline std::vector<int64_t> two_d(const std::vector<int64_t>& v, bool one_d, int64_t fill) {
    return one_d ? std::vector<int64_t>{fill, v[0]} : v;
}
inline std::vector<int64_t> two_d_pads(const std::vector<int64_t>& p, bool one_d) {
    return one_d ? std::vector<int64_t>{0, p[0], 0, p[1]} : p;
}

// Conv of x and w (and a bias) with the node's attributes, named `name`.
// A 3-D convolution as a sum of 2-D ones, one per depth tap of the kernel: tap kd meets the
// depth slices kd * dilation + od * stride of the (depth-padded) input, which fold into the
// batch of a 2-D convolution with the kernel's slice kd.
inline Value conv3d_of(Ctx& c, Value x, Value w, const std::vector<int64_t>& strides, const std::vector<int64_t>& dil,
                       const std::vector<int64_t>& pads, int64_t groups) {
    const std::vector<int64_t> xs = c.shape(x), ws = c.shape(w);
    std::vector<int64_t> dpads(10, 0);
    dpads[2] = pads[0], dpads[7] = pads[3];
    Value xp = pads[0] || pads[3] ? c.g.pad(x, dpads, 0.0, c.fresh("depth_padded")) : x;
    const int64_t depth = xs[2] + pads[0] + pads[3], kd = ws[2];
    const int64_t od = (depth - dil[0] * (kd - 1) - 1) / strides[0] + 1;
    if (depth - dil[0] * (kd - 1) - 1 < 0) malformed("the kernel's depth does not fit the padded input");
    Attrs a{{"strides", std::vector<int64_t>{strides[1], strides[2]}},
            {"pads", std::vector<int64_t>{pads[1], pads[2], pads[4], pads[5]}},
            {"dilations", std::vector<int64_t>{dil[1], dil[2]}},
            {"groups", groups}};
    Value sum;
    for (int64_t k = 0; k < kd; ++k) {
        const int64_t from = k * dil[0];
        Value slices = c.g.slice(xp, {from}, {from + (od - 1) * strides[0] + 1}, {2}, {strides[0]}, c.fresh("depth_taps"));
        Value batch = reshape(c, c.g.transpose(slices, {0, 2, 1, 3, 4}, c.fresh("depth_first")), {xs[0] * od, xs[1], xs[3], xs[4]});
        Value wk = reshape(c, c.g.slice(w, {k}, {k + 1}, {2}, {1}, c.fresh("kernel_tap")), {ws[0], ws[1], ws[3], ws[4]});
        Value y = c.add("conv2d", {batch, wk}, a);
        sum = k ? c.add("add", {sum, y}) : y;
    }
    const std::vector<int64_t> ys = c.shape(sum);  // [N * OD, M, OH, OW]
    Value split = reshape(c, sum, {xs[0], od, ys[1], ys[2], ys[3]});
    return c.g.transpose(split, {0, 2, 1, 3, 4}, c.fresh("conv3d"));
}

// `extra`: attributes the conv2d takes beside the node's (a QDQ model's quantization).
inline Value conv_of(Ctx& c, Value x, Value w, std::optional<Value> bias, const std::string& name,
                     const Attrs& extra = {}) {
    Spatial sp = spatial_of(c, x, "Conv", true);
    if (!c.dtype(x).is_float()) unsupported("Conv on " + c.dtype(x).str() + " (weft convolves floats)");
    if (c.rank(w) != c.rank(x)) malformed("the weight's rank differs from the data's");
    std::vector<int64_t> xs = c.shape(x), ws = c.shape(w);
    std::vector<int64_t> kernel(ws.begin() + 2, ws.end()), in(xs.begin() + 2, xs.end());
    std::vector<int64_t> ks = c.ints("kernel_shape", kernel);
    if (ks != kernel) malformed("kernel_shape " + graph::shape_str(ks) + " differs from the weight's " + graph::shape_str(kernel));
    std::vector<int64_t> strides = c.ints("strides", std::vector<int64_t>(sp.n, 1));
    std::vector<int64_t> dil = c.ints("dilations", std::vector<int64_t>(sp.n, 1));
    if (strides.size() != sp.n || dil.size() != sp.n) malformed("strides/dilations must have one value per spatial axis");
    std::vector<int64_t> pads = window_pads(c, in, kernel, strides, dil);
    if (sp.n == 3) {
        Value y = conv3d_of(c, x, w, strides, dil, pads, c.i("group", 1));
        return bias ? c.add("bias_add", {y, *bias}, {{"axis", int64_t(1)}}, name) : reshape(c, y, c.shape(y), name);
    }
    if (sp.one_d) {
        x = c.add("unsqueeze", {x}, {{"axes", std::vector<int64_t>{2}}});
        w = c.add("unsqueeze", {w}, {{"axes", std::vector<int64_t>{2}}});
    }
    Attrs a{{"strides", two_d(strides, sp.one_d, 1)},
            {"pads", two_d_pads(pads, sp.one_d)},
            {"dilations", two_d(dil, sp.one_d, 1)},
            {"groups", c.i("group", 1)}};
    for (const auto& [key, value] : extra.items()) a.set(key, value);
    bool last = !bias && !sp.one_d;
    Value y = c.add("conv2d", {x, w}, a, last ? name : "");
    if (bias) y = c.add("bias_add", {y, *bias}, {{"axis", int64_t(1)}}, sp.one_d ? "" : name);
    if (sp.one_d) y = c.add("squeeze", {y}, {{"axes", std::vector<int64_t>{2}}}, name);
    return y;
}

enum class PoolKind { Max, Average, Lp };

// MaxPool, AveragePool and LpPool ((sum of |x|^p over the window)^(1/p): an average with the
// padding counted, times the window's size).
inline std::vector<Value> convert_pool(Ctx& c, PoolKind kind) {
    const bool is_max = kind == PoolKind::Max;
    const char* name = is_max ? "MaxPool" : kind == PoolKind::Average ? "AveragePool" : "LpPool";
    Value x = c.in(0);
    Spatial sp = spatial_of(c, x, name, true);
    const bool indices = is_max && c.wants(1);
    if (is_max && !indices) c.ignore({"storage_order"});  // the order of the Indices output
    if (indices && sp.n == 3) unsupported("MaxPool's Indices over 3 spatial dimensions");
    if (!c.dtype(x).is_float() && !(is_max && c.dtype(x).is_integer()))
        unsupported(std::string(name) + " on " + c.dtype(x).str() + " (weft averages floats)");
    std::vector<int64_t> xs = c.shape(x), in(xs.begin() + 2, xs.end());
    std::vector<int64_t> kernel = c.ints("kernel_shape");
    if (kernel.size() != sp.n) malformed("kernel_shape must have one value per spatial axis");
    std::vector<int64_t> strides = c.ints("strides", std::vector<int64_t>(sp.n, 1));
    std::vector<int64_t> dil = c.ints("dilations", std::vector<int64_t>(sp.n, 1));
    if (strides.size() != sp.n || dil.size() != sp.n) malformed("strides/dilations must have one value per spatial axis");
    std::vector<int64_t> pads = window_pads(c, in, kernel, strides, dil);
    bool include_pad = kind == PoolKind::Lp || (!is_max && c.i("count_include_pad", 0) != 0);
    // ceil_mode as the pooling's own attribute where it has it (2-D, undilated max and
    // average), so that the output follows a symbolic input size; else as more end padding
    // for the input's size.
    const bool dilated = std::any_of(dil.begin(), dil.end(), [](int64_t d) { return d != 1; });
    const bool ceil_attr = c.i("ceil_mode", 0) && sp.n < 3 && kind != PoolKind::Lp && !dilated;
    if (c.i("ceil_mode", 0) && !ceil_attr) {
        // ceil_mode: more padding at the end, as long as the last window starts inside the
        // input or its leading padding (ONNX drops a window that starts in the trailing pad).
        // In 128 bits: the attributes can be anything up to 2^63 - 1.
        std::vector<int64_t> extra(sp.n, 0);
        for (size_t k = 0; k < sp.n; ++k) {
            const __int128 stride = strides[k], padded = __int128(in[k]) + pads[k] + pads[k + sp.n];
            const __int128 window = __int128(dil[k]) * (kernel[k] - 1) + 1;  // the taps' span
            const __int128 span = padded - window;
            if (span < 0) continue;  // no window fits: the pooling's own check says so
            __int128 o = (span + stride - 1) / stride + 1;
            if ((o - 1) * stride >= __int128(in[k]) + pads[k]) --o;
            const __int128 more = (o - 1) * stride + window - padded;
            if (more <= 0) continue;
            if (pads[k + sp.n] + more > std::numeric_limits<int64_t>::max())
                malformed("ceil_mode makes the end padding larger than 64 bits count");
            extra[k] = int64_t(more);
        }
        const bool any = std::any_of(extra.begin(), extra.end(), [](int64_t e) { return e > 0; });
        if (any && include_pad && kind == PoolKind::Average) {
            // The divisor counts the explicit padding but not the extra end the last window
            // passes into (ONNX's and PyTorch's rule): the explicit padding made zeros of the
            // input, and only the extra counted out (count_include_pad off). (LpPool's sum
            // takes the extra zeros as they are: its window size times the padded average.)
            std::vector<int64_t> explicit_pads(2 * (sp.n + 2), 0);
            for (size_t k = 0; k < sp.n; ++k) {
                explicit_pads[k + 2] = pads[k];
                explicit_pads[k + 2 + sp.n + 2] = pads[k + sp.n];
                pads[k] = pads[k + sp.n] = 0;
            }
            x = c.g.pad(x, explicit_pads, 0.0, c.fresh("padded"));
            xs = c.shape(x);
            in.assign(xs.begin() + 2, xs.end());
            include_pad = false;
        }
        for (size_t k = 0; k < sp.n; ++k) pads[k + sp.n] += extra[k];
    }
    const DataType t = c.dtype(x);
    const int64_t p = kind == PoolKind::Lp ? c.i("p", 2) : 0;
    if (kind == PoolKind::Lp) {
        if (p < 1) malformed("p must be positive, got " + std::to_string(p));
        Value a = abs_of(c, x);
        x = p == 1 ? a : p == 2 ? c.add("mul", {x, x}) : c.add("pow", {a, c.scalar(double(p), t, "p")});
    }
    const char* op = is_max ? "max_pool2d" : "avg_pool2d";
    Value y, i;
    if (sp.n == 3) {
        // A box window is separable (the maximum, and the mean with its count, alike): over
        // H and W with D folded into the channels, then over D with H * W as the width.
        const std::vector<int64_t> s = c.shape(x);
        Attrs hw{{"kernel", std::vector<int64_t>{kernel[1], kernel[2]}},
                 {"strides", std::vector<int64_t>{strides[1], strides[2]}},
                 {"pads", std::vector<int64_t>{pads[1], pads[2], pads[4], pads[5]}},
                 {"dilations", std::vector<int64_t>{dil[1], dil[2]}},
                 {"count_include_pad", int64_t(include_pad)}};
        Value p = c.add(op, {reshape(c, x, {s[0], s[1] * s[2], s[3], s[4]})}, hw);
        const int64_t oh = c.shape(p)[2], ow = c.shape(p)[3];
        Attrs d{{"kernel", std::vector<int64_t>{kernel[0], 1}},
                {"strides", std::vector<int64_t>{strides[0], 1}},
                {"pads", std::vector<int64_t>{pads[0], 0, pads[3], 0}},
                {"dilations", std::vector<int64_t>{dil[0], 1}},
                {"count_include_pad", int64_t(include_pad)}};
        Value q = c.add(op, {reshape(c, p, {s[0], s[1], s[2], oh * ow})}, d);
        y = reshape(c, q, {s[0], s[1], c.shape(q)[2], oh, ow}, kind != PoolKind::Lp ? c.out() : "");
    } else {
        if (sp.one_d) x = c.add("unsqueeze", {x}, {{"axes", std::vector<int64_t>{2}}});
        Attrs a{{"kernel", two_d(kernel, sp.one_d, 1)},
                {"strides", two_d(strides, sp.one_d, 1)},
                {"pads", two_d_pads(pads, sp.one_d)},
                {"dilations", two_d(dil, sp.one_d, 1)},
                {"count_include_pad", int64_t(include_pad)}};
        if (ceil_attr) a.set("ceil_mode", int64_t(1));
        const bool last = kind != PoolKind::Lp && !sp.one_d;
        y = c.add(op, {x}, a, last ? c.out() : "");
        if (indices) {
            a.set("column_major", c.i("storage_order", 0));
            i = c.add("max_pool2d_indices", {x, y}, a, sp.one_d ? "" : c.out(1));
            if (sp.one_d) i = c.add("squeeze", {i}, {{"axes", std::vector<int64_t>{2}}}, c.out(1));
        }
        if (sp.one_d) y = c.add("squeeze", {y}, {{"axes", std::vector<int64_t>{2}}}, kind != PoolKind::Lp ? c.out() : "");
    }
    if (kind == PoolKind::Lp) {
        Value sum = c.add("mul", {y, c.scalar(double(product(kernel)), t, "window")});
        y = p == 1 ? reshape(c, sum, c.shape(sum), c.out())
            : p == 2 ? c.add("sqrt", {sum}, {}, c.out())
                     : c.add("pow", {sum, c.scalar(1.0 / double(p), t, "inverse_p")}, {}, c.out());
    }
    return {y, i};
}

// MaxUnpool: zeros of the pool's input shape (from X's and the window's), but X's values at the
// positions I names (row-major), then zeros at the end of each axis up to output_shape (ONNX's
// reference). Where I is the Indices of a row-major, undilated 2-D MaxPool in this model over
// that shape, an output element looks only at the windows that cover it (max_unpool2d, the
// pool's own window); other indices go through scatter_elements over the flattened output,
// which searches every index per element (refused past 2^32 comparisons).
inline std::vector<Value> convert_max_unpool(Ctx& c) {
    Value x = c.in(0), ind = c.in(1);
    const std::vector<int64_t> xs = c.shape(x);
    if (xs.size() < 3) malformed("X must have at least 3 dimensions [N, C, ...]");
    if (c.dtype(ind) != DataType::int_(64)) malformed("the indices must be int64, not " + c.dtype(ind).str());
    if (c.shape(ind) != xs) malformed("the indices must have X's shape");
    const size_t n = xs.size() - 2;
    const std::vector<int64_t> kernel = c.ints("kernel_shape");
    const std::vector<int64_t> strides = c.ints("strides", std::vector<int64_t>(n, 1));
    const std::vector<int64_t> pads = c.ints("pads", std::vector<int64_t>(2 * n, 0));
    if (kernel.size() != n || strides.size() != n || pads.size() != 2 * n)
        malformed("kernel_shape and strides need one value per spatial axis, pads two");
    std::vector<int64_t> shape = xs;  // the pool's input
    for (size_t k = 0; k < n; ++k) {
        if (kernel[k] < 1 || strides[k] < 1 || pads[k] < 0 || pads[k + n] < 0)
            malformed("kernel_shape and strides must be positive, pads not negative");
        __int128 e = (__int128(xs[k + 2]) - 1) * strides[k] + kernel[k] - pads[k] - pads[k + n];
        if (e < 1) unsupported("MaxUnpool to an empty output (weft's tensors cannot be empty)");
        if (e > std::numeric_limits<int64_t>::max()) malformed("the output's extents do not fit in 64 bits");
        shape[k + 2] = int64_t(e);
    }
    std::vector<int64_t> out = shape;
    if (c.has(2)) {
        out = c.const_ints(2, "output_shape");
        bool fits = out.size() == xs.size() && out[0] == xs[0] && out[1] == xs[1];
        for (size_t k = 2; fits && k < out.size(); ++k) fits = out[k] >= shape[k];
        if (!fits)
            malformed("output_shape " + ::weft::detail::shape_string(out) + " must hold " +
                      ::weft::detail::shape_string(shape) + " (X's N and C, the pool's input extents or more)");
    }
    checked_elements(out, c.limit, "MaxUnpool's output");
    Value y;
    const graph::Node& source = c.g.node(ind);
    if (source.op == "max_pool2d_indices" && source.attrs.get_int("column_major", 0) == 0 &&
        c.shape(source.inputs.at(0)) == shape) {
        const std::vector<int64_t> dil = source.attrs.get_ints("dilations", {1, 1});
        if (std::all_of(dil.begin(), dil.end(), [](int64_t d) { return d == 1; })) {
            graph::Attrs a = source.attrs;
            a.set("size", std::vector<int64_t>{shape[2], shape[3]});
            y = c.add("max_unpool2d", {x, ind}, a, out == shape ? c.out() : "");
        }
    }
    if (!y.defined()) {
        const int64_t total = product(shape), m = product(xs);
        if (double(total) * double(m) > 4294967296.0)
            unsupported("MaxUnpool whose indices are not the Indices of a 2-D MaxPool in this model over " +
                        ::weft::detail::shape_string(shape) + " (every index searched per element: " +
                        std::to_string(total) + " x " + std::to_string(m) + " comparisons)");
        // (Zeros as a tile of one: a constant of the whole output would be that size again.)
        Value zeros = c.add("tile", {c.scalar(0, c.dtype(x), "zero")}, {{"repeats", std::vector<int64_t>{total}}});
        Value flat = c.add("scatter_elements", {zeros, reshape(c, ind, {m}), reshape(c, x, {m})},
                           {{"axis", int64_t(0)}, {"reduction", std::string("none")}});
        y = reshape(c, flat, shape, out == shape ? c.out() : "");
    }
    if (out == shape) return {y};
    std::vector<int64_t> ends(out.size() * 2, 0);
    for (size_t k = 0; k < out.size(); ++k) ends[out.size() + k] = out[k] - shape[k];
    return {c.g.pad(y, ends, 0.0, c.out())};
}

inline std::vector<Value> convert_global_pool(Ctx& c, bool is_max) {
    Value x = c.in(0);
    if (c.rank(x) < 3) malformed("the data must have at least 3 dimensions [N, C, ...]");
    if (!is_max && c.rank(x) == 4) return {c.add("global_avg_pool2d", {x}, {}, c.out())};
    return {c.add(is_max ? "max" : "mean", {x}, {{"axes", iota_vec(2, c.rank(x))}, {"keepdims", int64_t(1)}},
                  c.out())};
}

// ---- softmax -----------------------------------------------------------------------------------

inline std::vector<Value> convert_softmax(Ctx& c, bool log) {
    Value x = c.in(0);
    int64_t r = c.rank(x);
    Value y;
    if (c.opset < 13) {
        // The input as a matrix [prod(dims before axis), prod(the rest)], softmax over rows.
        int64_t axis = norm_axis(c.i("axis", 1), r);
        std::vector<int64_t> s = c.shape(x);
        Value m = reshape(c, x, {product(s, 0, size_t(axis)), product(s, size_t(axis))});
        y = reshape(c, c.add("softmax", {m}, {{"axis", int64_t(1)}}), s);
    } else {
        y = c.add("softmax", {x}, {{"axis", norm_axis(c.i("axis", -1), r)}});
    }
    return {log ? c.add("log", {y}, {}, c.out()) : reshape(c, y, c.shape(y), c.out())};
}

// ---- reductions ---------------------------------------------------------------------------------

// The axes a reduction of a rank-r input reduces (sorted, non-negative), or nullopt where
// opset 18's noop_with_empty_axes makes it the identity.
inline std::optional<std::vector<int64_t>> reduced_axes(Ctx& c, int64_t r, bool axes_from_input) {
    std::vector<int64_t> axes;
    const bool noop = axes_from_input && c.i("noop_with_empty_axes", 0);
    if (axes_from_input) {
        if (c.has(1)) axes = c.const_ints(1, "axes");
    } else {
        axes = c.ints("axes");
    }
    if (axes.empty()) {
        if (noop) return std::nullopt;
        axes = iota_vec(0, r);
    }
    for (int64_t& a : axes) a = norm_axis(a, r);
    std::sort(axes.begin(), axes.end());
    return axes;
}

// The shape a reduction over `axes` leaves (keep: reduced extents become 1).
inline std::vector<int64_t> reduced_shape(const std::vector<int64_t>& shape, const std::vector<int64_t>& axes, bool keep) {
    std::vector<int64_t> out;
    for (int64_t d = 0; d < int64_t(shape.size()); ++d) {
        bool red = std::find(axes.begin(), axes.end(), d) != axes.end();
        if (!red) out.push_back(shape[size_t(d)]);
        else if (keep) out.push_back(1);
    }
    return out;
}

// ONNX reductions keep dimensions by default and drop to rank 0 when all go.
inline std::vector<Value> reduce(Ctx& c, const char* op, Value x, bool axes_from_input,
                                 const std::function<Value(Value)>& pre = {},
                                 const std::function<Value(Value)>& post = {}) {
    const bool keep = c.i("keepdims", 1) != 0;
    std::optional<std::vector<int64_t>> axes = reduced_axes(c, c.rank(x), axes_from_input);
    if (!axes) return {reshape(c, x, c.shape(x), c.out())};
    std::vector<int64_t> out = reduced_shape(c.shape(x), *axes, keep);
    Value v = pre ? pre(x) : x;
    v = c.add(op, {v}, {{"axes", *axes}, {"keepdims", int64_t(keep)}});
    if (post) v = post(v);
    if (out.empty()) return {c.mark_scalar(reshape(c, v, {1}, c.out()))};
    return {reshape(c, v, out, c.out())};
}

// A buffer of t's lowest (or highest) value: -inf / +inf for floats.
inline BufferRef extreme_buffer(DataType t, const std::vector<int64_t>& shape, bool highest) {
    if (t.is_float()) return filled_buffer(t, shape, highest ? INFINITY : -INFINITY);
    if (t.is_bool()) return filled_buffer(t, shape, highest ? 1 : 0);
    BufferRef b = BufferRef::allocate(t, shape);
    const int bits = t.bits;
    // Two's complement: the highest of a signed type is 0111..., the lowest 1000...; unsigned
    // ones are all ones and all zeros.
    uint64_t pattern = t.is_uint() ? (highest ? ~uint64_t(0) : 0)
                                   : (highest ? (uint64_t(1) << (bits - 1)) - 1 : uint64_t(1) << (bits - 1));
    char* p = static_cast<char*>(b.data());
    for (int64_t i = 0; i < b.size(); ++i) std::memcpy(p + i * (bits / 8), &pattern, size_t(bits / 8));
    return b;
}

// A reduction of an empty input (a 0 in its shape): its identity over every reduced set
// (0 for sums, 1 for products, the lowest value for max, the highest for min, NaN for the
// mean, as 0 / 0), then `post`; the result is empty too where a kept extent is 0.
inline std::vector<Value> reduce_empty_set(Ctx& c, const char* op, const graph::TensorType& x, bool axes_from_input,
                                           const std::function<Value(Value)>& post) {
    const bool keep = c.i("keepdims", 1) != 0;
    std::optional<std::vector<int64_t>> axes = reduced_axes(c, int64_t(x.shape.size()), axes_from_input);
    std::vector<int64_t> out = axes ? reduced_shape(x.shape, *axes, keep) : x.shape;
    if (!axes || std::find(out.begin(), out.end(), 0) != out.end()) {
        c.empty_outs = {1};
        c.empty_out_types[0] = {out, x.dtype};
        return {Value{}};
    }
    const std::string o = op;
    const DataType t = x.dtype;
    BufferRef fill = o == "prod" ? filled_buffer(t, out.empty() ? std::vector<int64_t>{1} : out, 1)
                                 : filled_buffer(t, out.empty() ? std::vector<int64_t>{1} : out, 0);
    if (o == "mean") fill = filled_buffer(t, fill.shape(), std::numeric_limits<double>::quiet_NaN());
    if (o == "max" || o == "min") fill = extreme_buffer(t, fill.shape(), o == "min");
    Value v = c.constant(fill, post ? c.fresh("identity") : c.out());
    if (post) v = post(v);
    if (out.empty()) return {c.mark_scalar(reshape(c, v, {1}, c.out()))};
    return {reshape(c, v, out, c.out())};
}

inline Converter reduction(const char* op, int axes_input_since, int kind = 0) {
    // kind: 0 plain, 2 sum of squares, 3 L2, 4 L1, 5 log-sum, 6 log-sum-exp
    return [=](Ctx& c) -> std::vector<Value> {
        bool from_input = c.opset >= axes_input_since;
        std::function<Value(Value)> pre, post;
        switch (kind) {
            case 2: pre = [&c](Value v) { return c.add("mul", {v, v}); }; break;
            case 3:
                pre = [&c](Value v) { return c.add("mul", {v, v}); };
                post = [&c](Value v) { return c.add("sqrt", {v}); };
                break;
            case 4: pre = [&c](Value v) { return abs_of(c, v); }; break;
            case 5: post = [&c](Value v) { return c.add("log", {v}); }; break;
            case 6:
                pre = [&c](Value v) { return c.add("exp", {v}); };
                post = [&c](Value v) { return c.add("log", {v}); };
                break;
            default: break;
        }
        if (const graph::TensorType* empty = c.empty_type(0)) return reduce_empty_set(c, op, *empty, from_input, post);
        return reduce(c, op, c.in(0), from_input, pre, post);
    };
}

// ---- losses -----------------------------------------------------------------------------
// NegativeLogLikelihoodLoss over log-probabilities logp [N, C, d...] and int targets [N, d...]:
// -logp[n, target, d...] times weight[target] (1 without weights), 0 where the target is
// ignore_index; reduction "none", "sum", or "mean" (divided by the summed weights of the
// targets not ignored).
inline Value nll_loss(Ctx& c, Value logp, Value target, std::optional<Value> weight, const std::string& out_name) {
    const std::string reduction = c.s("reduction", "mean");
    if (reduction != "none" && reduction != "sum" && reduction != "mean")
        malformed("reduction '" + reduction + "' is none of none, sum, mean");
    if (c.rank(logp) < 2 || c.rank(target) != c.rank(logp) - 1)
        malformed("the input " + graph::shape_str(c.shape(logp)) + " and target " + graph::shape_str(c.shape(target)) +
                  " must be [N, C, d...] and [N, d...]");
    const DataType t = c.dtype(logp), i64 = DataType::int_(64);
    if (!c.dtype(target).is_int()) malformed("the target must be integers, got " + c.dtype(target).str());
    Value k = c.dtype(target) == i64 ? target : c.g.cast(target, i64, c.fresh("target64"));
    Value picked = c.add("gather_elements", {logp, c.add("unsqueeze", {k}, {{"axes", std::vector<int64_t>{1}}})},
                         {{"axis", int64_t(1)}});
    Value loss = neg(c, c.add("squeeze", {picked}, {{"axes", std::vector<int64_t>{1}}}));
    std::optional<Value> w;  // each element's weight
    if (weight) w = c.add("gather", {*weight, k}, {{"axis", int64_t(0)}});
    if (c.has_attr("ignore_index")) {
        Value kept = c.add("not_equal", {k, c.scalar(double(c.i("ignore_index")), i64, "ignore_index")});
        w = c.g.where(kept, w ? *w : c.scalar(1, t, "one"), c.scalar(0, t, "zero"), c.fresh("weight"));
    }
    if (w) loss = c.add("mul", {loss, *w});
    if (reduction == "none") return reshape(c, loss, c.shape(loss), out_name);
    Value total = c.add("sum", {loss}, {{"keepdims", int64_t(0)}});
    if (reduction == "mean") {
        Value count = w ? c.add("sum", {*w}, {{"keepdims", int64_t(0)}})
                        : c.scalar(double(product(c.shape(loss))), t, "count");
        total = c.add("div", {total, count});
    }
    return c.mark_scalar(reshape(c, total, {1}, out_name));
}

inline std::vector<Value> convert_nll_loss(Ctx& c) {
    std::optional<Value> weight;
    if (c.has(2)) weight = c.in(2);
    return {nll_loss(c, c.in(0), c.in(1), weight, c.out())};
}

// SoftmaxCrossEntropyLoss: log_softmax over axis 1 (x - max - log(sum(exp(x - max)))), then
// the NLL loss; the log-probabilities are output 1 when asked for.
inline std::vector<Value> convert_softmax_cross_entropy(Ctx& c) {
    Value x = c.in(0);
    if (!c.dtype(x).is_float()) malformed("the scores must be floats, got " + c.dtype(x).str());
    Attrs axis1{{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t(1)}};
    Value z = c.add("sub", {x, c.add("max", {x}, axis1)});
    Value lse = c.add("log", {c.add("sum", {c.add("exp", {z})}, axis1)});
    const bool want_log_prob = c.wants(1);
    Value logp = c.add("sub", {z, lse}, {}, want_log_prob ? c.out(1) : "");
    std::optional<Value> weight;
    if (c.has(2)) weight = c.in(2);
    std::vector<Value> out{nll_loss(c, logp, c.in(1), weight, c.out())};
    if (want_log_prob) out.push_back(logp);
    return out;
}

// ArgMax, ArgMin: axis, keepdims, select_last_index (opset 12).
inline Converter arg_extreme(const char* op) {
    return [op](Ctx& c) -> std::vector<Value> {
        graph::Attrs a{{"axis", c.i("axis", 0)}, {"keepdims", c.i("keepdims", 1)},
                       {"select_last_index", c.i("select_last_index", 0)}};
        return {c.add(op, {c.in(0)}, std::move(a), c.out())};
    };
}

}  // namespace weft::onnx::detail

