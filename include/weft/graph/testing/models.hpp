// Whole networks built with the graph builder, with random weights (a fixed seed): what the
// tests and benchmarks run, and examples of the builder API at the scale of a real model.
// Shapes and layers follow torchvision's models (inference: batch norm with running
// statistics, no dropout).
//
//   graph::Graph g = graph::testing::resnet18();         // input "data" [1, 3, 224, 224]
//   graph::Graph m = graph::testing::mobilenet_v2(1, 224);
//   graph::Graph r = graph::testing::resnet50(8);       // input "data" [8, 3, 224, 224]
#pragma once
#include <cmath>
#include <string>

#include "weft/graph/graph.hpp"

namespace weft::graph::testing {

// Random weights for one network: every tensor from its own seed, scaled so activations
// keep their size through the layers (He-style: uniform in +-sqrt(3 / fan_in)).
class Weights {
public:
    Weights(Graph& g, uint64_t seed) : g_(g), seed_(seed) {}

    Value uniform(const std::string& name, std::vector<int64_t> shape, float lo, float hi) {
        return g_.constant(name, Buffer<float>::random(std::move(shape), lo, hi, seed_++));
    }
    Value conv_weight(const std::string& name, int64_t out, int64_t in_per_group, int64_t k) {
        float a = std::sqrt(3.0f / float(in_per_group * k * k));
        return uniform(name, {out, in_per_group, k, k}, -a, a);
    }
    Value dense_weight(const std::string& name, int64_t out, int64_t in) {
        float a = std::sqrt(3.0f / float(in));
        return uniform(name, {out, in}, -a, a);
    }
    // Batch norm over `channels`: scale near 1, shift and mean near 0, variance near 1.
    Value batch_norm(Value x, int64_t channels, const std::string& name) {
        return g_.batch_norm(x, uniform(name + ".gamma", {channels}, 0.5f, 1.5f),
                             uniform(name + ".beta", {channels}, -0.1f, 0.1f),
                             uniform(name + ".mean", {channels}, -0.1f, 0.1f),
                             uniform(name + ".var", {channels}, 0.5f, 1.5f), 1e-5, name);
    }

private:
    Graph& g_;
    uint64_t seed_;
};

// conv (no bias) + batch norm (+ relu / relu6).
enum class Activation { None, Relu, Relu6 };

inline Value conv_bn(Graph& g, Weights& w, Value x, int64_t in, int64_t out, int64_t k, int64_t stride,
                     int64_t groups, Activation act, const std::string& name) {
    Value y = g.conv2d(x, w.conv_weight(name + ".weight", out, in / groups, k),
                       {.stride = stride, .pad = k / 2, .groups = groups}, name);
    y = w.batch_norm(y, out, name + ".bn");
    if (act == Activation::Relu) y = g.relu(y, name + ".relu");
    if (act == Activation::Relu6) y = g.clip(y, 0.0, 6.0, name + ".relu6");
    return y;
}

// The classifier head: global average pool, flatten, dense with bias.
inline Value classifier(Graph& g, Weights& w, Value x, int64_t channels, int64_t classes) {
    Value pooled = g.global_avg_pool2d(x, "avgpool");
    Value flat = g.add_node("flatten", {pooled}, {{"axis", int64_t(1)}}, "flatten");
    return g.dense(flat, w.dense_weight("fc.weight", classes, channels),
                   w.uniform("fc.bias", {classes}, -0.1f, 0.1f), "fc");
}

// ResNet basic block: conv3x3-bn-relu, conv3x3-bn, + shortcut (1x1 conv-bn when the shape
// changes), relu.
inline Value basic_block(Graph& g, Weights& w, Value x, int64_t in, int64_t out, int64_t stride,
                         const std::string& name) {
    Value y = conv_bn(g, w, x, in, out, 3, stride, 1, Activation::Relu, name + ".conv1");
    y = conv_bn(g, w, y, out, out, 3, 1, 1, Activation::None, name + ".conv2");
    Value shortcut = x;
    if (stride != 1 || in != out) shortcut = conv_bn(g, w, x, in, out, 1, stride, 1, Activation::None, name + ".downsample");
    return g.relu(g.add(y, shortcut, name + ".add"), name + ".relu");
}

// A ResNet: the 7x7 stem and max pool, four stages of blocks[i] blocks of widths 64, 128, 256,
// 512 (the first block of stages 2-4 with stride 2), the classifier. `block(g, w, x, in,
// width, stride, name)` adds one block, whose output has width * expansion channels.
template <typename Block>
Graph resnet(int64_t batch, int64_t image, int64_t classes, uint64_t seed, const int64_t (&blocks)[4],
             int64_t expansion, Block block) {
    Graph g;
    Weights w(g, seed);
    Value x = g.input("data", {batch, 3, image, image});
    x = conv_bn(g, w, x, 3, 64, 7, 2, 1, Activation::Relu, "conv1");
    x = g.max_pool2d(x, {.kernel = 3, .stride = 2, .pad = 1}, "maxpool");
    int64_t in = 64;
    const int64_t widths[] = {64, 128, 256, 512};
    for (int layer = 0; layer < 4; ++layer) {
        for (int64_t b = 0; b < blocks[layer]; ++b) {
            int64_t stride = layer > 0 && b == 0 ? 2 : 1;
            std::string name = "layer" + std::to_string(layer + 1) + "." + std::to_string(b);
            x = block(g, w, x, in, widths[layer], stride, name);
            in = widths[layer] * expansion;
        }
    }
    g.output(classifier(g, w, x, in, classes), "logits");
    return g;
}

inline Graph resnet18(int64_t batch = 1, int64_t image = 224, int64_t classes = 1000, uint64_t seed = 1) {
    return resnet(batch, image, classes, seed, {2, 2, 2, 2}, 1, basic_block);
}

// ResNet bottleneck block (torchvision's v1.5: the stride on the 3x3 conv): 1x1 reduce,
// 3x3, 1x1 expand to 4 x width, + shortcut (1x1 conv-bn when the shape changes), relu.
inline Value bottleneck_block(Graph& g, Weights& w, Value x, int64_t in, int64_t width, int64_t stride,
                              const std::string& name) {
    const int64_t out = width * 4;
    Value y = conv_bn(g, w, x, in, width, 1, 1, 1, Activation::Relu, name + ".conv1");
    y = conv_bn(g, w, y, width, width, 3, stride, 1, Activation::Relu, name + ".conv2");
    y = conv_bn(g, w, y, width, out, 1, 1, 1, Activation::None, name + ".conv3");
    Value shortcut = x;
    if (stride != 1 || in != out) shortcut = conv_bn(g, w, x, in, out, 1, stride, 1, Activation::None, name + ".downsample");
    return g.relu(g.add(y, shortcut, name + ".add"), name + ".relu");
}

inline Graph resnet50(int64_t batch = 1, int64_t image = 224, int64_t classes = 1000, uint64_t seed = 3) {
    return resnet(batch, image, classes, seed, {3, 4, 6, 3}, 4, bottleneck_block);
}

// MobileNetV2 inverted residual: 1x1 expand (when t > 1), 3x3 depthwise, 1x1 linear
// projection, + input when the shape is kept.
inline Value inverted_residual(Graph& g, Weights& w, Value x, int64_t in, int64_t out, int64_t stride,
                               int64_t expand, const std::string& name) {
    int64_t hidden = in * expand;
    Value y = x;
    if (expand != 1) y = conv_bn(g, w, y, in, hidden, 1, 1, 1, Activation::Relu6, name + ".expand");
    y = conv_bn(g, w, y, hidden, hidden, 3, stride, hidden, Activation::Relu6, name + ".depthwise");
    y = conv_bn(g, w, y, hidden, out, 1, 1, 1, Activation::None, name + ".project");
    if (stride == 1 && in == out) y = g.add(x, y, name + ".add");
    return y;
}

inline Graph mobilenet_v2(int64_t batch = 1, int64_t image = 224, int64_t classes = 1000, uint64_t seed = 2) {
    Graph g;
    Weights w(g, seed);
    Value x = g.input("data", {batch, 3, image, image});
    x = conv_bn(g, w, x, 3, 32, 3, 2, 1, Activation::Relu6, "features.0");
    struct Stage {
        int64_t expand, channels, repeats, stride;
    };
    const Stage stages[] = {{1, 16, 1, 1},  {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                            {6, 96, 3, 1},  {6, 160, 3, 2}, {6, 320, 1, 1}};
    int64_t in = 32;
    int block = 1;
    for (const Stage& s : stages)
        for (int64_t r = 0; r < s.repeats; ++r, ++block) {
            x = inverted_residual(g, w, x, in, s.channels, r == 0 ? s.stride : 1, s.expand,
                                  "features." + std::to_string(block));
            in = s.channels;
        }
    x = conv_bn(g, w, x, in, 1280, 1, 1, 1, Activation::Relu6, "features.18");
    g.output(classifier(g, w, x, 1280, classes), "logits");
    return g;
}

}  // namespace weft::graph::testing
