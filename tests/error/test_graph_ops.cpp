// Misuse of the graph's data movement and type operators: each is a weft::Error, thrown when
// the node is added, whose message names the node, its operator and what does not fit.
#include <doctest/doctest.h>

#include <limits>

#include "weft/topi/topi.hpp"
#include "weft/weft.hpp"

using namespace weft;
using doctest::Contains;

TEST_CASE("graph reshape refuses sizes that do not match") {
    graph::Graph g;
    graph::Value x = g.input("x", {3, 5});
    CHECK_THROWS_WITH_AS(g.reshape(x, {4, 4}, "r"),
                         Contains("node 'r' (reshape): reshape: the new shape [4, 4] has 16 elements but the input [3, 5] has 15"),
                         Error);
    CHECK_THROWS_WITH_AS(g.reshape(x, {-1, -1}, "r"), Contains("node 'r' (reshape): reshape: the new shape [-1, -1] has more than one -1"),
                         Error);
    CHECK_THROWS_WITH_AS(g.reshape(x, {4, -1}, "r"),
                         Contains("node 'r' (reshape): reshape: cannot infer the -1 in [4, -1]: the input [3, 5] has 15 elements, not a multiple of 4"),
                         Error);
    CHECK_THROWS_WITH_AS(g.reshape(x, {-3, 5}, "r"), Contains("has extent -3 at 0 (extents must be positive, -1 or 0)"), Error);
    CHECK_THROWS_WITH_AS(g.reshape(x, {15, 0, 0}, "r"), Contains("has 0 (copy the input's extent) at 2"), Error);
    CHECK_THROWS_WITH_AS(g.flatten(x, 3, "f"),
                         Contains("node 'f' (flatten): flatten: axis 3 is out of range for a 2-dimensional tensor (use -2..2)"),
                         Error);
    // The failed nodes were not added: the names are still free.
    CHECK(g.reshape(x, {5, 3}, "r").defined());
}

TEST_CASE("graph transpose refuses a perm that is not a permutation") {
    graph::Graph g;
    graph::Value x = g.input("x", {3, 5, 7});
    CHECK_THROWS_WITH_AS(g.transpose(x, {0, 0, 1}, "t"),
                         Contains("node 't' (transpose): transpose: perm [0, 0, 1] is not a permutation of 0..2 (dimension 0 appears twice)"),
                         Error);
    CHECK_THROWS_WITH_AS(g.transpose(x, {0, 1}, "t"),
                         Contains("node 't' (transpose): transpose: perm [0, 1] has 2 entries; the input has 3 dimensions"), Error);
    CHECK_THROWS_WITH_AS(g.transpose(x, {0, 3, 1}, "t"), Contains("(3 is out of range)"), Error);
    CHECK_THROWS_WITH_AS(g.transpose(x, {-4, 0, 1}, "t"), Contains("(-4 is out of range)"), Error);
}

TEST_CASE("graph concat refuses mismatching shapes dtypes and axes") {
    graph::Graph g;
    graph::Value a = g.input("a", {3, 4}), b = g.input("b", {3, 5}), c = g.input("c", {3, 4, 1});
    graph::Value i = g.input("i", {3, 4}, i32);
    CHECK_THROWS_WITH_AS(g.concat({a, b}, 0, "cat"),
                         Contains("node 'cat' (concat): concat: input 1 has shape [3, 5] but input 0 has [3, 4]; along axis 0 they "
                                  "may differ, elsewhere they must match"),
                         Error);
    CHECK(g.type(g.concat({a, b}, -1)).shape == std::vector<int64_t>{3, 9});
    CHECK_THROWS_WITH_AS(g.concat({a, c}, 1, "cat"), Contains("node 'cat' (concat): concat: input 1 has shape [3, 4, 1]"), Error);
    CHECK_THROWS_WITH_AS(g.concat({a, i}, 0, "cat"),
                         Contains("node 'cat' (concat): input 1 (int32[3, 4]) and input 0 (float32[3, 4]) must have the same dtype"),
                         Error);
    CHECK_THROWS_WITH_AS(g.concat({a, a}, 2, "cat"), Contains("concat: axis 2 is out of range for a 2-dimensional tensor"), Error);
    CHECK_THROWS_WITH_AS(g.concat({}, 0, "cat"), Contains("node 'cat' (concat): takes 1 to"), Error);
}

TEST_CASE("graph split checks its axis and sizes") {
    graph::Graph g;
    graph::Value x = g.input("x", {3, 5});
    CHECK_THROWS_WITH_AS(g.split(x, 1, {2, 2}, "sp"),
                         Contains("split 'sp' of node 'x' (input): sizes [2, 2] add up to 4 but axis 1 of float32[3, 5] has extent 5"),
                         Error);
    CHECK_THROWS_WITH_AS(g.split(x, 2, {3}, "sp"), Contains("split 'sp' of node 'x' (input): axis 2 is out of range for 2 dimensions"),
                         Error);
    CHECK_THROWS_WITH_AS(g.split(x, 0, {3, 0}), Contains("split of node 'x' (input): sizes [3, 0] must be positive"), Error);
    CHECK_THROWS_WITH_AS(g.split(x, 0, {}), Contains("no sizes given"), Error);
    CHECK(g.split(x, -2, {1, 2}).size() == 2);
}

