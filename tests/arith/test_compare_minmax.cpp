// min, max and comparisons decided by ranges; boolean identities; select.
#include <doctest/doctest.h>

#include "helpers.hpp"

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"

using namespace weft;
using namespace weft::ir;
using arith_test::range;
using arith_test::s;
using arith::Interval;
using arith::simplify;
using arith::VarRanges;

TEST_CASE("min and max fold when the ranges order the operands") {
    Var x("x"), y("y");
    CHECK(s(min(x, x + 1)) == "x");
    CHECK(s(max(x - 2, x)) == "x");
    CHECK(s(min(x, 10), {{x, range(0, 7)}}) == "x");
    CHECK(s(max(x, 10), {{x, range(0, 7)}}) == "10");
    CHECK(s(min(x, y), {{x, range(0, 7)}, {y, range(7, 9)}}) == "x");
    CHECK(s(min(x, y), {{x, range(0, 8)}, {y, range(7, 9)}}) == "min(x, y)");
    CHECK(s(min(min(x, 3), 5)) == "min(x, 3)");
    CHECK(s(max(4, max(x, 2))) == "max(x, 4)");
    CHECK(s(min(x, x)) == "x");
}

TEST_CASE("comparisons fold when the ranges decide them") {
    Var x("x"), y("y"), n("n");
    CHECK(s(x < x + 1) == "true");
    CHECK(s(x + 1 <= x) == "false");
    CHECK(s(x == x) == "true");
    CHECK(s(x * 2 != x * 2) == "false");
    CHECK(s(x < 8, {{x, range(0, 7)}}) == "true");
    CHECK(s(x >= 8, {{x, range(0, 7)}}) == "false");
    CHECK(s(x == 9, {{x, range(0, 7)}}) == "false");
    CHECK(s(x < 7, {{x, range(0, 7)}}) == "x < 7");
    // Symbolic ranges: i < n when i ranges over [0, n - 1].
    CHECK(s(x < n, {{x, Interval(make_int(0), n - 1)}}) == "true");
    CHECK(s(x <= n - 2, {{x, Interval(make_int(0), n - 1)}}) == "x <= n - 2");
    CHECK(s(y * 8 + x < y * 8 + 8, {{x, range(0, 7)}}) == "true");
    CHECK(arith::can_prove(x * 4 + 3 < n * 4, {{x, Interval(make_int(0), n - 1)}}));
    CHECK_FALSE(arith::can_prove(x * 4 + 4 < n * 4, {{x, Interval(make_int(0), n - 1)}}));
}

TEST_CASE("boolean identities and select") {
    Var x("x"), y("y");
    Expr p = x < y;
    CHECK(s(p && (x == x)) == "x < y");
    CHECK(s(p || (x != x)) == "x < y");
    CHECK(s(p && (x != x)) == "false");
    CHECK(s(p || (x == x)) == "true");
    CHECK(s(!!p) == "x < y");
    CHECK(s(!(x < y)) == "x >= y");
    CHECK(s(p && p) == "x < y");
    CHECK(s(select(x < x + 1, x, y)) == "x");
    CHECK(s(select(p, x + 1, 1 + x)) == "x + 1");
    Var f("f", f32), g("g", f32);
    CHECK(s(!(f < g)) == "!(f < g)");  // NaN: !(f < g) is not f >= g
}

TEST_CASE("can_prove is true only for provable conditions") {
    Var x("x");
    CHECK(arith::can_prove(x + 1 > x));
    CHECK_FALSE(arith::can_prove(x > 0));
    CHECK(arith::can_prove(x > 0, {{x, range(1, 5)}}));
    CHECK(arith::can_prove(x % 8 < 8));
    CHECK(arith::can_prove(x % 8 >= 0));
    CHECK_FALSE(arith::can_prove(x % 8 > 0));
}

TEST_CASE("comparisons bound a linear form through its min, max and floor-division terms") {
    Var x("x"), n("n");
    // A tile shifted inwards inside a symbolic extent: min(x, n - 6) + 5 <= n - 1.
    CHECK(s(min(x, n - 6) + 5 <= n - 1) == "true");
    CHECK(s(max(x, n) >= n) == "true");
    CHECK(s(min(x, n - 6) + 6 <= n - 1) == "min(x, n - 6) + 6 <= n - 1");  // not always
    // c * (x / c) lies in [x - c + 1, x], for every x (floor division).
    CHECK(s(n / 64 * 64 <= n) == "true");
    CHECK(s(n / 64 * 64 > n - 64) == "true");
    CHECK(s(n / 64 * 64 >= n) == "n / 64 * 64 >= n");  // not always
    CHECK(s(n / 64 * 32 * 2 - n <= 0) == "true");      // a coefficient that is a multiple of the divisor
    CHECK(s((n + 63) / 64 * 64 - n < 64) == "true");
    // Both together, as the steady loop of a split by 64 inside max(n, 64) needs them.
    Var i("i");
    Expr m = max(n, 64);
    CHECK(s(i * 64 + 63 <= m - 1, {{i, Interval(make_int(0), min(m / 64, (m + 63) / 64) - 1)}}) == "true");
}

TEST_CASE("a size known only to be non-negative keeps its identity in proofs") {
    // The steady loop of a split by 6 over n rows, as loop partitioning writes it when it
    // knows n >= 0 (a tensor's dimension): its tiles are whole, so the tile's row count
    // max(min(i * 6 + 5, n - 1) - i * 6 + 1, 0) is 6. Replacing n by [0, +inf) in the
    // symbolic bounds lost the n that cancels (the count stayed symbolic: no register tile).
    Var i("i"), n("n");
    const Interval size(make_int(0), Expr());
    const Expr rows = max(min(i * 6 + 5, n - 1) - i * 6 + 1, 0);
    const Expr steady_end = min(max(n / 6, 0), (n + 5) / 6);
    CHECK(s(steady_end, {{n, size}}) == "n / 6");
    CHECK(s(rows, {{n, size}, {i, Interval(make_int(0), steady_end - 1)}}) == "6");
    CHECK(arith::can_prove(i * 6 + 5 <= n - 1, {{n, size}, {i, Interval(make_int(0), n / 6 - 1)}}));
    // Not past the steady loop, and not without the sign.
    CHECK(s(rows, {{n, size}, {i, Interval(make_int(0), (n + 5) / 6 - 1)}}) != "6");
    CHECK(s(steady_end) != "n / 6");
}
