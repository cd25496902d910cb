// Shared by the conv and pooling computes: constant shapes with checked ranks, attribute
// checks, output sizes, and the zero-padded view of an input.
#pragma once
#include <vector>

#include "weft/ir/arith/estimate.hpp"
#include "weft/ir/op.hpp"
#include "weft/topi/conv.hpp"

namespace weft::topi::conv_detail {

// t's shape: `rank` dimensions, a float dtype (or an integer one too, where `integers` says
// so), constant extents except, where `symbolic_spatial`, the batch (axis 0) and the spatial
// axes (h_axis, h_axis + 1), which may be symbolic (an image size a graph keeps symbolic).
// `what` describes the expected layout in the message ("data [N, C, H, W]").
std::vector<Expr> checked_shape(const std::string& op, const Tensor& t, size_t rank, const std::string& what,
                                bool integers, bool symbolic_spatial, size_t h_axis) {
    std::vector<Expr> shape = t.shape();
    WEFT_CHECK(shape.size() == rank, op, ": ", what, " must have ", rank, " dimensions but '", t.name(), "' has ",
               shape.size());
    for (size_t i = 0; i < rank; ++i) {
        int64_t v = 0;
        const bool may_vary = symbolic_spatial && (i == 0 || i == h_axis || i == h_axis + 1);
        WEFT_CHECK(may_vary || ir::as_const_int(shape[i], &v), op, ": dimension ", i, " of '", t.name(),
                   symbolic_spatial ? "' must be a constant (only the batch and spatial extents may be symbolic)"
                                    : "' must be a constant (symbolic shapes are not supported)");
    }
    WEFT_CHECK(t.dtype().is_float() || (integers && t.dtype().is_integer() && !t.dtype().is_bool()), op, ": '",
               t.name(), "' must have a float", integers ? " or integer" : "", " dtype, got ", t.dtype().str());
    return shape;
}

// The shape of t as integers, every extent constant (checked_shape).
std::vector<int64_t> const_shape(const std::string& op, const Tensor& t, size_t rank, const std::string& what,
                                 bool integers = false) {
    std::vector<int64_t> out;
    for (const Expr& e : checked_shape(op, t, rank, what, integers, false, 2)) {
        int64_t v = 0;
        ir::as_const_int(e, &v);
        out.push_back(v);
    }
    return out;
}

// t's shape where the batch and the spatial axes may be symbolic (checked_shape).
std::vector<Expr> spatial_shape(const std::string& op, const Tensor& t, size_t rank, const std::string& what,
                                size_t h_axis = 2, bool integers = false) {
    return checked_shape(op, t, rank, what, integers, true, h_axis);
}

// A constant extent's value; a symbolic one's estimate (its variables' typical values:
// ir/arith/estimate.hpp), else 64: what tile sizes and defaults are chosen for.
inline int64_t extent_value(const Expr& e) { return ir::arith::value_or_estimate(e, 64); }

inline std::vector<int64_t> extent_values(const std::vector<Expr>& shape) {
    std::vector<int64_t> v;
    for (const Expr& e : shape) v.push_back(extent_value(e));
    return v;
}

// A constant extent as make_int makes it (a symbolic one as it is).
inline Expr strong_extent(const Expr& e) {
    int64_t v = 0;
    return ir::as_const_int(e, &v) ? make_int(v) : e;
}

inline bool is_constant_extent(const Expr& e) {
    int64_t v = 0;
    return ir::as_const_int(e, &v);
}

// a + c, folded where a is a constant (a constant shape builds the IR it always did, and
// plus(a, 0) is a constant extent as the integer literal it was).
inline Expr plus(const Expr& a, int64_t c) {
    int64_t v = 0;
    if (ir::as_const_int(a, &v)) return Expr(int64_t(v + c));
    return c ? a + Expr(c) : a;
}

void check_same_dtype(const std::string& op, const Tensor& a, const Tensor& b) {
    WEFT_CHECK(a.dtype() == b.dtype(), op, ": '", a.name(), "' is ", a.dtype().str(), " but '", b.name(), "' is ",
               b.dtype().str());
}

void check_dim(const std::string& op, const Tensor& t, const std::string& dim, int64_t got, int64_t want,
               const std::string& why) {
    WEFT_CHECK(got == want, op, ": ", dim, " of '", t.name(), "' must be ", want, " (", why, ") but is ", got);
}

void check_window(const std::string& op, Size2d stride, Pad2d pad, Size2d dilation) {
    WEFT_CHECK(stride.h >= 1 && stride.w >= 1, op, ": stride must be positive, got ", stride.h, "x", stride.w);
    WEFT_CHECK(dilation.h >= 1 && dilation.w >= 1, op, ": dilation must be positive, got ", dilation.h, "x",
               dilation.w);
    WEFT_CHECK(pad.top >= 0 && pad.left >= 0 && pad.bottom >= 0 && pad.right >= 0, op,
               ": padding must not be negative, got top ", pad.top, " left ", pad.left, " bottom ", pad.bottom,
               " right ", pad.right);
}

// Output extent of a sliding window (kernel, stride and dilation positive, pads not negative:
// check_window); at least one window must fit. Attributes from a model can be anything up to
// 2^63 - 1: a span or padded extent that int64 cannot hold is refused, not wrapped around.
int64_t out_extent(const std::string& op, const char* dim, int64_t in, int64_t kernel, int64_t stride,
                   int64_t dilation, int64_t pad_lo, int64_t pad_hi) {
    int64_t span = 0, padded = 0;
    WEFT_CHECK(!__builtin_mul_overflow(dilation, kernel - 1, &span) && !__builtin_add_overflow(span, 1, &span) &&
                   !__builtin_add_overflow(in, pad_lo, &padded) && !__builtin_add_overflow(padded, pad_hi, &padded),
               op, ": the ", dim, " window (", kernel, " taps, dilation ", dilation, ") or the padded input (", in,
               " + ", pad_lo, " + ", pad_hi, ") is too large to count in 64 bits");
    WEFT_CHECK(padded >= span, op, ": the ", dim, " window (", kernel, " taps, dilation ", dilation, ", so ", span,
               " wide) does not fit in the padded input (", in, " + ", pad_lo, " + ", pad_hi, ")");
    return (padded - span) / stride + 1;
}

// out_extent rounded up (Pool2dParams::ceil_mode), less a last window that would start in
// the trailing padding; `floor_out` is out_extent's.
int64_t ceil_out_extent(int64_t floor_out, int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                        int64_t pad_lo, int64_t pad_hi) {
    const __int128 span = __int128(in) + pad_lo + pad_hi - (__int128(dilation) * (kernel - 1) + 1);
    __int128 o = (span + stride - 1) / stride + 1;
    if ((o - 1) * stride >= __int128(in) + pad_lo) --o;
    return std::max<int64_t>(floor_out, int64_t(o));
}

// out_extent over an input extent that may be symbolic: (in + pads - span) / stride + 1
// (floor division), checked at `in`'s estimate; a size too small for the window gives an
// extent below 1, which the graph refuses at run time.
Expr out_extent_expr(const std::string& op, const char* dim, const Expr& in, int64_t kernel, int64_t stride,
                     int64_t dilation, int64_t pad_lo, int64_t pad_hi, bool ceil_mode = false) {
    int64_t v = 0;
    if (ir::as_const_int(in, &v)) {
        const int64_t out = out_extent(op, dim, v, kernel, stride, dilation, pad_lo, pad_hi);
        return Expr(ceil_mode ? ceil_out_extent(out, v, kernel, stride, dilation, pad_lo, pad_hi) : out);
    }
    const int64_t at = extent_value(in);
    out_extent(op, dim, std::max(at, dilation * (kernel - 1) + 1), kernel, stride, dilation, pad_lo, pad_hi);
    const int64_t span = dilation * (kernel - 1) + 1;
    const Expr floor_out = plus(in, pad_lo + pad_hi - span) / Expr(stride) + Expr(int64_t(1));
    if (!ceil_mode) return floor_out;
    // Rounded up, but the last window starts before the input's end: (o - 1) * stride < in + pad_lo.
    return max(floor_out, min(plus(in, pad_lo + pad_hi - span + stride - 1) / Expr(stride),
                              plus(in, pad_lo - 1) / Expr(stride)) +
                              Expr(int64_t(1)));
}

}  // namespace weft::topi::conv_detail

