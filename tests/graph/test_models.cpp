// Whole networks from graph/testing/models.hpp: fused and unfused outputs agree, fusion
// leaves far fewer kernels, and ResNet-18's memory plan needs at most a quarter of the naive
// sum of its intermediate tensors.
#include <doctest/doctest.h>

#include <cmath>

#include "weft/graph/testing/models.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

// Builds g fused and unfused, runs both on the same random input, returns the largest
// difference relative to the output's largest magnitude; checks the kernel counts.
double fused_vs_unfused(const graph::Graph& g) {
    graph::Module fused = graph::build(g), unfused = graph::build(g, Target::host(), {.fuse = false});
    CHECK(fused.kernels().size() < unfused.kernels().size());
    auto x = Buffer<float>::random(fused.input(0).shape(), -1.f, 1.f, 11);
    fused.set_input(0, x);
    unfused.set_input(0, x);
    fused.run();
    unfused.run();
    const BufferRef &a = fused.get_output(0), &b = unfused.get_output(0);
    REQUIRE(a.shape() == b.shape());
    const float *p = static_cast<const float*>(a.data()), *q = static_cast<const float*>(b.data());
    double scale = 0, worst = 0;
    for (int64_t i = 0; i < a.size(); ++i) scale = std::max(scale, double(std::abs(q[i])));
    for (int64_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::abs(p[i] - q[i])));
    CHECK(scale > 0);
    return worst / std::max(scale, 1e-30);
}

}  // namespace

TEST_CASE("resnet18 at 64x64 gives the same logits fused and unfused") {
    CHECK(fused_vs_unfused(graph::testing::resnet18(1, 64, 10)) < 1e-4);
}

TEST_CASE("mobilenet_v2 at 64x64 gives the same logits fused and unfused") {
    CHECK(fused_vs_unfused(graph::testing::mobilenet_v2(1, 64, 10)) < 1e-4);
}

TEST_CASE("resnet18's memory plan needs at most a quarter of its intermediates' naive sum") {
    graph::Module m = graph::build(graph::testing::resnet18());
    CAPTURE(m.memory_bytes());
    CAPTURE(m.memory_naive_bytes());
    CAPTURE(m.memory_operator_bytes());
    // Against one buffer per operator output (running the operators one by one).
    CHECK(m.memory_bytes() * 4 <= m.memory_operator_bytes());
    // Against one buffer per kernel output: the plan is at its lower bound, conv1's output
    // (64 x 112 x 112 floats) live with the max pool's (64 x 56 x 56).
    CHECK(m.memory_bytes() < m.memory_naive_bytes() / 2);
    CHECK(m.memory_bytes() <= (64 * 112 * 112 + 64 * 56 * 56) * 4 + 64);
    // Each conv2d with its batch norm and relu (and the residual add) is one kernel.
    int convs = 0;
    for (const auto& n : m.graph().nodes()) convs += n.op == "conv2d_nchwc";
    CHECK(convs == 20);
    CHECK(int(m.kernels().size()) <= convs + 5);  // + the input's layout transform, the head
}

TEST_CASE("resnet50 has torchvision's parameters and output shape") {
    graph::Graph g = graph::testing::resnet50(2);
    int64_t parameters = 0, bn_channels = 0, convs = 0;
    for (const auto& n : g.nodes()) {
        if (n.is_constant()) parameters += n.value.size();
        if (n.op == "batch_norm") bn_channels += g.type(n.inputs[1]).shape[0];
        convs += n.op == "conv2d";
    }
    // torchvision.models.resnet50: 25,557,032 trainable parameters; the graph also holds each
    // batch norm's running mean and variance.
    CHECK(parameters == 25557032 + 2 * bn_channels);
    CHECK(convs == 53);  // 1 + 16 blocks x 3 + 4 downsample shortcuts
    CHECK(g.type(g.outputs()[0].second).shape == std::vector<int64_t>{2, 1000});
}
