// Identical fused groups compile once: a group's kernel is named by its operators and its
// arguments by position (not by the graph's node names), so groups of the same operators,
// shapes and schedule lower to the same function, which the kernel cache builds once, within
// a graph and across graphs.
#include <doctest/doctest.h>

#include <cmath>

#include "weft/weft.hpp"

using namespace weft;

namespace {

// Three dense + relu blocks of one shape (other weights each), then a different one.
graph::Graph repeated_blocks(const std::string& prefix, uint64_t seed) {
    graph::Graph g;
    graph::Value x = g.input(prefix + "x", {4, 32});
    for (int b = 0; b < 3; ++b) {
        auto w = Buffer<float>::random({32, 32}, -0.2f, 0.2f, seed + uint64_t(b));
        x = g.relu(g.dense(x, g.constant(prefix + "w" + std::to_string(b), w)), prefix + "block" + std::to_string(b));
    }
    auto w = Buffer<float>::random({8, 32}, -0.2f, 0.2f, seed + 9);
    g.output(g.sigmoid(g.dense(x, g.constant(prefix + "head", w))), prefix + "y");
    return g;
}

std::vector<float> reference(const graph::Graph& g, const Buffer<float>& x) {
    graph::Module m = graph::build(g, Target::host(), {.fuse = false});
    m.set_input(0, x);
    m.run();
    Buffer<float> y(m.get_output(0));
    return std::vector<float>(y.data(), y.data() + y.size());
}

}  // namespace

TEST_CASE("identical fused groups share one compiled kernel, within a graph and across graphs") {
    graph::Graph g = repeated_blocks("a_", 10);
    graph::Module m = graph::build(g);
    REQUIRE(m.kernels().size() == 4);
    const auto& kernels = m.compiled_kernels();
    CHECK(kernels[0].module() == kernels[1].module());  // the blocks: one kernel
    CHECK(kernels[1].module() == kernels[2].module());
    CHECK(kernels[2].module() != kernels[3].module());  // the head is another
    CHECK(m.kernels()[1].name == m.kernels()[2].name);
    // Each kernel still computes its own block: the weights are arguments.
    auto x = Buffer<float>::random({4, 32}, -1, 1, 3);
    m.set_input(0, x);
    m.run();
    Buffer<float> y(m.get_output(0));
    const std::vector<float> want = reference(g, x);
    for (size_t i = 0; i < want.size(); ++i) CHECK(y.data()[i] == doctest::Approx(want[i]).epsilon(1e-5));
    // Another graph of the same blocks (other names, other weights) compiles nothing new.
    const uint64_t misses = KernelCache::global().misses();
    graph::Module again = graph::build(repeated_blocks("b_", 20));
    CHECK(KernelCache::global().misses() == misses);
    CHECK(again.compiled_kernels()[0].module() == kernels[0].module());
}

namespace {

int scaled_difference_computes = 0;  // how often the operator's computation was made

// y = a * factor - b, counting its computations.
void register_scaled_difference() {
    graph::register_op({.name = "test_scaled_difference", .pattern = graph::OpPattern::ElemWise, .min_inputs = 2,
                        .max_inputs = 2,
                        .infer = [](const std::vector<graph::TensorType>& in, const graph::Attrs&) { return in[0]; },
                        .compute = [](const std::vector<Tensor>& in, const graph::Attrs& attrs) {
                            ++scaled_difference_computes;
                            const float factor = float(attrs.get_float("factor"));
                            const Tensor &a = in[0], &b = in[1];
                            return te::compute(
                                a.shape(), [&](const std::vector<Expr>& i) { return a.at(i) * factor - b.at(i); },
                                "scaled_difference");
                        }});
}

}  // namespace

TEST_CASE("identical groups are scheduled and lowered once, each reading its own nodes") {
    register_scaled_difference();
    graph::Graph g;
    graph::Value p = g.input("p", {8, 16}), q = g.input("q", {8, 16}), r = g.input("r", {4, 16});
    auto node = [&](graph::Value a, graph::Value b, double factor, const std::string& name) {
        return g.output(g.add_node("test_scaled_difference", {a, b}, {{"factor", factor}}, name), name);
    };
    // The same signature three times, the inputs in other orders: one computation.
    node(p, q, 2.0, "pq");
    node(q, p, 2.0, "qp");
    node(q, q, 2.0, "qq");  // one input read twice: another signature
    node(p, p, 2.0, "pp");
    // Factors that print alike ("100000") but are not: two kernels.
    node(p, q, 100000.4, "pq_large");
    node(p, q, 100000.0, "pq_round");
    node(r, r, 2.0, "rr");  // another shape
    scaled_difference_computes = 0;
    graph::Module m = graph::build(g);
    CHECK(scaled_difference_computes == 5);  // {pq, qp}, {qq, pp}, large, round, rr
    auto bp = Buffer<float>::random({8, 16}, -1, 1, 5), bq = Buffer<float>::random({8, 16}, -1, 1, 6),
         br = Buffer<float>::random({4, 16}, -1, 1, 7);
    m.set_input("p", bp);
    m.set_input("q", bq);
    m.set_input("r", br);
    m.run();
    struct Want {
        const char* name;
        const Buffer<float>&a, &b;
        float factor;
    };
    for (const Want& w : {Want{"pq", bp, bq, 2.f}, Want{"qp", bq, bp, 2.f}, Want{"qq", bq, bq, 2.f},
                          Want{"pp", bp, bp, 2.f}, Want{"pq_large", bp, bq, 100000.4f},
                          Want{"pq_round", bp, bq, 100000.f}, Want{"rr", br, br, 2.f}}) {
        INFO(w.name);
        Buffer<float> y(m.get_output(w.name));
        REQUIRE(y.size() == w.a.size());
        for (int64_t i = 0; i < y.size(); ++i) {  // (a contracted multiply-add rounds once)
            const double a = w.a.data()[i], b = w.b.data()[i], want = a * w.factor - b;
            CHECK(std::abs(y.data()[i] - want) <= 3e-7 * (std::abs(a * w.factor) + std::abs(b)));
        }
    }
}
