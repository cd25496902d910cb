#include <doctest/doctest.h>

#include "weft/weft.hpp"

using namespace weft;

TEST_CASE("compute deduces the lambda's arity, 1 to 6 dimensions") {
    Tensor X = placeholder({2, 3, 4, 5, 6, 7}, f32, "X");
    Tensor Y = compute({2, 3, 4, 5, 6, 7},
                       [&](Expr a, Expr b, Expr c, Expr d, Expr e, Expr f) { return X(a, b, c, d, e, f) * 2; }, "Y");
    CHECK(Y.ndim() == 6);
    CHECK(Y.dtype() == f32);
    Tensor Z = compute({5}, [&](Expr i) { return cast(i32, i); }, "Z");
    CHECK(Z.dtype() == i32);
    CHECK_THROWS_AS(compute({4, 6}, [&](Expr i) { return i; }, "bad"), weft::Error);
}

TEST_CASE("reducers take a braced axis list without ambiguity") {
    Tensor X = placeholder({8, 9}, f32, "X");
    IterVar k = reduce_axis(0, 9, "k");
    // Each of these must pick the reduction overload, not the element-wise max/min.
    Tensor mx = compute({8}, [&](Expr i) { return max(X(i, k), {k}); }, "mx");
    Tensor mn = compute({8}, [&](Expr i) { return min(X(i, k), {k}); }, "mn");
    Tensor sm = compute({8}, [&](Expr i) { return sum(X(i, k), {k}, k < 4); }, "sm");
    Tensor pr = compute({8}, [&](Expr i) { return prod(X(i, k), {k}); }, "pr");
    for (auto& t : {mx, mn, sm, pr}) {
        CHECK(t.op()->is_reduction());
        CHECK(t.op()->reduce_axis.size() == 1);
    }
    // The element-wise forms still work.
    Tensor ew = compute({8, 9}, [&](Expr i, Expr j) { return max(X(i, j), 0.0f) + min(X(i, j), 1.0f); }, "ew");
    CHECK(!ew.op()->is_reduction());
}

TEST_CASE("reductions must be the whole body") {
    Tensor X = placeholder({8, 9}, f32, "X");
    IterVar k = reduce_axis(0, 9, "k");
    CHECK_THROWS_WITH_AS(compute({8}, [&](Expr i) { return sum(X(i, k), {k}) * 2; }, "bad"),
                         doctest::Contains("must be the whole body"), weft::Error);
}

TEST_CASE("tensor reads check the number of indices and their types") {
    Tensor X = placeholder({8, 9}, f32, "X");
    Var i("i");
    CHECK_THROWS_WITH_AS(X(i), doctest::Contains("'X' has 2 dimensions"), weft::Error);
    Var f("f", f32);
    CHECK_THROWS_WITH_AS(X(i, f), doctest::Contains("must be an integer"), weft::Error);
    CHECK(X(i, 3).type() == f32);
}

TEST_CASE("input tensors of an operation are listed once, in order of first use") {
    Tensor A = placeholder({4}, f32, "A"), B = placeholder({4}, f32, "B");
    Tensor C = compute({4}, [&](Expr i) { return B(i) + A(i) * B(i); }, "C");
    auto in = C.op().input_tensors();
    REQUIRE(in.size() == 2);
    CHECK(in[0].name() == "B");
    CHECK(in[1].name() == "A");
}
