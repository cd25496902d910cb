// topi::grid_sample: each output element interpolates the input at a coordinate the grid
// gives, with ONNX's padding modes (resize.hpp has the declaration and the semantics).
#pragma once
#include "weft/topi/impl/resize.hpp"

namespace weft::topi {

namespace grid_sample_detail {

using resize_detail::f;
using resize_detail::f64;
using resize_detail::i64;

// x folded into [lo, hi] by reflecting at the borders as often as it takes.
inline Expr reflect(Expr x, double lo, double hi) {
    const double range = hi - lo;
    if (range <= 0) return f(lo);
    Expr below_dx = f(lo) - x, above_dx = x - f(hi);
    Expr nb = ir::floor(below_dx / f(range)), rb = below_dx - nb * f(range);
    Expr na = ir::floor(above_dx / f(range)), ra = above_dx - na * f(range);
    Expr even_b = ir::fmod(nb, f(2)) == f(0), even_a = ir::fmod(na, f(2)) == f(0);
    Expr below = ir::select(even_b, f(lo) + rb, f(hi) - rb);
    Expr above = ir::select(even_a, f(hi) - ra, f(lo) + ra);
    return ir::select(x < f(lo), below, ir::select(x > f(hi), above, x));
}

}  // namespace grid_sample_detail

Tensor grid_sample(const Tensor& x, const Tensor& grid, const GridSampleParams& p) {
    using namespace grid_sample_detail;
    const std::vector<int64_t> xs = const_shape(x, "grid_sample", "input"), gs = const_shape(grid, "grid_sample", "grid");
    WEFT_CHECK(x.dtype().is_float() && grid.dtype() == x.dtype(), "grid_sample: the input and the grid must be floats of one "
               "type, got ", x.dtype().str(), " and ", grid.dtype().str());
    const size_t k = xs.size() - 2;
    WEFT_CHECK(xs.size() >= 3 && gs.size() == xs.size() && gs.back() == int64_t(k) && gs[0] == xs[0],
               "grid_sample: the input [N, C, D1..Dk] ", shape_string(xs), " needs a grid [N, O1..Ok, k], got ",
               shape_string(gs));
    WEFT_CHECK(p.mode == "nearest" || p.mode == "linear" || p.mode == "cubic", "grid_sample: mode '", p.mode,
               "' is none of nearest, linear, cubic");
    WEFT_CHECK(p.padding_mode == "zeros" || p.padding_mode == "border" || p.padding_mode == "reflection",
               "grid_sample: padding_mode '", p.padding_mode, "' is none of zeros, border, reflection");
    std::vector<int64_t> out{xs[0], xs[1]};
    out.insert(out.end(), gs.begin() + 1, gs.end() - 1);
    return nn_detail::compute_nd(
        exprs(out),
        [&](const std::vector<Expr>& o) {
            // Per spatial dimension: the source coordinate, then its taps (index, weight).
            std::vector<std::vector<std::pair<Expr, Expr>>> taps(k);
            for (size_t d = 0; d < k; ++d) {
                const double n = double(xs[2 + d]);
                const double lo = p.align_corners ? 0 : -0.5, hi = p.align_corners ? n - 1 : n - 0.5;
                std::vector<Expr> at{o[0]};
                at.insert(at.end(), o.begin() + 2, o.end());
                at.push_back(make_int(int64_t(k - 1 - d)));
                Expr g = ir::cast(f64, grid.at(at));
                Expr c = p.align_corners ? (g + f(1)) / f(2) * f(n - 1) : ((g + f(1)) * f(n) - f(1)) / f(2);
                if (p.mode == "nearest") c = ir::roundeven(c);
                if (p.padding_mode == "border") c = ir::select(c < f(lo) || c > f(hi), ir::min(ir::max(c, f(0)), f(n - 1)), c);
                if (p.padding_mode == "reflection") c = reflect(c, lo, hi);
                // Within [-4, n + 3]: the taps of any farther coordinate fall outside the input.
                c = nn_detail::clamp_coordinate(c, -4, n + 3);
                Expr base = ir::floor(c), r = c - base;
                Expr b = ir::cast(i64, base);
                if (p.mode == "nearest") {
                    taps[d].push_back({ir::cast(i64, c), f(1)});
                } else if (p.mode == "linear") {
                    taps[d] = {{b, f(1) - r}, {b + make_int(1, i64), r}};
                } else {
                    for (int64_t t = -1; t <= 2; ++t)
                        taps[d].push_back({b + make_int(t, i64), resize_detail::cubic_weight(r - f(double(t)), -0.75)});
                }
                // A tap outside the input: 0 (zeros), the edge (border) or reflected (reflection).
                for (auto& [i, w] : taps[d]) {
                    if (p.padding_mode == "reflection")
                        i = ir::cast(i64, reflect(ir::cast(f64, i), lo, hi));
                    else if (p.padding_mode == "zeros")
                        w = ir::select(i >= make_int(0, i64) && i < make_int(xs[2 + d], i64), w, f(0));
                    i = resize_detail::index_clamp(i, xs[2 + d]);
                }
            }
            // The weighted sum over every combination of taps.
            Expr sum;
            std::vector<size_t> pick(k, 0);
            while (true) {
                std::vector<Expr> idx{o[0], o[1]};
                Expr w = f(1);
                for (size_t d = 0; d < k; ++d) {
                    idx.push_back(taps[d][pick[d]].first);
                    w = w * taps[d][pick[d]].second;
                }
                Expr term = ir::cast(f64, x.at(idx)) * w;
                sum = sum.defined() ? sum + term : term;
                size_t d = 0;
                while (d < k && ++pick[d] == taps[d].size()) pick[d++] = 0;
                if (d == k) break;
            }
            return ir::cast(x.dtype(), sum);
        },
        "grid_sample");
}

}  // namespace weft::topi
