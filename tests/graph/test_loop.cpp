// Graph::loop: a loop the module runs (its body compiled once as a module of its own), against
// the same loop written in C++; carried values that swap, trip counts and conditions the
// inputs decide, no iteration at all, the bound, artifacts, tiers, and the errors.
#include <doctest/doctest.h>

#include <cmath>

#include "weft/weft.hpp"

using namespace weft;

namespace {

constexpr int64_t kD = 16;

template <class T>
Buffer<T> full(std::vector<int64_t> shape, T value) {
    Buffer<T> b(std::move(shape));
    for (T& x : b) x = value;
    return b;
}

graph::Value absolute(graph::Graph& g, graph::Value x) { return g.maximum(x, g.mul(x, g.constant(g.node(x).name + "/-1", full<float>({1}, -1.0f)))); }

// h <- 0.6 h + 0.3 tanh(h W^T + b) * h while max |h| > threshold: the ONNX model
// iterative_refiner's loop. The body reads W and b as captured values.
graph::Graph refiner_body() {
    graph::Graph body;
    graph::Value h = body.input("carried0", {4, kD});
    graph::Value w = body.input("captured0", {kD, kD});
    graph::Value b = body.input("captured1", {kD});
    graph::Value gate = body.tanh(body.dense(h, w, b));
    graph::Value point6 = body.constant("c0.6", full<float>({1}, 0.6f));
    graph::Value point3 = body.constant("c0.3", full<float>({1}, 0.3f));
    graph::Value next = body.add(body.mul(h, point6), body.mul(body.mul(gate, point3), h));
    graph::Value threshold = body.constant("threshold", full<float>({1}, 0.05f));
    graph::Value more = body.add_node("greater", {body.reshape(body.max(absolute(body, next)), {1}), threshold});
    body.output(more, "condition");
    body.output(next, "carried0");
    return body;
}

struct Refiner {
    Buffer<float> w = Buffer<float>::random({kD, kD}, -0.3f, 0.3f, 5);
    Buffer<float> b = Buffer<float>::random({kD}, -0.1f, 0.1f, 6);

    graph::Graph graph(int64_t max_iterations = 0) const {
        graph::Graph g;
        graph::Value x = g.input("x", {4, kD});
        graph::Value trips = g.input("trips", {1}, DataType::int_(64));
        graph::Value threshold = g.constant("threshold", full<float>({1}, 0.05f));
        graph::Value go = g.add_node("greater", {g.reshape(g.max(absolute(g, x)), {1}), threshold});
        graph::Value y = g.loop(refiner_body(), trips, go, {x}, {g.constant("w", w), g.constant("b", b)},
                                {.max_iterations = max_iterations}, "refine");
        g.output(g.add(y, y), "y");  // something after the loop, fused as usual
        return g;
    }

    // The same in C++ (double); returns the iterations run.
    int64_t reference(const Buffer<float>& x, int64_t trips, std::vector<double>& h) const {
        h.assign(x.data(), x.data() + x.size());
        auto max_abs = [&] {
            double m = 0;
            for (double v : h) m = std::max(m, std::abs(v));
            return m;
        };
        int64_t i = 0;
        for (bool go = max_abs() > 0.05; i < trips && go; ++i) {
            std::vector<double> next(h.size());
            for (int64_t r = 0; r < 4; ++r)
                for (int64_t n = 0; n < kD; ++n) {
                    double acc = b.data()[n];
                    for (int64_t k = 0; k < kD; ++k) acc += h[size_t(r * kD + k)] * w.data()[n * kD + k];
                    const double hv = h[size_t(r * kD + n)];
                    next[size_t(r * kD + n)] = 0.6 * hv + 0.3 * std::tanh(acc) * hv;
                }
            h = next;
            go = max_abs() > 0.05;
        }
        return i;
    }
};

Buffer<int64_t> scalar64(int64_t v) { return full<int64_t>({1}, v); }

void check_refined(graph::Module& m, const Refiner& r, const Buffer<float>& x, int64_t trips) {
    m.set_input("x", x);
    m.set_input("trips", scalar64(trips));
    m.run();
    std::vector<double> want;
    r.reference(x, trips, want);
    Buffer<float> y(m.get_output("y"));
    for (size_t i = 0; i < want.size(); ++i) REQUIRE(y.data()[i] == doctest::Approx(2 * want[i]).epsilon(1e-4).scale(1e-5));
}

}  // namespace

TEST_CASE("a loop runs its body until the condition the data decides is false, compiled once") {
    Refiner r;
    graph::Module m = graph::build(r.graph());
    // The loop is one kernel: its body is a module of its own, not unrolled.
    int loops = 0;
    for (const graph::KernelInfo& k : m.kernels()) loops += k.name == "loop";
    CHECK(loops == 1);
    CHECK(m.kernels().size() <= 4);
    // Inputs that need few and many iterations, and a trip count that stops it first.
    auto small = Buffer<float>::random({4, kD}, -0.1f, 0.1f, 1);
    auto large = Buffer<float>::random({4, kD}, -3.0f, 3.0f, 2);
    std::vector<double> scratch;
    CHECK(r.reference(small, 1000, scratch) < r.reference(large, 1000, scratch));
    CHECK(r.reference(large, 1000, scratch) > 3);
    check_refined(m, r, large, 1000);
    check_refined(m, r, small, 1000);
    check_refined(m, r, large, 3);
    check_refined(m, r, large, 1000);  // again after other runs: no state is left behind
}

