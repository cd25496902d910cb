// Pooling in NCHW or NCHW[x]c (a 5th, innermost dimension: the channel block, carried
// along and vectorized): max and average over a window (padding never counts for max, and
// for average only with count_include_pad), global average, and their schedules.
#pragma once
#include "weft/topi/impl/conv_checks.hpp"
#include "weft/topi/impl/conv_schedule_util.hpp"

namespace weft::topi {

namespace conv_detail {
struct PoolShape {
    int64_t N, C, H, W, OH, OW;  // (estimates where symbolic: conv_detail::extent_value)
    int64_t block;               // the channel block of NCHW[x]c data; 0 for NCHW
    // The batch and the extents, which may be symbolic (an image size a graph keeps symbolic).
    Expr n, h, w, oh, ow;
    // The output shape for spatial extents (h, w).
    std::vector<Expr> shape(const Expr& out_h, const Expr& out_w) const {
        std::vector<Expr> r{strong_extent(n), make_int(C), strong_extent(out_h), strong_extent(out_w)};
        if (block) r.push_back(make_int(block));
        return r;
    }
    bool symbolic() const { return !is_constant_extent(h) || !is_constant_extent(w); }
};

// NCHW [N, C, H, W] or NCHW[x]c [N, C/x, H, W, x]; the batch and spatial extents may be
// symbolic. Max pools take integers too.
inline std::vector<Expr> pool_data_shape(const std::string& op, const Tensor& data, bool integers = false) {
    return data.ndim() == 5 ? spatial_shape(op, data, 5, "data [N, C/x, H, W, x]", 2, integers)
                            : spatial_shape(op, data, 4, "data [N, C, H, W]", 2, integers);
}

// data at (n, c, y, x) and, for NCHW[x]c, the output index's block lane.
inline Expr pool_read(const Tensor& data, const std::vector<Expr>& out, Expr y, Expr x) {
    std::vector<Expr> at{out[0], out[1], std::move(y), std::move(x)};
    if (out.size() == 5) at.push_back(out[4]);
    return data.at(at);
}

// A pooling window's reduction axes, and for output element i the input position each tap
// reads and whether it counts (undefined: every tap does). Along an axis where the window
// is larger than the input (a kernel of 2^40 rows over 6, padded to fit), the axis runs over
// the input's positions, each counting where it lies inside the window, rather than over
// the window's taps: the other taps are all padding, which counts for nothing (max leaves
// it out, average divides by a constant or by the window's part inside the input), so the
// window costs 6 steps, not 2^40 (ONNX Runtime clips its windows to the input the same way).
// With dilation, the taps are `dilation` apart and never clipped.
struct PoolTaps {
    IterVar rh, rw;

    static bool dilated(const Pool2dParams& p) { return p.dilation.h > 1 || p.dilation.w > 1; }
    // (A symbolic extent is never clipped to: a window larger than the input leaves no output.)
    static bool clip_h(const PoolShape& sh, const Pool2dParams& p) {
        return !dilated(p) && is_constant_extent(sh.h) && p.kernel.h > sh.H;
    }
    static bool clip_w(const PoolShape& sh, const Pool2dParams& p) {
        return !dilated(p) && is_constant_extent(sh.w) && p.kernel.w > sh.W;
    }
    PoolTaps(const PoolShape& sh, const Pool2dParams& p)
        : rh(reduce_axis(0, clip_h(sh, p) ? sh.H : p.kernel.h, "rh")),
          rw(reduce_axis(0, clip_w(sh, p) ? sh.W : p.kernel.w, "rw")) {}

