// Symbolic dimensions whose kernels are compiled per size (KernelInfo::per_size): a strided
// convolution over a symbolic length or image size has an output extent that is no sum of
// products of the symbols, so its kernels are compiled at each size the module runs at. The
// module still builds once and runs anywhere within the bounds; each size is checked against
// a module built for that size and, through run_debug, against every node compiled alone.
#include <doctest/doctest.h>

#include <cmath>

#include "graph_check.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

using graph_check::random_buffer;

int per_size_kernels(const graph::Module& m) {
    int count = 0;
    for (const graph::KernelInfo& k : m.kernels()) count += k.per_size;
    return count;
}

// x [1, channels, 1, len] with len symbolic up to `max`, a convolution of stride `stride`:
// its output length, (len - 3) / stride + 1, is no sum of products of len.
graph::Graph conv_over_length(int64_t max, int64_t channels, int64_t stride, uint64_t seed) {
    graph::Graph g;
    graph::Value x = g.input("x", {1, channels, 1, max});
    g.set_symbolic(x, 3, {"len", max, 4});
    g.output(g.conv2d(x, g.constant("w", random_buffer({channels, channels, 1, 3}, seed)), {.stride = stride}), "y");
    return g;
}

}  // namespace

TEST_CASE("a strided convolution over a symbolic length compiles per size and matches fixed builds") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 2, 1, 40});
    g.set_symbolic(x, 3, {"len", 40, 4});
    g.output(g.relu(g.conv2d(x, g.constant("w", random_buffer({2, 2, 1, 3}, 3)), {.stride = 3})), "y");
    graph::Module m = graph::build(g);
    CHECK(per_size_kernels(m) >= 1);
    for (int64_t len : {40, 7, 22, 7, 4, 40}) {
        CAPTURE(len);
        graph_check::check_symbolic_at(m, g, {{"len", len}}, {1, 2, 1, len}, uint64_t(len), 1e-4);
        CHECK(m.get_output(0).shape() == std::vector<int64_t>{1, 2, 1, (len - 3) / 3 + 1});
    }
}

TEST_CASE("a CNN over a symbolic image height and width: strided convs, pooling, a global pool and a dense head") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 3, 32, 40});
    g.set_symbolic(x, 2, {"height", 32, 8});
    g.set_symbolic(x, 3, {"width", 40, 8});
    graph::Value c = g.relu(g.conv2d(x, g.constant("w1", random_buffer({16, 3, 3, 3}, 1)),
                                     g.constant("b1", random_buffer({16}, 2)), {.stride = 2, .pad = 1}));
    c = g.max_pool2d(c, {.kernel = 3, .stride = 2, .pad = 1});
    graph::Value d = g.relu(g.conv2d(c, g.constant("w2", random_buffer({16, 1, 3, 3}, 3)), graph::Conv2dAttrs{.pad = 1, .groups = 16}));
    c = g.add(c, g.conv2d(d, g.constant("w3", random_buffer({16, 16, 1, 1}, 4))));
    graph::Value pooled = g.flatten(g.global_avg_pool2d(c), 1);
    g.output(g.softmax(g.dense(pooled, g.constant("w4", random_buffer({10, 16}, 5)))), "y");
    graph::Module m = graph::build(g);
    CHECK(per_size_kernels(m) >= 3);
    CHECK(per_size_kernels(m) < int(m.kernels().size()));  // the head runs once over every size
    const std::vector<std::pair<int64_t, int64_t>> sizes = {{32, 40}, {17, 23}, {8, 8}, {32, 40}, {17, 23}, {25, 9}};
    for (auto [h, w] : sizes) {
        CAPTURE(h);
        CAPTURE(w);
        graph_check::check_symbolic_at(m, g, {{"height", h}, {"width", w}}, {1, 3, h, w}, uint64_t(h * 100 + w), 1e-4);
        CHECK(m.get_output(0).shape() == std::vector<int64_t>{1, 10});
    }
}

TEST_CASE("a module that compiles per size keeps the last sizes' kernels and stays right past them") {
    const graph::Graph g = conv_over_length(48, 4, 2, 7);
    graph::Module m = graph::build(g);
    // More distinct sizes than a module keeps (graph::kMaxKeptSizes), then the first again.
    std::vector<int64_t> lengths;
    for (int64_t len = 5; len < 5 + 2 * int64_t(graph::kMaxKeptSizes) + 2; len += 2) lengths.push_back(len);
    lengths.push_back(5);
    lengths.push_back(lengths[lengths.size() - 2]);
    for (int64_t len : lengths) {
        CAPTURE(len);
        graph_check::check_symbolic_at(m, g, {{"len", len}}, {1, 4, 1, len}, uint64_t(len), 1e-4);
    }
}

TEST_CASE("a module that compiles per size cannot be saved as an artifact, and says why") {
    graph::Module m = graph::build(conv_over_length(40, 2, 3, 3));
    CHECK_THROWS_WITH_AS(graph::save_to_memory(m), doctest::Contains("compiles some kernels per size of its symbols 'len'"),
                         Error);
}

TEST_CASE("prepare_size compiles a size's kernels ahead, so the first run there compiles nothing") {
    const graph::Graph g = conv_over_length(64, 3, 2, 11);
    graph::Module m = graph::build(g);
    KernelCache& cache = KernelCache::global();
    const uint64_t before = cache.misses();
    m.prepare_size({{"len", 37}});  // a length no test here met: its kernels are new
    CHECK(cache.misses() > before);
    const uint64_t prepared = cache.misses();
    graph_check::check_symbolic_at(m, g, {{"len", 37}}, {1, 3, 1, 37}, 37, 1e-4);
    CHECK(cache.misses() == prepared);  // (check_symbolic_at's fixed build compiles through
                                        // the cache too: the same kernels, served)
    m.prepare_size({{"len", 64}});      // the max: the build's own kernels, nothing to do
    CHECK(cache.misses() == prepared);
    CHECK_THROWS_WITH_AS(m.prepare_size({{"len", 3}}), doctest::Contains("outside its bounds [4, 64]"), Error);
    CHECK_THROWS_WITH_AS(m.prepare_size({}), doctest::Contains("no value for symbol 'len'"), Error);
    CHECK_THROWS_WITH_AS(m.prepare_size({{"len", 9}, {"width", 3}}), doctest::Contains("no symbol 'width'"), Error);
}
