// The ONNX importer's converters: one per ONNX op type, each adding graph nodes
// (graph/graph.hpp, docs/graph.md) with the semantics of the node's opset.
#pragma once
#include <algorithm>
#include <cmath>
#include <numeric>

#include "weft/frontend/onnx/impl/context.hpp"
#include "weft/graph/impl/op_helpers.hpp"  // broadcast_shapes

namespace weft::onnx::detail {

using graph::Attrs;

inline std::vector<int64_t> iota_vec(int64_t from, int64_t to) {
    std::vector<int64_t> v;
    for (int64_t k = from; k < to; ++k) v.push_back(k);
    return v;
}

inline int64_t norm_axis(int64_t axis, int64_t rank, const char* what = "axis") {
    if (axis < -rank || axis >= rank)
        malformed(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
}

inline int64_t product(const std::vector<int64_t>& v, size_t from = 0, size_t to = size_t(-1)) {
    int64_t p = 1;
    for (size_t k = from; k < std::min(to, v.size()); ++k) p *= v[k];
    return p;
}

inline Value reshape(Ctx& c, Value x, std::vector<int64_t> shape, std::string name = "") {
    if (c.shape(x) == shape && name.empty()) return x;
    return c.add("reshape", {x}, {{"shape", shape}}, std::move(name));
}

// x broadcast to `shape` (numpy rules): where(true, x, x) broadcasts for every dtype.
inline Value expand_to(Ctx& c, Value x, const std::vector<int64_t>& shape, std::string name = "") {
    checked_elements(shape, c.limit, "the broadcast shape");
    Value t = c.constant(filled_buffer(DataType::bool_(), shape, 1), "true");
    return c.add("where", {t, x, x}, {}, std::move(name));
}

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
            // x^2 (a decomposed LayerNorm's variance) as x * x, the same correctly rounded
            // value: pow calls powf per element (the transformer layer's variance kernel: 160x).
            const graph::Node& e = c.g.node(b);
            if (e.is_constant() && e.value.size() == 1 && c.rank(b) <= c.rank(a) && buffer_floats(e.value)[0] == 2.0)
                return {c.add("mul", {a, a}, {}, c.out())};
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
        // min / max inputs: constants become clip's attributes, others maximum / minimum.
        auto bound = [&](size_t k, double& v, std::optional<Value>& val) {
            if (!c.has(k)) return;
            const graph::Node& n = c.g.node(c.in(k));
            if (n.is_input()) val = c.in(k);
            else v = c.const_floats(k, k == 1 ? "min" : "max").at(0);
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

inline std::vector<Value> convert_cast(Ctx& c) {
    DataType t = to_dtype(int(c.i("to")), "the 'to' attribute");
    return {c.g.cast(c.in(0), t, c.out())};
}

// ---- linear algebra ---------------------------------------------------------------------------

inline std::vector<Value> convert_gemm(Ctx& c) {
    Value a = c.in(0), b = c.in(1);
    if (c.rank(a) != 2 || c.rank(b) != 2) malformed("A and B must be matrices");
    if (c.i("transA", 0)) a = c.add("transpose", {a}, {{"perm", std::vector<int64_t>{1, 0}}});
    double alpha = c.f("alpha", 1.0), beta = c.f("beta", 1.0);
    bool more = alpha != 1.0 || (c.has(2) && beta != 0.0);
    // A constant B^T (a Linear layer's weight) is transposed once, at build time (the graph's
    // constant folding), for matmul: dense packs its [N, K] weight into panels in the kernel,
    // on every run, which costs more than the product itself for a few rows (37x on a batch-1
    // MLP); matmul reads a [K, N] B in place for a few rows and packs it contiguously for more.
    bool trans_b = c.i("transB", 0) != 0;
    if (trans_b && c.g.node(b).is_constant()) {
        b = c.add("transpose", {b}, {{"perm", std::vector<int64_t>{1, 0}}});
        trans_b = false;
    }
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

inline std::vector<Value> convert_matmul(Ctx& c) {
    Value a = c.in(0), b = c.in(1);
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
    return {reshape(c, y, out, c.out())};
}

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
        int64_t o = (in[k] + strides[k] - 1) / strides[k];
        int64_t total = std::max<int64_t>(0, (o - 1) * strides[k] + (kernel[k] - 1) * dil[k] + 1 - in[k]);
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

inline Spatial spatial_of(Ctx& c, Value x, const char* op) {
    int64_t r = c.rank(x);
    if (r == 4) return {2, false};
    if (r == 3) return {1, true};
    unsupported(std::string(op) + " over " + std::to_string(r - 2) +
                " spatial dimensions (weft has 1-D and 2-D windows)");
}

inline std::vector<int64_t> two_d(const std::vector<int64_t>& v, bool one_d, int64_t fill) {
    return one_d ? std::vector<int64_t>{fill, v[0]} : v;
}
inline std::vector<int64_t> two_d_pads(const std::vector<int64_t>& p, bool one_d) {
    return one_d ? std::vector<int64_t>{0, p[0], 0, p[1]} : p;
}

inline std::vector<Value> convert_conv(Ctx& c) {
    Value x = c.in(0), w = c.in(1);
    Spatial sp = spatial_of(c, x, "Conv");
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
    if (sp.one_d) {
        x = c.add("unsqueeze", {x}, {{"axes", std::vector<int64_t>{2}}});
        w = c.add("unsqueeze", {w}, {{"axes", std::vector<int64_t>{2}}});
    }
    Attrs a{{"strides", two_d(strides, sp.one_d, 1)},
            {"pads", two_d_pads(pads, sp.one_d)},
            {"dilations", two_d(dil, sp.one_d, 1)},
            {"groups", c.i("group", 1)}};
    bool last = !c.has(2) && !sp.one_d;
    Value y = c.add("conv2d", {x, w}, a, last ? c.out() : "");
    if (c.has(2)) y = c.add("bias_add", {y, c.in(2)}, {{"axis", int64_t(1)}}, sp.one_d ? "" : c.out());
    if (sp.one_d) y = c.add("squeeze", {y}, {{"axes", std::vector<int64_t>{2}}}, c.out());
    return {y};
}

inline std::vector<Value> convert_pool(Ctx& c, bool is_max) {
    const char* name = is_max ? "MaxPool" : "AveragePool";
    Value x = c.in(0);
    Spatial sp = spatial_of(c, x, name);
    if (!c.dtype(x).is_float()) unsupported(std::string(name) + " on " + c.dtype(x).str() + " (weft pools floats)");
    std::vector<int64_t> xs = c.shape(x), in(xs.begin() + 2, xs.end());
    std::vector<int64_t> kernel = c.ints("kernel_shape");
    if (kernel.size() != sp.n) malformed("kernel_shape must have one value per spatial axis");
    std::vector<int64_t> strides = c.ints("strides", std::vector<int64_t>(sp.n, 1));
    std::vector<int64_t> dil = c.ints("dilations", std::vector<int64_t>(sp.n, 1));
    if (strides.size() != sp.n || dil.size() != sp.n) malformed("strides/dilations must have one value per spatial axis");
    for (int64_t d : dil)
        if (d != 1) unsupported(std::string(name) + " with dilations other than 1");
    std::vector<int64_t> pads = window_pads(c, in, kernel, strides, dil);
    bool include_pad = !is_max && c.i("count_include_pad", 0) != 0;
    if (c.i("ceil_mode", 0)) {
        // ceil_mode: more padding at the end, as long as the last window starts inside the
        // input or its leading padding (ONNX drops a window that starts in the trailing pad).
        for (size_t k = 0; k < sp.n; ++k) {
            int64_t span = in[k] + pads[k] + pads[k + sp.n] - kernel[k];
            int64_t o = (span + strides[k] - 1) / strides[k] + 1;
            if ((o - 1) * strides[k] >= in[k] + pads[k]) --o;
            int64_t extra = (o - 1) * strides[k] + kernel[k] - (in[k] + pads[k] + pads[k + sp.n]);
            if (extra > 0) {
                if (include_pad)
                    unsupported("AveragePool with ceil_mode and count_include_pad where the last window passes the padding");
                pads[k + sp.n] += extra;
            }
        }
    }
    if (sp.one_d) x = c.add("unsqueeze", {x}, {{"axes", std::vector<int64_t>{2}}});
    Attrs a{{"kernel", two_d(kernel, sp.one_d, 1)},
            {"strides", two_d(strides, sp.one_d, 1)},
            {"pads", two_d_pads(pads, sp.one_d)},
            {"count_include_pad", int64_t(include_pad)}};
    Value y = c.add(is_max ? "max_pool2d" : "avg_pool2d", {x}, a, sp.one_d ? "" : c.out());
    if (sp.one_d) y = c.add("squeeze", {y}, {{"axes", std::vector<int64_t>{2}}}, c.out());
    return {y, Value{}};
}

inline std::vector<Value> convert_global_pool(Ctx& c, bool is_max) {
    Value x = c.in(0);
    if (c.rank(x) < 3) malformed("the data must have at least 3 dimensions [N, C, ...]");
    if (!is_max && c.rank(x) == 4) return {c.add("global_avg_pool2d", {x}, {}, c.out())};
    return {c.add(is_max ? "max" : "mean", {x}, {{"axes", iota_vec(2, c.rank(x))}, {"keepdims", int64_t(1)}},
                  c.out())};
}

// ---- normalization, softmax -------------------------------------------------------------------

inline std::vector<Value> convert_batch_norm(Ctx& c) {
    if (c.i("training_mode", 0)) unsupported("BatchNormalization in training mode");
    if (c.opset < 9 && c.i("spatial", 1) == 0) unsupported("BatchNormalization with spatial = 0");
    std::vector<Value> r{c.g.batch_norm(c.in(0), c.in(1), c.in(2), c.in(3), c.in(4), c.f("epsilon", 1e-5), c.out())};
    r.resize(size_t(std::max(1, c.node.output_size())));
    return r;
}

inline std::vector<Value> convert_instance_norm(Ctx& c) {
    Value x = c.in(0);
    int64_t r = c.rank(x);
    if (r < 3) malformed("the data must have at least 3 dimensions [N, C, ...]");
    DataType t = c.dtype(x);
    Attrs axes{{"axes", iota_vec(2, r)}, {"keepdims", int64_t(1)}};
    Value mu = c.add("mean", {x}, axes);
    Value d = c.add("sub", {x, mu});
    Value var = c.add("mean", {c.add("mul", {d, d})}, axes);
    Value den = c.add("sqrt", {c.add("add", {var, c.scalar(c.f("epsilon", 1e-5), t, "epsilon")})});
    std::vector<int64_t> cs{c.shape(x)[1]};
    for (int64_t k = 2; k < r; ++k) cs.push_back(1);
    Value y = c.add("mul", {c.add("div", {d, den}), reshape(c, c.in(1), cs)});
    return {c.add("add", {y, reshape(c, c.in(2), cs)}, {}, c.out())};
}

inline std::vector<Value> convert_layer_norm(Ctx& c) {
    Value x = c.in(0);
    int64_t r = c.rank(x), axis = norm_axis(c.i("axis", -1), r);
    std::vector<int64_t> norm(c.shape(x).begin() + axis, c.shape(x).end());
    DataType t = c.dtype(x);
    auto full = [&](Value v) { return c.shape(v) == norm ? v : expand_to(c, v, norm); };
    Value gamma = full(c.in(1));
    checked_elements(norm, c.limit, "the normalized shape");
    Value beta = c.has(2) ? full(c.in(2)) : c.constant(filled_buffer(t, norm, 0), "beta");
    double eps = c.f("epsilon", 1e-5);
    std::vector<Value> out{c.g.layer_norm(x, gamma, beta, eps, c.out())};
    // Mean and InvStdDev (the statistics, normalized axes kept as 1), when asked for.
    auto wanted = [&](int k) { return c.node.output_size() > k && !c.node.output(k).empty(); };
    if (wanted(1) || wanted(2)) {
        Attrs axes{{"axes", iota_vec(axis, r)}, {"keepdims", int64_t(1)}};
        Value mu = c.add("mean", {x}, axes, wanted(1) ? c.out(1) : "");
        out.push_back(mu);
        if (wanted(2)) {
            Value d = c.add("sub", {x, mu});
            Value var = c.add("mean", {c.add("mul", {d, d})}, axes);
            Value sd = c.add("sqrt", {c.add("add", {var, c.scalar(eps, t, "epsilon")})});
            out.push_back(c.add("div", {c.scalar(1, t, "one"), sd}, {}, c.out(2)));
        }
    }
    return out;
}

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

// ONNX reductions keep dimensions by default and drop to rank 0 when all go.
inline std::vector<Value> reduce(Ctx& c, const char* op, Value x, bool axes_from_input,
                                 const std::function<Value(Value)>& pre = {},
                                 const std::function<Value(Value)>& post = {}) {
    std::vector<int64_t> axes;
    if (axes_from_input) {
        if (c.has(1)) axes = c.const_ints(1, "axes");
    } else {
        axes = c.ints("axes");
    }
    bool keep = c.i("keepdims", 1) != 0;
    int64_t r = c.rank(x);
    if (axes.empty()) {
        if (axes_from_input && c.i("noop_with_empty_axes", 0)) return {reshape(c, x, c.shape(x), c.out())};
        axes = iota_vec(0, r);
    }
    for (int64_t& a : axes) a = norm_axis(a, r);
    std::vector<int64_t> out;
    for (int64_t d = 0; d < r; ++d) {
        bool red = std::find(axes.begin(), axes.end(), d) != axes.end();
        if (!red) out.push_back(c.shape(x)[size_t(d)]);
        else if (keep) out.push_back(1);
    }
    Value v = pre ? pre(x) : x;
    v = c.add(op, {v}, {{"axes", axes}, {"keepdims", int64_t(keep)}});
    if (post) v = post(v);
    if (out.empty()) return {c.mark_scalar(reshape(c, v, {1}, c.out()))};
    return {reshape(c, v, out, c.out())};
}

inline Converter reduction(const char* op, int axes_input_since, int kind = 0) {
    // kind: 0 plain, 1 min (-max(-x)), 2 sum of squares, 3 L2, 4 L1, 5 log-sum, 6 log-sum-exp
    return [=](Ctx& c) -> std::vector<Value> {
        bool from_input = c.opset >= axes_input_since;
        std::function<Value(Value)> pre, post;
        switch (kind) {
            case 1:
                pre = [&c](Value v) { return neg(c, v); };
                post = [&c](Value v) { return neg(c, v); };
                break;
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
        return reduce(c, op, c.in(0), from_input, pre, post);
    };
}

// ---- shapes and data movement ---------------------------------------------------------------------

inline std::vector<Value> convert_reshape(Ctx& c) {
    Value x = c.in(0);
    std::vector<int64_t> shape = c.opset < 5 ? c.ints("shape") : c.const_ints(1, "the shape");
    if (c.i("allowzero", 0))
        for (int64_t d : shape)
            if (d == 0) unsupported("Reshape with allowzero = 1 and a 0 in the shape");
    if (shape.empty()) return {c.mark_scalar(c.add("reshape", {x}, {{"shape", std::vector<int64_t>{1}}}, c.out()))};
    return {c.add("reshape", {x}, {{"shape", shape}}, c.out())};
}

inline std::vector<Value> convert_squeeze(Ctx& c, bool un) {
    Value x = c.in(0);
    std::vector<int64_t> axes;
    if (c.opset >= 13) {
        if (c.has(1)) axes = c.const_ints(1, "axes");
    } else {
        axes = c.ints("axes");
    }
    if (un && axes.empty()) malformed("Unsqueeze needs axes");
    if (un && c.is_scalar(x)) return {reshape(c, x, std::vector<int64_t>(axes.size(), 1), c.out())};
    if (!un) {
        // Squeezing every dimension leaves a scalar: [1].
        std::vector<int64_t> s = c.shape(x), out;
        for (int64_t& a : axes) a = norm_axis(a, int64_t(s.size()));
        for (size_t d = 0; d < s.size(); ++d) {
            bool listed = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
            if (!(axes.empty() ? s[d] == 1 : listed)) out.push_back(s[d]);
        }
        if (out.empty()) return {c.mark_scalar(reshape(c, x, {1}, c.out()))};
    }
    return {c.add(un ? "unsqueeze" : "squeeze", {x}, {{"axes", axes}}, c.out())};
}

inline std::vector<Value> convert_split(Ctx& c) {
    Value x = c.in(0);
    int64_t axis = norm_axis(c.i("axis", 0), c.rank(x));
    std::vector<int64_t> sizes = c.opset >= 13 ? (c.has(1) ? c.const_ints(1, "split") : std::vector<int64_t>{})
                                               : c.ints("split");
    int64_t n = c.node.output_size(), extent = c.shape(x)[size_t(axis)];
    if (sizes.empty()) {
        if (n <= 0 || extent % n) malformed("cannot split " + std::to_string(extent) + " into " + std::to_string(n) + " equal parts");
        sizes.assign(size_t(n), extent / n);
    }
    if (int64_t(sizes.size()) != n) malformed("'split' has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n) + " outputs");
    std::vector<Value> r;
    int64_t start = 0;
    for (int64_t k = 0; k < n; ++k) {
        int64_t len = sizes[size_t(k)];
        if (len < 0 || start + len > extent) malformed("split sizes exceed the extent " + std::to_string(extent));
        if (len == 0) unsupported("Split into an empty piece");
        r.push_back(c.add("slice", {x},
                          {{"starts", std::vector<int64_t>{start}},
                           {"ends", std::vector<int64_t>{start + len}},
                           {"axes", std::vector<int64_t>{axis}}},
                          c.out(int(k))));
        start += len;
    }
    return r;
}

inline std::vector<Value> convert_slice(Ctx& c) {
    Value x = c.in(0);
    std::vector<int64_t> starts, ends, axes, steps;
    if (c.opset < 10) {
        starts = c.ints("starts");
        ends = c.ints("ends");
        axes = c.ints("axes");
    } else {
        starts = c.const_ints(1, "starts");
        ends = c.const_ints(2, "ends");
        if (c.has(3)) axes = c.const_ints(3, "axes");
        if (c.has(4)) steps = c.const_ints(4, "steps");
    }
    // ONNX allows an empty result; weft's tensors cannot be empty, but a constant one is
    // kept aside (shape computations slice shapes to nothing, then concatenate).
    std::vector<int64_t> s = c.shape(x);
    bool empty = false;
    for (size_t k = 0; k < starts.size() && k < ends.size(); ++k) {
        int64_t axis = norm_axis(k < axes.size() ? axes[k] : int64_t(k), int64_t(s.size()));
        int64_t step = k < steps.size() ? steps[k] : 1, n = s[size_t(axis)];
        if (step == 0) malformed("a slice step is 0");
        int64_t b = starts[k], e = ends[k];
        if (b < 0) b += n;
        if (e < 0 && e > std::numeric_limits<int64_t>::min() + n) e += n;
        if (step > 0) {
            b = std::clamp<int64_t>(b, 0, n);
            e = std::clamp<int64_t>(e, 0, n);
            empty = empty || e <= b;
        } else {
            b = std::clamp<int64_t>(b, -1, n - 1);
            e = std::clamp<int64_t>(e, -1, n - 1);
            empty = empty || e >= b;
        }
    }
    if (empty) {
        if (!c.g.node(x).is_constant()) unsupported("a Slice with an empty result (weft's tensors cannot be empty)");
        c.empty_outs = {1};
        return {Value{}};
    }
    return {c.g.slice(x, starts, ends, axes, steps, c.out())};
}

inline std::vector<Value> convert_pad(Ctx& c) {
    Value x = c.in(0);
    std::string mode = c.s("mode", "constant");
    if (mode != "constant") unsupported("Pad mode '" + mode + "' (weft pads with a constant)");
    std::vector<int64_t> pads;
    double value = 0;
    if (c.opset < 11) {
        pads = c.ints(c.opset < 2 ? "paddings" : "pads");
        value = c.f("value", 0.0);
    } else {
        pads = c.const_ints(1, "pads");
        if (c.has(2)) value = c.const_floats(2, "constant_value").at(0);
        if (c.has(3)) unsupported("Pad with an axes input");
    }
    return {c.g.pad(x, pads, value, c.out())};
}

inline std::vector<Value> convert_concat(Ctx& c) {
    std::vector<Value> xs;
    for (size_t k = 0; k < c.n_in(); ++k)
        if (!c.is_empty(k)) xs.push_back(c.in(k));  // empty constants add nothing
    if (xs.empty()) malformed("Concat needs at least one non-empty input");
    if (xs.size() == 1) return {reshape(c, xs[0], c.shape(xs[0]), c.out())};
    int64_t axis = c.opset < 4 ? c.i("axis", 1) : c.i("axis");
    return {c.g.concat(xs, axis, c.out())};
}

inline std::vector<Value> convert_expand(Ctx& c) {
    Value x = c.in(0);
    std::vector<int64_t> shape = c.const_ints(1, "the shape");
    return {expand_to(c, x, graph::ops::broadcast_shapes(c.shape(x), shape), c.out())};
}

inline std::vector<Value> convert_tile(Ctx& c) {
    Value x = c.in(0);
    std::vector<int64_t> reps = c.const_ints(1, "repeats");
    if (int64_t(reps.size()) != c.rank(x)) malformed("Tile: one repeat per dimension");
    std::vector<int64_t> tiled = c.shape(x);  // its product is the output's element count
    tiled.insert(tiled.end(), reps.begin(), reps.end());
    checked_elements(tiled, c.limit, "Tile's output (the shape, then the repeats)");
    for (size_t d = 0; d < reps.size(); ++d) {
        if (reps[d] < 1) unsupported("Tile with a repeat below 1");
        if (reps[d] == 1) continue;
        x = c.g.concat(std::vector<Value>(size_t(reps[d]), x), int64_t(d), c.fresh("tile"));
    }
    return {reshape(c, x, c.shape(x), c.out())};
}

inline std::vector<Value> convert_constant(Ctx& c) {
    const std::string what = "Constant's value";
    BufferRef b;
    if (c.has_attr("value")) {
        b = tensor_to_buffer(c.typed("value", pb::AttributeProto::TENSOR).t(), c.limit, what);
    } else if (c.has_attr("value_float")) {
        b = filled_buffer(DataType::float_(32), {}, c.f("value_float", 0));
    } else if (c.has_attr("value_int")) {
        b = int64_buffer({c.i("value_int")}, {});
    } else if (c.has_attr("value_floats")) {
        std::vector<double> v = c.floats("value_floats");
        b = BufferRef::allocate(DataType::float_(32), {int64_t(v.size())});
        for (size_t k = 0; k < v.size(); ++k) static_cast<float*>(b.data())[k] = float(v[k]);
    } else if (c.has_attr("value_ints")) {
        std::vector<int64_t> v = c.ints("value_ints");
        b = int64_buffer(v, {int64_t(v.size())});
    } else {
        unsupported("Constant without a numeric value (sparse_value, strings)");
    }
    if (b.size() == 0) {
        c.empty_outs = {1};
        return {Value{}};
    }
    return {c.named_constant(0, b)};
}

inline std::vector<Value> convert_constant_of_shape(Ctx& c) {
    std::vector<int64_t> shape = c.const_ints(0, "the shape");
    if (checked_elements(shape, c.limit, "ConstantOfShape's output") == 0) {
        c.empty_outs = {1};
        return {Value{}};
    }
    BufferRef b;
    if (c.has_attr("value")) {
        BufferRef v = tensor_to_buffer(c.typed("value", pb::AttributeProto::TENSOR).t(), c.limit, "the value");
        if (v.size() != 1) malformed("ConstantOfShape's value must have one element");
        b = filled_buffer(v.dtype(), shape, buffer_floats(v)[0]);
        if (v.dtype() == DataType::int_(64)) b = int64_buffer(std::vector<int64_t>(size_t(b.size()), buffer_ints(v)[0]), shape);
    } else {
        b = filled_buffer(DataType::float_(32), shape, 0);
    }
    return {c.named_constant(0, b)};
}

inline std::vector<Value> convert_shape(Ctx& c) {
    std::vector<int64_t> s = c.shape(c.in(0));
    int64_t r = int64_t(s.size());
    int64_t start = c.i("start", 0), end = c.i("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, start, r);
    std::vector<int64_t> v(s.begin() + start, s.begin() + end);
    if (c.is_scalar(c.in(0))) unsupported("Shape of a scalar (an empty shape)");
    return {c.named_constant(0, int64_buffer(v, {int64_t(v.size())}))};
}

inline std::vector<Value> convert_identity(Ctx& c) {
    std::vector<Value> r{c.in(0)};
    if (c.node.op_type() == "Dropout" && c.opset >= 12 && c.has(2) &&
        c.const_ints(2, "training_mode").at(0) != 0)
        unsupported("Dropout in training mode");
    if (c.node.output_size() > 1 && !c.node.output(1).empty()) {  // Dropout's mask: all true in inference
        checked_elements(c.shape(c.in(0)), c.limit, "Dropout's mask");
        r.push_back(c.named_constant(1, filled_buffer(DataType::bool_(), c.shape(c.in(0)), 1)));
    }
    return r;
}

inline std::vector<Value> convert_gather(Ctx& c) {
    Value data = c.in(0), idx = c.in(1);
    int64_t axis = norm_axis(c.i("axis", 0), c.rank(data));
    if (!c.is_scalar(idx)) return {c.g.gather(data, idx, axis, c.out())};
    // A scalar index drops the axis.
    Value y = c.g.gather(data, idx, axis, c.fresh("gather"));
    std::vector<int64_t> s = c.shape(y);
    s.erase(s.begin() + axis);
    if (s.empty()) return {c.mark_scalar(reshape(c, y, {1}, c.out()))};
    return {reshape(c, y, s, c.out())};
}

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
    t["Softplus"] = {[](Ctx& c) -> std::vector<Value> {
        // log(1 + exp(x)) as max(x, 0) + log(1 + exp(-|x|)): no overflow.
        Value x = c.in(0);
        DataType t = c.dtype(x);
        Value e = c.add("exp", {neg(c, abs_of(c, x))});
        Value l = c.add("log", {c.add("add", {e, c.scalar(1, t, "one")})});
        return {c.add("add", {c.add("relu", {x}), l}, {}, c.out())};
    }};
    t["HardSigmoid"] = {[](Ctx& c) -> std::vector<Value> {
        Value x = c.in(0);
        DataType t = c.dtype(x);
        Value y = c.add("add", {c.add("mul", {x, c.scalar(c.f("alpha", 0.2), t, "alpha")}),
                                c.scalar(c.f("beta", 0.5), t, "beta")});
        return {c.g.clip(y, 0.0, 1.0, c.out())};
    }};
    t["Clip"] = {fn(convert_clip)};
    t["Cast"] = {fn(convert_cast)};
    t["Gemm"] = {fn(convert_gemm)};
    t["MatMul"] = {fn(convert_matmul)};
    t["Conv"] = {fn(convert_conv)};
    t["MaxPool"] = {[](Ctx& c) { return convert_pool(c, true); }};
    t["AveragePool"] = {[](Ctx& c) { return convert_pool(c, false); }};
    t["GlobalAveragePool"] = {[](Ctx& c) { return convert_global_pool(c, false); }};
    t["GlobalMaxPool"] = {[](Ctx& c) { return convert_global_pool(c, true); }};
    t["BatchNormalization"] = {fn(convert_batch_norm)};
    t["InstanceNormalization"] = {fn(convert_instance_norm)};
    t["LayerNormalization"] = {fn(convert_layer_norm), 17};
    t["Softmax"] = {[](Ctx& c) { return convert_softmax(c, false); }};
    t["LogSoftmax"] = {[](Ctx& c) { return convert_softmax(c, true); }};
    t["ReduceSum"] = {reduction("sum", 13)};
    t["ReduceMean"] = {reduction("mean", 18)};
    t["ReduceMax"] = {reduction("max", 18)};
    t["ReduceMin"] = {reduction("max", 18, 1)};
    t["ReduceSumSquare"] = {reduction("sum", 18, 2)};
    t["ReduceL2"] = {reduction("sum", 18, 3)};
    t["ReduceL1"] = {reduction("sum", 18, 4)};
    t["ReduceLogSum"] = {reduction("sum", 18, 5)};
    t["ReduceLogSumExp"] = {reduction("sum", 18, 6)};
    t["Reshape"] = {fn(convert_reshape)};
    t["Flatten"] = {[](Ctx& c) -> std::vector<Value> { return {c.g.flatten(c.in(0), c.i("axis", 1), c.out())}; }};
    t["Transpose"] = {[](Ctx& c) -> std::vector<Value> { return {c.g.transpose(c.in(0), c.ints("perm"), c.out())}; }};
    t["Concat"] = {fn(convert_concat)};
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
