// Looking inside a compiled graph (graph/inspect.hpp): the profiler's table, the debug run
// naming a kernel that differs from its nodes run one by one, and the Graphviz output.
#include <doctest/doctest.h>

#include <atomic>

#include "graph_check.hpp"

using namespace weft;

namespace {

int count(const std::string& s, const std::string& what) {
    int n = 0;
    for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
}

// A residual block: conv3x3-bias-relu, conv3x3, + a strided 1x1 conv shortcut, relu.
graph::Graph residual_block() {
    graph::Graph g;
    uint64_t seed = 20;
    auto weight = [&](std::vector<int64_t> shape) {
        return g.constant("", Buffer<float>::random(std::move(shape), -0.3f, 0.3f, seed++));
    };
    graph::Value x = g.input("x", {1, 8, 10, 10});
    graph::Value y = g.relu(g.conv2d(x, weight({16, 8, 3, 3}), weight({16}), {.stride = 2, .pad = 1}, "conv1"));
    y = g.conv2d(y, weight({16, 16, 3, 3}), {.pad = 1}, "conv2");
    graph::Value shortcut = g.conv2d(x, weight({16, 8, 1, 1}), {.stride = 2}, "shortcut");
    g.output(g.relu(g.add(y, shortcut)), "y");
    return g;
}

// "test_drift": x + c, where c is the number of times the operator was compiled before. A
// fused kernel built first and its node compiled again for the debug run's reference then
// disagree by 1: a stand-in for a fusion bug.
std::atomic<int> drift_compiles{0};

void register_drift_op() {
    graph::register_op({.name = "test_drift", .pattern = graph::OpPattern::ElemWise,
                        .infer = [](const std::vector<graph::TensorType>& in, const graph::Attrs&) { return in[0]; },
                        .compute = [](const std::vector<Tensor>& in, const graph::Attrs&) {
                            float c = float(drift_compiles++);
                            const Tensor& x = in[0];
                            return te::compute(
                                x.shape(), [&](const std::vector<Expr>& i) { return x.at(i) + c; }, "test_drift");
                        }});
}

}  // namespace

TEST_CASE("profile times every kernel and prints a table slowest first") {
    graph::Graph g = residual_block();
    graph::Module m = graph::build(g, Target::host(), graph_check::nchw());
    m.set_input("x", Buffer<float>::random({1, 8, 10, 10}, -1.f, 1.f, 1));
    graph::ProfileReport p = m.profile(3);
    REQUIRE(p.kernels.size() == m.kernels().size());
    CHECK(p.repeats == 3);
    double shares = 0, sum = 0;
    for (size_t k = 0; k < p.kernels.size(); ++k) {
        const graph::KernelTiming& t = p.kernels[k];
        CHECK(t.index == int(k));
        CHECK(t.name == m.kernels()[k].name);
        CHECK(t.nodes == m.kernels()[k].nodes);
        CHECK(t.mean_ms > 0);
        CHECK(t.min_ms <= t.mean_ms);
        shares += t.share;
        sum += t.mean_ms;
    }
    CHECK(shares == doctest::Approx(1.0));
    CHECK(p.kernels_ms == doctest::Approx(sum));
    CHECK(p.run_ms > 0);
    std::string table = p.str();
    MESSAGE(table);
    CHECK(table.find("mean ms") != std::string::npos);
    CHECK(table.find("share") != std::string::npos);
    for (auto& k : m.kernels()) CHECK(table.find(k.name) != std::string::npos);
    // Slowest first: the first row's kernel has the largest mean.
    size_t first_row = table.find('\n') + 1;
    const graph::KernelTiming* slowest = &p.kernels[0];
    for (auto& t : p.kernels)
        if (t.mean_ms > slowest->mean_ms) slowest = &t;
    CHECK(std::stoi(table.substr(first_row, 4)) == slowest->index);
    // The outputs are those of a normal run.
    auto want = graph_check::run_graph(m, {{"x", Buffer<float>::random({1, 8, 10, 10}, -1.f, 1.f, 1)}});
    m.profile(1);
    const float* got = static_cast<const float*>(m.get_output(0).data());
    CHECK(graph_check::max_error(std::vector<float>(got, got + want[0].size()), want[0]) == 0);
    CHECK_THROWS_WITH_AS(m.profile(0), doctest::Contains("repeats must be positive"), Error);
}

