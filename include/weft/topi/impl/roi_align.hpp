// topi::roi_align (resize.hpp has the declaration and the semantics): ONNX's RoiAlign, its
// reference's sampling and corner rules, with the sample grid's extents read from the regions.
#pragma once
#include "weft/topi/impl/transform.hpp"

namespace weft::topi {

namespace roi_align_detail {

struct Shapes {
    int64_t N, C, H, W, R;
    DataType t;  // what coordinates and sums are computed in: x's type, float32 at least
};

inline Shapes check(const Tensor& x, const Tensor& rois, const RoiAlignParams& p) {
    const std::vector<int64_t> xs = const_shape(x, "roi_align", "x"), rs = const_shape(rois, "roi_align", "rois");
    WEFT_CHECK(x.dtype().is_float(), "roi_align: x '", x.name(), "' must be floats, not ", x.dtype().str());
    WEFT_CHECK(xs.size() == 4, "roi_align: x '", x.name(), "' must be [N, C, H, W], got ", shape_string(xs));
    WEFT_CHECK(rois.dtype() == x.dtype(), "roi_align: the rois '", rois.name(), "' are ", rois.dtype().str(),
               " but x is ", x.dtype().str());
    WEFT_CHECK(rs.size() == 2 && rs[1] == 4, "roi_align: the rois '", rois.name(), "' must be [R, 4], got ",
               shape_string(rs));
    WEFT_CHECK(p.output_height >= 1 && p.output_width >= 1, "roi_align: the output must be at least 1x1, got ",
               p.output_height, "x", p.output_width);
    WEFT_CHECK(p.sampling_ratio >= 0, "roi_align: sampling_ratio must not be negative, got ", p.sampling_ratio);
    WEFT_CHECK(std::isfinite(p.spatial_scale), "roi_align: spatial_scale must be finite, got ", p.spatial_scale);
    return {xs[0], xs[1], xs[2], xs[3], rs[0], x.dtype().bits < 32 ? f32 : x.dtype()};
}

// One region's geometry along an axis: where its first bin starts, a bin's extent, and the
// samples per bin (an int64 extent, from the data where sampling_ratio is 0).
struct Axis {
    Expr start, bin, grid;
};

inline Axis axis_of(const Tensor& rois, Expr r, int first, int64_t bins, int64_t extent, const RoiAlignParams& p,
                    DataType t) {
    auto c = [&](double v) { return ir::make_const(t, v); };
    const double offset = p.half_pixel ? 0.5 : 0.0;
    Expr start = ir::cast(t, rois(r, make_int(first))) * c(p.spatial_scale) - c(offset);
    Expr end = ir::cast(t, rois(r, make_int(first + 2))) * c(p.spatial_scale) - c(offset);
    Expr size = end - start;
    if (!p.half_pixel) size = ir::select(size > c(1), size, c(1));
    Expr bin = size / c(double(bins));
    if (p.sampling_ratio > 0) return {start, bin, make_int(p.sampling_ratio)};
    // ceil(size / bins), in [0, the cap]: NaN and negative sizes give 0 samples.
    const double cap = double(roi_align_max_grid(extent, bins));
    return {start, bin, ir::cast(i64, nn_detail::clamp_coordinate(ir::ceil(size / c(double(bins))), 0, cap))};
}

// Sample `k` of bin `b` along an axis of `extent`: the lower and upper input index and the
// upper one's weight, or `outside` (the sample counts as zero). NaN coordinates land at 0.
struct Tap {
    Expr low, high, frac, outside;
};

inline Tap tap_of(const Axis& a, Expr b, Expr k, int64_t extent, DataType t) {
    auto c = [&](double v) { return ir::make_const(t, v); };
    Expr pos = a.start + ir::cast(t, b) * a.bin + (ir::cast(t, k) + c(0.5)) * a.bin / ir::cast(t, a.grid);
    Expr outside = pos < c(-1) || pos > c(double(extent));
    Expr clamped = nn_detail::clamp_coordinate(pos, 0, double(extent - 1));
    Expr low = ir::cast(i64, clamped);
    Expr edge = low >= make_int(extent - 1);  // the last row: both taps on it, weight 0 above
    Expr high = ir::select(edge, make_int(extent - 1), low + make_int(1));
    Expr frac = ir::select(edge, c(0), clamped - ir::cast(t, low));
    return {low, high, frac, outside};
}

}  // namespace roi_align_detail

Tensor roi_align(const Tensor& x, const Tensor& rois, const Tensor& batch_indices, const RoiAlignParams& p) {
    using namespace roi_align_detail;
    const Shapes sh = check(x, rois, p);
    const std::vector<int64_t> bs = const_shape(batch_indices, "roi_align", "batch_indices");
    WEFT_CHECK(batch_indices.dtype().is_int() || batch_indices.dtype().is_uint(), "roi_align: batch_indices '",
               batch_indices.name(), "' must be integers, not ", batch_indices.dtype().str());
    WEFT_CHECK(bs.size() == 1 && bs[0] == sh.R, "roi_align: batch_indices '", batch_indices.name(), "' must be [",
               sh.R, "] (one per region), got ", shape_string(bs));
    const DataType t = sh.t;
    auto c = [&](double v) { return ir::make_const(t, v); };
    auto axes = [&](Expr r) {
        return std::pair{axis_of(rois, r, 1, p.output_height, sh.H, p, t), axis_of(rois, r, 0, p.output_width, sh.W, p, t)};
    };
    const std::vector<Expr> shape{make_int(sh.R), make_int(sh.C), make_int(p.output_height), make_int(p.output_width)};
    Tensor total = compute(
        shape,
        [&](Expr r, Expr ch, Expr ph, Expr pw) {
            auto [ay, ax] = axes(r);
            IterVar iy = te::reduce_axis(make_int(0), ay.grid, "iy"), ix = te::reduce_axis(make_int(0), ax.grid, "ix");
            const Tap ty = tap_of(ay, ph, iy, sh.H, t), tx = tap_of(ax, pw, ix, sh.W, t);
            Expr n = ir::min(ir::max(ir::cast(i64, batch_indices(r)), make_int(0)), make_int(sh.N - 1));
            auto v = [&](Expr yy, Expr xx) { return ir::cast(t, x(n, ch, yy, xx)); };
            Expr hy = c(1) - ty.frac, hx = c(1) - tx.frac;
            Expr w1 = hy * hx * v(ty.low, tx.low), w2 = hy * tx.frac * v(ty.low, tx.high);
            Expr w3 = ty.frac * hx * v(ty.high, tx.low), w4 = ty.frac * tx.frac * v(ty.high, tx.high);
            Expr sample = p.max ? ir::max(ir::max(w1, w2), ir::max(w3, w4)) : w1 + w2 + w3 + w4;
            sample = ir::select(ty.outside || tx.outside, c(0), sample);
            return p.max ? te::max(sample, {iy, ix}) : te::sum(sample, {iy, ix});
        },
        "roi_align.samples");
    return compute(
        shape,
        [&](Expr r, Expr ch, Expr ph, Expr pw) {
            auto [ay, ax] = axes(r);
            Expr count = ay.grid * ax.grid;
            Expr s = total(r, ch, ph, pw);
            // No samples: 0 (ONNX's reference), not the reduction's identity.
            Expr value = p.max ? ir::select(count > make_int(0), s, c(0))
                               : s / ir::cast(t, ir::max(count, make_int(1)));
            return ir::cast(x.dtype(), value);
        },
        "roi_align");
}

Tensor roi_align_exceeds(const Tensor& x, const Tensor& rois, const RoiAlignParams& p) {
    using namespace roi_align_detail;
    const Shapes sh = check(x, rois, p);
    const DataType t = sh.t;
    auto c = [&](double v) { return ir::make_const(t, v); };
    IterVar r = te::reduce_axis(make_int(0), make_int(sh.R), "r");
    Tensor count = compute(
        {make_int(1)},
        [&](Expr) {
            // More than the cap: ceil(size / bins) > cap, size / bins > cap for an integer cap.
            auto over = [&](int first, int64_t bins, int64_t extent) {
                Expr size = (ir::cast(t, rois(r, make_int(first + 2))) - ir::cast(t, rois(r, make_int(first)))) *
                            c(p.spatial_scale);
                return size / c(double(bins)) > c(double(roi_align_max_grid(extent, bins)));
            };
            Expr any = over(1, p.output_height, sh.H) || over(0, p.output_width, sh.W);
            return te::sum(ir::select(any, make_int(1, DataType::int_(32)), make_int(0, DataType::int_(32))), {r});
        },
        "roi_align_exceeds.count");
    return compute({make_int(1)}, [&](Expr i) { return count(i) > make_int(0, DataType::int_(32)); },
                   "roi_align_exceeds");
}

void schedule_roi_align(Schedule& s, const Tensor& op, const Tensor& out) {
    auto is_samples = [](const Tensor& t) {
        return t.op()->is_compute() && t.ndim() == 4 && t.op()->reduce_axis.size() == 2;
    };
    Tensor red = op;
    if (!is_samples(op))
        for (const Tensor& t : op.op().input_tensors())
            if (is_samples(t)) red = t;
    WEFT_CHECK(is_samples(red), "schedule_roi_align: '", op.name(), "' is not roi_align's output");
    if (!op.same_as(out) && !red.same_as(op)) s[op].compute_inline();
    IterVar rows = s[out].fuse(out.axis(0), out.axis(1));
    s[out].parallel(rows);
    if (!red.same_as(out)) s[red].compute_at(s[out], out.axis(3));
}

}  // namespace weft::topi
