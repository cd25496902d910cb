// Loop partitioning on likely() terms of any condition, with a lower bound (a guard that
// holds for a suffix of the iterations) as well as an upper bound (a prefix): a padded read
// if_then_else(likely(i >= lo) && likely(i < hi), x[i - lo], 0) becomes a head loop and a
// tail loop that test, around a steady loop that loads directly.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "lower/lowered_text.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

using lowered_text::count;

// y[i] = x[i - lo] for lo <= i < lo + n, else 0; y has n + lo + pad_hi elements.
Tensor padded(const Tensor& X, int64_t n, int64_t lo, int64_t hi_pad, bool upper) {
    return compute({n + lo + hi_pad}, [&](Expr i) {
        Expr inside = upper ? likely(i >= lo) && likely(i < lo + n) : likely(i >= lo);
        Expr at = upper ? i - lo : min(i - lo, Expr(n - 1));
        return if_then_else(inside, X(at), 0.0f);
    }, "y");
}

void check_values(Kernel& k, int64_t n, int64_t lo, int64_t total, int threads) {
    auto x = Buffer<float>::random({n}, -1.f, 1.f, 7);
    Buffer<float> y({total});
    int before = num_threads();
    set_num_threads(threads);
    k(x, y);
    set_num_threads(before);
    bool ok = true;
    for (int64_t i = 0; i < total; ++i) ok = ok && y(i) == (i >= lo && i < lo + n ? x(i - lo) : 0.0f);
    CHECK(ok);
}

