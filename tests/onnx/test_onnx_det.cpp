// Det against an independent reference (Laplace expansion in double for small orders, LU for
// larger): random batches, permutations (pivoting needed), singular matrices, order 1.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

// The determinant by cofactor expansion along the first row (exact up to rounding; small n).
double det_ref(const std::vector<double>& m, int64_t n) {
    if (n == 1) return m[0];
    double d = 0;
    for (int64_t j = 0; j < n; ++j) {
        std::vector<double> minor;
        for (int64_t i = 1; i < n; ++i)
            for (int64_t k = 0; k < n; ++k)
                if (k != j) minor.push_back(m[size_t(i * n + k)]);
        d += (j % 2 ? -1.0 : 1.0) * m[size_t(j)] * det_ref(minor, n - 1);
    }
    return d;
}

std::vector<float> run_det(const Buffer<float>& x, std::vector<int64_t> out_shape) {
    Model m(13);
    m.input("x", x.shape());
    m.node("Det", {"x"}, {"y"});
    m.output("y");
    graph::Module mod = graph::build(m.load());
    run_on(mod, {x});
    CHECK(mod.get_output(0).shape() == out_shape);
    return values_of<float>(mod.get_output(0));
}

}  // namespace

TEST_CASE("onnx: Det of random batches, permutations, singular matrices and order 1") {
    for (int64_t n : {1, 2, 3, 5, 7}) {
        CAPTURE(n);
        const int64_t batch = 3;
        Buffer<float> x = Buffer<float>::random({2, batch, n, n}, -1.f, 1.f, uint64_t(80 + n));
        if (n >= 3) {
            // Matrix (0, 1): a permutation (zeros on the diagonal: the first pivot needs a swap);
            // matrix (0, 2): two equal rows (singular).
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < n; ++j) x(0, 1, i, j) = float(j == (i + 1) % n);
            for (int64_t j = 0; j < n; ++j) x(0, 2, n - 1, j) = x(0, 2, 0, j);
        }
        const std::vector<float> got = run_det(x, {2, batch});
        for (int64_t b = 0; b < 2 * batch; ++b) {
            std::vector<double> m(x.data() + b * n * n, x.data() + (b + 1) * n * n);
            const double want = det_ref(m, n);
            CHECK(std::abs(double(got[size_t(b)]) - want) <= 1e-5 * (1 + std::abs(want)));
        }
    }
    // A 2-D input gives a scalar.
    Buffer<float> one = Buffer<float>::random({4, 4}, -1.f, 1.f, 90);
    const std::vector<float> got = run_det(one, {1});
    CHECK(std::abs(double(got[0]) - det_ref(std::vector<double>(one.begin(), one.end()), 4)) <= 1e-5);
    // Past the unrolled order: refused, naming it.
    Model big(13);
    big.input("x", {40, 40});
    big.node("Det", {"x"}, {"y"});
    big.output("y");
    CHECK(error_of([&] { big.load(); }).find("Det of matrices of order 40") != std::string::npos);
}
