// Mistakes in the algorithm or in the argument list: each is a weft::Error naming the tensor.
#include <doctest/doctest.h>

#include "weft/weft.hpp"

using namespace weft;

TEST_CASE("exp of an int32 expression names the intrinsic and the type") {
    Tensor X = placeholder({8}, i32, "X");
    CHECK_THROWS_WITH_AS(compute({8}, [&](Expr i) { return exp(X(i)); }, "e"),
                         doctest::Contains("intrinsic exp is only defined on float types"), weft::Error);
    CHECK_THROWS_WITH_AS(compute({8}, [&](Expr i) { return tanh(X(i)); }, "t"), doctest::Contains("int32"), weft::Error);
    CHECK_THROWS_WITH_AS(compute({8}, [&](Expr i) { return sqrt(X(i) + 1); }, "s"), doctest::Contains("sqrt"),
                         weft::Error);
}

TEST_CASE("a compute lambda whose arity differs from the shape's rank names the tensor") {
    Tensor X = placeholder({4, 5}, f32, "X");
    CHECK_THROWS_WITH_AS(compute({4, 5}, [&](Expr i) { return X(i, 0) * 2.0f; }, "halves"),
                         doctest::Contains("compute 'halves': the lambda takes 1 index but the shape has 2"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(compute({20}, [&](Expr i, Expr j) { return X(i, j); }, "flat"),
                         doctest::Contains("compute 'flat': the lambda takes 2 indices but the shape has 1"),
                         weft::Error);
}

TEST_CASE("indexing a tensor with the wrong number of indices names the tensor") {
    Tensor X = placeholder({4, 5}, f32, "X");
    CHECK_THROWS_WITH_AS(compute({4}, [&](Expr i) { return X(i); }, "row"),
                         doctest::Contains("tensor 'X' has 2 dimensions but was indexed with 1 indices"), weft::Error);
    CHECK_THROWS_WITH_AS(compute({4, 5}, [&](Expr i, Expr j) { return X(i, j, 0); }, "three"),
                         doctest::Contains("tensor 'X' has 2 dimensions but was indexed with 3"), weft::Error);
    // A float index.
    CHECK_THROWS_WITH_AS(compute({4}, [&](Expr i) { return X(cast(f32, i), 0); }, "fi"),
                         doctest::Contains("index 0 of tensor 'X' must be an integer"), weft::Error);
}

TEST_CASE("shapes that are zero or negative name the dimension") {
    CHECK_THROWS_AS(compute({4, 0}, [&](Expr i, Expr j) { return cast(f32, i + j); }, "empty"), weft::Error);
    CHECK_THROWS_AS(compute({-3}, [&](Expr i) { return cast(f32, i); }, "neg"), weft::Error);
}

TEST_CASE("an output missing from the argument list names the output") {
    Tensor A = placeholder({4}, f32, "A");
    Tensor B = compute({4}, [&](Expr i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule(B);
    CHECK_THROWS_WITH_AS(build(s, {A}), doctest::Contains("output 'B' is not in the argument list"), weft::Error);
    CHECK_THROWS_WITH_AS(lower(s, {A}), doctest::Contains("output 'B'"), weft::Error);
}

TEST_CASE("bug: an output missing from the arguments went unnoticed when another argument had its name") {
    // Both stages are named "compute" (the default). The output check compared names, so
    // passing the intermediate instead of the output got past it and failed later with a
    // message about a tensor "used by the computation".
    Tensor A = placeholder({4}, f32, "A");
    Tensor T = compute({4}, [&](Expr i) { return A(i) + 1.0f; });
    Tensor B = compute({4}, [&](Expr i) { return T(i) * 2.0f; });
    Schedule s = create_schedule(B);
    // The intermediate passed in the output's place is now named as such.
    CHECK_THROWS_WITH_AS(build(s, {A, T}), doctest::Contains("argument 'compute' is an intermediate stage"),
                         weft::Error);
}

TEST_CASE("a tensor read by the computation but not passed names the tensor") {
    Tensor A = placeholder({4}, f32, "A");
    Tensor W = placeholder({4}, f32, "W");
    Tensor B = compute({4}, [&](Expr i) { return A(i) * W(i); }, "B");
    Schedule s = create_schedule(B);
    CHECK_THROWS_WITH_AS(build(s, {A, B}), doctest::Contains("tensor 'W' is used by the computation"), weft::Error);
}

TEST_CASE("a scalar Var used by the computation but not passed names the variable") {
    Tensor A = placeholder({4}, f32, "A");
    Var alpha("alpha", f32);
    Tensor B = compute({4}, [&](Expr i) { return A(i) * alpha; }, "B");
    Schedule s = create_schedule(B);
    CHECK_THROWS_WITH_AS(build(s, {A, B}), doctest::Contains("'alpha' is used by the computation but is not an argument"),
                         weft::Error);
}

TEST_CASE("a schedule of a placeholder names it") {
    Tensor A = placeholder({4}, f32, "A");
    CHECK_THROWS_WITH_AS(create_schedule(A), doctest::Contains("output 'A' is a placeholder"), weft::Error);
}

TEST_CASE("a compute whose expression is deeper than the limit is refused before anything recurses over it") {
    Tensor X = placeholder({8}, f32, "X");
    auto deep = [&](int levels) {
        return compute({8}, [&](Expr i) {
            Expr e = X(i);
            for (int k = 0; k < levels; ++k) e = e + 1.0f;
            return e;
        }, "deep");
    };
    CHECK_NOTHROW(deep(1000));
    // 100,000 levels overflowed the stack in lowering's recursive passes before.
    CHECK_THROWS_WITH_AS(deep(100000), doctest::Contains("compute 'deep': its expression is 4096 or more levels deep"),
                         weft::Error);
}
