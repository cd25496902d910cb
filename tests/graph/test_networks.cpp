// Small networks built with the graph builder and random weights: each runs fused and
// unfused on the same inputs (the outputs agree within float tolerance), and the debug run
// checks every fused kernel against its nodes compiled one by one.
#include <doctest/doctest.h>

#include <cmath>

#include "graph_check.hpp"
#include "weft/graph/testing/models.hpp"

using namespace weft;
using graph_check::check_fused_matches_unfused;
using graph_check::kernel_names;
namespace gt = graph::testing;

namespace {

// g fused against unfused (with the default passes, and with convolutions kept NCHW), the
// number of fused kernels (NCHW), and the debug run (every fused kernel against its nodes
// run one by one).
graph::Module check_network(const graph::Graph& g, size_t kernels) {
    check_fused_matches_unfused(g);
    graph::Module m = check_fused_matches_unfused(g, 1e-4, graph_check::nchw());
    CAPTURE(kernel_names(m));
    CHECK(m.kernels().size() == kernels);
    CHECK(m.run_debug().ok);
    return m;
}

}  // namespace

TEST_CASE("a ResNet basic block with an identity shortcut runs fused as two kernels") {
    graph::Graph g;
    gt::Weights w(g, 11);
    graph::Value x = g.input("x", {1, 16, 10, 10});
    g.output(gt::basic_block(g, w, x, 16, 16, 1, "block"), "y");
    check_network(g, 2);  // conv-bn-relu, conv-bn-add-relu
}

TEST_CASE("a ResNet basic block with a strided 1x1 downsample shortcut") {
    graph::Graph g;
    gt::Weights w(g, 12);
    graph::Value x = g.input("x", {1, 8, 12, 12});
    g.output(gt::basic_block(g, w, x, 8, 16, 2, "block"), "y");
    // conv-bn-relu, the shortcut's conv-bn, conv-bn-add-relu: the add joins one convolution's
    // kernel (a kernel has one master), the other convolution's output is read by it.
    graph::Module m = check_network(g, 3);
    CHECK(m.get_output(0).shape() == std::vector<int64_t>{1, 16, 6, 6});
}

TEST_CASE("a MobileNetV2 inverted residual block: expand, depthwise, project and the residual add") {
    graph::Graph g;
    gt::Weights w(g, 13);
    graph::Value x = g.input("x", {1, 8, 9, 9});
    g.output(gt::inverted_residual(g, w, x, 8, 8, 1, 6, "block"), "y");
    check_network(g, 3);  // 1x1 conv-bn-relu6, depthwise conv-bn-relu6, 1x1 conv-bn-add
}

TEST_CASE("an MLP of three dense layers with gelu and a softmax head") {
    graph::Graph g;
    gt::Weights w(g, 14);
    graph::Value x = g.input("x", {4, 24});
    graph::Value h = g.gelu(g.dense(x, w.dense_weight("fc1.w", 64, 24), w.uniform("fc1.b", {64}, -0.1f, 0.1f)));
    h = g.relu(g.dense(h, w.dense_weight("fc2.w", 48, 64), w.uniform("fc2.b", {48}, -0.1f, 0.1f)));
    h = g.dense(h, w.dense_weight("fc3.w", 10, 48), w.uniform("fc3.b", {10}, -0.1f, 0.1f));
    g.output(g.softmax(h), "p");
    check_network(g, 4);  // dense-bias-gelu, dense-bias-relu, dense-bias, softmax
}

namespace {

// A transformer encoder block on x [seq, d] with `heads` attention heads (post-norm, as in
// BERT):
//   h = layer_norm(x + dense(attention(dense(x) as Q, K, V)))
//   y = layer_norm(h + dense(gelu(dense(h))))
// The heads are the batch of batch_matmul: Q [seq, d] -> [seq, heads, d/heads] -> [heads,
// seq, d/heads], K to [heads, d/heads, seq]; the heads' results go back to [seq, d].
graph::Value encoder_block(graph::Graph& g, gt::Weights& w, graph::Value x, int64_t seq, int64_t d, int64_t heads,
                           int64_t ffn) {
    const int64_t dk = d / heads;
    auto linear = [&](graph::Value v, int64_t in, int64_t out, const std::string& name) {
        return g.dense(v, w.dense_weight(name + ".w", out, in), w.uniform(name + ".b", {out}, -0.1f, 0.1f), name);
    };
    auto split_heads = [&](graph::Value v, std::vector<int64_t> perm, const std::string& name) {
        return g.transpose(g.reshape(v, {seq, heads, dk}, name + ".heads"), std::move(perm), name + ".t");
    };
    graph::Value q = split_heads(linear(x, d, d, "q"), {1, 0, 2}, "q");   // [heads, seq, dk]
    graph::Value kt = split_heads(linear(x, d, d, "k"), {1, 2, 0}, "k");  // [heads, dk, seq]
    graph::Value v = split_heads(linear(x, d, d, "v"), {1, 0, 2}, "v");   // [heads, seq, dk]
    float s = 1.0f / std::sqrt(float(dk));
    graph::Value scale = g.constant("scale", Buffer<float>::random({1}, s, s, 0));
    graph::Value p = g.softmax(g.mul(g.batch_matmul(q, kt, "scores"), scale, "scaled"), -1, "attention");
    graph::Value a = g.batch_matmul(p, v, "context");                                // [heads, seq, dk]
    a = g.reshape(g.transpose(a, {1, 0, 2}, "context.t"), {seq, d}, "context.merged");  // [seq, d]
    graph::Value h = g.layer_norm(g.add(x, linear(a, d, d, "out"), "residual1"), w.uniform("ln1.g", {d}, 0.5f, 1.5f),
                                  w.uniform("ln1.b", {d}, -0.1f, 0.1f), 1e-5, "ln1");
    graph::Value f = linear(g.gelu(linear(h, d, ffn, "ffn1"), "gelu"), ffn, d, "ffn2");
    return g.layer_norm(g.add(h, f, "residual2"), w.uniform("ln2.g", {d}, 0.5f, 1.5f),
                        w.uniform("ln2.b", {d}, -0.1f, 0.1f), 1e-5, "ln2");
}

}  // namespace

TEST_CASE("a transformer encoder block: multi-head attention, layer_norm and a gelu feed-forward") {
    graph::Graph g;
    gt::Weights w(g, 15);
    graph::Value x = g.input("x", {12, 16});
    g.output(encoder_block(g, w, x, 12, 16, 2, 64), "y");
    graph::Module m = check_fused_matches_unfused(g, 2e-4);  // no convolutions: no layout pass
    CAPTURE(kernel_names(m));
    int opaque = 0, scores = 0;
    for (auto& k : m.kernels()) {
        opaque += k.name == "softmax" || k.name == "layer_norm";  // opaque: kernels of their own
        scores += k.name == "batch_matmul_mul";                     // the scale joins the product
    }
    CHECK(opaque == 3);
    CHECK(scores == 1);
    CHECK(m.run_debug({.rtol = 1e-3, .atol = 1e-4}).ok);
}
