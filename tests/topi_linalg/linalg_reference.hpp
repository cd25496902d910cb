// Naive double-precision references for linalg's operators, the shapes the tests sweep,
// and a helper that builds a kernel with the operator's default schedule.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "weft/weft.hpp"

namespace linalg_test {

struct Shape {
    int64_t M, N, K;
};

// Hand-picked edge cases (1, primes, below one register tile, exact tiles, one more than a
// tile, skinny) followed by random shapes drawn from a fixed seed.
inline std::vector<Shape> gemm_shapes(int random_count, int64_t max_extent, unsigned seed) {
    std::vector<Shape> shapes = {{1, 1, 1},    {1, 17, 5},   {2, 3, 4},    {5, 16, 7},    {6, 64, 8},
                                 {7, 65, 13},  {13, 67, 31}, {12, 32, 9},  {1, 1000, 64}, {3, 129, 40},
                                 {31, 1, 9},   {97, 7, 61},  {64, 64, 64}, {41, 200, 3},  {200, 20, 150}};
    std::mt19937 rng(seed);
    auto extent = [&] {  // half small (under a tile), half up to max_extent
        std::uniform_int_distribution<int64_t> small(1, 16), large(1, max_extent);
        return rng() % 2 ? small(rng) : large(rng);
    };
    for (int r = 0; r < random_count; ++r) shapes.push_back({extent(), extent(), extent()});
    return shapes;
}

// C[i, j] = sum_k a(i, k) * b(k, j), in double.
inline std::vector<double> ref_gemm(int64_t M, int64_t N, int64_t K, const std::function<double(int64_t, int64_t)>& a,
                                    const std::function<double(int64_t, int64_t)>& b) {
    std::vector<double> c(size_t(M * N));
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < K; ++k) acc += a(i, k) * b(k, j);
            c[size_t(i * N + j)] = acc;
        }
    return c;
}

// Every element within a float32 accumulation error of K terms of the double reference.
inline void check_close(const weft::Buffer<float>& got, const std::vector<double>& want, int64_t K) {
    REQUIRE(size_t(got.size()) == want.size());
    const double tolerance = 1e-6 * double(K + 8);
    double worst = 0;
    size_t worst_at = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        double err = std::abs(double(got.data()[i]) - want[i]) / std::max(1.0, std::abs(want[i]));
        if (!(err <= worst)) worst = std::isnan(err) ? INFINITY : err, worst_at = i;
    }
    INFO("worst relative error " << worst << " at flat index " << worst_at);
    CHECK(worst <= tolerance);
}

// Random operands in [-1, 1) that are never zero (a zero would hide a skipped term).
inline weft::Buffer<float> random_buffer(const std::vector<int64_t>& shape, unsigned seed) {
    auto b = weft::Buffer<float>::random(shape, -1, 1, seed);
    for (float& x : b)
        if (std::abs(x) < 1e-3f) x = 0.5f;
    return b;
}

inline int64_t const_extent(const weft::Expr& e) {
    int64_t v = 0;
    REQUIRE(weft::ir::as_const_int(e, &v));
    return v;
}

// Runs `body` with weft's thread pool at `threads`, restoring the default afterwards.
inline void with_threads(int threads, const std::function<void()>& body) {
    weft::set_num_threads(threads);
    try {
        body();
    } catch (...) {
        weft::set_num_threads(0);
        throw;
    }
    weft::set_num_threads(0);
}

}  // namespace linalg_test
