// A malformed graph (shape mismatch, cycle, unknown operator, missing input, bad names and
// module calls) gives a weft::Error naming the node and what is wrong; nothing crashes.
#include <doctest/doctest.h>

#include "weft/weft.hpp"

using namespace weft;
using doctest::Contains;

TEST_CASE("a shape mismatch names the node its operator and the shapes") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 3, 8, 8});
    graph::Value w = g.constant("w", Buffer<float>::random({4, 5, 3, 3}, -1.f, 1.f, 1));
    CHECK_THROWS_WITH_AS(g.conv2d(x, w, {}, "conv1"), Contains("node 'conv1' (conv2d)"), weft::Error);
    CHECK_THROWS_WITH_AS(g.conv2d(x, w, {}, "conv1"), Contains("input channels"), weft::Error);
    graph::Value a = g.input("a", {2, 3}), b = g.input("b", {4, 3});
    CHECK_THROWS_WITH_AS(g.add(a, b, "sum1"), Contains("node 'sum1' (add): shapes [2, 3] and [4, 3] do not broadcast"),
                         weft::Error);
    graph::Value c = g.input("c", {2, 4});
    CHECK_THROWS_WITH_AS(g.dense(a, c, "fc"), Contains("node 'fc' (dense): the data has 3 features"), weft::Error);
    CHECK_THROWS_WITH_AS(g.matmul(a, c, "mm"), Contains("A's columns (3) must equal B's rows (2)"), weft::Error);
}

