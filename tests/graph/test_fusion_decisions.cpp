// Fusion decisions on small graphs: which nodes graph::fuse_ops puts into one kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "weft/weft.hpp"

using namespace weft;

namespace {

struct Net {
    graph::Graph g;
    uint64_t seed = 1;
    graph::Value weight(std::vector<int64_t> shape) {
        return g.constant("", Buffer<float>::random(std::move(shape), -1.f, 1.f, seed++));
    }
    // The groups as node names in the order added, the groups sorted: {"conv, bias, relu",
    // "softmax"}.
    std::vector<std::string> groups() {
        std::vector<std::string> r;
        for (const graph::FusedGroup& group : graph::fuse_ops(g, g.check())) {
            std::vector<int> nodes = group.nodes;
            std::sort(nodes.begin(), nodes.end());  // as added (any topological order is right)
            std::string s;
            for (int id : nodes) s += (s.empty() ? "" : ", ") + g.node(id).name;
            r.push_back(s);
        }
        std::sort(r.begin(), r.end());  // the order of independent groups is not fixed
        return r;
    }
};

using Groups = std::vector<std::string>;

}  // namespace

TEST_CASE("conv2d + bias_add + relu is one group with the conv2d as master") {
    Net n;
    graph::Value x = n.g.input("x", {1, 4, 8, 8});
    graph::Value y = n.g.relu(n.g.bias_add(n.g.conv2d(x, n.weight({8, 4, 3, 3}), {.pad = 1}, "conv"), n.weight({8}), 1, "bias"), "relu");
    n.g.output(y);
    CHECK(n.groups() == Groups{"conv, bias, relu"});
    auto groups = graph::fuse_ops(n.g, n.g.check());
    CHECK(groups[0].master == n.g.find("conv")->id);
    CHECK(groups[0].pattern == graph::OpPattern::OutEWiseFusable);
    CHECK(graph::group_name(n.g, groups[0]) == "conv2d_bias_add_relu");
}

TEST_CASE("a conv2d read by two outputs is fused into neither") {
    Net n;
    graph::Value x = n.g.input("x", {1, 4, 8, 8});
    graph::Value c = n.g.conv2d(x, n.weight({8, 4, 3, 3}), {.pad = 1}, "conv");
    n.g.output(n.g.relu(c, "relu"));
    n.g.output(n.g.sigmoid(c, "sigmoid"));
    CHECK(n.groups() == Groups{"conv", "relu", "sigmoid"});
}

TEST_CASE("a conv2d that is itself an output keeps its own kernel") {
    Net n;
    graph::Value x = n.g.input("x", {1, 4, 8, 8});
    graph::Value c = n.g.conv2d(x, n.weight({8, 4, 3, 3}), {.pad = 1}, "conv");
    n.g.output(c);
    n.g.output(n.g.relu(c, "relu"));
    CHECK(n.groups() == Groups{"conv", "relu"});
}

TEST_CASE("a conv2d whose two element-wise branches meet again fuses with both") {
    Net n;
    graph::Value x = n.g.input("x", {1, 4, 8, 8});
    graph::Value c = n.g.conv2d(x, n.weight({8, 4, 3, 3}), {.pad = 1}, "conv");
    graph::Value r = n.g.relu(c, "relu");
    n.g.output(n.g.add(r, n.g.sigmoid(c, "sigmoid"), "add"));
    CHECK(n.groups() == Groups{"conv, relu, sigmoid, add"});
}

TEST_CASE("two convolutions in a row stay in two kernels") {
    Net n;
    graph::Value x = n.g.input("x", {1, 4, 8, 8});
    graph::Value c1 = n.g.relu(n.g.conv2d(x, n.weight({4, 4, 3, 3}), {.pad = 1}, "conv1"), "relu1");
    n.g.output(n.g.relu(n.g.conv2d(c1, n.weight({4, 4, 3, 3}), {.pad = 1}, "conv2"), "relu2"));
    CHECK(n.groups() == Groups{"conv1, relu1", "conv2, relu2"});
}

