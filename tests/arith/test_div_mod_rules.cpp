// Each division/modulo rule, and that it does not fire when its precondition fails.
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

TEST_CASE("(x*c*k + y) / c == x*k + y / c and (x*c*k + y) % c == y % c for c > 0") {
    Var x("x"), y("y");
    CHECK(s((x * 8 + y) / 8) == "x + y / 8");
    CHECK(s((x * 16 + y) / 8) == "x * 2 + y / 8");
    CHECK(s((x * 8 + y) % 8) == "y % 8");
    CHECK(s((y + x * 24) % 8) == "y % 8");
    CHECK(s((x * 8 - y) / 8) == "x + (0 - y) / 8");
    // Constants move out by whole periods: (x + 9) / 8 == (x + 1) / 8 + 1.
    CHECK(s((x + 9) / 8) == "(x + 1) / 8 + 1");
    CHECK(s((x - 1) / 8 + 1) == "(x + 7) / 8");
    CHECK(s((x + 17) % 8) == "(x + 1) % 8");
    // Not a multiple of c: nothing moves.
    CHECK(s((x * 6 + y) / 4) == "(x * 6 + y) / 4");
    CHECK(s((x * 6 + y) % 4) == "(x * 6 + y) % 4");
    // A negative divisor: the rule needs c > 0.
    CHECK(s((x * 8 + y) / -8) == "(x * 8 + y) / -8");
}

TEST_CASE("the split rules are for non-wrapping (signed 64-bit) arithmetic only") {
    Var x("x", i8), y("y", i8);
    // In int8, x*64 + y can wrap, and then (x*64 + y) / 64 != x + y / 64.
    CHECK(s((x * make_int(64, i8) + y) / make_int(64, i8)) == "(x * int8(64) + y) / int8(64)");
}

TEST_CASE("x / c == 0 and x % c == x when 0 <= x < c, and only then") {
    Var x("x"), ii("ii");
    CHECK(s(x / 8, {{x, range(0, 7)}}) == "0");
    CHECK(s(x % 8, {{x, range(0, 7)}}) == "x");
    CHECK(s(x / 8, {{x, range(8, 15)}}) == "1");
    CHECK(s(x % 8, {{x, range(8, 15)}}) == "x - 8");
    CHECK(s(x / 8, {{x, range(-8, -1)}}) == "-1");
    CHECK(s(x % 8, {{x, range(-8, -1)}}) == "x + 8");
    // Precondition fails: the range spans two periods.
    CHECK(s(x / 8, {{x, range(0, 8)}}) == "x / 8");
    CHECK(s(x % 8, {{x, range(-1, 6)}}) == "x % 8");
    CHECK(s(x / 8) == "x / 8");
    // The split then the range rule: the usual split of an index.
    Var io("io");
    CHECK(s((io * 8 + ii) / 8, {{ii, range(0, 7)}}) == "io");
    CHECK(s((io * 8 + ii) % 8, {{ii, range(0, 7)}}) == "ii");
    CHECK(s((io * 8 + ii) / 8, {{ii, range(0, 8)}}) == "io + ii / 8");
}

TEST_CASE("nested divisions and modulos with positive constants") {
    Var x("x");
    CHECK(s(x / 4 / 8) == "x / 32");
    CHECK(s(x % 32 / 8) == "x / 8 % 4");
    CHECK(s(x % 32 % 8) == "x % 8");
    // Preconditions fail: a negative divisor, a modulus that is not a multiple.
    CHECK(s(x / -4 / 8) == "x / -4 / 8");
    CHECK(s(x % 12 / 8) == "x % 12 / 8");
    CHECK(s(x % 12 % 8) == "x % 12 % 8");
}

TEST_CASE("division by a non-constant positive divisor") {
    Var x("x"), n("n");
    VarRanges r{{n, range(1, 100)}, {x, Interval(make_int(0), n - 1)}};
    CHECK(s(x / n, r) == "0");
    CHECK(s(x % n, r) == "x");
    VarRanges maybe_negative{{n, range(1, 100)}, {x, Interval(make_int(-1), n - 1)}};
    CHECK(s(x / n, maybe_negative) == "x / n");
    VarRanges maybe_equal{{n, range(1, 100)}, {x, Interval(make_int(0), n)}};
    CHECK(s(x % n, maybe_equal) == "x % n");
}

TEST_CASE("x / 1, x % 1, and division of a ramp within one period") {
    Var x("x");
    CHECK(s(x / 1) == "x");
    CHECK(s(x % 1) == "0");
    Expr eight = Broadcast::make(make_int(8), 8);
    CHECK(s(Ramp::make(x * 8, make_int(1), 8) / eight) == "x8(x)");
    CHECK(s(Ramp::make(x * 8, make_int(1), 8) % eight) == "ramp(0, 1, 8)");
    // Nine lanes cross into the next period.
    Expr nine = Broadcast::make(make_int(8), 9);
    CHECK(s(Ramp::make(x * 8, make_int(1), 9) / nine) == "ramp(x * 8, 1, 9) / x9(8)");
}
