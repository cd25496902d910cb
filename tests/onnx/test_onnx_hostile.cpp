// Hostile but well-formed models, each a few hundred bytes: huge repeat counts, long
// concatenations, huge pads, very long chains. Each either imports, builds and computes the
// right numbers in bounded time, or stops at once with a weft::Error naming the node and the
// limit it passed. Before: a stack overflow (Tile x 100000, Concat of 100000), minutes and
// then a 2^84-element overflow (pads 2^40), std::bad_alloc after a minute (50,000 nodes).
#include <doctest/doctest.h>

#include <chrono>
#include <limits>
#include <string>

#include "onnx_model.hpp"

using namespace onnx_test;
using doctest::Contains;

namespace {

// x [1, 4] (input), the model's single output y.
Model small_input_model() {
    Model m;
    m.input("x", {1, 4});
    m.output("y");
    return m;
}

// Loads, builds and runs m on x = [1, 2, 3, 4]; checks y[j] = x[j % 4] over y's elements.
void check_repeats_x(const Model& m, int64_t expect_elements) {
    weft::Buffer<float> x({1, 4});
    for (int j = 0; j < 4; ++j) x(0, j) = float(j + 1);
    auto y = run(m.load(), {x});
    REQUIRE(y.size() == 1);
    REQUIRE(y[0].size() == expect_elements);
    const float* p = static_cast<const float*>(y[0].data());
    int64_t wrong = 0;
    for (int64_t i = 0; i < y[0].size(); ++i) wrong += p[i] != float(i % 4 + 1);
    CHECK(wrong == 0);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("onnx hostile: Tile with 100000 repeats is one tile node, not 100000 pieces") {
    Model m = small_input_model();
    m.node("Tile", {"x", "r"}, {"y"});
    m.initializer_i64("r", {2}, {1, 100000});
    const auto t0 = std::chrono::steady_clock::now();
    check_repeats_x(m, 400000);
    CHECK(seconds_since(t0) < 30);
}

TEST_CASE("onnx hostile: a concat of one input 4000 times is a tile; more inputs than the limit are refused") {
    Model m = small_input_model();
    set_int(m.node("Concat", std::vector<std::string>(4000, "x"), {"y"}), "axis", 1);
    const auto t0 = std::chrono::steady_clock::now();
    check_repeats_x(m, 16000);
    CHECK(seconds_since(t0) < 30);

    Model wide = small_input_model();
    set_int(wide.node("Concat", std::vector<std::string>(100000, "x"), {"y"}), "axis", 1);
    CHECK_THROWS_WITH_AS(wide.load(), Contains("it has 100000 inputs, over the limit 4096 (graph::Limits::max_node_inputs)"),
                         weft::Error);
    weft::onnx::LoadOptions more;
    more.limits.max_node_inputs = 200000;
    CHECK_NOTHROW(wide.load(more));
}

TEST_CASE("onnx hostile: pads of 2^40 stop at once with the node and the limit") {
    Model m;
    m.input("x", {1, 1, 4, 4});
    m.output("y");
    set_ints(m.node("Conv", {"x", "w"}, {"y"}), "pads", {int64_t(1) << 40, int64_t(1) << 40, int64_t(1) << 40,
                                                         int64_t(1) << 40});
    m.initializer("w", {1, 1, 1, 1}, {1.0f});
    const auto t0 = std::chrono::steady_clock::now();
    std::string e = error_of([&] { m.load(); });
    CHECK(e.find("'y'") != std::string::npos);
    CHECK(e.find("over the limit") != std::string::npos);
    CHECK(seconds_since(t0) < 5);
}

TEST_CASE("onnx hostile: a chain of 50000 element-wise nodes builds in kernels of bounded size") {
    Model m = small_input_model();
    std::string prev = "x";
    for (int i = 0; i < 50000; ++i) {
        std::string out = i + 1 == 50000 ? "y" : "v" + std::to_string(i);
        m.node(i % 2 ? "Relu" : "Neg", {prev}, {out});
        prev = out;
    }
    const auto t0 = std::chrono::steady_clock::now();
    weft::graph::Graph g = m.load();
    weft::graph::Module mod = weft::graph::build(g);
    CHECK(mod.kernels().size() >= 50000 / weft::graph::kMaxFusedExpression);
    weft::Buffer<float> x({1, 4});
    for (int j = 0; j < 4; ++j) x(0, j) = float(j) - 1.5f;
    mod.set_input(0, x);
    mod.run();
    // Neg then Relu, 25000 times: relu(-x) first, then relu(-relu(-x)) = 0 from the second pair on.
    const float* y = static_cast<const float*>(mod.get_output(0).data());
    for (int j = 0; j < 4; ++j) CHECK(y[j] == 0.0f);
    CHECK(seconds_since(t0) < 120);
    MESSAGE("50000-node chain: ", mod.kernels().size(), " kernels, ", seconds_since(t0), " s");
}

TEST_CASE("onnx hostile: a concat of 600 distinct pieces is a shallow tree and computes the right numbers") {
    Model m;
    std::vector<std::string> names;
    for (int k = 0; k < 600; ++k) {
        names.push_back("x" + std::to_string(k));
        m.initializer(names.back(), {1, 2}, {float(2 * k), float(2 * k + 1)});
    }
    m.input("z", {1, 1});
    m.output("y");
    set_int(m.node("Concat", names, {"c"}), "axis", 1);
    m.node("Add", {"c", "z"}, {"y"});  // a graph input, so the concat is not folded away
    weft::Buffer<float> z({1, 1});
    z(0, 0) = 0.5f;
    auto y = run(m.load(), {z});
    REQUIRE(y[0].size() == 1200);
    const float* p = static_cast<const float*>(y[0].data());
    int64_t wrong = 0;
    for (int64_t i = 0; i < 1200; ++i) wrong += p[i] != float(i) + 0.5f;
    CHECK(wrong == 0);
}

// ---- found by the fuzzers (tests/fuzz/regressions/onnx/) -----------------------------------

TEST_CASE("onnx hostile: a pooling window of 2^40 rows over 6 costs 6 steps and averages the column") {
    // SAME_UPPER pads the 6 rows by 2^39 - 1 and 2^39: every window holds the whole column.
    // Before: every output looped over all 2^40 taps of its window, nearly all padding (a hang).
    for (const char* op : {"AveragePool", "MaxPool"}) {
        CAPTURE(op);
        Model m;
        m.input("x", {1, 1, 6, 6});
        m.output("y");
        pb::NodeProto& n = m.node(op, {"x"}, {"y"});
        set_ints(n, "kernel_shape", {int64_t(1) << 40, 1});
        set_string(n, "auto_pad", "SAME_UPPER");
        weft::Buffer<float> x({1, 1, 6, 6});
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) x(0, 0, i, j) = float(i * 6 + j);
        const auto t0 = std::chrono::steady_clock::now();
        auto y = run(m.load(), {x});
        CHECK(seconds_since(t0) < 10);
        REQUIRE(y[0].shape() == std::vector<int64_t>{1, 1, 6, 6});
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j)  // column j holds j, 6 + j, ..., 30 + j: mean 15 + j, max 30 + j
                CHECK(y[0](0, 0, i, j) == doctest::Approx(std::string(op) == "MaxPool" ? 30 + j : 15 + j));
    }
}