    struct Tap {
        Expr y, x, counts;
    };
    Tap at(const std::vector<Expr>& i, const Pool2dParams& p, const PoolShape& sh) const {
        const bool clip_h = PoolTaps::clip_h(sh, p), clip_w = PoolTaps::clip_w(sh, p);
        Expr y0 = i[2] * p.stride.h - p.padding.top, x0 = i[3] * p.stride.w - p.padding.left;
        Tap t{clip_h ? Expr(rh) : i[2] * p.stride.h + rh * p.dilation.h - p.padding.top,
              clip_w ? Expr(rw) : i[3] * p.stride.w + rw * p.dilation.w - p.padding.left, Expr()};
        if (clip_h || clip_w) {
            Expr in_y = clip_h ? t.y >= y0 && t.y < y0 + p.kernel.h : t.y >= 0 && t.y < plus(sh.h, 0);
            Expr in_x = clip_w ? t.x >= x0 && t.x < x0 + p.kernel.w : t.x >= 0 && t.x < plus(sh.w, 0);
            t.counts = in_y && in_x;
        } else if (!p.padding.none() || dilated(p) || p.ceil_mode) {
            t.counts = t.y >= 0 && t.y < plus(sh.h, 0) && t.x >= 0 && t.x < plus(sh.w, 0);
        }
        return t;
    }
};

PoolShape check_pool(const std::string& op, const Tensor& data, const Pool2dParams& p, bool integers = false) {
    const std::vector<Expr> ds = pool_data_shape(op, data, integers);
    const std::vector<int64_t> d = extent_values(ds);
    const Size2d out = pool2d_out_size(d[2], d[3], p, op);
    PoolShape sh{d[0], d[1], d[2], d[3], out.h, out.w, d.size() == 5 ? d[4] : 0, ds[0], ds[2], ds[3], Expr(out.h),
                 Expr(out.w)};
    if (sh.symbolic()) {
        sh.oh = out_extent_expr(op, "height", ds[2], p.kernel.h, p.stride.h, p.dilation.h, p.padding.top,
                                p.padding.bottom, p.ceil_mode);
        sh.ow = out_extent_expr(op, "width", ds[3], p.kernel.w, p.stride.w, p.dilation.w, p.padding.left,
                                p.padding.right, p.ceil_mode);
    }
    return sh;
}
}  // namespace conv_detail

Size2d pool2d_out_size(int64_t H, int64_t W, const Pool2dParams& p, const std::string& op) {
    using namespace conv_detail;
    WEFT_CHECK(p.kernel.h >= 1 && p.kernel.w >= 1, op, ": the kernel must be at least 1x1, got ", p.kernel.h, "x",
               p.kernel.w);
    check_window(op, p.stride, p.padding, p.dilation);
    // The window's span; a dilation that overflows it is out_extent's error.
    auto span = [](int64_t k, int64_t d) { return k > 1 && d > (INT64_MAX - 1) / (k - 1) ? INT64_MAX : d * (k - 1) + 1; };
    const int64_t span_h = span(p.kernel.h, p.dilation.h), span_w = span(p.kernel.w, p.dilation.w);
    WEFT_CHECK(p.padding.top < span_h && p.padding.bottom < span_h && p.padding.left < span_w &&
                   p.padding.right < span_w,
               op, ": padding must be smaller than the window (", span_h, "x", span_w,
               ") so every window holds an input element");
    Size2d out{out_extent(op, "height", H, p.kernel.h, p.stride.h, p.dilation.h, p.padding.top, p.padding.bottom),
               out_extent(op, "width", W, p.kernel.w, p.stride.w, p.dilation.w, p.padding.left, p.padding.right)};
    if (p.ceil_mode) {
        out.h = ceil_out_extent(out.h, H, p.kernel.h, p.stride.h, p.dilation.h, p.padding.top, p.padding.bottom);
        out.w = ceil_out_extent(out.w, W, p.kernel.w, p.stride.w, p.dilation.w, p.padding.left, p.padding.right);
    }
    return out;
}

Tensor max_pool2d(const Tensor& data, const Pool2dParams& p, const std::string& name) {
    using namespace conv_detail;
    PoolShape sh = check_pool("max_pool2d '" + name + "'", data, p, true);
    const PoolTaps taps(sh, p);
    return compute(
        sh.shape(sh.oh, sh.ow),
        [&](const std::vector<Expr>& i) {
            const PoolTaps::Tap t = taps.at(i, p, sh);
            if (!t.counts.defined()) return max(pool_read(data, i, t.y, t.x), {taps.rh, taps.rw});
            return max(pool_read(data, i, t.y, t.x), {taps.rh, taps.rw}, t.counts);
        },
        name);
}

// A window sum, then one element-wise stage that divides by the window's size (constant
// with count_include_pad, else its part inside the input): op is the division.
Tensor avg_pool2d(const Tensor& data, const Pool2dParams& p, const std::string& name) {
    using namespace conv_detail;
    PoolShape sh = check_pool("avg_pool2d '" + name + "'", data, p);
    const PoolTaps taps(sh, p);
    Tensor total = compute(
        sh.shape(sh.oh, sh.ow),
        [&](const std::vector<Expr>& i) {
            const PoolTaps::Tap t = taps.at(i, p, sh);
            if (!t.counts.defined()) return sum(pool_read(data, i, t.y, t.x), {taps.rh, taps.rw});
            return sum(pool_read(data, i, t.y, t.x), {taps.rh, taps.rw}, t.counts);
        },
        name + ".sum");
    const DataType t = data.dtype();
    if (PoolTaps::dilated(p) && !p.count_include_pad) {
        // The taps inside the input: k in [0, K) with 0 <= first + k d < n, from
        // ceil(-first / d) to floor((n - 1 - first) / d) (integer division floors), clipped.
        auto inside = [](Expr first, int64_t k, int64_t d, const Expr& n) {
            const Expr zero(int64_t(0));
            Expr lo = max(zero, (Expr(d - 1) - first) / Expr(d));
            Expr hi = min(Expr(k - 1), (plus(n, -1) - first) / Expr(d));
            return max(zero, hi - lo + Expr(int64_t(1)));
        };
        return compute(
            sh.shape(sh.oh, sh.ow),
            [&](const std::vector<Expr>& i) {
                Expr rows = inside(i[2] * p.stride.h - p.padding.top, p.kernel.h, p.dilation.h, sh.h);
                Expr cols = inside(i[3] * p.stride.w - p.padding.left, p.kernel.w, p.dilation.w, sh.w);
                return total.at(i) / cast(t, rows * cols);
            },
            name);
    }
    return compute(
        sh.shape(sh.oh, sh.ow),
        [&](const std::vector<Expr>& i) {
            if (!p.ceil_mode && (p.count_include_pad || p.padding.none()))  // (in double: kh * kw may overflow int64)
                return total.at(i) * ir::make_const(t, 1.0 / (double(p.kernel.h) * double(p.kernel.w)));
            // The window's part within the input, or within the padded input with
            // count_include_pad (a ceil_mode window may run past both).
            const int64_t top = p.count_include_pad ? 0 : p.padding.top, left = p.count_include_pad ? 0 : p.padding.left;
            const Expr h = plus(sh.h, p.count_include_pad ? p.padding.top + p.padding.bottom : 0);
            const Expr w = plus(sh.w, p.count_include_pad ? p.padding.left + p.padding.right : 0);
            Expr y0 = i[2] * p.stride.h - top, x0 = i[3] * p.stride.w - left;
            Expr rows = min(y0 + p.kernel.h, h) - max(y0, Expr(int64_t(0)));
            Expr cols = min(x0 + p.kernel.w, w) - max(x0, Expr(int64_t(0)));
            return total.at(i) / cast(t, rows * cols);
        },
        name);
}

Tensor global_avg_pool2d(const Tensor& data, const std::string& name) {
    using namespace conv_detail;
    const std::vector<Expr> ds = pool_data_shape("global_avg_pool2d '" + name + "'", data);
    const std::vector<int64_t> d = extent_values(ds);
    PoolShape sh{d[0], d[1], d[2], d[3], 1, 1, d.size() == 5 ? d[4] : 0, ds[0], ds[2], ds[3], Expr(int64_t(1)),
                 Expr(int64_t(1))};
    IterVar rh = reduce_axis(0, plus(ds[2], 0), "rh"), rw = reduce_axis(0, plus(ds[3], 0), "rw");
    Tensor total = compute(
        sh.shape(1, 1), [&](const std::vector<Expr>& i) { return sum(pool_read(data, i, rh, rw), {rh, rw}); },
        name + ".sum");
    const Expr scale = sh.symbolic() ? ir::make_const(data.dtype(), 1.0) / cast(data.dtype(), ds[2] * ds[3])
                                     : ir::make_const(data.dtype(), 1.0 / double(d[2] * d[3]));
    return compute(sh.shape(1, 1), [&](const std::vector<Expr>& i) { return total.at(i) * scale; }, name);
}

Tensor max_pool2d_indices(const Tensor& data, const Tensor& pooled, const Pool2dParams& p, bool column_major,
                          const std::string& name) {
    using namespace conv_detail;
    const std::string op = "max_pool2d_indices '" + name + "'";
    WEFT_CHECK(data.ndim() == 4, op, ": the data must be NCHW [N, C, H, W], got ", data.ndim(), " dimensions");
    const_shape(op, data, 4, "data [N, C, H, W]", true);
    const PoolShape sh = check_pool(op, data, p, true);
    const std::vector<int64_t> ps = const_shape(op, pooled, 4, "pooled [N, C, OH, OW]", true);
    const std::vector<int64_t> expected{sh.N, sh.C, sh.OH, sh.OW};
    WEFT_CHECK(ps == expected, op, ": the pooled tensor '", pooled.name(),
               "' must be the max pool's output [", sh.N, ", ", sh.C, ", ", sh.OH, ", ", sh.OW, "]");
    check_same_dtype(op, data, pooled);
    const PoolTaps taps(sh, p);
    const int64_t plane = sh.H * sh.W;
    // The first maximum's row-major position in its plane: the least position that holds it.
    Tensor first = compute(
        sh.shape(sh.oh, sh.ow),
        [&](const std::vector<Expr>& i) {
            const PoolTaps::Tap t = taps.at(i, p, sh);
            Expr at = t.y * make_int(sh.W) + t.x;
            Expr hit = pool_read(data, i, t.y, t.x) == pooled.at(i);
            return min(ir::select(hit, at, make_int(plane)), {taps.rh, taps.rw}, t.counts);
        },
        name + ".first");
    return compute(
        sh.shape(sh.oh, sh.ow),
        [&](const std::vector<Expr>& i) {
            Expr at = first.at(i), base = (i[0] * make_int(sh.C) + i[1]) * make_int(plane);
            if (!column_major) return base + at;
            return base + (at % make_int(sh.W)) * make_int(sh.H) + at / make_int(sh.W);
        },
        name);
}

Tensor max_unpool2d(const Tensor& values, const Tensor& indices, const Pool2dParams& w, int64_t H, int64_t W,
                    const std::string& name) {
    using namespace conv_detail;
    const std::string op = "max_unpool2d '" + name + "'";
    const std::vector<int64_t> v = const_shape(op, values, 4, "values [N, C, OH, OW]", true);
    const std::vector<int64_t> ix = const_shape(op, indices, 4, "indices [N, C, OH, OW]", true);
    WEFT_CHECK(indices.dtype() == DataType::int_(64), op, ": the indices '", indices.name(), "' must be int64, not ",
               indices.dtype().str());
    WEFT_CHECK(v == ix, op, ": the values '", values.name(), "' and the indices '", indices.name(),
               "' must have one shape");
    WEFT_CHECK(w.dilation.h == 1 && w.dilation.w == 1, op, ": the window must not be dilated");
    const Size2d pooled = pool2d_out_size(H, W, w, op);
    WEFT_CHECK(pooled.h == v[2] && pooled.w == v[3], op, ": a ", w.kernel.h, "x", w.kernel.w, " window over ", H, "x",
               W, " makes ", pooled.h, "x", pooled.w, " values, not ", v[2], "x", v[3]);
    const int64_t N = v[0], C = v[1], OH = v[2], OW = v[3];
    // The windows that cover a position: at most ceil(kernel / stride) along each axis, the
    // last of them the one at (position + padding) / stride.
    auto covering = [](int64_t k, int64_t s, int64_t n) { return std::min((k + s - 1) / s, n); };
    IterVar rh = reduce_axis(0, covering(w.kernel.h, w.stride.h, OH), "rh");
    IterVar rw = reduce_axis(0, covering(w.kernel.w, w.stride.w, OW), "rw");
    auto inside = [](Expr e, int64_t n) { return ir::min(ir::max(e, make_int(0)), make_int(n - 1)); };
    // The last (row-major) window position whose index names this element, or -1.
    Tensor last = compute(
        {N, C, H, W},
        [&](Expr n, Expr c, Expr y, Expr x) {
            Expr oh = (y + make_int(w.padding.top)) / make_int(w.stride.h) - rh;
            Expr ow = (x + make_int(w.padding.left)) / make_int(w.stride.w) - rw;
            Expr covers = oh >= make_int(0) && oh < make_int(OH) && ow >= make_int(0) && ow < make_int(OW) &&
                          oh * make_int(w.stride.h) + make_int(w.kernel.h - w.padding.top) > y &&
                          ow * make_int(w.stride.w) + make_int(w.kernel.w - w.padding.left) > x;
            Expr ohc = inside(oh, OH), owc = inside(ow, OW);
            Expr here = ((n * make_int(C) + c) * make_int(H) + y) * make_int(W) + x;
            return max(ir::select(indices(n, c, ohc, owc) == here, ohc * make_int(OW) + owc, make_int(-1)), {rh, rw},
                       covers);
        },
        name + ".last");
    return compute(
        {N, C, H, W},
        [&](Expr n, Expr c, Expr y, Expr x) {
            Expr at = last(n, c, y, x), k = ir::max(at, make_int(0));
            return ir::select(at >= make_int(0), values(n, c, k / make_int(OW), k % make_int(OW)),
                              ir::make_zero(values.dtype()));
        },
        name);
}

namespace conv_detail {
// NCHW[x]c: the channel block innermost in the window reduction and in the output, as
// vectors.
inline void vectorize_block(Schedule& s, const Tensor& red, const Tensor& out) {
    s[red].reorder({red.reduce_axis(0), red.reduce_axis(1), red.axis(4)});
    s[red].vectorize(red.axis(4));
    if (!red.same_as(out)) s[out].vectorize(out.axis(4));
}

// The window-sum stage under an average pool's division, or the max pool itself.
Tensor pool_reduction(const std::string& sched, const Tensor& op) {
    // A window reduction: 4 dimensions, reduced over the window's rows and columns.
    auto is_window = [](const Tensor& t) {
        return t.op()->is_compute() && (t.ndim() == 4 || t.ndim() == 5) && t.op()->reduce_axis.size() == 2;
    };
    if (is_window(op)) return op;
    std::vector<Tensor> inputs = op.op().input_tensors();
    auto window = std::find_if(inputs.begin(), inputs.end(), is_window);
    WEFT_CHECK(window != inputs.end(), sched, ": '", op.name(),
               "' is not the output of max_pool2d, avg_pool2d or global_avg_pool2d");
    return *window;
}
}  // namespace conv_detail

// Parallel over (batch, channel, row); the window reduction per output element, with its
// taps unrolled; the sum of an average pool is computed at the element that divides it.
void schedule_pool2d(Schedule& s, const Tensor& op, const Tensor& out) {
    using namespace conv_detail;
    check_epilogue("schedule_pool2d", op, out);
    Tensor red = pool_reduction("schedule_pool2d", op);
    fuse_parallel(s, out, {out.axis(0), out.axis(1), out.axis(2)}, {false, false, symbolic_dim(out, 2)});
    if (!red.same_as(out)) {
        if (!red.same_as(op) && !op.same_as(out)) s[op].compute_inline();
        s[red].compute_at(s[out], out.axis(3));
    }
    int64_t kh = 0, kw = 0;
    ir::as_const_int(red.reduce_axis(0).dom().extent, &kh);
    ir::as_const_int(red.reduce_axis(1).dom().extent, &kw);
    if (out.ndim() == 5) vectorize_block(s, red, out);
    if (kh * kw <= 64) {
        s[red].unroll(red.reduce_axis(0));
        s[red].unroll(red.reduce_axis(1));
    }
}

// Parallel over (batch, channel); each sum runs along contiguous rows.
void schedule_global_pool2d(Schedule& s, const Tensor& op, const Tensor& out) {
    using namespace conv_detail;
    check_epilogue("schedule_global_pool2d", op, out);
    Tensor red = pool_reduction("schedule_global_pool2d", op);
    IterVar planes = s[out].fuse(out.axis(0), out.axis(1));
    s[out].parallel(planes);
    if (!op.same_as(out)) s[op].compute_inline();
    s[red].compute_at(s[out], planes);
    if (out.ndim() == 5) vectorize_block(s, red, out);
}

}  // namespace weft::topi