TEST_CASE("an opaque softmax stays alone") {
    Net n;
    graph::Value x = n.g.input("x", {4, 16});
    graph::Value e = n.g.exp(x, "exp");
    graph::Value s = n.g.softmax(e, -1, "softmax");
    n.g.output(n.g.relu(s, "relu"));
    CHECK(n.groups() == Groups{"exp", "relu", "softmax"});
    // The same for layer_norm after a dense.
    Net m;
    graph::Value y = m.g.input("y", {4, 16});
    graph::Value d = m.g.dense(y, m.weight({16, 16}), "dense");
    m.g.output(m.g.layer_norm(d, m.weight({16}), m.weight({16}), 1e-5, "ln"));
    CHECK(m.groups() == Groups{"dense", "ln"});
}

TEST_CASE("element-wise ops before a reduction fuse into it and the reduction is the master") {
    Net n;
    graph::Value x = n.g.input("x", {4, 16});
    graph::Value e = n.g.mul(n.g.exp(x, "exp"), n.weight({16}), "scale");
    graph::Value s = n.g.sum(e, {1}, false, "sum");
    n.g.output(s);
    CHECK(n.groups() == Groups{"exp, scale, sum"});
    auto groups = graph::fuse_ops(n.g, n.g.check());
    CHECK(groups[0].master == s.id);
    // A reduction takes nothing after it; a second reduction is a second kernel.
    Net m;
    graph::Value y = m.g.input("y", {4, 16});
    m.g.output(m.g.relu(m.g.max(m.g.sum(y, {1}, true, "sum"), {0}, false, "max"), "relu"));
    CHECK(m.groups() == Groups{"max", "relu", "sum"});
}

TEST_CASE("a residual add joins the convolution whose kernel reads the shortcut") {
    Net n;
    graph::Value x = n.g.input("x", {1, 4, 8, 8});
    graph::Value c = n.g.conv2d(x, n.weight({4, 4, 3, 3}), {.pad = 1}, "conv");
    n.g.output(n.g.relu(n.g.add(c, x, "add"), "relu"));
    CHECK(n.groups() == Groups{"conv, add, relu"});
}

TEST_CASE("without fusion every operator is a group of its own") {
    Net n;
    graph::Value x = n.g.input("x", {1, 4, 8, 8});
    n.g.output(n.g.relu(n.g.conv2d(x, n.weight({8, 4, 3, 3}), {}, "conv"), "relu"));
    auto groups = graph::fuse_ops(n.g, n.g.check(), false);
    REQUIRE(groups.size() == 2);
    CHECK(groups[0].master == n.g.find("conv")->id);
    CHECK(groups[1].master == -1);
}

TEST_CASE("fusion cuts a group whose inlined expression would pass the limit: long chains and doubling trees") {
    graph::Graph g;
    graph::Value x = g.input("x", {16});
    graph::Value chain = x;
    for (int i = 0; i < 40; ++i) chain = g.add(chain, x);
    g.output(chain, "chain");
    graph::Value tree = g.relu(x);
    for (int i = 0; i < 30; ++i) tree = g.add(tree, tree);  // 2^30 uses of x once inlined
    g.output(tree, "tree");
    const std::vector<int> order = g.check();
    for (int64_t limit : {int64_t(8), graph::kMaxFusedExpression}) {
        CAPTURE(limit);
        auto groups = graph::fuse_ops(g, order, true, limit);
        for (const graph::FusedGroup& group : groups) {
            // The group's inlined size, counted the same way: each node once per path to the root.
            std::map<int, double> size;
            double root = 0;
            for (int id : group.nodes) {
                double s = 1;
                for (graph::Value v : g.node(id).inputs)
                    if (size.count(v.id)) s += size[v.id];
                size[id] = root = s;
            }
            CHECK(root <= double(limit));
        }
        // The chain fuses into groups of about `limit` nodes, the tree into short ones.
        CHECK(groups.size() >= 40 / size_t(limit));
    }
    // And the numbers are those of the unfused graph.
    graph::BuildOptions small;
    small.max_fused_expression = 8;
    auto x_in = Buffer<float>::random({16}, -1.f, 1.f, 3);
    graph::Module a = graph::build(g, Target::host(), small), b = graph::build(g, Target::host(), {.fuse = false});
    for (graph::Module* m : {&a, &b}) {
        m->set_input("x", x_in);
        m->run();
    }
    for (const char* out : {"chain", "tree"}) {
        const float *p = static_cast<const float*>(a.get_output(out).data()),
                    *q = static_cast<const float*>(b.get_output(out).data());
        for (int i = 0; i < 16; ++i) CHECK(p[i] == doctest::Approx(q[i]));
    }
}
