// Naive C++ references and comparison helpers shared by the end-to-end tests.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "weft/weft.hpp"

namespace weft_test {

// Max relative error |a - b| / max(1, |b|) over all elements.
template <class T>
double max_rel_error(const weft::Buffer<T>& got, const std::vector<T>& want) {
    double worst = 0;
    const T* g = got.data();
    for (size_t i = 0; i < want.size(); ++i) {
        double d = std::abs(double(g[i]) - double(want[i])) / std::max(1.0, std::abs(double(want[i])));
        if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
    }
    return worst;
}

inline std::vector<float> ref_matmul(const weft::Buffer<float>& a, const weft::Buffer<float>& b, int64_t M, int64_t N,
                                     int64_t K) {
    std::vector<float> c(static_cast<size_t>(M * N));
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < K; ++k) acc += double(a.data()[i * K + k]) * b.data()[k * N + j];
            c[size_t(i * N + j)] = float(acc);
        }
    return c;
}

// Direct 2-D convolution, NCHW input x (N, CI, H, W), OIHW weights w (CO, CI, KH, KW),
// stride 1, zero padding `pad` on every side; the output is (N, CO, H + 2 pad - KH + 1, ...).
inline std::vector<float> ref_conv2d_nchw(const weft::Buffer<float>& x, const weft::Buffer<float>& w, int64_t pad) {
    const int64_t N = x.dim(0), CI = x.dim(1), H = x.dim(2), W = x.dim(3);
    const int64_t CO = w.dim(0), KH = w.dim(2), KW = w.dim(3);
    const int64_t OH = H + 2 * pad - KH + 1, OW = W + 2 * pad - KW + 1;
    std::vector<float> y(static_cast<size_t>(N * CO * OH * OW));
    for (int64_t n = 0; n < N; ++n)
        for (int64_t co = 0; co < CO; ++co)
            for (int64_t oy = 0; oy < OH; ++oy)
                for (int64_t ox = 0; ox < OW; ++ox) {
                    double acc = 0;
                    for (int64_t c = 0; c < CI; ++c)
                        for (int64_t dy = 0; dy < KH; ++dy)
                            for (int64_t dx = 0; dx < KW; ++dx) {
                                int64_t sy = oy + dy - pad, sx = ox + dx - pad;
                                if (sy < 0 || sy >= H || sx < 0 || sx >= W) continue;
                                acc += double(x(n, c, sy, sx)) * w(co, c, dy, dx);
                            }
                    y[size_t(((n * CO + co) * OH + oy) * OW + ox)] = float(acc);
                }
    return y;
}

// Softmax over the last axis of a (rows, cols) matrix.
inline std::vector<float> ref_softmax(const weft::Buffer<float>& x) {
    const int64_t R = x.dim(0), L = x.dim(1);
    std::vector<float> y(static_cast<size_t>(R * L));
    for (int64_t i = 0; i < R; ++i) {
        double m = -INFINITY, d = 0;
        for (int64_t j = 0; j < L; ++j) m = std::max(m, double(x(i, j)));
        for (int64_t j = 0; j < L; ++j) d += std::exp(double(x(i, j)) - m);
        for (int64_t j = 0; j < L; ++j) y[size_t(i * L + j)] = float(std::exp(double(x(i, j)) - m) / d);
    }
    return y;
}

// Sum of each row of a (rows, cols) matrix.
inline std::vector<float> ref_row_sum(const weft::Buffer<float>& x) {
    const int64_t R = x.dim(0), L = x.dim(1);
    std::vector<float> y(static_cast<size_t>(R));
    for (int64_t i = 0; i < R; ++i) {
        double acc = 0;
        for (int64_t j = 0; j < L; ++j) acc += x(i, j);
        y[size_t(i)] = float(acc);
    }
    return y;
}

}  // namespace weft_test
