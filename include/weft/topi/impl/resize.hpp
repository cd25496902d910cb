// Definitions of topi/resize.hpp.
#pragma once
#include <cmath>
#include <optional>

#include "weft/topi/impl/transform.hpp"
#include "weft/topi/resize.hpp"

namespace weft::topi {

namespace resize_detail {

const DataType f64 = DataType::float_(64);
const DataType i64 = DataType::int_(64);

inline Expr f(double v) { return ir::make_const(f64, v); }
inline Expr index_clamp(Expr i, int64_t n) { return ir::min(ir::max(i, ir::make_int(0, i64)), ir::make_int(n - 1, i64)); }

// The input coordinate (float64) of output index o along a dimension resized n -> m, m being
// n * scale before rounding (as ONNX's reference computes align_corners' and the crop's) and
// m_int the output's extent.
inline Expr source_coordinate(Expr o, int64_t n, double m, int64_t m_int, double scale, double start, double end,
                              const std::string& mode) {
    Expr x = ir::cast(f64, o);
    if (mode == "half_pixel") return (x + f(0.5)) / f(scale) - f(0.5);
    if (mode == "half_pixel_symmetric") {  // the centre of the input on the centre of the output
        const double offset = double(n) / 2 * (1 - double(m_int) / m);
        return f(offset) + (x + f(0.5)) / f(scale) - f(0.5);
    }
    if (mode == "pytorch_half_pixel") return m > 1 ? (x + f(0.5)) / f(scale) - f(0.5) : f(0);
    if (mode == "align_corners") return m == 1 ? f(0) : x * f(double(n - 1) / (m - 1));
    if (mode == "asymmetric") return x / f(scale);
    if (mode == "tf_half_pixel_for_nearest" || mode == "tf_half_pixel_for_nn") return (x + f(0.5)) / f(scale);
    if (mode == "tf_crop_and_resize")
        return m > 1 ? f(start * double(n - 1)) + x * f((end - start) * double(n - 1) / (m - 1))
                     : f(0.5 * (start + end) * double(n - 1));
    WEFT_ICHECK(false, "resize: unchecked coordinate_transformation_mode '", mode, "'");
    return Expr();
}

inline Expr nearest_index(Expr c, const std::string& mode) {
    Expr r;
    if (mode == "round_prefer_floor") r = ir::ceil(c - f(0.5));
    else if (mode == "round_prefer_ceil") r = ir::floor(c + f(0.5));
    else if (mode == "floor") r = ir::floor(c);
    else if (mode == "ceil") r = ir::ceil(c);
    else WEFT_ICHECK(false, "resize: unchecked nearest_mode '", mode, "'");
    return ir::cast(i64, r);
}

// The cubic convolution kernel's weight of a tap at distance d (0 <= |d| < 2).
inline Expr cubic_weight(Expr d, double a) {
    Expr t = ir::abs(d);
    Expr near = (f(a + 2) * t - f(a + 3)) * t * t + f(1);
    Expr far = ((f(a) * t - f(5 * a)) * t + f(8 * a)) * t - f(4 * a);
    return ir::select(t <= f(1), near, far);
}

// One dimension's taps: input indices (clamped into the input) and float64 weights.
struct Taps {
    std::vector<Expr> index, weight;
};

// The factor s where an extent n becomes m = s n (s >= 2) at the scale s exactly.
inline std::optional<int64_t> integer_factor(int64_t n, int64_t m, double scale) {
    if (m % n != 0 || m / n < 2 || scale != double(m / n)) return std::nullopt;
    return m / n;
}

// Nearest upsampling by an integer factor s (an output extent s times the input's, scale s)
// reads input o / s in the modes where that is ONNX's index: asymmetric with floor (o / s
// exactly), and half_pixel or pytorch_half_pixel rounding to nearest either way ((o + 1/2) /
// s - 1/2 lies within 1/2 of o / s, never halfway). Integer arithmetic instead of a float64
// coordinate per element: what PyTorch's nn.Upsample(scale_factor=2) exports.
inline std::optional<int64_t> integer_upsampling(const ResizeParams& p, int64_t n, int64_t m, double scale) {
    if (p.mode != "nearest") return std::nullopt;
    const std::string& ctm = p.coordinate_transformation_mode;
    const bool floor_exact = ctm == "asymmetric" && p.nearest_mode == "floor";
    const bool round_exact = (ctm == "half_pixel" || ctm == "pytorch_half_pixel") &&
                             (p.nearest_mode == "round_prefer_floor" || p.nearest_mode == "round_prefer_ceil");
    if (!floor_exact && !round_exact) return std::nullopt;
    return integer_factor(n, m, scale);
}

inline Taps taps_of(Expr c, int64_t n, const ResizeParams& p) {
    Taps t;
    if (p.mode == "nearest") {
        t.index.push_back(index_clamp(nearest_index(c, p.nearest_mode), n));
        t.weight.push_back(f(1));
        return t;
    }
    Expr base = ir::floor(c), r = c - base;
    Expr b = ir::cast(i64, base);
    if (p.mode == "linear") {
        t.index = {index_clamp(b, n), index_clamp(b + ir::make_int(1, i64), n)};
        t.weight = {f(1) - r, r};
        return t;
    }
    WEFT_ICHECK(p.mode == "cubic", "resize: unchecked mode '", p.mode, "'");
    Expr total = f(0);
    for (int64_t k = -1; k <= 2; ++k) {
        Expr i = b + ir::make_int(k, i64);
        Expr w = cubic_weight(r - f(double(k)), p.cubic_coeff_a);
        if (p.exclude_outside) w = ir::select(i >= ir::make_int(0, i64) && i < ir::make_int(n, i64), w, f(0));
        t.index.push_back(index_clamp(i, n));
        t.weight.push_back(w);
        total = total + w;
    }
    if (p.exclude_outside)
        for (Expr& w : t.weight) w = w / total;
    return t;
}

// Antialiased linear or cubic taps where a dimension shrinks (scale < 1), as ONNX's reference
// computes them: the kernel stretched by 1 / scale around coordinate c, taps at base + k for
// k in [start, start + count), base = ceil(c) - 1 (a coordinate on a pixel takes the pixel on
// its left as base: ratio c - base in (0, 1]), each weight the kernel at (k - ratio) * scale,
// the weights (with exclude_outside, those inside the input) normalized to sum 1.
// The number of such taps (per dimension; at most kMaxAntialiasTaps per output in all).
inline double antialias_tap_count(double scale, const ResizeParams& p) {
    return 2 - 2 * (std::floor((p.mode == "cubic" ? -2.0 : -1.0) / scale) + 1);
}
inline constexpr double kMaxAntialiasTaps = 4096;

inline Taps antialias_taps_of(Expr c, int64_t n, double scale, const ResizeParams& p) {
    const bool cubic = p.mode == "cubic";
    const int64_t count = int64_t(antialias_tap_count(scale, p)), start = 1 - count / 2;
    Expr base = ir::ceil(c) - f(1), ratio = c - base;
    Expr b = ir::cast(i64, base);
    Taps t;
    Expr total = f(0);
    for (int64_t k = start; k < start + count; ++k) {
        Expr i = b + ir::make_int(k, i64);
        Expr x = (f(double(k)) - ratio) * f(scale);
        Expr w = cubic ? ir::select(ir::abs(x) < f(2), cubic_weight(x, p.cubic_coeff_a), f(0))
                       : ir::max(f(1) - ir::abs(x), f(0));
        if (p.exclude_outside) w = ir::select(i >= ir::make_int(0, i64) && i < ir::make_int(n, i64), w, f(0));
        t.index.push_back(index_clamp(i, n));
        t.weight.push_back(w);
        total = total + w;
    }
    for (Expr& w : t.weight) w = w / total;
    return t;
}

// Linear upsampling by an integer factor s with half_pixel (pytorch_half_pixel) coordinates:
// output o = m s + r reads m + (2r + 1 - s) / 2s, so the lower tap is m or m - 1 and the
// weight a fraction with denominator 2s, both from integers (no float64 floor per element).
inline std::optional<int64_t> integer_linear_upsampling(const ResizeParams& p, int64_t n, int64_t m, double scale) {
    const std::string& ctm = p.coordinate_transformation_mode;
    if (p.mode != "linear" || (ctm != "half_pixel" && ctm != "pytorch_half_pixel")) return std::nullopt;
    return integer_factor(n, m, scale);
}

inline Taps linear_taps_of_factor(Expr o, int64_t s, int64_t n) {
    const DataType it = o.type();
    Expr m = o / ir::make_int(s, it), d = (o % ir::make_int(s, it)) * ir::make_int(2, it) + ir::make_int(1 - s, it);
    Expr below = d < ir::make_int(0, it);  // the coordinate lies below m: taps m - 1 and m
    Expr base = ir::select(below, m - ir::make_int(1, it), m);
    Expr frac = ir::cast(f64, ir::select(below, d + ir::make_int(2 * s, it), d)) * f(1.0 / double(2 * s));
    Taps t;
    t.index = {index_clamp(ir::cast(i64, base), n), index_clamp(ir::cast(i64, base) + ir::make_int(1, i64), n)};
    t.weight = {f(1) - frac, frac};
    return t;
}

// The same along the innermost (vectorized) axis, as three taps m - 1, m, m + 1 around m = o / s
// with weights that depend only on o mod s: along a vector of outputs the indices are then
// one element or a few repeated ones (a load and a shuffle, where the taps are inside: loop
// partitioning peels the border tiles on the likely tests), not a gather per tap. The
// weights in `wt` (the data's type: no float64 per element).
inline Taps linear_taps3_of_factor(Expr o, int64_t s, int64_t n, DataType wt) {
    const DataType it = o.type();
    Expr m = o / ir::make_int(s, it), q = o % ir::make_int(s, it);
    Expr d = q * ir::make_int(2, it) + ir::make_int(1 - s, it);  // the coordinate is m + d / 2s
    auto w = [&](Expr e) { return ir::cast(wt, e) * ir::make_const(wt, 1.0 / double(2 * s)); };
    Expr zero = ir::make_int(0, it);
    Expr below = ir::likely(m >= ir::make_int(1, it)), above = ir::likely(m <= ir::make_int(n - 2, it));
    Taps t;
    // (Clamped in both branches too: the read checks bound a select by both of its values.)
    Expr last = ir::make_int(n - 1, it);
    t.index = {ir::select(below, ir::max(m - ir::make_int(1, it), zero), zero), ir::min(m, last),
               ir::select(above, ir::min(m + ir::make_int(1, it), last), last)};
    t.weight = {w(ir::max(zero - d, zero)), w(ir::make_int(2 * s, it) - ir::abs(d)), w(ir::max(d, zero))};
    return t;
}

// An antialiased shrink reads every combination of its dimensions' taps for each output:
// past kMaxAntialiasTaps (a hostile scale of 1e-9 asks for billions) it is refused.
inline void check_resize_taps(const std::vector<int64_t>& in, const std::vector<int64_t>& out_shape,
                              const ResizeParams& p, const std::string& what) {
    if (!p.antialias || p.mode == "nearest" || in.size() != out_shape.size()) return;
    double taps = 1;
    for (size_t d = 0; d < in.size(); ++d) {
        const double s = p.scales.size() == in.size() ? p.scales[d] : double(out_shape[d]) / double(in[d]);
        if (s > 0 && s < 1 && out_shape[d] != in[d]) taps *= antialias_tap_count(s, p);
    }
    WEFT_CHECK(taps <= kMaxAntialiasTaps, "resize: antialiased ", p.mode, " shrinking '", what, "' ", shape_string(in),
               " to ", shape_string(out_shape), " takes ", taps, " input elements per output, over ", kMaxAntialiasTaps,
               "; shrink in steps, or without antialias");
}

}  // namespace resize_detail

void check_resize_shapes(const std::vector<int64_t>& in, const std::vector<int64_t>& out, const ResizeParams& p) {
    resize_detail::check_resize_taps(in, out, p, "the input");
}

void check_resize_params(const ResizeParams& p) {
    auto one_of = [](const std::string& v, std::initializer_list<const char*> names) {
        for (const char* n : names)
            if (v == n) return true;
        return false;
    };
    WEFT_CHECK(one_of(p.mode, {"nearest", "linear", "cubic"}), "resize: mode '", p.mode,
               "' is none of nearest, linear, cubic");
    WEFT_CHECK(one_of(p.coordinate_transformation_mode,
                      {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                       "tf_half_pixel_for_nearest", "tf_half_pixel_for_nn", "tf_crop_and_resize"}),
               "resize: coordinate_transformation_mode '", p.coordinate_transformation_mode,
               "' is none of half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric, "
               "tf_half_pixel_for_nearest, tf_crop_and_resize");
    WEFT_CHECK(one_of(p.nearest_mode, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}),
               "resize: nearest_mode '", p.nearest_mode, "' is none of round_prefer_floor, round_prefer_ceil, floor, ceil");
    WEFT_CHECK(std::isfinite(p.cubic_coeff_a) && std::isfinite(p.extrapolation_value),
               "resize: cubic_coeff_a and extrapolation_value must be finite");
}

