// A graph pass given a malformed graph (a cycle, a missing input, a type that no longer
// fits) is a weft::Error naming the pass and the node; a pipeline refuses unnamed passes.
#include <doctest/doctest.h>

#include "weft/weft.hpp"

using namespace weft;
using doctest::Contains;

TEST_CASE("a graph pass given a cycle names the pass and the node") {
    graph::Graph g;
    graph::Value a = g.relu(g.input("x", {4}), "a");
    graph::Value c = g.exp(g.tanh(a, "b"), "c");
    g.output(g.add(a, c, "sum"));
    g.set_input(a.id, 0, c);  // a -> b -> c -> a
    CHECK_THROWS_WITH_AS(graph::eliminate_dead_code(g), Contains("graph pass 'eliminate_dead_code': node"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(graph::fold_constants(g), Contains("is on a cycle"), weft::Error);
    CHECK_THROWS_WITH_AS(graph::default_pipeline({}).run(g), Contains("is on a cycle"), weft::Error);
}

TEST_CASE("a graph pass given a missing input or a mistyped rewire names the node") {
    graph::Graph g;
    graph::Value r = g.sigmoid(g.input("x", {4}), "r");
    g.output(g.exp(r), "y");
    g.set_input(r.id, 0, graph::Value{42});
    CHECK_THROWS_WITH_AS(graph::eliminate_common_subexpressions(g),
                         Contains("graph pass 'eliminate_common_subexpressions': node 'r' (sigmoid): input 0 is missing"),
                         weft::Error);

    graph::Graph h;
    graph::Value p = h.input("p", {4}), q = h.input("q", {3});
    graph::Value s = h.add(p, p, "s");
    h.output(h.exp(s));
    h.set_input(s.id, 1, q);  // [4] + [3]
    CHECK_THROWS_WITH_AS(graph::fold_scale_axis(h), Contains("graph pass 'fold_scale_axis': node 's' (add)"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(graph::fold_scale_axis(h), Contains("do not broadcast"), weft::Error);
}

TEST_CASE("a pass pipeline refuses a pass without a name or a function") {
    graph::PassPipeline p;
    CHECK_THROWS_WITH_AS(p.add({"", graph::eliminate_dead_code}), Contains("a pass needs a name"), weft::Error);
    CHECK_THROWS_WITH_AS(p.add({"mine", nullptr}), Contains("pass 'mine' has no function"), weft::Error);
    CHECK(p.empty());
}
