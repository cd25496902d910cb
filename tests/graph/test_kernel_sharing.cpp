// Identical fused groups compile once: a group's kernel is named by its operators and its
// arguments by position (not by the graph's node names), so groups of the same operators,
// shapes and schedule lower to the same function, which the kernel cache builds once, within
// a graph and across graphs.
#include <doctest/doctest.h>

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