TEST_CASE("run_debug passes a correct module and leaves its outputs as run would") {
    graph::Graph g = residual_block();
    auto inputs = graph_check::random_inputs(g, 2);
    graph::Module m = graph::build(g);  // the default passes, the layout pass included
    auto want = graph_check::run_graph(m, inputs);
    graph::DebugReport r = m.run_debug();
    CHECK(r.ok);
    CHECK(r.kernels_checked == int(m.kernels().size()));
    CHECK(r.kernel == -1);
    CHECK(r.str() == "ok: " + std::to_string(m.kernels().size()) + " kernels match their nodes run one by one");
    const float* got = static_cast<const float*>(m.get_output(0).data());
    CHECK(graph_check::max_error(std::vector<float>(got, got + want[0].size()), want[0]) == 0);
}

TEST_CASE("run_debug names the first fused kernel that differs from its nodes run one by one") {
    register_drift_op();
    graph::Graph g;
    graph::Value x = g.input("x", {1, 4, 6, 6});
    graph::Value w1 = g.constant("w1", Buffer<float>::random({4, 4, 3, 3}, -0.5f, 0.5f, 1));
    graph::Value w2 = g.constant("w2", Buffer<float>::random({4, 4, 3, 3}, -0.5f, 0.5f, 2));
    graph::Value y = g.relu(g.conv2d(x, w1, {.pad = 1}, "conv1"), "relu1");
    y = g.add_node("test_drift", {g.conv2d(y, w2, {.pad = 1}, "conv2")}, {}, "drift");
    g.output(g.relu(y, "relu2"), "y");
    drift_compiles = 0;
    graph::Module m = graph::build(g, Target::host(), graph_check::nchw());
    REQUIRE(m.kernels().size() == 2);
    REQUIRE(m.kernels()[1].name == "conv2d_test_drift_relu");
    m.set_input("x", Buffer<float>::random({1, 4, 6, 6}, -1.f, 1.f, 3));

    graph::DebugReport r = m.run_debug({.throw_on_mismatch = false});
    CHECK(!r.ok);
    CHECK(r.kernel == 1);
    CHECK(r.kernels_checked == 2);
    CHECK(r.kernel_name == "conv2d_test_drift_relu");
    CHECK(r.node_names == std::vector<std::string>{"conv2", "drift", "relu2"});
    CHECK(r.elements == 4 * 6 * 6);
    CHECK(r.mismatches > 0);
    CHECK(r.position.size() == 4);
    CHECK(r.max_abs_error == doctest::Approx(std::abs(r.fused - r.reference)));
    CHECK(r.max_abs_error > 0.5);
    MESSAGE(r.str());
    CHECK(r.str().find("kernel 1 'conv2d_test_drift_relu' (nodes conv2, drift, relu2) differs") == 0);

    CHECK_THROWS_WITH_AS(m.run_debug(), doctest::Contains("run_debug: kernel 1 'conv2d_test_drift_relu'"), Error);
    // A tolerance wider than the drift passes.
    CHECK(m.run_debug({.rtol = 0, .atol = 1e6}).ok);
}

TEST_CASE("to_dot draws every fused group as a cluster and constants small and grey") {
    graph::Graph g = residual_block();
    graph::Module m = graph::build(g, Target::host(), graph_check::nchw());
    std::string dot = m.to_dot();
    CHECK(dot.rfind("digraph", 0) == 0);
    CHECK(count(dot, "{") == count(dot, "}"));
    CHECK(count(dot, "subgraph cluster_") == int(m.kernels().size()));
    for (size_t k = 0; k < m.kernels().size(); ++k)
        CHECK(dot.find("label=\"kernel " + std::to_string(k) + ": " + m.kernels()[k].name + "\"") != std::string::npos);
    // Operator nodes: op and shape; the output's node and its label.
    CHECK(dot.find("label=\"conv2d\\n[1, 16, 5, 5]\"") != std::string::npos);
    CHECK(dot.find("label=\"x\\n[1, 8, 10, 10]\", shape=ellipse") != std::string::npos);
    CHECK(dot.find("label=\"y\", shape=plaintext") != std::string::npos);
    int constants = 0;
    for (auto& n : m.graph().nodes()) constants += n.is_constant();
    CHECK(constants > 0);
    CHECK(count(dot, "fontsize=8, height=0.2") == constants);
    CHECK(count(dot, "penwidth=2") == 3);  // the three convolutions, each its kernel's master
    // Without constants.
    std::string bare = m.to_dot({.constants = false, .title = "a \"block\""});
    CHECK(count(bare, "fontsize=8") == 0);
    CHECK(bare.find("label=\"a \\\"block\\\"\"") != std::string::npos);
    // A graph without groups: no clusters.
    CHECK(count(graph::to_dot(g, {}), "subgraph") == 0);
}
