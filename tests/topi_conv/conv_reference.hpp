// Naive double-precision references for the conv and pooling tests, the random shapes they
// run on, and a comparison helper.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "weft/topi/conv.hpp"
#include "weft/weft.hpp"

namespace conv_test {

using weft::Buffer;
using weft::topi::Conv2dParams;
using weft::topi::Pool2dParams;

// A random buffer in [-1, 1) with no zeros (a zero would hide a wrong index).
inline Buffer<float> random_buffer(std::vector<int64_t> shape, uint64_t seed) {
    Buffer<float> b = Buffer<float>::random(std::move(shape), -1.f, 1.f, seed);
    for (int64_t i = 0; i < b.size(); ++i)
        if (std::abs(b.data()[i]) < 1e-3f) b.data()[i] = 0.5f;
    return b;
}

inline int64_t out_extent(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t lo, int64_t hi) {
    return (in + lo + hi - dil * (k - 1) - 1) / stride + 1;
}

// conv2d NCHW with every attribute; bias (if not null) and relu as the epilogue.
inline std::vector<double> ref_conv2d(const Buffer<float>& x, const Buffer<float>& w, const Conv2dParams& p,
                                      const float* bias = nullptr, bool relu = false) {
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    const int64_t O = w.dim(0), KH = w.dim(2), KW = w.dim(3), g = p.groups, cpg = C / g, opg = O / g;
    const int64_t OH = out_extent(H, KH, p.stride.h, p.dilation.h, p.padding.top, p.padding.bottom);
    const int64_t OW = out_extent(W, KW, p.stride.w, p.dilation.w, p.padding.left, p.padding.right);
    std::vector<double> y(size_t(N * O * OH * OW));
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < O; ++o)
            for (int64_t oy = 0; oy < OH; ++oy)
                for (int64_t ox = 0; ox < OW; ++ox) {
                    double acc = bias ? bias[o] : 0.0;
                    for (int64_t c = 0; c < cpg; ++c)
                        for (int64_t ky = 0; ky < KH; ++ky)
                            for (int64_t kx = 0; kx < KW; ++kx) {
                                int64_t sy = oy * p.stride.h + ky * p.dilation.h - p.padding.top;
                                int64_t sx = ox * p.stride.w + kx * p.dilation.w - p.padding.left;
                                if (sy < 0 || sy >= H || sx < 0 || sx >= W) continue;
                                acc += double(x(n, (o / opg) * cpg + c, sy, sx)) * w(o, c, ky, kx);
                            }
                    if (relu) acc = std::max(acc, 0.0);
                    y[size_t(((n * O + o) * OH + oy) * OW + ox)] = acc;
                }
    return y;
}

// Max or average pooling, NCHW, taps p.dilation apart.
template <class T>
inline std::vector<double> ref_pool2d(const Buffer<T>& x, const Pool2dParams& p, bool is_max) {
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    int64_t OH = out_extent(H, p.kernel.h, p.stride.h, p.dilation.h, p.padding.top, p.padding.bottom);
    int64_t OW = out_extent(W, p.kernel.w, p.stride.w, p.dilation.w, p.padding.left, p.padding.right);
    if (p.ceil_mode) {  // PyTorch's rule: rounded up, less a last window starting in the end padding
        auto ceil_out = [](int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t hi) {
            const int64_t span = in + lo + hi - (d * (k - 1) + 1);
            int64_t o = (span + s - 1) / s + 1;
            if ((o - 1) * s >= in + lo) --o;
            return o;
        };
        OH = ceil_out(H, p.kernel.h, p.stride.h, p.dilation.h, p.padding.top, p.padding.bottom);
        OW = ceil_out(W, p.kernel.w, p.stride.w, p.dilation.w, p.padding.left, p.padding.right);
    }
    std::vector<double> y;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t oy = 0; oy < OH; ++oy)
                for (int64_t ox = 0; ox < OW; ++ox) {
                    double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
                    int64_t inside = 0, in_padded = 0;
                    for (int64_t ky = 0; ky < p.kernel.h; ++ky)
                        for (int64_t kx = 0; kx < p.kernel.w; ++kx) {
                            int64_t sy = oy * p.stride.h + ky * p.dilation.h - p.padding.top,
                                    sx = ox * p.stride.w + kx * p.dilation.w - p.padding.left;
                            in_padded += sy >= -p.padding.top && sy < H + p.padding.bottom &&
                                         sx >= -p.padding.left && sx < W + p.padding.right;
                            if (sy < 0 || sy >= H || sx < 0 || sx >= W) continue;
                            ++inside;
                            double v = x(n, c, sy, sx);
                            acc = is_max ? std::max(acc, v) : acc + v;
                        }
                    if (!is_max) acc /= double(p.count_include_pad ? in_padded : inside);
                    y.push_back(acc);
                }
    return y;
}

// Max relative error |got - want| / max(1, |want|); NaN counts as infinite.
inline double max_rel_error(const float* got, const std::vector<double>& want) {
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        double d = std::abs(double(got[i]) - want[i]) / std::max(1.0, std::abs(want[i]));
        if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
    }
    return worst;
}

// The constant shape of a tensor, for the output buffer.
inline std::vector<int64_t> shape_of(const weft::Tensor& t) {
    std::vector<int64_t> out;
    for (auto& e : t.shape()) {
        int64_t v = 0;
        REQUIRE(weft::ir::as_const_int(e, &v));
        out.push_back(v);
    }
    return out;
}

// Uniform integers in [lo, hi] from a seeded generator.
struct Dice {
    std::mt19937_64 rng;
    explicit Dice(uint64_t seed) : rng(seed) {}
    int64_t operator()(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
};

}  // namespace conv_test
