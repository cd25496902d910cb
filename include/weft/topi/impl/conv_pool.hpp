// Pooling in NCHW: max and average over a window (padding never counts for max, and for
// average only with count_include_pad), global average, and their schedules.
#pragma once
#include "weft/topi/impl/conv_checks.hpp"
#include "weft/topi/impl/conv_schedule_util.hpp"

namespace weft::topi {

namespace conv_detail {
struct PoolShape {
    int64_t N, C, H, W, OH, OW;
};

PoolShape check_pool(const std::string& op, const Tensor& data, const Pool2dParams& p) {
    auto d = const_shape(op, data, 4, "data [N, C, H, W]");
    WEFT_CHECK(p.kernel.h >= 1 && p.kernel.w >= 1, op, ": the kernel must be at least 1x1, got ", p.kernel.h, "x",
               p.kernel.w);
    check_window(op, p.stride, p.padding, {1, 1});
    WEFT_CHECK(p.padding.top < p.kernel.h && p.padding.bottom < p.kernel.h && p.padding.left < p.kernel.w &&
                   p.padding.right < p.kernel.w,
               op, ": padding must be smaller than the kernel (", p.kernel.h, "x", p.kernel.w,
               ") so every window holds an input element");
    PoolShape s{d[0], d[1], d[2], d[3], 0, 0};
    s.OH = out_extent(op, "height", s.H, p.kernel.h, p.stride.h, 1, p.padding.top, p.padding.bottom);
    s.OW = out_extent(op, "width", s.W, p.kernel.w, p.stride.w, 1, p.padding.left, p.padding.right);
    return s;
}
}  // namespace conv_detail

Tensor max_pool2d(const Tensor& data, const Pool2dParams& p, const std::string& name) {
    using namespace conv_detail;
    PoolShape sh = check_pool("max_pool2d '" + name + "'", data, p);
    IterVar rh = reduce_axis(0, p.kernel.h, "rh"), rw = reduce_axis(0, p.kernel.w, "rw");
    return compute(
        {sh.N, sh.C, sh.OH, sh.OW},
        [&](Expr n, Expr c, Expr y, Expr x) {
            Expr iy = y * p.stride.h + rh - p.padding.top, ix = x * p.stride.w + rw - p.padding.left;
            if (p.padding.none()) return max(data(n, c, iy, ix), {rh, rw});
            return max(data(n, c, iy, ix), {rh, rw}, iy >= 0 && iy < sh.H && ix >= 0 && ix < sh.W);
        },
        name);
}

// A window sum, then one element-wise stage that divides by the window's size (constant
// with count_include_pad, else its part inside the input): op is the division.
Tensor avg_pool2d(const Tensor& data, const Pool2dParams& p, const std::string& name) {
    using namespace conv_detail;
    PoolShape sh = check_pool("avg_pool2d '" + name + "'", data, p);
    IterVar rh = reduce_axis(0, p.kernel.h, "rh"), rw = reduce_axis(0, p.kernel.w, "rw");
    Tensor total = compute(
        {sh.N, sh.C, sh.OH, sh.OW},
        [&](Expr n, Expr c, Expr y, Expr x) {
            Expr iy = y * p.stride.h + rh - p.padding.top, ix = x * p.stride.w + rw - p.padding.left;
            if (p.padding.none()) return sum(data(n, c, iy, ix), {rh, rw});
            return sum(data(n, c, iy, ix), {rh, rw}, iy >= 0 && iy < sh.H && ix >= 0 && ix < sh.W);
        },
        name + ".sum");
    const DataType t = data.dtype();
    return compute(
        {sh.N, sh.C, sh.OH, sh.OW},
        [&](Expr n, Expr c, Expr y, Expr x) {
            if (p.count_include_pad || p.padding.none())
                return total(n, c, y, x) * ir::make_const(t, 1.0 / double(p.kernel.h * p.kernel.w));
            Expr y0 = y * p.stride.h - p.padding.top, x0 = x * p.stride.w - p.padding.left;
            Expr rows = min(y0 + p.kernel.h, Expr(sh.H)) - max(y0, Expr(int64_t(0)));
            Expr cols = min(x0 + p.kernel.w, Expr(sh.W)) - max(x0, Expr(int64_t(0)));
            return total(n, c, y, x) / cast(t, rows * cols);
        },
        name);
}

Tensor global_avg_pool2d(const Tensor& data, const std::string& name) {
    using namespace conv_detail;
    auto d = const_shape("global_avg_pool2d '" + name + "'", data, 4, "data [N, C, H, W]");
    IterVar rh = reduce_axis(0, d[2], "rh"), rw = reduce_axis(0, d[3], "rw");
    Tensor total = compute(
        {d[0], d[1], 1, 1}, [&](Expr n, Expr c, Expr, Expr) { return sum(data(n, c, rh, rw), {rh, rw}); },
        name + ".sum");
    const Expr scale = ir::make_const(data.dtype(), 1.0 / double(d[2] * d[3]));
    return compute(
        {d[0], d[1], 1, 1}, [&](Expr n, Expr c, Expr y, Expr x) { return total(n, c, y, x) * scale; }, name);
}

namespace conv_detail {
// The window-sum stage under an average pool's division, or the max pool itself.
Tensor pool_reduction(const std::string& sched, const Tensor& op) {
    // A window reduction: 4 dimensions, reduced over the window's rows and columns.
    auto is_window = [](const Tensor& t) {
        return t.op()->is_compute() && t.ndim() == 4 && t.op()->reduce_axis.size() == 2;
    };
    if (is_window(op)) return op;
    std::vector<Tensor> inputs = op.op().input_tensors();
    WEFT_CHECK(inputs.size() == 1 && is_window(inputs[0]), sched, ": '", op.name(),
               "' is not the output of max_pool2d, avg_pool2d or global_avg_pool2d");
    return inputs[0];
}
}  // namespace conv_detail

// Parallel over (batch, channel, row); the window reduction per output element, with its
// taps unrolled; the sum of an average pool is computed at the element that divides it.
void schedule_pool2d(Schedule& s, const Tensor& op, const Tensor& out) {
    using namespace conv_detail;
    check_epilogue("schedule_pool2d", op, out);
    Tensor red = pool_reduction("schedule_pool2d", op);
    IterVar rows = s[out].fuse(s[out].fuse(out.axis(0), out.axis(1)), out.axis(2));
    s[out].parallel(rows);
    if (!red.same_as(out)) {
        if (!red.same_as(op) && !op.same_as(out)) s[op].compute_inline();
        s[red].compute_at(s[out], out.axis(3));
    }
    int64_t kh = 0, kw = 0;
    ir::as_const_int(red.reduce_axis(0).dom().extent, &kh);
    ir::as_const_int(red.reduce_axis(1).dom().extent, &kw);
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
}

}  // namespace weft::topi