TEST_CASE("graph slice checks its lists steps and result") {
    graph::Graph g;
    graph::Value x = g.input("x", {4, 6});
    CHECK_THROWS_WITH_AS(g.slice(x, {0}, {2}, {1}, {0}, "s"), Contains("node 's' (slice): slice: step 0 along axis 1"), Error);
    CHECK_THROWS_WITH_AS(g.slice(x, {0, 1}, {2}, {}, {}, "s"), Contains("node 's' (slice): slice: 2 starts but 1 ends"), Error);
    CHECK_THROWS_WITH_AS(g.slice(x, {0}, {2}, {0, 1}, {}, "s"), Contains("slice: 2 axes for 1 starts"), Error);
    CHECK_THROWS_WITH_AS(g.slice(x, {0, 0}, {2, 2}, {1, -1}, {}, "s"), Contains("slice: axis -1 is listed twice"), Error);
    CHECK_THROWS_WITH_AS(g.slice(x, {0}, {2}, {2}, {}, "s"), Contains("slice: axis 2 is out of range"), Error);
    CHECK_THROWS_WITH_AS(g.slice(x, {0, 0, 0}, {1, 1, 1}, {}, {}, "s"), Contains("slice: 3 starts for a 2-dimensional input"),
                         Error);
    CHECK_THROWS_WITH_AS(g.slice(x, {3}, {1}, {0}, {}, "s"),
                         Contains("node 's' (slice): slice: along axis 0 (extent 4) start 3, end 1, step 1 select no element"),
                         Error);
    CHECK_THROWS_WITH_AS(g.slice(x, {10}, {std::numeric_limits<int64_t>::max()}, {1}, {}, "s"), Contains("select no element"),
                         Error);
}

TEST_CASE("graph pad squeeze and unsqueeze check their attributes") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 5});
    CHECK_THROWS_WITH_AS(g.pad(x, {1, 1}, 0, "p"),
                         Contains("node 'p' (pad): pad: 2 pads for a 2-dimensional input; it needs 4 (every dimension's before, "
                                  "then every one's after)"),
                         Error);
    CHECK_THROWS_WITH_AS(g.pad(x, {0, -3, 0, -2}, 0, "p"),
                         Contains("node 'p' (pad): pad: the result [1, 0] would have extent 0 in dimension 1"), Error);
    CHECK_THROWS_WITH_AS(g.squeeze(x, {1}, "sq"), Contains("node 'sq' (squeeze): squeeze: dimension 1 of [1, 5] has extent 5, not 1"),
                         Error);
    CHECK_THROWS_WITH_AS(g.squeeze(x, {0, -2}, "sq"), Contains("squeeze: axis -2 is listed twice"), Error);
    CHECK_THROWS_WITH_AS(g.squeeze(g.input("ones", {1, 1}), {}, "sq"), Contains("squeeze: the result would have no dimensions"),
                         Error);
    CHECK_THROWS_WITH_AS(g.unsqueeze(x, {}, "u"), Contains("node 'u' (unsqueeze): unsqueeze: no axes given"), Error);
    CHECK_THROWS_WITH_AS(g.unsqueeze(x, {3}, "u"),
                         Contains("node 'u' (unsqueeze): unsqueeze: axis 3 is out of range for a 3-dimensional tensor"), Error);
    CHECK_THROWS_WITH_AS(g.unsqueeze(x, {0, -4}, "u"), Contains("unsqueeze: axis -4 is listed twice"), Error);
}

TEST_CASE("graph gather needs integer indices and an axis in range") {
    graph::Graph g;
    graph::Value d = g.input("data", {4, 6});
    graph::Value fi = g.input("fi", {3}), ii = g.input("ii", {3}, i64);
    CHECK_THROWS_WITH_AS(g.gather(d, fi, 0, "gt"),
                         Contains("node 'gt' (gather): the indices must be int32 or int64, got float32[3]"), Error);
    CHECK_THROWS_WITH_AS(g.gather(d, ii, 2, "gt"),
                         Contains("node 'gt' (gather): gather: axis 2 is out of range for a 2-dimensional tensor"), Error);
    CHECK(g.type(g.gather(d, ii, -1)).shape == std::vector<int64_t>{4, 3});
    CHECK_THROWS_WITH_AS(g.add_node("gather", {d}, {}, "g1"), Contains("node 'g1' (gather): takes 2 inputs, got 1"), Error);
}

