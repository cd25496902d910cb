// Compile tiers (graph::BuildOptions::tier): a fast build computes what the optimized build
// computes; a tiered build runs its fast kernels while the optimized ones compile on a thread
// of its own, and takes them between runs. Run under ThreadSanitizer by scripts/test.sh (its
// second stage runs the codegen/ folder): run() overlaps the background compile here.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "weft/weft.hpp"

using namespace weft;

namespace {

// A convolution (blocked layout, register tiles), a pool, dense layers and a softmax: the
// kernels whose unrolled loops the fast tier keeps as loops.
graph::Graph small_network(uint64_t seed) {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 8, 10, 10});
    auto w = Buffer<float>::random({16, 8, 3, 3}, -0.2f, 0.2f, seed);
    x = g.relu(g.conv2d(x, g.constant("w", w), {.pad = 1}));
    x = g.max_pool2d(x, {.kernel = 2, .stride = 2});
    x = g.flatten(x);
    auto d1 = Buffer<float>::random({32, 16 * 5 * 5}, -0.1f, 0.1f, seed + 1);
    auto d2 = Buffer<float>::random({10, 32}, -0.3f, 0.3f, seed + 2);
    x = g.tanh(g.dense(x, g.constant("d1", d1)));
    g.output(g.softmax(g.dense(x, g.constant("d2", d2))), "y");
    return g;
}

Buffer<float> output_of(graph::Module& m, const Buffer<float>& x) {
    m.set_input("x", x);
    m.run();
    return Buffer<float>(m.get_output("y")).copy();
}

void check_close(const Buffer<float>& got, const Buffer<float>& want) {
    REQUIRE(got.shape() == want.shape());
    for (int64_t i = 0; i < want.size(); ++i) CHECK(std::abs(got.data()[i] - want.data()[i]) <= 1e-5f);
}

}  // namespace

TEST_CASE("a fast build computes what the optimized build does, and says so") {
    graph::Graph g = small_network(11);
    auto x = Buffer<float>::random({1, 8, 10, 10}, -1, 1, 3);
    graph::Module optimized = graph::build(g);
    graph::Module fast = graph::build(g, Target::host(), {.tier = graph::CompileTier::fast});
    CHECK(optimized.tier() == graph::CompileTier::optimized);
    CHECK(fast.tier() == graph::CompileTier::fast);
    check_close(output_of(fast, x), output_of(optimized, x));
    fast.wait_optimized();  // nothing to wait for: a fast build stays fast
    CHECK(fast.tier() == graph::CompileTier::fast);
    // Its kernels were lowered for the short compile (ir::PrimFunc::fast_compile).
    for (const Kernel& k : fast.compiled_kernels()) CHECK(k.signature().fast_compile);
    for (const Kernel& k : optimized.compiled_kernels()) CHECK(!k.signature().fast_compile);
}

TEST_CASE("a tiered build runs its fast kernels, then the optimized ones, with the same results") {
    graph::Graph g = small_network(21);
    auto x = Buffer<float>::random({1, 8, 10, 10}, -1, 1, 5);
    graph::Module reference = graph::build(g);
    const Buffer<float> want = output_of(reference, x);
    graph::Module m = graph::build(g, Target::host(), {.tier = graph::CompileTier::tiered});
    CHECK(m.tier() == graph::CompileTier::fast);
    for (const Kernel& k : m.compiled_kernels()) CHECK(k.signature().fast_compile);
    // Runs while the optimized tier compiles; run() itself takes it once it is ready (bounded
    // wait: a compile under a sanitizer is slow, never that slow).
    const auto start = std::chrono::steady_clock::now();
    while (m.tier() == graph::CompileTier::fast && std::chrono::steady_clock::now() - start < std::chrono::minutes(2)) {
        check_close(output_of(m, x), want);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    CHECK(m.tier() == graph::CompileTier::optimized);
    m.wait_optimized();
    CHECK(m.tier() == graph::CompileTier::optimized);
    for (const Kernel& k : m.compiled_kernels()) CHECK(!k.signature().fast_compile);
    check_close(output_of(m, x), want);
    m.wait_optimized();  // taken already: nothing to do
    CHECK(m.tier() == graph::CompileTier::optimized);
    CHECK(graph::compile_tier("fast") == graph::CompileTier::fast);
    CHECK_THROWS_WITH_AS(graph::compile_tier("quick"), doctest::Contains("expected optimized, fast or tiered"), Error);
}

TEST_CASE("a tiered build is saved with its optimized kernels") {
    graph::Graph g = small_network(41);
    auto x = Buffer<float>::random({1, 8, 10, 10}, -1, 1, 9);
    graph::Module m = graph::build(g, Target::host(), {.tier = graph::CompileTier::tiered});
    const std::string bytes = graph::save_to_memory(m);  // waits for the optimized tier
    CHECK(m.tier() == graph::CompileTier::optimized);
    graph::Module loaded = graph::load_module_from_memory(bytes);
    graph::Module reference = graph::build(g);
    check_close(output_of(loaded, x), output_of(reference, x));
}

TEST_CASE("a tiered module dropped while its optimized tier compiles stops the compile") {
    for (int i = 0; i < 3; ++i) {
        graph::Module m = graph::build(small_network(31 + uint64_t(i)), Target::host(),
                                       {.tier = graph::CompileTier::tiered});
        CHECK(m.tier() == graph::CompileTier::fast);
    }  // (destroyed at once: the worker stops before its next group and is joined)
    graph::Module after = graph::build(small_network(31), Target::host(), {.tier = graph::CompileTier::tiered});
    after.wait_optimized();
    CHECK(after.tier() == graph::CompileTier::optimized);
}
