// Misuse of the topi nn operators: each is a weft::Error naming the operator and the problem.
#include <doctest/doctest.h>

#include "weft/topi/topi.hpp"
#include "weft/weft.hpp"

using namespace weft;

TEST_CASE("topi broadcasting of incompatible shapes names the op and both shapes") {
    Tensor A = placeholder({3, 4}, f32, "A"), B = placeholder({5}, f32, "B");
    CHECK_THROWS_WITH_AS(topi::add(A, B), doctest::Contains("add: shapes {3, 4} and {5} do not broadcast"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::maximum(A, B), doctest::Contains("maximum: shapes"), weft::Error);
    Var n("n"), m("m");
    CHECK_THROWS_WITH_AS(topi::broadcast_shape({n}, {m}, "mul"), doctest::Contains("symbolic dimensions"), weft::Error);
}

TEST_CASE("topi binary ops refuse mixed dtypes and undefined tensors") {
    Tensor A = placeholder({4}, f32, "A"), D = placeholder({4}, f64, "D");
    CHECK_THROWS_WITH_AS(topi::sub(A, D), doctest::Contains("sub: 'A' has dtype float32 but 'D' has float64"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::mul(Tensor(), A), doctest::Contains("mul: the first tensor is undefined"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::div(A, Expr()), doctest::Contains("div: the scalar operand is undefined"), weft::Error);
}

TEST_CASE("topi float-only ops name the op and the dtype") {
    Tensor I = placeholder({4}, i32, "I");
    CHECK_THROWS_WITH_AS(topi::sigmoid(I), doctest::Contains("sigmoid: the input 'I' has dtype int32"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::softmax(I), doctest::Contains("softmax: the input 'I' has dtype int32"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::mean(I), doctest::Contains("mean: the input 'I'"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::pow(I, 2.0f), doctest::Contains("pow: the base 'I'"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::leaky_relu(I, 0.5), doctest::Contains("leaky_relu: alpha 0.5 is not an integer"),
                         weft::Error);
}

TEST_CASE("topi clip needs lo <= hi") {
    Tensor X = placeholder({4}, f32, "X");
    CHECK_THROWS_WITH_AS(topi::clip(X, 2, 1), doctest::Contains("clip: needs lo <= hi, got lo = 2, hi = 1"),
                         weft::Error);
}

TEST_CASE("topi reductions and softmax check their axes") {
    Tensor X = placeholder({4, 5}, f32, "X");
    CHECK_THROWS_WITH_AS(topi::sum(X, {2}), doctest::Contains("sum: axis 2 is out of range for a 2-dimensional tensor"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::max(X, {1, -1}), doctest::Contains("max: axis -1 is listed twice"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::softmax(X, -3), doctest::Contains("softmax: axis -3 is out of range"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::log_softmax(X, 5), doctest::Contains("log_softmax: axis 5"), weft::Error);
}

TEST_CASE("topi layer_norm checks gamma beta and epsilon") {
    Tensor X = placeholder({4, 8}, f32, "X");
    Tensor G = placeholder({8}, f32, "gamma"), B = placeholder({8}, f32, "beta");
    Tensor G7 = placeholder({7}, f32, "g7"), B2 = placeholder({1, 8}, f32, "b2");
    Tensor G3 = placeholder({2, 4, 8}, f32, "g3"), GD = placeholder({8}, f64, "gd");
    CHECK_THROWS_WITH_AS(topi::layer_norm(X, G7, B), doctest::Contains("layer_norm: gamma's dimension 0 is 7"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::layer_norm(X, G, B2), doctest::Contains("layer_norm: beta has 2 dimensions"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::layer_norm(X, G3, B), doctest::Contains("layer_norm: gamma has 3 dimensions but x only 2"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::layer_norm(X, GD, B), doctest::Contains("must have x's dtype float32"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::layer_norm(X, G, B, -1.0), doctest::Contains("epsilon must be finite and >= 0"),
                         weft::Error);
}

TEST_CASE("topi schedules refuse tensors their operator did not make") {
    Tensor X = placeholder({4, 8}, f32, "X");
    Tensor Y = topi::relu(X);
    Schedule s = create_schedule(Y);
    CHECK_THROWS_WITH_AS(topi::schedule_softmax(s, Y),
                         doctest::Contains("schedule_softmax: 'relu' does not read a stage named 'softmax.max'"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::schedule_reduce(s, Y), doctest::Contains("schedule_reduce: 'relu' is not a reduction"),
                         weft::Error);
    Tensor S = topi::sum(X, {1});
    Schedule s2 = create_schedule(S);
    CHECK_THROWS_WITH_AS(topi::schedule_injective(s2, S), doctest::Contains("schedule_injective: 'sum' is a reduction"),
                         weft::Error);
}
