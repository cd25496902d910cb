// convert_conv_layout: convolutions in the blocked layout NCHW[x]c, element-wise operators
// between them kept blocked, layout_transform only at the chain's boundaries; the outputs
// equal those of the NCHW graph.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "weft/graph/testing/models.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

int count_ops(const graph::Graph& g, const std::string& op) {
    return int(std::count_if(g.nodes().begin(), g.nodes().end(), [&](const graph::Node& n) { return n.op == op; }));
}

// The ranks of the graph's nodes of operator `op`, in order (4: NCHW, 5: blocked).
std::vector<size_t> ranks_of(const graph::Graph& g, const std::string& op) {
    std::vector<size_t> ranks;
    for (const graph::Node& n : g.nodes())
        if (n.op == op) ranks.push_back(n.type.shape.size());
    return ranks;
}

// The largest difference between the graph's outputs built blocked and built in NCHW, each
// relative to its output's largest magnitude.
double blocked_vs_nchw(const graph::Graph& g, graph::Module* blocked_out = nullptr) {
    graph::Module blocked = graph::build(g, Target::host(), {.convert_layout = true});
    graph::Module nchw = graph::build(g, Target::host(), {.convert_layout = false});
    for (int i = 0; i < blocked.num_inputs(); ++i) {
        auto x = Buffer<float>::random(blocked.input(i).shape(), -1.f, 1.f, uint64_t(20 + i));
        blocked.set_input(i, x);
        nchw.set_input(i, x);
    }
    blocked.run();
    nchw.run();
    if (blocked_out) *blocked_out = blocked;
    double worst_relative = 0;
    for (int o = 0; o < blocked.num_outputs(); ++o) {
        const BufferRef &a = blocked.get_output(o), &b = nchw.get_output(o);
        REQUIRE(a.shape() == b.shape());
        const float *p = static_cast<const float*>(a.data()), *q = static_cast<const float*>(b.data());
        double scale = 1e-30, worst = 0;
        for (int64_t i = 0; i < a.size(); ++i) scale = std::max(scale, double(std::abs(q[i])));
        for (int64_t i = 0; i < a.size(); ++i) {
            if (!std::isfinite(p[i]) || !std::isfinite(q[i])) return INFINITY;  // std::max would skip a NaN
            worst = std::max(worst, double(std::abs(p[i] - q[i])));
        }
        worst_relative = std::max(worst_relative, worst / scale);
    }
    return worst_relative;
}

}  // namespace

