#include <doctest/doctest.h>

#include "weft/ir/equality.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"

using namespace weft;
using namespace weft::ir;

TEST_CASE("expressions print as C-like text with minimal parentheses") {
    Var x("x"), y("y");
    CHECK(to_string((x + y) * 2) == "(x + y) * 2");
    CHECK(to_string(x + y * 2) == "x + y * 2");
    CHECK(to_string(x - (y - 1)) == "x - (y - 1)");
    CHECK(to_string(min(x, y) / 4) == "min(x, y) / 4");
}

TEST_CASE("mixed dtypes follow the documented rules") {
    Var i("i");                        // int64
    Var f("f", f32);
    CHECK((i + 1).type() == i64);      // weak literal adopts the variable's type
    CHECK((f * 2).type() == f32);
    CHECK((i * 0.5f).type() == f32);   // float literal with an integer makes float32
    CHECK((f + i).type() == f32);      // float wins
    Var h("h", f64);
    CHECK((f + h).type() == f64);      // wider wins
    Var a("a", i32), b("b", u32);
    CHECK((a + b).type() == i32);      // same width int/uint: int
    CHECK((i < 3).type() == boolean);
}

TEST_CASE("structural equality is up to renaming of variables") {
    Var x("x"), y("y"), z("z");
    CHECK(structural_equal(x + 1, y + 1));
    CHECK(!structural_equal(x + 1, y + 2));
    CHECK(!structural_equal(x + y, z + z));
    CHECK(structural_equal(x * y + x, z * y + z));
    CHECK(structural_hash(x * y + x) == structural_hash(z * y + z));
    CHECK(structural_hash(x * y + x) != structural_hash(x * y + y));
}

TEST_CASE("mutator returns the same node when nothing changes") {
    Var x("x");
    Expr e = (x + 1) * (x - 2);
    IRMutator m;
    CHECK(m.mutate(e).same_as(e));
    Var y("y");
    Expr s = substitute(e, {{x, Expr(y)}});
    CHECK(to_string(s) == "(y + 1) * (y - 2)");
}

TEST_CASE("math intrinsics reject integer arguments with a clear message") {
    Var i("i", i32);
    CHECK_THROWS_WITH_AS(exp(i), doctest::Contains("only defined on float types"), weft::Error);
    Var f("f", f32);
    CHECK(exp(f).type() == f32);
}

TEST_CASE("statements print as a loop nest") {
    Var i("i"), buf("A", DataType::handle());
    Stmt s = For::make(i, 0, 16, ForKind::Vectorized, Store::make(buf, cast(f32, i), i));
    CHECK(to_string(s) == "vectorized for (i, 0, 16) {\n  A[i] = float32(i)\n}\n");
}
