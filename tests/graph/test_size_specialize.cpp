// Kernels specialized for a size (Module::specialize, BuildOptions::specialize_after_runs):
// a module compiled once over symbolic dimensions compiles its symbolic kernels again for
// one set of the symbols' values, with constant extents. They are the kernels a build for
// that size makes (the kernel cache serves them from such a build: nothing new compiled)
// and compute its outputs bit for bit; other sizes keep running the symbolic kernels.
#include <doctest/doctest.h>

#include "graph_check.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

using graph_check::random_buffer;

using graph_check::symbolic_cnn;

// m at `values` (input of `shape`, random from `seed`) against a build for that size: the
// same bits where `exact` (kernels specialized there), else within 1e-4.
void check_at(graph::Module& m, const graph::Graph& g, const std::map<std::string, int64_t>& values,
              const std::vector<int64_t>& shape, uint64_t seed, bool exact) {
    graph_check::check_symbolic_at(m, g, values, shape, seed, exact ? 0.0 : 1e-4);
}

graph::BuildOptions specialize_after(int runs) {
    graph::BuildOptions o;
    o.specialize_after_runs = runs;
    return o;
}

}  // namespace

TEST_CASE("specialize: a size's kernels are those of a build for that size, its outputs bit for bit") {
    const graph::Graph g = symbolic_cnn();
    graph::Module m = graph::build(g, Target::host(), specialize_after(0));
    CHECK(m.specialized_sizes().empty());
    // A build for 23x37 first: the specialization then compiles nothing new.
    graph::Module fixed = graph::build(g.instantiate({{"height", 23}, {"width", 37}}));
    KernelCache& cache = KernelCache::global();
    const uint64_t before = cache.misses(), hits = cache.hits();
    m.specialize({{"height", 23}, {"width", 37}});
    CHECK(cache.misses() == before);
    CHECK(cache.hits() >= hits + 4);  // the convolutions, the pool, the global pool: the build's kernels
    REQUIRE(m.specialized_sizes().size() == 1);
    CHECK(m.specialized_sizes()[0] == std::map<std::string, int64_t>{{"height", 23}, {"width", 37}});
    check_at(m, g, {{"height", 23}, {"width", 37}}, {1, 3, 23, 37}, 1, true);
    // Other sizes, the max among them, run the kernels compiled over the symbols.
    check_at(m, g, {{"height", 17}, {"width", 9}}, {1, 3, 17, 9}, 2, false);
    check_at(m, g, {{"height", 32}, {"width", 40}}, {1, 3, 32, 40}, 3, false);
    check_at(m, g, {{"height", 23}, {"width", 37}}, {1, 3, 23, 37}, 4, true);
    // The max can be specialized too; a second request for a size compiles nothing.
    m.specialize({{"height", 32}, {"width", 40}});
    const uint64_t specialized = cache.misses();
    m.specialize({{"height", 23}, {"width", 37}});
    CHECK(cache.misses() == specialized);
    CHECK(m.specialized_sizes().size() == 2);
    check_at(m, g, {{"height", 32}, {"width", 40}}, {1, 3, 32, 40}, 5, true);
    // run_debug at a specialized size checks every kernel, the specialized ones included.
    const graph::DebugReport debug = m.run_debug();
    CHECK(debug.ok);
}

TEST_CASE("specialize_after_runs: a size run that often gets its kernels in the background") {
    const graph::Graph g = symbolic_cnn(2);
    graph::Module m = graph::build(g, Target::host(), specialize_after(2));
    const std::map<std::string, int64_t> at{{"batch", 2}, {"height", 19}, {"width", 26}};
    m.set_input(0, random_buffer({2, 3, 19, 26}, 6));
    m.run();
    m.wait_specialized();  // one run: nothing started
    CHECK(m.specialized_sizes().empty());
    KernelCache& cache = KernelCache::global();
    const uint64_t lookups = cache.hits() + cache.misses();
    m.run();  // the second starts it
    m.wait_specialized();
    CHECK(cache.hits() + cache.misses() >= lookups + 4);  // its kernels compiled (or found)
    REQUIRE(m.specialized_sizes().size() == 1);
    CHECK(m.specialized_sizes()[0] == at);
    check_at(m, g, at, {2, 3, 19, 26}, 8, true);
    // Sizes run once are not specialized; the batch is a symbol like the others.
    for (int64_t n : {1, 2}) check_at(m, g, {{"batch", n}, {"height", 30}, {"width", 9}}, {n, 3, 30, 9}, 9, false);
    m.wait_specialized();
    CHECK(m.specialized_sizes().size() == 1);
}