TEST_CASE("onnx hostile: window sizes and strides up to 2^63 - 1 are refused or counted, never wrapped") {
    Model same;  // SAME padding of a 2^63 - 1 window: its span does not fit in 64 bits
    same.input("x", {1, 1, 4, 4});
    same.output("y");
    pb::NodeProto& n = same.node("MaxPool", {"x"}, {"y"});
    set_ints(n, "kernel_shape", {std::numeric_limits<int64_t>::max(), 1});
    set_string(n, "auto_pad", "SAME_LOWER");
    CHECK_THROWS_WITH_AS(same.load(), Contains("is too large to count in 64 bits"), weft::Error);

    Model ceil;  // ceil_mode with a stride of 2^62: one window; ONNX drops the one past the input
    ceil.input("x", {1, 1, 4, 4});
    ceil.output("y");
    pb::NodeProto& c = ceil.node("MaxPool", {"x"}, {"y"});
    set_ints(c, "kernel_shape", {2, 2});
    set_ints(c, "strides", {int64_t(1) << 62, int64_t(1) << 62});
    set_int(c, "ceil_mode", 1);
    weft::Buffer<float> x({1, 1, 4, 4});
    for (int i = 0; i < 16; ++i) x.data()[i] = float(i);
    auto y = run(ceil.load(), {x});
    REQUIRE(y[0].shape() == std::vector<int64_t>{1, 1, 1, 1});
    CHECK(y[0](0, 0, 0, 0) == 5.0f);  // max of x[0:2, 0:2]
}