TEST_CASE("a chain of convolutions runs blocked with one transform in and one out") {
    graph::Graph g;
    graph::testing::Weights w(g, 3);
    graph::Value x = g.input("x", {1, 16, 14, 14});
    graph::Value y = x;
    for (int i = 0; i < 3; ++i) {
        std::string name = "conv" + std::to_string(i);
        y = g.conv2d(y, w.conv_weight(name + ".w", 32, i == 0 ? 16 : 32, 3), w.uniform(name + ".b", {32}, -0.1f, 0.1f),
                     {.pad = 1}, name);
        y = g.relu(y, name + ".relu");
    }
    g.output(g.max_pool2d(y, {.kernel = 2, .stride = 2}), "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    const graph::Graph& c = m.graph();
    CHECK(count_ops(c, "conv2d_nchwc") == 3);
    CHECK(count_ops(c, "conv2d") == 0);
    CHECK(count_ops(c, "layout_transform") == 2);      // the input in, the pool's input out
    CHECK(count_ops(c, "pack_conv2d_weight") == 0);    // folded into constants
    // Each convolution with its bias and relu is still one kernel.
    int conv_kernels = 0;
    for (const auto& k : m.kernels()) conv_kernels += k.name.rfind("conv2d_nchwc", 0) == 0;
    CHECK(conv_kernels == 3);
}

TEST_CASE("residual adds and depthwise convolutions stay blocked") {
    graph::Graph g;
    graph::testing::Weights w(g, 5);
    graph::Value x = g.input("x", {1, 24, 9, 9});
    graph::Value y = graph::testing::inverted_residual(g, w, x, 24, 24, 1, 4, "block");
    g.output(g.global_avg_pool2d(y), "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    CHECK(count_ops(m.graph(), "conv2d_nchwc") == 3);
    CHECK(count_ops(m.graph(), "layout_transform") == 2);
}

TEST_CASE("a strided ResNet block and the first 7x7 convolution of 3 channels convert") {
    graph::Graph g;
    graph::testing::Weights w(g, 9);
    graph::Value x = g.input("x", {1, 3, 33, 33});
    graph::Value y = graph::testing::conv_bn(g, w, x, 3, 16, 7, 2, 1, graph::testing::Activation::Relu, "stem");
    y = graph::testing::basic_block(g, w, y, 16, 32, 2, "layer");
    g.output(y, "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    CHECK(count_ops(m.graph(), "conv2d") == 0);
}

TEST_CASE("grouped convolutions run blocked, their groups filled up to whole blocks") {
    // ResNeXt's groups of 4 and 32 channels, RegNet's of 8 over 104 channels (blocks of 8),
    // groups with twice the outputs of their inputs, after a conv that blocks by 64 (a
    // re-blocked input): each against the NCHW module; groups of one input channel and two
    // outputs (8 times the work even in blocks of 8) stay NCHW.
    struct Case {
        int64_t C, O, groups, kernel;
        bool blocked;
    };
    for (const Case& k : {Case{128, 128, 32, 3, true}, Case{256, 256, 8, 3, true}, Case{104, 104, 13, 3, true},
                          Case{64, 128, 8, 1, true}, Case{64, 64, 32, 3, true},
                          Case{64, 128, 64, 3, false}}) {
        CAPTURE(k.C);
        CAPTURE(k.groups);
        graph::Graph g;
        graph::testing::Weights w(g, 18);
        graph::Value x = g.input("x", {1, 16, 10, 9});
        graph::Value in = g.relu(g.conv2d(x, w.conv_weight("in.w", k.C, 16, 1), {}, "in"));
        graph::Value y = g.conv2d(in, w.conv_weight("grouped.w", k.O, k.C / k.groups, k.kernel),
                                  {.stride = 2, .pad = k.kernel / 2, .groups = k.groups}, "grouped");
        g.output(g.relu(y), "y");
        graph::Module m;
        CHECK(blocked_vs_nchw(g, &m) < 1e-5);
        const graph::Node& grouped = m.graph().node(*m.graph().find("grouped"));
        CHECK(grouped.op == (k.blocked ? "conv2d_nchwc" : "conv2d"));
    }
}

TEST_CASE("grouped convolutions and channel counts no block divides stay in NCHW") {
    graph::Graph g;
    graph::testing::Weights w(g, 4);
    graph::Value x = g.input("x", {1, 8, 6, 6});
    graph::Value y = g.conv2d(x, w.conv_weight("grouped.w", 20, 4, 3), {.pad = 1, .groups = 2}, "grouped");
    // 20 input channels: no block of 8 or 16 divides them, and 2 blocks of 16 would be 5/8 zeros.
    y = g.conv2d(y, w.conv_weight("odd.w", 36, 20, 1), {}, "odd");
    g.output(y, "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    CHECK(count_ops(m.graph(), "conv2d") == 2);
    CHECK(count_ops(m.graph(), "conv2d_nchwc") == 0);
}

TEST_CASE("resnet18 and mobilenet_v2 at 64x64 give the same logits blocked and in NCHW") {
    CHECK(blocked_vs_nchw(graph::testing::resnet18(1, 64, 10)) < 1e-4);
    CHECK(blocked_vs_nchw(graph::testing::mobilenet_v2(1, 64, 10)) < 1e-4);
}

TEST_CASE("channel counts that nearly fill blocks of 16 get zero channels: 120 and a 1000-way classifier") {
    graph::Graph g;
    graph::testing::Weights w(g, 12);
    graph::Value x = g.input("x", {1, 16, 9, 9});
    graph::Value y = g.relu(g.conv2d(x, w.conv_weight("a.w", 120, 16, 3), w.uniform("a.b", {120}, -0.1f, 0.1f),
                                     {.pad = 1}, "a"));
    y = g.sigmoid(g.conv2d(y, w.conv_weight("b.w", 24, 120, 1), w.uniform("b.b", {24}, -0.1f, 0.1f), {}, "b"));
    y = g.max_pool2d(y, {.kernel = 2, .stride = 2});
    graph::Value logits = g.relu(g.conv2d(y, w.conv_weight("c.w", 1000, 24, 1), w.uniform("c.b", {1000}, -0.1f, 0.1f),
                                          {}, "c"));
    g.output(g.global_avg_pool2d(logits), "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    const graph::Graph& c = m.graph();
    CHECK(count_ops(c, "conv2d_nchwc") == 3);
    CHECK(count_ops(c, "conv2d") == 0);
    CHECK(count_ops(c, "layout_transform") == 2);  // in, and out after the pool
    // 120 channels in one block of 128 (the next conv sums over the 120 real ones) and 1000
    // -> 1008 in blocks of 16 (one block of 63 vectors would be too wide); 24 in three exact
    // blocks of 8 (two of 16 would be a quarter zeros).
    std::vector<std::pair<int64_t, int64_t>> blocks, weight_ic;
    for (const graph::Node& n : c.nodes())
        if (n.op == "conv2d_nchwc") {
            blocks.emplace_back(n.type.shape[1], n.type.shape[4]);
            const graph::TensorType& w = c.type(n.inputs[1]);
            weight_ic.emplace_back(w.shape[1], w.shape[4]);
        }
    CHECK(blocks == std::vector<std::pair<int64_t, int64_t>>{{1, 128}, {3, 8}, {63, 16}});
    CHECK(weight_ic == std::vector<std::pair<int64_t, int64_t>>{{1, 16}, {1, 120}, {3, 8}});
}

TEST_CASE("odd channel counts (72, 200) in one block of whole vectors through convs, depthwise and pools") {
    graph::Graph g;
    graph::testing::Weights w(g, 16);
    graph::Value x = g.input("x", {1, 72, 15, 15});  // the input itself goes to one block of 80
    graph::Value y = g.relu(g.conv2d(x, w.conv_weight("a.w", 72, 72, 3), w.uniform("a.b", {72}, -0.1f, 0.1f),
                                     {.pad = 1}, "a"));
    y = g.conv2d(y, w.conv_weight("dw.w", 72, 1, 3), {.stride = 2, .pad = 1, .groups = 72}, "dw");  // 8x8
    y = g.relu(g.conv2d(y, w.conv_weight("b.w", 200, 72, 1), w.uniform("b.b", {200}, -0.1f, 0.1f), {}, "b"));
    y = g.max_pool2d(y, {.kernel = 2, .stride = 2});
    y = g.conv2d(y, w.conv_weight("c.w", 120, 200, 3), {.stride = 2, .pad = 1}, "c");
    g.output(g.global_avg_pool2d(y), "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    const graph::Graph& c = m.graph();
    CHECK(count_ops(c, "conv2d") == 0);
    CHECK(count_ops(c, "layout_transform") == 2);  // in and out
    std::vector<int64_t> blocks, weight_ic;
    for (const graph::Node& n : c.nodes())
        if (n.op == "conv2d_nchwc") {
            blocks.push_back(n.type.shape[4]);
            weight_ic.push_back(c.type(n.inputs[1]).shape[4]);
        }
    CHECK(blocks == std::vector<int64_t>{80, 80, 208, 128});
    CHECK(weight_ic == std::vector<int64_t>{72, 1, 72, 200});
}

TEST_CASE("an operator that is not finite at zero leaves zero-filled blocks for NCHW") {
    graph::Graph g;
    graph::testing::Weights w(g, 13);
    graph::Value x = g.input("x", {1, 16, 7, 7});
    graph::Value a = g.sigmoid(g.conv2d(x, w.conv_weight("a.w", 120, 16, 3), {.pad = 1}, "a"));
    // A bias of 4 to 6 keeps the real channels of b away from 0; its filler channels are 0.
    graph::Value b = g.conv2d(x, w.conv_weight("b.w", 120, 16, 3), w.uniform("b.b", {120}, 4.f, 6.f), {.pad = 1}, "b");
    // In the 8 zero channels of the blocked forms: sigmoid(0) / 0 = inf, which the next conv
    // would multiply by its zero weights into NaN; so the division runs in NCHW.
    graph::Value y = g.div(a, b);
    y = g.conv2d(y, w.conv_weight("c.w", 16, 120, 3), {.pad = 1}, "c");
    g.output(y, "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    CHECK(count_ops(m.graph(), "conv2d_nchwc") == 3);
    CHECK(ranks_of(m.graph(), "div") == std::vector<size_t>{4});
}

TEST_CASE("a concat along the channels of inputs blocked alike stays blocked") {
    graph::Graph g;
    graph::testing::Weights w(g, 14);
    graph::Value x = g.input("x", {1, 32, 12, 12});
    graph::Value squeeze = g.relu(g.conv2d(x, w.conv_weight("s.w", 16, 32, 1), {}, "squeeze"));
    graph::Value e1 = g.relu(g.conv2d(squeeze, w.conv_weight("e1.w", 32, 16, 1), {}, "expand1x1"));
    graph::Value e3 = g.relu(g.conv2d(squeeze, w.conv_weight("e3.w", 64, 16, 3), {.pad = 1}, "expand3x3"));
    graph::Value y = g.concat({e1, e3}, 1, "fire");
    y = g.conv2d(y, w.conv_weight("next.w", 16, 96, 1), {}, "next");
    g.output(y, "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    CHECK(ranks_of(m.graph(), "concat") == std::vector<size_t>{5});
    CHECK(count_ops(m.graph(), "layout_transform") == 2);  // in and out only
}

TEST_CASE("a concat of mostly blocked inputs blocks its NCHW ones: an ASPP's pooling branch") {
    // Three conv branches (blocked) and a pooled, upsampled branch (a resize: NCHW) along the
    // channels, then a 1x1 conv: the upsampled branch is blocked, not the three convs unblocked.
    graph::Graph g;
    graph::testing::Weights w(g, 16);
    graph::Value x = g.input("x", {1, 32, 14, 14});
    std::vector<graph::Value> branches;
    for (int k = 0; k < 3; ++k)
        branches.push_back(g.relu(g.conv2d(x, w.conv_weight("b" + std::to_string(k) + ".w", 32, 32, 1), {}, "b" + std::to_string(k))));
    graph::Value pooled = g.global_avg_pool2d(x, "pool");
    graph::Value up = g.add_node("resize", {g.relu(pooled)},
                                 {{"sizes", std::vector<int64_t>{1, 32, 14, 14}}, {"mode", std::string("linear")}}, "up");
    branches.push_back(up);
    graph::Value y = g.conv2d(g.concat(branches, 1, "aspp"), w.conv_weight("project.w", 32, 128, 1), {}, "project");
    g.output(y, "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    CHECK(ranks_of(m.graph(), "concat") == std::vector<size_t>{5});
    // A minority of blocked channels stays NCHW: one 16-channel conv beside a 64-channel input.
    graph::Graph h;
    graph::testing::Weights wh(h, 17);
    graph::Value hx = h.input("x", {1, 16, 7, 7});
    graph::Value other = h.input("other", {1, 64, 7, 7});
    h.output(h.concat({h.conv2d(hx, wh.conv_weight("c.w", 16, 16, 3), {.pad = 1}, "c"), other}, 1), "y");
    graph::Module mh;
    CHECK(blocked_vs_nchw(h, &mh) < 1e-5);
    CHECK(ranks_of(mh.graph(), "concat") == std::vector<size_t>{4});
}

TEST_CASE("a DenseNet layer stays blocked: concat of blocks 64 and 32, batch norm, relu, conv") {
    // The block's input (a wide conv's 64-channel blocks) and a 3x3 conv's 32 channels (blocks
    // of 32) concatenated, then batch norm (constant parameters, no conv to absorb it) and
    // relu before the next conv, as DenseNet's layers are.
    graph::Graph g;
    graph::testing::Weights w(g, 19);
    graph::Value x = g.input("x", {1, 16, 20, 20});
    graph::Value stem = g.relu(g.conv2d(x, w.conv_weight("stem.w", 64, 16, 3), {.pad = 1}, "stem"));
    graph::Value grown = g.conv2d(stem, w.conv_weight("grow.w", 32, 64, 3), {.pad = 1}, "grow");
    graph::Value cat = g.concat({stem, grown}, 1, "cat");
    graph::Value y = g.relu(w.batch_norm(cat, 96, "norm"));
    g.output(g.conv2d(y, w.conv_weight("next.w", 32, 96, 1), {}, "next"), "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    CHECK(ranks_of(m.graph(), "concat") == std::vector<size_t>{5});
    CHECK(count_ops(m.graph(), "batch_norm") == 0);  // a blocked multiply and add
    // In, out, and the stem's 64-channel blocks re-blocked by 32 for the concat (through NCHW:
    // two transforms, fused into the concat's kernel).
    CHECK(count_ops(m.graph(), "layout_transform") == 4);
}

TEST_CASE("a squeeze-excite block's per-channel scale multiplies the blocked data") {
    // x * sigmoid(conv(relu(conv(global_avg_pool(x))))): the [1, C, 1, 1] scale is blocked
    // and broadcast over the pixels, not x converted to NCHW and back.
    graph::Graph g;
    graph::testing::Weights w(g, 20);
    graph::Value x = g.input("x", {1, 16, 12, 12});
    graph::Value c = g.relu(g.conv2d(x, w.conv_weight("c.w", 64, 16, 3), {.pad = 1}, "c"));
    graph::Value squeeze = g.relu(g.conv2d(g.global_avg_pool2d(c), w.conv_weight("s.w", 16, 64, 1), {}, "s"));
    graph::Value scale = g.sigmoid(g.conv2d(squeeze, w.conv_weight("e.w", 64, 16, 1), {}, "e"));
    graph::Value excited = g.mul(c, scale, "excite");
    g.output(g.conv2d(excited, w.conv_weight("p.w", 32, 64, 1), {}, "p"), "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    CHECK(ranks_of(m.graph(), "mul") == std::vector<size_t>{5});
    CHECK(count_ops(m.graph(), "layout_transform") == 2);  // in and out only
}

TEST_CASE("a concat of different blocks takes the smallest; one with a partial block goes through NCHW") {
    graph::Graph g;
    graph::testing::Weights w(g, 15);
    graph::Value x = g.input("x", {1, 16, 7, 7});
    graph::Value a = g.conv2d(x, w.conv_weight("a.w", 64, 16, 3), {.pad = 1}, "a");  // blocks of 32
    graph::Value b = g.conv2d(x, w.conv_weight("b.w", 48, 16, 3), {.pad = 1}, "b");  // blocks of 16
    graph::Value c = g.conv2d(x, w.conv_weight("c.w", 120, 16, 3), {.pad = 1}, "c");  // 120 of 128 channels
    g.output(g.concat({a, b}, 1), "ab");
    g.output(g.concat({b, c}, 1), "bc");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    CHECK(ranks_of(m.graph(), "concat") == std::vector<size_t>{5, 4});  // a, b in blocks of 16; 120 channels do not fill them
}

TEST_CASE("element-wise operators with a single-value operand stay blocked: a QDQ model's quantize chain") {
    // conv -> x / scale, round, + zero point, clip, - zero point, * scale (QuantizeLinear and
    // DequantizeLinear with one scale and zero point) -> conv: the scalars broadcast over the
    // blocked data as they are, no layout transform between the convolutions.
    graph::Graph g;
    graph::testing::Weights w(g, 21);
    graph::Value x = g.input("x", {1, 16, 10, 10});
    graph::Value c = g.conv2d(x, w.conv_weight("c.w", 32, 16, 3), {.pad = 1}, "c");
    Buffer<float> scale({1}), zero_point({1, 1, 1, 1});
    scale.data()[0] = 0.05f;
    zero_point.data()[0] = 7.0f;
    graph::Value s = g.constant("scale", scale), z = g.constant("zero_point", zero_point);
    graph::Value q = g.clip(g.add(g.add_node("round", {g.div(c, s)}), z), 0, 255, "q");
    graph::Value d = g.mul(g.sub(q, z), s, "dq");
    g.output(g.conv2d(d, w.conv_weight("p.w", 16, 32, 1), {}, "p"), "y");
    graph::Module m;
    CHECK(blocked_vs_nchw(g, &m) < 1e-5);
    CHECK(ranks_of(m.graph(), "add") == std::vector<size_t>{5});
    CHECK(ranks_of(m.graph(), "mul") == std::vector<size_t>{5});
    CHECK(count_ops(m.graph(), "layout_transform") == 2);  // in and out only
}
