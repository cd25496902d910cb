// topi::deformable_im2col (conv.hpp has the declaration): the sampling half of ONNX's
// DeformConv, each column a window's taps moved by the offsets and read bilinearly.
#pragma once
#include "weft/topi/impl/conv_checks.hpp"
#include "weft/topi/impl/nn_detail.hpp"

namespace weft::topi {

Tensor deformable_im2col(const Tensor& x, const Tensor& offset, const Tensor& mask, const Conv2dParams& p,
                         int64_t kh, int64_t kw, int64_t G, const std::string& name) {
    using namespace conv_detail;
    const std::string op = "deformable_im2col '" + name + "'";
    const std::vector<int64_t> xs = const_shape(op, x, 4, "x [N, C, H, W]");
    WEFT_CHECK(x.dtype().is_float(), op, ": x '", x.name(), "' must be floats, not ", x.dtype().str());
    WEFT_CHECK(kh >= 1 && kw >= 1, op, ": the kernel must be at least 1x1, got ", kh, "x", kw);
    const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
    WEFT_CHECK(G >= 1 && C % G == 0, op, ": offset_group (", G, ") must divide the ", C, " channels");
    const Size2d out = conv2d_out_size(H, W, kh, kw, p, op);
    const int64_t OH = out.h, OW = out.w, taps = kh * kw;
    check_same_dtype(op, x, offset);
    const std::vector<int64_t> os = const_shape(op, offset, 4, "offset [N, G * 2 * kh * kw, OH, OW]");
    const std::vector<int64_t> want{N, G * 2 * taps, OH, OW};
    WEFT_CHECK(os == want, op, ": the offset '", offset.name(), "' must be [", N, ", ", G * 2 * taps, ", ", OH, ", ",
               OW, "]");
    if (mask.defined()) {
        check_same_dtype(op, x, mask);
        const std::vector<int64_t> ms = const_shape(op, mask, 4, "mask [N, G * kh * kw, OH, OW]");
        const std::vector<int64_t> want_mask{N, G * taps, OH, OW};
        WEFT_CHECK(ms == want_mask, op, ": the mask '", mask.name(), "' must be [", N, ", ", G * taps, ", ", OH, ", ",
                   OW, "]");
    }
    const DataType t = x.dtype();
    auto c = [&](double v) { return ir::make_const(t, v); };
    // A corner's weight where it lies in [0, n), else 0; its index clamped for the read.
    auto corner = [&](Expr i, int64_t n) {
        return std::pair{i >= make_int(0) && i < make_int(n), ir::min(ir::max(i, make_int(0)), make_int(n - 1))};
    };
    return compute(
        {make_int(N), make_int(C * taps), make_int(OH * OW)},
        [&](Expr n, Expr row, Expr col) {
            Expr ch = row / make_int(taps), tap = row % make_int(taps);
            Expr ky = tap / make_int(kw), kx = tap % make_int(kw);
            Expr y = col / make_int(OW), xo = col % make_int(OW);
            Expr g = ch / make_int(C / G);
            Expr dy = offset(n, g * make_int(2 * taps) + tap * make_int(2), y, xo);
            Expr dx = offset(n, g * make_int(2 * taps) + tap * make_int(2) + make_int(1), y, xo);
            // The sample's position, within [-2, extent + 1]: what lies past reads zeros all the same.
            auto position = [&](Expr o, int64_t stride, int64_t pad, Expr k, int64_t dil, Expr d, int64_t n_) {
                Expr v = ir::cast(t, o * make_int(stride) - make_int(pad) + k * make_int(dil)) + d;
                return nn_detail::clamp_coordinate(v, -2, double(n_ + 1));
            };
            Expr py = position(y, p.stride.h, p.padding.top, ky, p.dilation.h, dy, H);
            Expr px = position(xo, p.stride.w, p.padding.left, kx, p.dilation.w, dx, W);
            Expr fy = ir::floor(py), fx = ir::floor(px);
            Expr y0 = ir::cast(DataType::int_(64), fy), x0 = ir::cast(DataType::int_(64), fx);
            Expr ly = py - fy, lx = px - fx;
            Expr sum;
            for (int a = 0; a < 2; ++a)
                for (int b = 0; b < 2; ++b) {
                    auto [in_y, yy] = corner(y0 + make_int(a), H);
                    auto [in_x, xx] = corner(x0 + make_int(b), W);
                    Expr w = (a ? ly : c(1) - ly) * (b ? lx : c(1) - lx);
                    Expr term = ir::select(in_y && in_x, w * x(n, ch, yy, xx), c(0));
                    sum = sum.defined() ? sum + term : term;
                }
            if (mask.defined()) sum = sum * mask(n, g * make_int(taps) + tap, y, xo);
            return sum;
        },
        name);
}

}  // namespace weft::topi
