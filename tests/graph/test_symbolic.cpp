// Symbolic dimensions (graph::Graph::set_symbolic): one module, built once, runs at every
// size within the bounds, and computes what a module built for that size computes (that
// path is checked against naive references elsewhere), plus one naive reference here.
#include <doctest/doctest.h>

#include <cmath>

#include "graph_check.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

using graph_check::max_difference;
using graph_check::random_buffer;

// The module built once against a module built for each size.
void check_sizes(const graph::Graph& g, const std::string& symbol, const std::vector<int64_t>& sizes,
                 const std::function<std::vector<int64_t>(int64_t)>& input_shape) {
    graph::Module m = graph::build(g);
    for (int64_t size : sizes) {
        CAPTURE(size);
        graph_check::check_symbolic_at(m, g, {{symbol, size}}, input_shape(size), uint64_t(size), 1e-5);
    }
}

}  // namespace

TEST_CASE("a symbolic batch: an MLP built once runs at batches 1, 3, 8 and 20 and matches naive loops") {
    auto w1 = random_buffer({32, 64}, 1), b1 = random_buffer({32}, 2), w2 = random_buffer({10, 32}, 3);
    graph::Graph g;
    graph::Value x = g.input("x", {20, 64});
    g.set_symbolic(x, 0, {"batch", 20});  // over 12: its dense kernels assume whole tiles, padded below
    graph::Value h = g.relu(g.dense(x, g.constant("w1", w1), g.constant("b1", b1)));
    g.output(g.softmax(g.dense(h, g.constant("w2", w2))), "y");
    graph::Module m = graph::build(g);
    for (int64_t batch : {1, 3, 8, 20, 3}) {
        CAPTURE(batch);
        auto xv = random_buffer({batch, 64}, uint64_t(batch));
        m.set_input("x", xv);
        m.run();
        const BufferRef& y = m.get_output("y");
        REQUIRE(y.shape() == std::vector<int64_t>{batch, 10});
        const float* got = static_cast<const float*>(y.data());
        for (int64_t n = 0; n < batch; ++n) {
            double logits[10], hidden[32], top = -1e30, total = 0;
            for (int o = 0; o < 32; ++o) {
                double acc = b1(o);
                for (int k = 0; k < 64; ++k) acc += double(xv(n, k)) * w1(o, k);
                hidden[o] = std::max(acc, 0.0);
            }
            for (int o = 0; o < 10; ++o) {
                logits[o] = 0;
                for (int k = 0; k < 32; ++k) logits[o] += hidden[k] * w2(o, k);
                top = std::max(top, logits[o]);
            }
            for (double& l : logits) total += (l = std::exp(l - top));
            for (int o = 0; o < 10; ++o) CHECK(std::abs(got[n * 10 + o] - logits[o] / total) < 1e-5);
        }
    }
}

TEST_CASE("a symbolic batch through a convolution, pooling and a flatten") {
    graph::Graph g;
    graph::Value x = g.input("x", {6, 3, 12, 12});
    g.set_symbolic(x, 0, {"batch", 6});
    graph::Value c = g.relu(g.conv2d(x, g.constant("w", random_buffer({16, 3, 3, 3}, 4)),
                                     g.constant("b", random_buffer({16}, 5)), {.pad = 1}));
    c = g.max_pool2d(c, {.kernel = 2, .stride = 2});
    graph::Value f = g.flatten(c, 1);
    g.output(g.dense(f, g.constant("w2", random_buffer({5, 16 * 6 * 6}, 6))), "y");
    check_sizes(g, "batch", {1, 2, 5, 6}, [](int64_t n) { return std::vector<int64_t>{n, 3, 12, 12}; });
}

TEST_CASE("a symbolic sequence length through reshapes, a matmul, a transpose and a softmax") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 12, 16});
    g.set_symbolic(x, 1, {"seq", 12, 2});
    graph::Value rows = g.reshape(x, {-1, 16});  // [seq, 16]
    graph::Value h = g.tanh(g.dense(rows, g.constant("w", random_buffer({8, 16}, 7)), g.constant("b", random_buffer({8}, 8))));
    graph::Value back = g.reshape(h, {1, -1, 8});
    graph::Value t = g.transpose(back, {0, 2, 1});  // [1, 8, seq]
    g.output(g.softmax(t, -1), "y");
    check_sizes(g, "seq", {2, 5, 12}, [](int64_t t) { return std::vector<int64_t>{1, t, 16}; });
}

