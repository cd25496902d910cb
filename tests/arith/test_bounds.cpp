// Interval analysis.
#include <doctest/doctest.h>

#include "helpers.hpp"

#include "weft/ir/arith/interval.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"

using namespace weft;
using namespace weft::ir;
using arith_test::range;
using arith::bounds_of;
using arith::Interval;
using arith::VarRanges;

namespace {
std::string str(const Interval& i) {
    return "[" + (i.has_lower() ? to_string(i.min) : std::string("-inf")) + ", " +
           (i.has_upper() ? to_string(i.max) : std::string("+inf")) + "]";
}
std::string b(const Expr& e, const VarRanges& r) { return str(bounds_of(e, r)); }
}  // namespace

TEST_CASE("affine expressions get exact symbolic bounds") {
    Var io("io"), ii("ii"), n("n");
    CHECK(b(io * 8 + ii, {{ii, range(0, 7)}}) == "[io * 8, io * 8 + 7]");
    CHECK(b(io * 8 + ii, {{ii, range(0, 7)}, {io, Interval(make_int(0), n - 1)}}) == "[0, n * 8 - 1]");
    CHECK(b(ii - ii * 3, {{ii, range(0, 7)}}) == "[-14, 0]");
    CHECK(b(io, {}) == "[io, io]");
    CHECK(arith::bounds_of(io, {}).is_single_point());
}

TEST_CASE("products, quotients and remainders") {
    Var x("x"), y("y"), n("n");
    CHECK(b(x * y, {{x, range(-2, 3)}, {y, range(-5, 4)}}) == "[-15, 12]");
    CHECK(b(x * -3, {{x, range(-2, 3)}}) == "[-9, 6]");
    CHECK(b(x / 4, {{x, range(-5, 9)}}) == "[-2, 2]");
    CHECK(b(x / -4, {{x, range(-5, 9)}}) == "[-3, 1]");
    CHECK(b(x % 8, {}) == "[x % 8, x % 8]");
    CHECK(b(x % 8, {{x, range(-100, 100)}}) == "[0, 7]");
    CHECK(b(x % 8, {{x, range(10, 13)}}) == "[2, 5]");
    CHECK(b(x % -8, {{x, range(-100, 100)}}) == "[-7, 0]");
    CHECK(b(x / y, {{x, range(0, 100)}, {y, range(1, 10)}}) == "[0, 100]");
    CHECK(b(x / y, {{x, range(-100, 100)}, {y, range(2, 10)}}) == "[-50, 50]");
    CHECK(b(x % y, {{x, range(-100, 100)}, {y, range(1, 10)}}) == "[0, 9]");
    CHECK(b(x % n, {{n, range(1, 1000)}, {x, range(0, 5)}}) == "[0, 5]");
    // Unbounded sides propagate.
    CHECK(b(x * 2, {{x, Interval(make_int(0), Expr())}}) == "[0, +inf]");
    CHECK(b(x - y, {{x, Interval(make_int(0), Expr())}, {y, range(0, 3)}}) == "[-3, +inf]");
    CHECK(b(x / y, {{x, range(-100, 100)}, {y, range(-1, 1)}}) == "[-inf, +inf]");
}

TEST_CASE("min, max, select, casts, vectors, lets") {
    Var x("x"), y("y"), n("n");
    CHECK(b(min(x, n), {{x, range(0, 7)}}) == "[min(n, 0), min(n, 7)]");
    CHECK(b(max(x, 3), {{x, range(0, 7)}}) == "[3, 7]");
    CHECK(b(select(y < 2, x, x + 10), {{x, range(0, 7)}}) == "[0, 17]");
    CHECK(b(cast(i32, Expr(x)), {{x, range(0, 7)}}) == "[int32(0), int32(7)]");
    CHECK(b(cast(i8, Expr(x)), {{x, range(0, 700)}}) == "[int8(-128), int8(127)]");
    CHECK(b(Ramp::make(x * 8, make_int(1), 8), {{x, range(0, 3)}}) == "[0, 31]");
    CHECK(b(Broadcast::make(x, 4), {{x, range(0, 3)}}) == "[0, 3]");
    Var t("t");
    CHECK(b(Let::make(t, x * 2, t + 1), {{x, range(0, 3)}}) == "[1, 7]");
    CHECK(b(x < y, {{x, range(0, 3)}}) == "[false, true]");
    Var p("p", DataType::handle());
    CHECK(b(Load::make(f32, p, x), {{x, range(0, 3)}}) == "[-inf, +inf]");
    CHECK(b(Load::make(u8, p, x), {{x, range(0, 3)}}) == "[uint8(0), uint8(255)]");
}

TEST_CASE("interval_union and const_bounds") {
    Var x("x");
    CHECK(str(arith::interval_union(range(0, 3), range(-2, 1))) == "[-2, 3]");
    CHECK(str(arith::interval_union(range(0, 3), Interval(make_int(1), Expr()))) == "[0, +inf]");
    int64_t lo = 0, hi = 0;
    CHECK(arith::const_bounds(x * 2 + 1, {{x, range(-3, 4)}}, &lo, &hi));
    CHECK(lo == -5);
    CHECK(hi == 9);
    CHECK_FALSE(arith::const_bounds(x * 2, {}, &lo, &hi));
    Var n("n");
    CHECK(arith::const_bounds(n - x, {{x, Interval(make_int(0), n - 1)}, {n, range(1, 10)}}, &lo, &hi));
    CHECK(lo == 1);
}