TEST_CASE("an unknown operator and a wrong input count name the node") {
    graph::Graph g;
    graph::Value x = g.input("x", {4});
    CHECK_THROWS_WITH_AS(g.add_node("frobnicate", {x}, {}, "f1"), Contains("node 'f1' (frobnicate): unknown operator"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(g.add_node("relu", {x, x}, {}, "r1"), Contains("node 'r1' (relu): takes 1 inputs, got 2"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(g.add_node("relu", {graph::Value{7}}, {}, "r2"), Contains("node 'r2' (relu): input 0 is missing"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(g.add_node("clip", {x}, {{"min", 1.0}}, "c1"), Contains("attribute 'max' is missing"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(g.add_node("softmax", {x}, {{"axis", std::string("last")}}, "s1"),
                         Contains("attribute 'axis' must be an integer"), weft::Error);
}

TEST_CASE("a cycle made by rewiring is found by check and by build") {
    graph::Graph g;
    graph::Value x = g.input("x", {4});
    graph::Value a = g.relu(x, "a");
    graph::Value b = g.sigmoid(a, "b");
    g.output(b);
    g.set_input(a.id, 0, b);  // a reads b, b reads a
    CHECK_FALSE(g.is_ordered());
    CHECK_THROWS_WITH_AS(g.check(), Contains("is on a cycle"), weft::Error);
    CHECK_THROWS_WITH_AS(graph::build(g), Contains("is on a cycle"), weft::Error);
}

TEST_CASE("a rewired input that is not a node and names taken twice are errors") {
    graph::Graph g;
    graph::Value x = g.input("x", {4});
    graph::Value r = g.relu(x, "r");
    g.output(r);
    g.set_input(r.id, 0, graph::Value{42});
    CHECK_THROWS_WITH_AS(g.check(), Contains("node 'r' (relu): input 0 is missing"), weft::Error);
    CHECK_THROWS_WITH_AS(g.input("x", {4}), Contains("the name 'x' is taken"), weft::Error);
    CHECK_THROWS_WITH_AS(g.input("y", {4, 0}), Contains("every dimension must be positive"), weft::Error);
    CHECK_THROWS_WITH_AS(g.set_input(r.id, 3, x), Contains("has no input 3"), weft::Error);
}

TEST_CASE("module calls with a wrong name shape or dtype are errors") {
    graph::Graph g;
    graph::Value x = g.input("x", {2, 3});
    g.output(g.relu(x), "y");
    CHECK_THROWS_WITH_AS(graph::build(graph::Graph()), Contains("no outputs"), weft::Error);
    graph::Module m = graph::build(g);
    CHECK_THROWS_WITH_AS(m.set_input("z", Buffer<float>({2, 3})), Contains("no input named 'z' (inputs: x)"), weft::Error);
    CHECK_THROWS_WITH_AS(m.set_input("x", Buffer<float>({3, 2})), Contains("expected float32[2, 3], got float32[3, 2]"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(m.set_input("x", Buffer<int32_t>({2, 3})), Contains("got int32[2, 3]"), weft::Error);
    CHECK_THROWS_WITH_AS(m.get_output(1), Contains("output index 1 is out of range"), weft::Error);
    CHECK_THROWS_WITH_AS(graph::Module().run(), Contains("this module is empty"), weft::Error);
}

TEST_CASE("a value of another graph is refused wherever it is passed, not read as a node of this one") {
    graph::Graph a, b;
    graph::Value ax = a.input("x", {4});
    graph::Value ay = a.relu(ax, "ay");
    graph::Value bx = b.input("x", {4});
    b.relu(bx, "by");  // b has a node with ay's id too
    CHECK_THROWS_WITH_AS(b.relu(ay), Contains("belongs to another graph"), weft::Error);
    CHECK_THROWS_WITH_AS(b.add(bx, ay), Contains("value %1 belongs to another graph"), weft::Error);
    CHECK_THROWS_WITH_AS(b.output(ay, "y"), Contains("belongs to another graph"), weft::Error);
    CHECK_THROWS_WITH_AS(b.node(ay), Contains("belongs to another graph"), weft::Error);
    CHECK_THROWS_WITH_AS(b.set_input(1, 0, ax), Contains("belongs to another graph"), weft::Error);
    // A copy takes the values of its original made before the copy; its own new ones are its own.
    graph::Graph c = a;
    graph::Value cz = c.sigmoid(ay, "cz");
    CHECK(c.type(cz).shape == std::vector<int64_t>{4});
    CHECK_THROWS_WITH_AS(a.relu(cz), Contains("belongs to another graph"), weft::Error);
    graph::Value az = a.tanh(ax, "az");  // made after the copy: c has no such node
    CHECK_THROWS_WITH_AS(c.relu(az), Contains("belongs to another graph"), weft::Error);
}

TEST_CASE("two outputs of the same name are refused") {
    graph::Graph g;
    graph::Value x = g.input("x", {4});
    g.output(g.relu(x), "y");
    CHECK_THROWS_WITH_AS(g.output(g.sigmoid(x), "y"), Contains("two outputs named 'y'"), weft::Error);
    graph::Value r = g.relu(x, "r");
    g.output(r);  // named after its node
    CHECK_THROWS_WITH_AS(g.output(r), Contains("two outputs named 'r'"), weft::Error);
    g.output(r, "r_again");  // the same value under another name is fine
    CHECK(g.outputs().size() == 3);
}

TEST_CASE("every node's type is checked against the graph's limits, which the user can change") {
    graph::Graph g;
    CHECK_THROWS_WITH_AS(g.input("x", std::vector<int64_t>(17, 1)),
                         Contains("node 'x' (input): float32[1, 1"), weft::Error);
    CHECK_THROWS_WITH_AS(g.input("x", std::vector<int64_t>(17, 1)),
                         Contains("has 17 dimensions, over the limit 16 (graph::Limits::max_rank)"), weft::Error);
    CHECK_THROWS_WITH_AS(g.input("big", {int64_t(1) << 31, int64_t(1) << 31}),
                         Contains("has 4611686018427387904 elements, over the limit 4294967296 (graph::Limits::max_tensor_elements)"),
                         weft::Error);
    // An operator whose inferred output passes a limit: names the node and the limit.
    graph::Value x = g.input("x", {1, 1, 4, 4});
    graph::Value w = g.constant("w", Buffer<float>::random({1, 1, 1, 1}, -1.f, 1.f, 1));
    const int64_t huge = int64_t(1) << 20;
    CHECK_THROWS_WITH_AS(g.conv2d(x, w, {.pad = huge}, "wide"),
                         Contains("node 'wide' (conv2d): float32[1, 1, 2097156, 2097156] has 4398063288336 elements"),
                         weft::Error);
    // Sizes whose product overflows int64 are over the limit, not negative.
    CHECK_THROWS_WITH_AS(g.input("overflow", {int64_t(1) << 40, int64_t(1) << 40}),
                         Contains("graph::Limits::max_tensor_elements"), weft::Error);
    graph::Graph h;
    h.set_limits({.max_nodes = 3});
    graph::Value a = h.input("a", {4});
    h.relu(h.relu(a));
    CHECK_THROWS_WITH_AS(h.relu(a, "fourth"), Contains("node 'fourth' (relu): the graph would have 4 nodes, over the limit 3"),
                         weft::Error);
    graph::Graph r;
    r.set_limits({.max_rank = 20});
    CHECK_NOTHROW(r.input("x", std::vector<int64_t>(17, 1)));
}
