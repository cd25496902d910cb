// A symbolic module's runs while it specializes a size in the background
// (graph::BuildOptions::specialize_after_runs): the compile makes the graph at that size and
// compiles its kernels on a thread of its own while run() goes on, at that size and others,
// and the module takes the kernels between runs. Run under ThreadSanitizer by
// scripts/test.sh (its second stage runs the codegen/ folder).
#include <doctest/doctest.h>

#include <cmath>

#include "weft/weft.hpp"

using namespace weft;

namespace {

// A convolution over a symbolic length (blocked layout) and a dense head after a global pool.
graph::Graph network() {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 8, 4, 24});
    g.set_symbolic(x, 3, {"len", 24, 4});
    auto w = Buffer<float>::random({16, 8, 3, 3}, -0.2f, 0.2f, 5);
    x = g.relu(g.conv2d(x, g.constant("w", w), {.pad = 1}));
    x = g.flatten(g.global_avg_pool2d(x), 1);
    g.output(g.dense(x, g.constant("d", Buffer<float>::random({10, 16}, -0.3f, 0.3f, 6))), "y");
    return g;
}

Buffer<float> output_at(graph::Module& m, int64_t len) {
    m.set_input("x", Buffer<float>::random({1, 8, 4, len}, -1, 1, uint64_t(len)));
    m.run();
    return Buffer<float>(m.get_output("y")).copy();
}

double max_difference(const Buffer<float>& a, const Buffer<float>& b) {
    double worst = 0;
    for (int64_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::abs(a.data()[i] - b.data()[i])));
    return worst;
}

}  // namespace

TEST_CASE("runs at several sizes overlap a size's specialization and agree with it") {
    const graph::Graph g = network();
    graph::BuildOptions o;
    o.specialize_after_runs = 1;
    graph::Module m = graph::build(g, Target::host(), o);
    const Buffer<float> first = output_at(m, 17);  // starts 17's specialization
    for (int i = 0; i < 6; ++i) {
        CHECK(max_difference(output_at(m, 17), first) < 1e-5);
        output_at(m, 9 + i);  // other sizes meanwhile (their turn comes after 17's)
    }
    m.wait_specialized();
    bool has_17 = false;
    for (const auto& size : m.specialized_sizes()) has_17 |= size.at("len") == 17;
    CHECK(has_17);
    CHECK(max_difference(output_at(m, 17), first) < 1e-5);
}
