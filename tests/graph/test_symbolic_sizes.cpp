// Symbolic image sizes and lengths under strided windows: a strided convolution's output
// extent, (len - 3) / stride + 1, is no sum of products of len but a floor term of it, which
// build() fits from the operators' type inference; the blocked convolutions, pools and layout
// transforms compute over symbolic extents, so such graphs compile once. Kernels that cannot
// (NCHW convolutions without the layout pass, paddings that change with the size) are
// compiled per size (KernelInfo::per_size). Each size is checked against a module built for
// that size and, through run_debug, against every node compiled alone.
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

// x [1, channels, 1, len] with len symbolic in [min, max], a convolution of stride `stride`:
// its output length, (len - 3) / stride + 1, is no sum of products of len.
graph::Graph conv_over_length(int64_t max, int64_t channels, int64_t stride, uint64_t seed, int64_t min = 4) {
    graph::Graph g;
    graph::Value x = g.input("x", {1, channels, 1, max});
    g.set_symbolic(x, 3, {"len", max, min});
    g.output(g.conv2d(x, g.constant("w", random_buffer({channels, channels, 1, 3}, seed)), {.stride = stride}), "y");
    return g;
}

// The NCHW convolutions (no layout pass) need constant extents: compiled per size.
graph::Module build_per_size(const graph::Graph& g) { return graph::build(g, Target::host(), graph_check::nchw()); }

using graph_check::symbolic_cnn;

const std::vector<std::pair<int64_t, int64_t>> kImageSizes = {{32, 40}, {17, 23}, {8, 8}, {32, 40}, {25, 9}, {31, 39}};

}  // namespace

TEST_CASE("a strided convolution over a symbolic length compiles once and matches fixed builds") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 2, 1, 40});
    g.set_symbolic(x, 3, {"len", 40, 4});
    g.output(g.relu(g.conv2d(x, g.constant("w", random_buffer({2, 2, 1, 3}, 3)), {.stride = 3})), "y");
    graph::Module m = graph::build(g);
    CHECK(per_size_kernels(m) == 0);
    for (int64_t len : {40, 7, 22, 7, 4, 40, 39, 38}) {
        CAPTURE(len);
        graph_check::check_symbolic_at(m, g, {{"len", len}}, {1, 2, 1, len}, uint64_t(len), 1e-4);
        CHECK(m.get_output(0).shape() == std::vector<int64_t>{1, 2, 1, (len - 3) / 3 + 1});
    }
}

TEST_CASE("a CNN over a symbolic image height and width compiles once: strided convs, pooling, a global pool") {
    const graph::Graph g = symbolic_cnn();
    graph::Module m = graph::build(g);
    CHECK(per_size_kernels(m) == 0);
    for (auto [h, w] : kImageSizes) {
        CAPTURE(h);
        CAPTURE(w);
        graph_check::check_symbolic_at(m, g, {{"height", h}, {"width", w}}, {1, 3, h, w}, uint64_t(h * 100 + w), 1e-4);
        CHECK(m.get_output(0).shape() == std::vector<int64_t>{1, 10});
    }
}

TEST_CASE("a symbolic batch beside a symbolic image size") {
    const graph::Graph g = symbolic_cnn(2);
    graph::Module m = graph::build(g);
    CHECK(per_size_kernels(m) == 0);
    for (auto [n, h, w] : {std::tuple<int64_t, int64_t, int64_t>{2, 25, 31}, {1, 32, 40}, {2, 32, 40}, {1, 17, 9}}) {
        CAPTURE(n);
        CAPTURE(h);
        CAPTURE(w);
        graph_check::check_symbolic_at(m, g, {{"batch", n}, {"height", h}, {"width", w}}, {n, 3, h, w},
                                       uint64_t(n + h * 100 + w), 1e-4);
        CHECK(m.get_output(0).shape() == std::vector<int64_t>{n, 10});
    }
}

TEST_CASE("the same CNN without the layout pass compiles its convolutions per size and agrees") {
    const graph::Graph g = symbolic_cnn();
    graph::Module m = build_per_size(g);
    CHECK(per_size_kernels(m) >= 3);
    CHECK(per_size_kernels(m) < int(m.kernels().size()));  // the head runs once over every size
    for (auto [h, w] : kImageSizes) {
        CAPTURE(h);
        CAPTURE(w);
        graph_check::check_symbolic_at(m, g, {{"height", h}, {"width", w}}, {1, 3, h, w}, uint64_t(h * 100 + w), 1e-4);
    }
}

TEST_CASE("a module over a symbolic image size is saved and loaded with its floor extents, and runs anywhere") {
    const graph::Graph g = symbolic_cnn();
    graph::Module built = graph::build(g);
    graph::Module m = graph::load_module_from_memory(graph::save_to_memory(built));
    CHECK(per_size_kernels(m) == 0);
    for (auto [h, w] : {std::pair<int64_t, int64_t>{19, 33}, {32, 40}, {9, 12}}) {
        CAPTURE(h);
        graph_check::check_symbolic_at(m, g, {{"height", h}, {"width", w}}, {1, 3, h, w}, uint64_t(h + w), 1e-4);
    }
}

TEST_CASE("a size below the one a strided window fits in is refused at run time, naming the node") {
    // len in [1, 24]: a 3-tap window needs 3 elements; at 2 there is no output.
    const graph::Graph g = conv_over_length(24, 2, 2, 5, 1);
    graph::Module m = graph::build(g);
    CHECK(per_size_kernels(m) == 0);
    m.set_input(0, random_buffer({1, 2, 1, 2}, 1));
    CHECK_THROWS_WITH_AS(m.run(), doctest::Contains("cannot run at these sizes"), Error);
    graph_check::check_symbolic_at(m, g, {{"len", 3}}, {1, 2, 1, 3}, 3, 1e-4);  // and runs again above it
}

TEST_CASE("a module that compiles per size keeps the last sizes' kernels and stays right past them") {
    const graph::Graph g = conv_over_length(48, 4, 2, 7);
    graph::Module m = build_per_size(g);
    CHECK(per_size_kernels(m) >= 1);
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
    graph::Module m = build_per_size(conv_over_length(40, 2, 3, 3));
    CHECK_THROWS_WITH_AS(graph::save_to_memory(m), doctest::Contains("compiles some kernels per size of its symbols 'len'"),
                         Error);
}

TEST_CASE("prepare_size compiles a size's kernels ahead, so the first run there compiles nothing") {
    const graph::Graph g = conv_over_length(64, 3, 2, 11);
    graph::Module m = build_per_size(g);
    KernelCache& cache = KernelCache::global();
    const uint64_t before = cache.misses();
    m.prepare_size({{"len", 37}});  // a length no test here met: its kernels are new
    CHECK(cache.misses() > before);
    const uint64_t prepared = cache.misses();
    m.set_input(0, random_buffer({1, 3, 1, 37}, 37));
    m.run();
    CHECK(cache.misses() == prepared);
    m.prepare_size({{"len", 64}});  // the max: the build's own kernels, nothing to do
    CHECK(cache.misses() == prepared);
    graph_check::check_symbolic_at(m, g, {{"len", 37}}, {1, 3, 1, 37}, 37, 1e-4);
    CHECK_THROWS_WITH_AS(m.prepare_size({{"len", 3}}), doctest::Contains("outside its bounds [4, 64]"), Error);
    CHECK_THROWS_WITH_AS(m.prepare_size({}), doctest::Contains("no value for symbol 'len'"), Error);
    CHECK_THROWS_WITH_AS(m.prepare_size({{"len", 9}, {"width", 3}}), doctest::Contains("no symbol 'width'"), Error);
}