TEST_CASE("specialize_after_runs: 0 never specializes; more sizes than kept stay right") {
    const graph::Graph g = symbolic_cnn();
    graph::Module never = graph::build(g, Target::host(), specialize_after(0));
    for (int i = 0; i < 4; ++i) check_at(never, g, {{"height", 12}, {"width", 12}}, {1, 3, 12, 12}, 10, false);
    never.wait_specialized();
    CHECK(never.specialized_sizes().empty());

    graph::Module m = graph::build(g, Target::host(), specialize_after(0));
    const int64_t sizes = int64_t(graph::kMaxKeptSizes) + 2;
    for (int64_t w = 8; w < 8 + sizes; ++w) m.specialize({{"height", 9}, {"width", w}});
    CHECK(m.specialized_sizes().size() == graph::kMaxKeptSizes);  // the most recently used
    CHECK(m.specialized_sizes()[0] == std::map<std::string, int64_t>{{"height", 9}, {"width", 8 + sizes - 1}});
    for (int64_t w : {int64_t(8), 8 + sizes - 1, int64_t(11)}) check_at(m, g, {{"height", 9}, {"width", w}}, {1, 3, 9, w}, 11, w != 8);
}

TEST_CASE("specialize with kernels compiled per size (NCHW convolutions) and a dropped module") {
    const graph::Graph g = symbolic_cnn();
    graph::BuildOptions nchw = graph_check::nchw();
    nchw.specialize_after_runs = 1;
    graph::Module m = graph::build(g, Target::host(), nchw);
    m.specialize({{"height", 21}, {"width", 14}});
    for (auto [h, w] : {std::pair<int64_t, int64_t>{21, 14}, {13, 30}, {21, 14}}) {
        CAPTURE(h);
        graph::Module fixed = graph::build(g.instantiate({{"height", h}, {"width", w}}), Target::host(), graph_check::nchw());
        auto x = random_buffer({1, 3, h, w}, uint64_t(h * w));
        m.set_input(0, x);
        fixed.set_input(0, x);
        m.run();
        fixed.run();
        CHECK(graph_check::max_difference(m.get_output(0), fixed.get_output(0)) < 1e-4);
    }
    // A module dropped while it specializes a size in the background: the compile stops.
    {
        graph::Module dropped = graph::build(g, Target::host(), specialize_after(1));
        dropped.set_input(0, random_buffer({1, 3, 27, 31}, 12));
        dropped.run();
    }
}

TEST_CASE("specialize: errors name what is wrong") {
    graph::Module m = graph::build(symbolic_cnn());
    CHECK_THROWS_WITH_AS(m.specialize({{"height", 7}, {"width", 9}}), doctest::Contains("outside its bounds [8, 32]"),
                         Error);
    CHECK_THROWS_WITH_AS(m.specialize({{"height", 9}}), doctest::Contains("no value for symbol 'width'"), Error);
    CHECK_THROWS_WITH_AS(m.specialize({{"height", 9}, {"width", 9}, {"depth", 2}}), doctest::Contains("no symbol 'depth'"),
                         Error);
    CHECK_THROWS_WITH_AS(graph::build(symbolic_cnn(), Target::host(), specialize_after(-1)),
                         doctest::Contains("specialize_after_runs must not be negative, got -1"), Error);
    graph::Graph fixed;
    graph::Value x = fixed.input("x", {4});
    fixed.output(fixed.relu(x), "y");
    graph::Module plain = graph::build(fixed);
    CHECK_THROWS_WITH_AS(plain.specialize({}), doctest::Contains("no symbolic dimensions"), Error);
    plain.wait_specialized();  // nothing to wait for
    CHECK(plain.specialized_sizes().empty());
    graph::Module loaded = graph::load_module_from_memory(graph::save_to_memory(m));
    CHECK_THROWS_WITH_AS(loaded.specialize({{"height", 9}, {"width", 9}}), doctest::Contains("loaded from an artifact"),
                         Error);
}