// Whether some line of the lowered body loads x (`load`) and has no `test` in it.
bool loads_untested(const std::string& body, const std::string& load, const std::string& test) {
    std::istringstream lines(body);
    for (std::string line; std::getline(lines, line);)
        if (line.find(load) != std::string::npos && line.find(test) == std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("loop partitioning: a likely lower bound peels the head of the loop") {
    const int64_t n = 13, lo = 3;
    Tensor X = placeholder({n}, f32, "x");
    Tensor Y = padded(X, n, lo, 0, false);
    Schedule s = create_schedule(Y);
    std::string body = ir::to_string(lower(s, {X, Y}).body);
    CAPTURE(body);
    // The head's test is false over its whole range, so it simplifies away too:
    // for (i, 0, 3) { y[i] = 0.0f }  for (i, 3, 13) { y[i] = x[i - 3] }
    CHECK(count(body, "for (i, 0, 3) {\n  y[i] = 0.0f\n}") == 1);
    CHECK(count(body, "for (i, 3, 13) {\n  y[i] = x[i - 3]\n}") == 1);
    CHECK(count(body, "if_then_else") == 0);
    Kernel k = build(s, {X, Y});
    check_values(k, n, lo, n + lo, 1);
}

TEST_CASE("loop partitioning: likely lower and upper bounds in one condition give head, steady and tail") {
    for (int64_t split : {0, 4, 5}) {  // no split; tiles that divide 20; tiles that do not
        CAPTURE(split);
        const int64_t n = 15, lo = 2, hi_pad = 3, total = n + lo + hi_pad;
        Tensor X = placeholder({n}, f32, "x");
        Tensor Y = padded(X, n, lo, hi_pad, true);
        Schedule s = create_schedule(Y);
        if (split) s[Y].split(Y.axis(0), split);
        std::string body = ir::to_string(lower(s, {X, Y}).body);
        CAPTURE(body);
        // Some store reads x with no test; the tests that are left are on the border only.
        CHECK(loads_untested(body, "x[", "if_then_else"));
        if (split == 0) {  // 2 zeros, the 15 elements of x untested, 3 zeros
            CHECK(count(body, "for (i, 0, 2) {\n  y[i] = 0.0f\n}") == 1);
            CHECK(count(body, "for (i, 2, 15) {\n  y[i] = x[i - 2]\n}") == 1);
            CHECK(count(body, "for (i, 17, 3) {\n  y[i] = 0.0f\n}") == 1);
            CHECK(count(body, "if_then_else") == 0);
        }
        Kernel k = build(s, {X, Y});
        check_values(k, n, lo, total, 1);
    }
}

TEST_CASE("loop partitioning: a lower bound on a parallel loop keeps one parallel loop") {
    const int64_t n = 60, lo = 4;
    Tensor X = placeholder({n}, f32, "x");
    Tensor Y = padded(X, n, lo, 4, true);
    Schedule s = create_schedule(Y);
    auto [o, in] = s[Y].split(Y.axis(0), 8);  // 68 = 8 x 8 + 4: tiles 0 and 8 test
    s[Y].parallel(o);
    std::string body = ir::to_string(lower(s, {X, Y}).body);
    CAPTURE(body);
    CHECK(count(body, "parallel for") == 1);
    CHECK(count(body, "for (i.outer") == 1);
    Kernel k = build(s, {X, Y});
    check_values(k, n, lo, n + lo + 4, 2);
}

TEST_CASE("loop partitioning: inside a border piece, a bound the piece's range settles does not cut again") {
    // y[i] = sum over k < 5 of x padded by 2 on both sides at i + k. The rows split into a head
    // [0, 2), a steady [2, 14) and a tail [14, 16); the tap loop of a border row splits once
    // more on its own bound only: in the head, i + k < 18 holds for every tap already.
    const int64_t n = 16;
    Tensor X = placeholder({n}, f32, "x");
    Tensor P = compute({n + 4}, [&](Expr i) {
        return if_then_else(likely(i >= 2) && likely(i < n + 2), X(i - 2), 0.0f);
    }, "p");
    IterVar k = reduce_axis(0, 5, "k");
    Tensor Y = compute({n}, [&](Expr i) { return sum(P(i + k), {k}); }, "y");
    Schedule s = create_schedule(Y);
    s[P].compute_inline();
    std::string body = ir::to_string(lower(s, {X, Y}).body);
    CAPTURE(body);
    CHECK(count(body, "for (i, 0, 2)") == 1);
    CHECK(count(body, "for (i, 2, 12) {\n  y[i] = 0.0f\n  for (k, 0, 5) {") == 1);
    CHECK(count(body, "for (i, 14, 2)") == 1);
    CHECK(count(body, "for (k") == 5);  // 2 in each border row, 1 in the steady rows
    CHECK(count(body, "if_then_else") == 0);

    Kernel kern = build(s, {X, Y});
    auto x = Buffer<float>::random({n}, -1.f, 1.f, 9);
    Buffer<float> y({n});
    kern(x, y);
    bool ok = true;
    for (int64_t i = 0; i < n; ++i) {
        float want = 0.0f;
        for (int64_t t = 0; t < 5; ++t)
            if (i + t >= 2 && i + t < n + 2) want += x(i + t - 2);
        ok = ok && std::abs(y(i) - want) <= 1e-5f * (1.0f + std::abs(want));
    }
    CHECK(ok);
}

TEST_CASE("loop partitioning: a bound on x / c over a fused axis is multiplied out") {
    // A row of n pixels of 3 channels padded by lo and hi pixels, written as one run over the
    // fused (pixel, channel) axis f: the pixel is f / 3, so the likely bounds compare f / 3.
    // Partitioning solves them for f (f / 3 >= lo <=> f >= 3 lo), and the steady loop loads
    // x without a test. Each orientation of the comparisons, and runs split by 4, 5 and 8.
    const int64_t n = 11, lo = 2, hi = 3, C = 3, W = n + lo + hi;
    for (int form = 0; form < 2; ++form)
        for (int64_t split : {0, 4, 5, 8}) {
            CAPTURE(form);
            CAPTURE(split);
            Tensor X = placeholder({n, C}, f32, "x");
            Tensor Y = compute({W, C}, [&](Expr p, Expr c) {
                Expr inside = form == 0 ? likely(p >= lo) && likely(p < lo + n)
                                        : likely(Expr(lo) <= p) && likely(Expr(lo + n - 1) >= p);
                Expr at = min(max(p - lo, Expr(int64_t(0))), Expr(n - 1));
                return select(inside, X(at, c), 0.0f);
            }, "y");
            Schedule s = create_schedule(Y);
            IterVar run = s[Y].fuse(Y.axis(0), Y.axis(1));
            if (split) s[Y].split(run, split);
            std::string body = ir::to_string(lower(s, {X, Y}).body);
            CAPTURE(body);
            CHECK(loads_untested(body, "x[", "select"));
            if (split == 0) CHECK(count(body, "for (i.j.fused, 6, 33) {\n  y[i.j.fused] = x[i.j.fused - 6]\n}") == 1);
            Kernel k = build(s, {X, Y});
            auto x = Buffer<float>::random({n, C}, -1.f, 1.f, 11);
            Buffer<float> y({W, C});
            k(x, y);
            bool ok = true;
            for (int64_t p = 0; p < W; ++p)
                for (int64_t c = 0; c < C; ++c) ok = ok && y(p, c) == (p >= lo && p < lo + n ? x(p - lo, c) : 0.0f);
            CHECK(ok);
        }
}