TEST_CASE("a symbolic sequence length through a matmul whose rows an importer splits back, then a bias and GELU") {
    // [seq, 16] x W -> reshape [1, seq, 32] -> + bias -> gelu: simplify_operators moves such a
    // reshape past the element-wise operators in a graph of fixed shapes, but not in one of
    // symbolic dimensions (the graph at max and those at other sizes must agree: a rewrite
    // that lost the symbols made them differ, and the build failed).
    graph::Graph g;
    graph::Value x = g.input("x", {1, 24, 16});
    g.set_symbolic(x, 1, {"seq", 24, 1});
    graph::Value rows = g.reshape(x, {-1, 16});
    g.relu(rows, "unread");  // (dead code: eliminate_dead_code rewrites the graph before simplify_operators)
    graph::Value y = g.matmul(rows, g.constant("w", random_buffer({16, 32}, 9)));
    graph::Value back = g.reshape(y, {1, -1, 32});
    g.output(g.gelu(g.add(back, g.constant("b", random_buffer({32}, 10)))), "y");
    check_sizes(g, "seq", {1, 7, 24}, [](int64_t t) { return std::vector<int64_t>{1, t, 16}; });
}

TEST_CASE("symbolic dimensions: sizes outside the bounds, disagreeing inputs and unfollowable graphs are refused") {
    graph::Graph g;
    graph::Value a = g.input("a", {4, 8}), b = g.input("b", {4, 8});
    g.set_symbolic(a, 0, {"n", 4, 2});
    g.set_symbolic(b, 0, {"n", 4, 2});
    g.output(g.add(a, b), "y");
    graph::Module m = graph::build(g);
    CHECK_THROWS_WITH_AS(m.set_input("a", Buffer<float>({5, 8})), doctest::Contains("outside its bounds [2, 4]"),
                         Error);
    CHECK_THROWS_WITH_AS(m.set_input("a", Buffer<float>({3, 9})), doctest::Contains("expected float32[4, 8]"), Error);
    m.set_input("a", random_buffer({3, 8}, 1));
    m.set_input("b", random_buffer({2, 8}, 2));
    CHECK_THROWS_WITH_AS(m.run(), doctest::Contains("symbol 'n' is 3 in input 'a' but 2 in input 'b'"), Error);
    CHECK_THROWS_WITH_AS(g.set_symbolic(a, 0, {"n", 4, 2}), doctest::Contains("is already read by"), Error);
    // (A strided convolution over a symbolic length, once refused, compiles per size:
    // test_symbolic_sizes.cpp.)
}

TEST_CASE("a symbolic length in a batch_matmul's rows and columns (attention's scores), below and over 64") {
    graph::Graph g;
    g.output(g.softmax(graph_check::symbolic_attention_scores(g, 4, 96, 16), -1), "y");
    graph::Module m = graph::build(g);
    for (int64_t seq : {8, 64, 96, 70}) {
        CAPTURE(seq);
        graph::Module fixed = graph::build(g.instantiate({{"seq", seq}}));
        auto qv = random_buffer({4, seq, 16}, uint64_t(seq)), kv = random_buffer({4, 16, seq}, uint64_t(seq + 1));
        graph_check::run_attention({&m, &fixed}, qv, kv);
        CHECK(m.get_output(0).shape() == std::vector<int64_t>{4, seq, seq});
        CHECK(max_difference(m.get_output(0), fixed.get_output(0)) < 1e-5);
        CHECK(m.run_debug().ok);  // (from 64 on, the large-size variant's kernels)
    }
}

TEST_CASE("a small batch beside a long sequence: the sequence's large-size variant runs at any batch") {
    // x [batch <= 3, seq <= 96, 32] -> dense rows batch * seq -> softmax over the features:
    // the variant compiled for seq >= 64 keeps batch symbolic (its bound never reaches 64), so
    // it serves every batch from seq 64 on; before, it waited for batch >= 64 too.
    graph::Graph g;
    graph::Value x = g.input("x", {3, 96, 32});
    g.set_symbolic(x, 0, {"batch", 3});
    g.set_symbolic(x, 1, {"seq", 96});
    graph::Value rows = g.reshape(x, {-1, 32});
    graph::Value w = g.constant("w", random_buffer({32, 48}, 5));
    g.output(g.softmax(g.matmul(rows, w), -1), "y");
    graph::Module m = graph::build(g);
    for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 70}, {3, 96}, {2, 64}, {2, 10}}) {
        CAPTURE(batch);
        CAPTURE(seq);
        graph_check::check_symbolic_at(m, g, {{"batch", batch}, {"seq", seq}}, {batch, seq, 32},
                                       uint64_t(batch * 100 + seq), 1e-5);
    }
}
