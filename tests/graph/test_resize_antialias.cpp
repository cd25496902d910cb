// resize with antialias (ONNX Resize's antialias = 1) against ONNX's reference algorithm
// written out here: separable, per dimension the n nearest samples of the edge-padded input
// (ties to the lower index), each weighted by the kernel stretched by 1 / scale at
// (offset - ratio) * scale, the weights normalized (exclude_outside: those outside the input
// zeroed first).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "op_testing.hpp"
#include "weft/weft.hpp"

using namespace weft;
using namespace op_testing;

namespace {

// ONNX's reference: the weights of one output along a dimension of n elements.
std::vector<double> reference_weights(double ratio, double scale, bool cubic) {
    scale = std::min(scale, 1.0);
    std::vector<double> w;
    if (cubic) {
        const double A = -0.75;
        auto coeff = [&](double x) {
            x = std::abs(x);
            if (x <= 1) return (A + 2) * x * x * x - (A + 3) * x * x + 1;
            if (x < 2) return A * x * x * x - 5 * A * x * x + 8 * A * x - 4 * A;
            return 0.0;
        };
        const int64_t start = int64_t(std::floor(-2 / scale)) + 1, end = 2 - start;
        for (int64_t i = start; i < end; ++i) w.push_back(coeff(scale * (double(i) - ratio)));
    } else {
        const int64_t start = int64_t(std::floor(-1 / scale)) + 1, footprint = 2 - 2 * start;
        for (int64_t i = start; i < start + footprint; ++i)
            w.push_back(std::clamp(1 - std::abs((double(i) - ratio) * scale), 0.0, 1.0));
    }
    double total = 0;
    for (double v : w) total += v;
    for (double& v : w) v /= total;
    return w;
}

// Output index o of a dimension n -> m (half_pixel), as (input index, weight) pairs.
std::vector<std::pair<int64_t, double>> reference_taps(int64_t o, int64_t n, int64_t m, bool cubic, bool exclude) {
    const double scale = double(m) / double(n);
    const double x = (double(o) + 0.5) / scale - 0.5;
    const double ratio = x == std::floor(x) ? 1.0 : x - std::floor(x);
    std::vector<double> w = reference_weights(ratio, scale, cubic);
    const int64_t count = int64_t(w.size()), pad = (count + 1) / 2;
    // The count nearest indices of x + pad in the padded array, ties to the lower index.
    std::vector<int64_t> idx(size_t(n + 2 * pad));
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = int64_t(i);
    const double xp = x + double(pad);
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
        return std::abs(xp - double(a)) < std::abs(xp - double(b));
    });
    idx.resize(size_t(count));
    std::sort(idx.begin(), idx.end());
    std::vector<std::pair<int64_t, double>> taps;
    double total = 0;
    for (int64_t k = 0; k < count; ++k) {
        const int64_t i = idx[size_t(k)] - pad;
        const double wk = exclude && (i < 0 || i >= n) ? 0.0 : w[size_t(k)];
        taps.push_back({std::clamp<int64_t>(i, 0, n - 1), wk});
        total += wk;
    }
    if (exclude)
        for (auto& t : taps) t.second /= total;
    return taps;
}

}  // namespace

TEST_CASE("graph resize: antialiased linear and cubic shrinking match ONNX's reference") {
    const int64_t H = 13, W = 17;
    auto xv = random_f32({1, 2, H, W}, 91);
    Array x = to_array(xv);
    struct Case {
        const char* mode;
        int64_t oh, ow;
        bool exclude;
    };
    for (Case k : {Case{"linear", 6, 5, false}, Case{"linear", 3, 17, false}, Case{"cubic", 7, 4, false},
                   Case{"cubic", 5, 9, true}, Case{"linear", 20, 8, false}}) {  // the last grows H: no antialias there
        CAPTURE(k.mode);
        CAPTURE(k.oh);
        CAPTURE(k.ow);
        const bool cubic = std::string(k.mode) == "cubic";
        // (Growing, the reference's weights are the plain kernel's, normalized: no change.)
        auto taps_or_plain = [&](int64_t o, int64_t n, int64_t m) {
            if (m == n) return std::vector<std::pair<int64_t, double>>{{o, 1.0}};
            return reference_taps(o, n, m, cubic, k.exclude);
        };
        Array want = tabulate({1, 2, k.oh, k.ow}, [&](const std::vector<int64_t>& o) {
            double sum = 0;
            for (auto [iy, wy] : taps_or_plain(o[2], H, k.oh))
                for (auto [ix, wx] : taps_or_plain(o[3], W, k.ow)) sum += wy * wx * x.at({o[0], o[1], iy, ix});
            return sum;
        });
        graph::Graph g;
        graph::Value in = g.input("x", {1, 2, H, W});
        g.output(g.add_node("resize", {in},
                            {{"sizes", std::vector<int64_t>{1, 2, k.oh, k.ow}}, {"mode", std::string(k.mode)},
                             {"antialias", int64_t(1)}, {"exclude_outside", int64_t(k.exclude)}}),
                 "y");
        check_equal(run(g, {xv})[0], want, 1e-5);
    }
}

TEST_CASE("graph resize: an antialiased shrink that needs too many taps per output is refused") {
    graph::Graph g;
    graph::Value in = g.input("x", {1, 1, 4000, 4000});
    CHECK_THROWS_WITH_AS(g.add_node("resize", {in},
                                    {{"sizes", std::vector<int64_t>{1, 1, 2, 2}}, {"mode", std::string("cubic")},
                                     {"antialias", int64_t(1)}}),
                         doctest::Contains("input elements per output"), Error);
}
