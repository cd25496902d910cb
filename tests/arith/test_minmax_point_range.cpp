// min and max of operands that are equal over the ranges (a variable with a one-point range,
// like a GPU block loop that runs once) fold to the constant operand, on both sides, so a
// clamped extent such as min(b*32 + 31, 31) - max(b*32, 0) + 1 is a constant.
#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace weft;
using namespace weft::ir;
using arith_test::range;
using arith_test::s;

TEST_CASE("min and max of operands equal over a one-point range pick the constant") {
    Var b("b");
    CHECK(s(min(b * 32 + 31, 31), {{b, range(0, 0)}}) == "31");
    CHECK(s(max(b * 32, 0), {{b, range(0, 0)}}) == "0");
    CHECK(s(max(min(b * 32 + 31, 31) - max(b * 32, 0) + 1, 0), {{b, range(0, 0)}}) == "32");
    CHECK(s(min(b + 3, 5), {{b, range(2, 2)}}) == "5");
    // Not equal everywhere: unchanged behaviour.
    CHECK(s(min(b * 32 + 31, 63), {{b, range(0, 1)}}) == "b * 32 + 31");
    CHECK(s(max(b, 0), {{b, range(0, 5)}}) == "b");
}

TEST_CASE("a variable whose range is one point simplifies as that constant") {
    Var b("b"), c("c");
    CHECK(s(max(min(b * 112 + 120, 119) - max(b * 112, 0) + 1, 0), {{b, range(0, 0)}}) == "120");
    CHECK(s(b * 4 + c, {{b, range(3, 3)}, {c, range(0, 9)}}) == "c + 12");
    CHECK(s(b * 4 + c, {{b, range(2, 3)}}) == "b * 4 + c");
}
