// The affine canonical form and constant folding.
#include <doctest/doctest.h>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"

using namespace weft;
using namespace weft::ir;
using arith::simplify;

TEST_CASE("affine expressions cancel and keep first-appearance order, constant last") {
    Var i("i"), j("j"), k("k");
    CHECK(to_string(simplify((i * 4 + j) - (j + i * 4))) == "0");
    CHECK(to_string(simplify(i * 64 + j + 1 - 1)) == "i * 64 + j");
    CHECK(to_string(simplify(3 + i + 2 * j + i)) == "i * 2 + j * 2 + 3");
    CHECK(to_string(simplify((i + 1) * 4 - 4)) == "i * 4");
    CHECK(to_string(simplify(j - i * 3 + 2)) == "j - i * 3 + 2");
    CHECK(to_string(simplify(5 - i)) == "5 - i");
    CHECK(to_string(simplify(0 - i - j)) == "0 - i - j");
    CHECK(to_string(simplify(i - 7)) == "i - 7");
    CHECK(to_string(simplify((i + j) * (k + 1) - (i + j) * (k + 1))) == "0");
}

TEST_CASE("non-affine terms are kept whole and combine when equal") {
    Var x("x"), y("y");
    CHECK(to_string(simplify(x * y + x * y)) == "x * y * 2");
    CHECK(to_string(simplify(x / 4 + 1 + x / 4)) == "x / 4 * 2 + 1");
    CHECK(to_string(simplify(min(x, y) - min(x, y) + y)) == "y");
}

TEST_CASE("x / c * c + x % c folds back to x") {
    Var x("x"), y("y");
    CHECK(to_string(simplify(x / 8 * 8 + x % 8)) == "x");
    CHECK(to_string(simplify((x / 8) * 16 + (x % 8) * 2 + y)) == "x * 2 + y");
    CHECK(to_string(simplify(x / 8 * 4 + x % 8)) == "x / 8 * 4 + x % 8");  // factors differ: kept
}

TEST_CASE("the digits of x in base c merge: x / c % m * c + x % c folds to x % (c*m)") {
    Var x("x"), y("y");
    CHECK(to_string(simplify(x / 8 % 4 * 8 + x % 8)) == "x % 32");
    CHECK(to_string(simplify(x / 8 % 4 * 16 + x % 8 * 2 + y)) == "x % 32 * 2 + y");
    // A reshape of [a, 3, 5] to [a*15] reads x / 15 % a, x / 5 % 3 and x % 5 of the flat index.
    CHECK(to_string(simplify(x / 15 * 15 + x / 5 % 3 * 5 + x % 5)) == "x");
    // Kept: factors that differ, divisors that differ, a modulo by a negative constant.
    CHECK(to_string(simplify(x / 8 % 4 * 4 + x % 8)) == "x / 8 % 4 * 4 + x % 8");
    CHECK(to_string(simplify(x / 4 % 4 * 8 + x % 8)) == "x / 4 % 4 * 8 + x % 8");
    CHECK(to_string(simplify(x / 8 % -4 * 8 + x % 8)) == "x / 8 % -4 * 8 + x % 8");
}

TEST_CASE("constants fold in every dtype, wrapping to the width") {
    CHECK(to_string(simplify(make_int(100, i8) + make_int(100, i8))) == "int8(-56)");
    CHECK(to_string(simplify(make_int(200, u8) + make_int(100, u8))) == "uint8(44)");
    CHECK(to_string(simplify(make_int(3, u8) - make_int(5, u8))) == "uint8(254)");
    CHECK(to_string(simplify(make_int(-7, i32) / make_int(2, i32))) == "int32(-4)");
    CHECK(to_string(simplify(make_int(-7, i32) % make_int(2, i32))) == "int32(1)");
    CHECK(to_string(simplify(make_int(7) / make_int(-2))) == "-4");
    CHECK(to_string(simplify(make_int(7) % make_int(-2))) == "-1");
    CHECK(to_string(simplify(make_const(f32, 1.5) * make_const(f32, 2.0))) == "3.0f");
    CHECK(to_string(simplify(make_const(f64, 1.0) / make_const(f64, 4.0))) == "0.25");
    CHECK(to_string(simplify(min(make_int(3), make_int(-2)))) == "-2");
    CHECK(to_string(simplify(make_int(3) < make_int(4))) == "true");
    CHECK(to_string(simplify(cast(i8, Expr(make_int(300))))) == "int8(44)");
    CHECK(to_string(simplify(Cast::make(i32, make_const(f32, -2.75)))) == "int32(-2)");
    CHECK(to_string(simplify(Cast::make(f32, make_int(3)))) == "3.0f");
}

TEST_CASE("division by a zero constant is not folded") {
    Var x("x");
    CHECK(to_string(simplify(Div::make(make_int(4), make_int(0)))) == "4 / 0");
    CHECK(to_string(simplify(Mod::make(x + 1 - 1, make_int(0)))) == "x % 0");
}

TEST_CASE("floats are only constant-folded, never reassociated") {
    Var f("f", f32);
    CHECK(to_string(simplify(f + 1.0f - 1.0f)) == "f + 1.0f - 1.0f");
    CHECK(to_string(simplify(f * 2.0f * 0.5f)) == "f * 2.0f * 0.5f");
    CHECK(to_string(simplify(f + (make_const(f32, 1.0) + make_const(f32, 2.0)))) == "f + 3.0f");
    CHECK(simplify(f - f).type() == f32);
}

TEST_CASE("the simplified expression keeps its type") {
    Var a("a", i32), b("b", u8);
    CHECK(simplify(a - a).type() == i32);
    CHECK(simplify(b * 0).type() == u8);
    CHECK(to_string(simplify(b - b)) == "uint8(0)");
    CHECK(to_string(simplify(b - make_int(1, u8) + make_int(1, u8))) == "b");
}

TEST_CASE("vector arithmetic of ramps and broadcasts stays a ramp") {
    Var x("x");
    Expr r = Ramp::make(x, make_int(1), 8);
    Expr b = Broadcast::make(make_int(2), 8);
    CHECK(to_string(simplify(r + r)) == "ramp(x * 2, 2, 8)");
    CHECK(to_string(simplify(r * b)) == "ramp(x * 2, 2, 8)");
    CHECK(to_string(simplify(r - Ramp::make(x, make_int(1), 8))) == "x8(0)");
    CHECK(to_string(simplify(Ramp::make(x + 1, make_int(0), 4))) == "x4(x + 1)");
    CHECK(to_string(simplify(Broadcast::make(x, 4) + Broadcast::make(x, 4))) == "x4(x * 2)");
}

TEST_CASE("lets bind constants and variables; other values stay bound and known") {
    Var x("x"), t("t");
    CHECK(to_string(simplify(Let::make(t, make_int(3), t * 2 + x))) == "x + 6");
    CHECK(to_string(simplify(Let::make(t, x * x, t - t + 1))) == "1");
    CHECK(to_string(simplify(Let::make(t, x * x, t + t))) == "(let t = x * x in t * 2)");
}