TEST_CASE("a loop that runs no iteration gives its carried value as it came in") {
    Refiner r;
    graph::Module m = graph::build(r.graph());
    auto x = Buffer<float>::random({4, kD}, -3.0f, 3.0f, 2);
    check_refined(m, r, x, 0);  // trips 0
    auto tiny = Buffer<float>::random({4, kD}, -0.01f, 0.01f, 3);
    check_refined(m, r, tiny, 1000);  // the condition false at once
    Buffer<float> y(m.get_output("y"));
    for (int64_t i = 0; i < tiny.size(); ++i) CHECK(y.data()[i] == 2 * tiny.data()[i]);
}

TEST_CASE("a loop's carried values may swap, and each node gives one of them") {
    // (a, b) <- (b, a + b) for `trips` iterations: carried0's next value is the body's input
    // carried1 itself, which must be read before the next iteration's inputs are written.
    graph::Graph body;
    graph::Value a = body.input("carried0", {3}, DataType::int_(64));
    graph::Value b = body.input("carried1", {3}, DataType::int_(64));
    body.output(body.constant("true", full<bool>({1}, true)), "condition");
    body.output(b, "carried0");
    body.output(body.add(a, b), "carried1");
    graph::Graph g;
    graph::Value trips = g.input("trips", {1}, DataType::int_(64));
    graph::Value a0 = g.input("a", {3}, DataType::int_(64));
    graph::Value b0 = g.input("b", {3}, DataType::int_(64));
    graph::Value yes = g.constant("go", full<bool>({1}, true));
    g.output(g.loop(body, trips, yes, {a0, b0}, {}, {.output = 0}), "a_n");
    g.output(g.loop(body, trips, yes, {a0, b0}, {}, {.output = 1}), "b_n");
    graph::Module m = graph::build(g);
    Buffer<int64_t> start_a({3}), start_b({3});
    for (int64_t i = 0; i < 3; ++i) {
        start_a.data()[i] = i;
        start_b.data()[i] = 10 * i + 1;
    }
    m.set_input("a", start_a);
    m.set_input("b", start_b);
    for (int64_t n : {0, 1, 2, 7, 40}) {
        m.set_input("trips", scalar64(n));
        m.run();
        Buffer<int64_t> an(m.get_output("a_n")), bn(m.get_output("b_n"));
        for (int64_t i = 0; i < 3; ++i) {
            int64_t x = start_a.data()[i], y = start_b.data()[i];
            for (int64_t t = 0; t < n; ++t) {
                const int64_t next = x + y;
                x = y;
                y = next;
            }
            CHECK(an.data()[i] == x);
            CHECK(bn.data()[i] == y);
        }
    }
}

TEST_CASE("a loop reads its iteration number") {
    // s <- s + i * step for i < trips: the body reads "iteration".
    graph::Graph body;
    graph::Value s = body.input("carried0", {1}, DataType::int_(64));
    graph::Value i = body.input("iteration", {1}, DataType::int_(64));
    graph::Value step = body.input("captured0", {1}, DataType::int_(64));
    body.output(body.add_node("less", {i, body.constant("five", full<int64_t>({1}, 5))}), "condition");
    body.output(body.add(s, body.mul(i, step)), "carried0");
    graph::Graph g;
    graph::Value trips = g.input("trips", {1}, DataType::int_(64));
    graph::Value stepv = g.input("step", {1}, DataType::int_(64));
    graph::Value go = g.constant("go", full<bool>({1}, true));
    g.output(g.loop(body, trips, go, {g.constant("zero", scalar64(0))}, {stepv}), "sum");
    graph::Module m = graph::build(g);
    m.set_input("step", scalar64(3));
    for (int64_t n : {0, 1, 4, 100}) {
        m.set_input("trips", scalar64(n));
        m.run();
        // The condition computed in iteration i (i < 5) decides whether i + 1 runs.
        int64_t want = 0;
        for (int64_t k = 0; k < n && k <= 5; ++k) want += 3 * k;
        CHECK(Buffer<int64_t>(m.get_output("sum")).data()[0] == want);
    }
}

TEST_CASE("a loop past its max_iterations is a weft::Error, and the module runs again after it") {
    Refiner r;
    graph::Module m = graph::build(r.graph(/*max_iterations=*/2));
    auto large = Buffer<float>::random({4, kD}, -3.0f, 3.0f, 2);
    m.set_input("x", large);
    m.set_input("trips", scalar64(1000));
    CHECK_THROWS_WITH_AS(m.run(), doctest::Contains("node 'refine' (loop) needs more than 2 iterations"), Error);
    check_refined(m, r, large, 2);  // within the bound
}

