// graph::build compiles a graph's kernels on several threads (BuildOptions::compile_threads):
// lowering, topi's schedules and LLVM side by side, identical groups waiting on the kernel
// cache for one compile. Run under ThreadSanitizer by scripts/test.sh (its second stage
// runs the codegen/ folder), so this checks graph::build itself, not only compile_llvm.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "weft/weft.hpp"

using namespace weft;

namespace {

// A chain of dense layers of several widths, two of them twice (the same kernel), with
// element-wise tails and a softmax: distinct and shared kernels.
graph::Graph mixed_chain(uint64_t seed) {
    graph::Graph g;
    graph::Value x = g.input("x", {3, 24});
    int64_t width = 24;
    const int64_t widths[] = {40, 24, 40, 24, 16, 8};
    for (size_t l = 0; l < std::size(widths); ++l) {
        auto w = Buffer<float>::random({widths[l], width}, -0.3f, 0.3f, seed + l);
        x = g.dense(x, g.constant("w" + std::to_string(l), w));
        x = l % 2 ? g.tanh(x) : g.relu(x);
        width = widths[l];
    }
    g.output(g.softmax(x), "y");
    return g;
}

Buffer<float> run_module(const graph::Graph& g, const Buffer<float>& x, graph::BuildOptions options) {
    graph::Module m = graph::build(g, Target::host(), options);
    m.set_input("x", x);
    m.run();
    return Buffer<float>(m.get_output("y")).copy();
}

}  // namespace

TEST_CASE("graph::build compiles its kernels on several threads and gets the one-thread module") {
    auto x = Buffer<float>::random({3, 24}, -1, 1, 7);
    // A fresh graph each time (other weights): the kernel cache still serves the shapes
    // compiled before, so the first build is the one whose compiles overlap.
    graph::Graph g = mixed_chain(100);
    // build() calls progress one call at a time (no lock here: TSan would report the
    // counters, and `inside` sees an overlap), with the indices 0, 1, ... in turn.
    std::atomic<int> inside{0};
    bool overlapped = false;
    std::vector<int> indices;
    graph::BuildOptions threaded;
    threaded.compile_threads = 4;
    threaded.progress = [&](int index, int, const std::string&) {
        if (inside.fetch_add(1) != 0) overlapped = true;
        indices.push_back(index);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));  // (room for another thread to come in)
        inside.fetch_sub(1);
    };
    Buffer<float> many = run_module(g, x, threaded);
    graph::Module m = graph::build(g, Target::host(), {.compile_threads = 4});
    CHECK(!overlapped);
    REQUIRE(indices.size() == m.kernels().size());
    for (size_t i = 0; i < indices.size(); ++i) CHECK(indices[i] == int(i));
    Buffer<float> one = run_module(g, x, {.compile_threads = 1});
    REQUIRE(many.shape() == one.shape());
    for (int64_t i = 0; i < one.size(); ++i) CHECK(many.data()[i] == one.data()[i]);
    // Several builds at once, each compiling on threads of its own.
    std::vector<Buffer<float>> results(3);
    std::vector<std::thread> builders;
    for (size_t t = 0; t < results.size(); ++t)
        builders.emplace_back([&, t] { results[t] = run_module(mixed_chain(200), x, {.compile_threads = 2}); });
    for (std::thread& t : builders) t.join();
    for (const Buffer<float>& r : results)
        for (int64_t i = 0; i < r.size(); ++i) CHECK(r.data()[i] == results[0].data()[i]);
    CHECK_THROWS_WITH_AS(graph::build(g, Target::host(), {.compile_threads = -1}),
                         doctest::Contains("compile_threads must not be negative"), Error);
}