Tensor resize(const Tensor& x, const std::vector<int64_t>& out_shape, const ResizeParams& p) {
    using namespace resize_detail;
    nn_detail::check_float(x, "resize");
    check_resize_params(p);
    std::vector<int64_t> in = const_shape(x, "resize", "input");
    const size_t r = in.size();
    WEFT_CHECK(out_shape.size() == r, "resize: the output shape has rank ", out_shape.size(), " but the input '",
               x.name(), "' has rank ", r);
    WEFT_CHECK(p.scales.empty() || p.scales.size() == r, "resize: ", p.scales.size(), " scales for rank ", r);
    const bool crop = p.coordinate_transformation_mode == "tf_crop_and_resize";
    std::vector<bool> moves(r);
    for (size_t d = 0; d < r; ++d) {
        WEFT_CHECK(out_shape[d] >= 1, "resize: output dimension ", d, " is ", out_shape[d], "; it must be at least 1");
        const double start = d < p.roi_start.size() ? p.roi_start[d] : 0.0, end = d < p.roi_end.size() ? p.roi_end[d] : 1.0;
        moves[d] = out_shape[d] != in[d] || (crop && (start != 0.0 || end != 1.0));
        if (moves[d]) {
            const double s = p.scales.empty() ? double(out_shape[d]) / double(in[d]) : p.scales[d];
            WEFT_CHECK(std::isfinite(s) && s > 0, "resize: the scale of dimension ", d, " is ", s, "; it must be positive");
        }
    }
    resize_detail::check_resize_taps(in, out_shape, p, x.name());
    std::vector<Expr> shape;
    for (int64_t e : out_shape) shape.push_back(ir::make_int(e));
    const DataType weight_type = x.dtype().bits >= 32 ? x.dtype() : DataType::float_(32);
    return nn_detail::compute_nd(
        shape,
        [&](const std::vector<Expr>& o) {
            std::vector<Taps> taps(r);
            Expr outside;  // tf_crop_and_resize: a coordinate outside the input
            for (size_t d = 0; d < r; ++d) {
                if (!moves[d]) continue;
                const double scale = p.scales.empty() ? double(out_shape[d]) / double(in[d]) : p.scales[d];
                const double start = d < p.roi_start.size() ? p.roi_start[d] : 0.0;
                const double end = d < p.roi_end.size() ? p.roi_end[d] : 1.0;
                if (in[d] == 1 && !crop) {  // every tap clamps to the one element, the weights sum to 1
                    taps[d].index = {ir::make_int(0, o[d].type())};
                    taps[d].weight = {f(1)};
                    continue;
                }
                if (std::optional<int64_t> factor = integer_upsampling(p, in[d], out_shape[d], scale)) {
                    taps[d].index = {o[d] / ir::make_int(*factor, o[d].type())};
                    taps[d].weight = {f(1)};
                    continue;
                }
                if (std::optional<int64_t> factor = integer_linear_upsampling(p, in[d], out_shape[d], scale)) {
                    const bool innermost = d + 1 == r && in[d] >= 2;
                    taps[d] = innermost ? linear_taps3_of_factor(o[d], *factor, in[d], weight_type)
                                        : linear_taps_of_factor(o[d], *factor, in[d]);
                    continue;
                }
                Expr c = source_coordinate(o[d], in[d], double(in[d]) * scale, out_shape[d], scale, start, end,
                                           p.coordinate_transformation_mode);
                if (crop) {
                    Expr out_d = c < f(0) || c > f(double(in[d] - 1));
                    outside = outside.defined() ? (outside || out_d) : out_d;
                }
                taps[d] = p.antialias && p.mode != "nearest" && scale < 1 ? antialias_taps_of(c, in[d], scale, p)
                                                                           : taps_of(c, in[d], p);
            }
            // The weighted sum over every combination of the moving dimensions' taps.
            Expr sum;
            std::vector<size_t> pick(r, 0);
            while (true) {
                std::vector<Expr> idx;
                Expr w;  // in float64, but for a weight of the data's type (times the others cast)
                for (size_t d = 0; d < r; ++d) {
                    if (!moves[d]) {
                        idx.push_back(o[d]);
                        continue;
                    }
                    idx.push_back(ir::cast(o[d].type(), taps[d].index[pick[d]]));
                    Expr wd = taps[d].weight[pick[d]];
                    if (w.defined() && w.type() != wd.type()) {
                        if (w.type() == f64) w = ir::cast(wd.type(), w);
                        else wd = ir::cast(w.type(), wd);
                    }
                    w = w.defined() ? w * wd : wd;
                }
                if (!w.defined()) w = f(1);
                Expr term = p.mode == "nearest" ? x.at(idx) : ir::cast(x.dtype(), w) * x.at(idx);
                sum = sum.defined() ? sum + term : term;
                size_t d = 0;  // the next combination, odometer order
                for (; d < r; ++d) {
                    if (!moves[d]) continue;
                    if (++pick[d] < taps[d].index.size()) break;
                    pick[d] = 0;
                }
                if (d == r) break;
            }
            if (outside.defined()) sum = ir::select(outside, ir::make_const(x.dtype(), p.extrapolation_value), sum);
            return sum;
        },
        "resize");
}

}  // namespace weft::topi