TEST_CASE("a module with a loop saves to an artifact and loads back, and tiers up") {
    Refiner r;
    auto x = Buffer<float>::random({4, kD}, -3.0f, 3.0f, 7);
    graph::Module loaded = graph::load_module_from_memory(graph::save_to_memory(graph::build(r.graph())));
    check_refined(loaded, r, x, 1000);
    graph::Module tiered = graph::build(r.graph(), Target::host(), {.tier = graph::CompileTier::tiered});
    check_refined(tiered, r, x, 1000);
    tiered.wait_optimized();
    check_refined(tiered, r, x, 1000);
    CHECK(tiered.tier() == graph::CompileTier::optimized);
    // A loop whose carried values swap: the staging survives the artifact too.
    graph::Module fast = graph::build(r.graph(), Target::host(), {.tier = graph::CompileTier::fast});
    check_refined(fast, r, x, 1000);
}

TEST_CASE("a loop's body that does not fit is a weft::Error naming what") {
    graph::Graph g;
    graph::Value x = g.input("x", {4, kD});
    graph::Value trips = g.constant("trips", scalar64(3));
    graph::Value go = g.constant("go", full<bool>({1}, true));
    graph::Graph body = refiner_body();
    CHECK_THROWS_WITH_AS(g.loop(body, trips, go, {x}, {}), doctest::Contains("the body's input 'captured0' is none of"),
                         Error);
    graph::Graph no_condition;
    no_condition.output(no_condition.relu(no_condition.input("carried0", {4, kD})), "carried0");
    CHECK_THROWS_WITH_AS(g.loop(no_condition, trips, go, {x}), doctest::Contains("the body has no output 'condition'"),
                         Error);
    graph::Graph wrong_type;
    graph::Value h = wrong_type.input("carried0", {4, kD});
    wrong_type.output(wrong_type.constant("true", full<bool>({1}, true)), "condition");
    wrong_type.output(wrong_type.sum(h, {1}), "carried0");
    CHECK_THROWS_WITH_AS(g.loop(wrong_type, trips, go, {x}), doctest::Contains("'carried0' is float32[4]"), Error);
    graph::Value w = g.constant("w", Buffer<float>::random({kD, kD})), b = g.constant("b", Buffer<float>::random({kD}));
    CHECK_THROWS_WITH_AS(g.loop(refiner_body(), x, go, {x}, {w, b}), doctest::Contains("trip count must be int64[1]"),
                         Error);
    // For a GPU, a loop says that it runs on the CPU.
    Refiner r;
    CHECK_THROWS_WITH_AS(graph::build(r.graph(), Target::cuda(), {.allocate = false}),
                         doctest::Contains("is a loop, which runs on the CPU only"), Error);
}

namespace {

// A loop whose body runs a loop whose body ... `levels` deep, each level adding 1 once: x +
// levels + 1 (one iteration each: the body's condition is false).
graph::Graph nested_loops(int levels) {
    auto body_at = [](int level, auto& self) -> graph::Graph {
        graph::Graph body;
        graph::Value h = body.input("carried0", {2});
        if (level > 0) {
            graph::Value trips = body.constant("trips", scalar64(1));
            graph::Value go = body.constant("go", full<bool>({1}, true));
            h = body.loop(self(level - 1, self), trips, go, {h});
        }
        body.output(body.constant("stop", full<bool>({1}, false)), "condition");
        body.output(body.add(h, body.constant("one", full<float>({1}, 1.0f))), "carried0");
        return body;
    };
    graph::Graph g;
    graph::Value x = g.input("x", {2});
    graph::Value trips = g.constant("trips", scalar64(5));
    graph::Value go = g.constant("go", full<bool>({1}, true));
    g.output(g.loop(body_at(levels - 1, body_at), trips, go, {x}), "y");
    return g;
}

}  // namespace

TEST_CASE("loops nest, in modules and artifacts, to a bounded depth") {
    auto x = Buffer<float>::random({2}, -1, 1, 4);
    for (int levels : {1, 3}) {
        graph::Module m = graph::load_module_from_memory(graph::save_to_memory(graph::build(nested_loops(levels))));
        m.set_input("x", x);
        m.run();
        Buffer<float> y(m.get_output("y"));
        for (int i = 0; i < 2; ++i) CHECK(y.data()[i] == doctest::Approx(x.data()[i] + levels));
    }
    // An artifact whose loops nest deeper than graph::kMaxArtifactLoopDepth is refused (each
    // level's bytes hold the next: without the bound, a file could nest until the stack ends).
    const std::string deep = graph::save_to_memory(graph::build(nested_loops(graph::kMaxArtifactLoopDepth + 1)));
    CHECK_THROWS_WITH_AS(graph::load_module_from_memory(deep), doctest::Contains("loops nest deeper than 32"), Error);
}