TEST_CASE("onnx hostile: RoiAlign, MelWeightMatrix and DeformConv attributes past any limit are refused") {
    // RoiAlign sampling 2^20 x 2^20 points per bin: refused before it loops 2^40 times.
    Model r;
    r.input("x", {1, 2, 8, 8});
    r.input("rois", {3, 4});
    r.input("batch", {3}, pb::TensorProto::INT64);
    set_int(r.node("RoiAlign", {"x", "rois", "batch"}, {"y"}), "sampling_ratio", int64_t(1) << 20);
    r.output("y");
    CHECK_THROWS_WITH_AS(r.load(), Contains("RoiAlign's samples"), weft::Error);
    // MelWeightMatrix with an edge below -700 Hz (no mel value), and one past every bin.
    for (float low : {-1000.f, 1e30f}) {
        Model m(17);
        m.initializer_i64("mels", {}, {8});
        m.initializer_i64("dft", {}, {64});
        m.initializer_i64("rate", {}, {16000});
        m.initializer("low", {}, {low});
        m.initializer("high", {}, {2e30f});
        m.node("MelWeightMatrix", {"mels", "dft", "rate", "low", "high"}, {"y"});
        m.output("y");
        CHECK_THROWS_AS(m.load(), weft::Error);
    }
    // DeformConv whose sampled columns (N x C kh kw x OH OW: 81 times the input's 2^26
    // elements) pass the 2^32-element limit.
    Model d(19);
    d.input("x", {1, 16, 2048, 2048});
    d.input("offset", {1, 2 * 81, 2048, 2048});
    d.initializer("w", {2, 16, 9, 9}, std::vector<float>(2 * 16 * 81, 0.1f));
    set_ints(d.node("DeformConv", {"x", "w", "offset"}, {"y"}), "pads", {4, 4, 4, 4});
    d.output("y");
    CHECK_THROWS_WITH_AS(d.load(), Contains("DeformConv's sampled columns"), weft::Error);
}

TEST_CASE("onnx hostile: ConcatFromSequence with new_axis over tensors of different ranks is refused") {
    // The fuzzer's find: the new axis was placed by the first tensor's rank and inserted into a
    // lower-rank tensor's shape past its end (a heap overflow).
    Model m(13);
    m.input("a", {2, 3, 4});
    m.input("b", {2});
    m.node("SequenceConstruct", {"a", "b"}, {"seq"});
    auto& cat = m.node("ConcatFromSequence", {"seq"}, {"y"});
    set_int(cat, "axis", 3);
    set_int(cat, "new_axis", 1);
    m.output("y");
    CHECK(error_of([&] { m.load(); }).find("stacked along a new axis must have one shape, got [2, 3, 4] and [2]") !=
          std::string::npos);
}