TEST_CASE("graph where needs a bool condition and broadcastable values") {
    graph::Graph g;
    graph::Value c = g.input("c", {4, 1}, DataType::bool_()), a = g.input("a", {4, 3}), b = g.input("b", {3});
    graph::Value f = g.input("f", {4, 1}), i = g.input("i", {3}, i32), e = g.input("e", {5});
    CHECK_THROWS_WITH_AS(g.where(f, a, b, "w"), Contains("node 'w' (where): the condition must be bool, got float32[4, 1]"), Error);
    CHECK_THROWS_WITH_AS(g.where(c, a, i, "w"),
                         Contains("node 'w' (where): the first value (float32) and the second value (int32) must have the same dtype"),
                         Error);
    CHECK_THROWS_WITH_AS(g.where(c, a, e, "w"), Contains("node 'w' (where): shapes [4, 3] and [5] do not broadcast"), Error);
    CHECK_THROWS_WITH_AS(g.add_node("where", {c, a}, {}, "w2"), Contains("node 'w2' (where): takes 3 inputs, got 2"), Error);
}

TEST_CASE("graph cast needs a known scalar dtype and erf a float input") {
    graph::Graph g;
    graph::Value x = g.input("x", {4}), i = g.input("i", {4}, i32);
    CHECK_THROWS_WITH_AS(g.add_node("cast", {x}, {{"dtype", std::string("floaty")}}, "c"),
                         Contains("node 'c' (cast): attribute 'dtype' is \"floaty\", not a dtype"), Error);
    CHECK_THROWS_WITH_AS(g.add_node("cast", {x}, {}, "c"), Contains("node 'c' (cast): attribute 'dtype' is missing"), Error);
    CHECK_THROWS_WITH_AS(g.cast(x, DataType::float_(32, 4), "c"), Contains("node 'c' (cast): attribute 'dtype' is \"float32x4\"; cast needs a scalar"),
                         Error);
    CHECK_THROWS_WITH_AS(g.erf(i, "e"), Contains("node 'e' (erf): the input must be a float tensor, got int32[4]"), Error);
    CHECK(g.type(g.erf(g.cast(i, f32))).dtype == f32);
}

TEST_CASE("topi transform operators name the operator and the problem") {
    Var n("n");
    Tensor S = placeholder({n, 4}, f32, "S"), X = placeholder({2, 3}, f32, "X"), F = placeholder({2}, f32, "F");
    Tensor I = placeholder({2}, i32, "I"), B = placeholder({2, 3}, DataType::bool_(), "B");
    CHECK_THROWS_WITH_AS(topi::reshape(S, {-1}), Contains("reshape: the input 'S' has a symbolic shape (dimension 0 is n)"), Error);
    CHECK_THROWS_WITH_AS(topi::gather(X, F, 0), Contains("gather: the indices 'F' have dtype float32; they must be int32 or int64"),
                         Error);
    CHECK_THROWS_WITH_AS(topi::where(X, X, X), Contains("where: the condition 'X' has dtype float32; it must be bool"), Error);
    CHECK_THROWS_WITH_AS(topi::where(B, X, I), Contains("where: 'X' has dtype float32 but 'I' has int32"), Error);
    CHECK_THROWS_WITH_AS(topi::concat({X, I}, 0), Contains("concat: input 1 'I' has dtype int32 but input 0 'X' has float32"), Error);
    CHECK_THROWS_WITH_AS(topi::concat({}, 0), Contains("concat: no inputs"), Error);
    CHECK_THROWS_WITH_AS(topi::erf(I), Contains("erf: the input 'I' has dtype int32"), Error);
    CHECK_THROWS_WITH_AS(topi::cast(X, DataType::handle()), Contains("cast: the target dtype must be a scalar number or bool"), Error);
    // transpose takes symbolic shapes.
    CHECK(topi::transpose(S).ndim() == 2);
}

TEST_CASE("graph reductions refuse an axis listed twice") {
    graph::Graph g;
    graph::Value x = g.input("x", {3, 4});
    CHECK_THROWS_WITH_AS(g.sum(x, {1, -1}, false, "s"), Contains("node 's' (sum): axis -1 is listed twice (as dimension 1)"), Error);
}

TEST_CASE("graph leaky_relu and the norms refuse the attributes their computes refuse, when added") {
    // Before: accepted here and refused by topi in graph::build, a weft::InternalError
    // (fuzz_onnx: a LeakyRelu whose alpha is NaN; tests/fuzz/regressions/onnx/).
    graph::Graph g;
    graph::Value x = g.input("x", {2, 3}), i = g.input("i", {2, 3}, i32);
    graph::Value gamma = g.input("gamma", {3}), beta = g.input("beta", {3});
    CHECK_THROWS_WITH_AS(g.leaky_relu(x, std::numeric_limits<double>::quiet_NaN(), "l"),
                         Contains("node 'l' (leaky_relu): leaky_relu: alpha must be finite, got nan"), Error);
    CHECK_THROWS_WITH_AS(g.leaky_relu(i, 0.5, "li"),
                         Contains("node 'li' (leaky_relu): leaky_relu: alpha 0.5 is not an integer but the input has "
                                  "dtype int32"),
                         Error);
    CHECK_THROWS_WITH_AS(g.layer_norm(x, gamma, beta, std::numeric_limits<double>::infinity(), "n"),
                         Contains("node 'n' (layer_norm): layer_norm: epsilon must be finite and >= 0, got inf"), Error);
    CHECK_NOTHROW(g.leaky_relu(i, -2.0));
}