namespace weft::topi {

Size2d conv2d_out_size(int64_t H, int64_t W, int64_t KH, int64_t KW, const Conv2dParams& p, const std::string& op) {
    using namespace conv_detail;
    check_window(op, p.stride, p.padding, p.dilation);
    WEFT_CHECK(KH >= 1 && KW >= 1, op, ": the kernel must be at least 1x1, got ", KH, "x", KW);
    return {out_extent(op, "height", H, KH, p.stride.h, p.dilation.h, p.padding.top, p.padding.bottom),
            out_extent(op, "width", W, KW, p.stride.w, p.dilation.w, p.padding.left, p.padding.right)};
}

}  // namespace weft::topi

namespace weft::topi::conv_detail {

// Whether the padded position (y, x) lies inside the H x W input: (y >= top) && (y < top + H)
// && ... with a term for each side that has padding (the others always hold); undefined when
// there is no padding. For a reduction's condition that leaves the taps in the padding out:
// the row terms are plain, a test that hoist_loop_invariant_conditions moves out to the kh
// loop (no code copied); the column terms are likely, so loop partitioning splits a row's
// tiles into the first, the interior and the last (copies of the loop body, the interior one
// without a test).
Expr inside_input(const Expr& y, const Expr& x, Pad2d pad, const Expr& H, const Expr& W) {
    Expr inside;
    auto add = [&](bool padded, Expr term) {
        if (!padded) return;
        inside = inside.defined() ? (inside && term) : term;
    };
    add(pad.top > 0, y >= pad.top);
    add(pad.bottom > 0, y < plus(H, pad.top));
    add(pad.left > 0, ir::likely(x >= pad.left));
    add(pad.right > 0, ir::likely(x < plus(W, pad.left)));
    return inside;
}

// The fraction of a sliding window's taps along one dimension that land in the padding: of
// the `out` windows of `kernel` taps (stride, dilation) over `in` elements padded by `lo`.
double padding_tap_fraction(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation,
                            int64_t lo) {
    int64_t outside = 0;
    for (int64_t o = 0; o < out; ++o)
        for (int64_t k = 0; k < kernel; ++k) {
            int64_t at = o * stride + k * dilation - lo;
            outside += at < 0 || at >= in;
        }
    return double(outside) / double(out * kernel);
}

// data with `pad` zeros around its spatial dimensions (h_axis, h_axis + 1); data itself when
// there is no padding. The bounds test is on the padded stage, so a schedule can compute it
// per tile instead of inlining the test into the reduction. The read is a select of a load
// at the clamped position (always in bounds) rather than an if_then_else: no branch per
// element, and it vectorizes along any axis. Its column terms are likely (inside_input), so
// loop partitioning cuts a row into its left padding, an interior that is a plain copy (the
// clamps simplify away) and its right padding: on the 7x7 stem's input, one thread, 131 ->
// 69 us, and 21 us copied a vector at a time (schedule_padded_copy), memcpy 17 in the same
// run. (The depthwise convolution reads in place instead, leaving the taps in the padding
// out of its sum.)
// `channel_block` (blocked data [N, C/b, H, W, b] only, a multiple of b): the copy's channel
// block, [N, C/channel_block, H', W', channel_block], so that a convolution can run its
// innermost reduction over more channels than the data's block (conv2d_nchwc_weight_ic_bn);
// 0 keeps b. A copy is made even without padding when the block changes. `pad_value`: what
// the padding holds (undefined: zero; a quantized input's zero point).
Tensor pad_spatial(const Tensor& data, Pad2d pad, int h_axis, const std::string& name, int64_t channel_block = 0,
                   const Expr& pad_value = Expr()) {
    std::vector<Expr> shape = data.shape();
    const Expr H = shape[size_t(h_axis)], W = shape[size_t(h_axis + 1)];
    int64_t block = 0, blocks = 0;
    const bool reblock = shape.size() == 5 && channel_block > 0 && ir::as_const_int(shape[4], &block) &&
                         channel_block != block;
    if (pad.none() && !reblock) return data;
    shape[size_t(h_axis)] = strong_extent(plus(H, pad.top + pad.bottom));
    shape[size_t(h_axis + 1)] = strong_extent(plus(W, pad.left + pad.right));
    if (reblock) {
        ir::as_const_int(shape[1], &blocks);
        WEFT_CHECK(channel_block % block == 0 && blocks * block % channel_block == 0, "pad_spatial '", name,
                   "': a channel block of ", channel_block, " must be a multiple of the data's (", block,
                   ") and divide its ", blocks * block, " channels");
        shape[1] = make_int(blocks * block / channel_block);
        shape[4] = make_int(channel_block);
    }
    auto value = [=](std::vector<Expr> idx) {
        Expr y = idx[size_t(h_axis)], x = idx[size_t(h_axis + 1)];
        const Expr zero = pad_value.defined() ? pad_value : ir::make_zero(data.dtype());
        idx[size_t(h_axis)] = min(max(y - pad.top, Expr(int64_t(0))), plus(H, -1));
        idx[size_t(h_axis + 1)] = min(max(x - pad.left, Expr(int64_t(0))), plus(W, -1));
        if (reblock) {  // channel c = idx[1] * channel_block + idx[4] of the data's blocks
            Expr c = idx[4];
            idx[1] = idx[1] * (channel_block / block) + c / block;
            idx[4] = c % block;
        }
        if (pad.none()) return data.at(idx);
        return select(inside_input(y, x, pad, H, W), data.at(idx), zero);
    };
    if (shape.size() == 4)
        return compute(shape, [&](Expr a, Expr b, Expr c, Expr d) { return value({a, b, c, d}); }, name);
    return compute(shape, [&](Expr a, Expr b, Expr c, Expr d, Expr e) { return value({a, b, c, d, e}); }, name);
}

}  // namespace weft::topi::conv_detail
