// Shared by the tests of whole networks on the GPU (graph::build for Target::cuda()): the
// networks, the checks that every kernel is CUDA compiled by NVRTC, the fused groups'
// comparison with the CPU module's, and the comparison of outputs.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "weft/graph/testing/models.hpp"
#include "weft/runtime/cuda/cuda.hpp"
#include "weft/weft.hpp"

namespace cuda_graph_test {

using namespace weft;

// Compiles every kernel and plans memory, allocating nothing: what runs without a GPU.
inline graph::BuildOptions compile_only() {
    graph::BuildOptions o;
    o.allocate = false;
    return o;
}

// The CPU module's options with the layout CUDA keeps (NCHW; convert_conv_layout is off for
// CUDA), so both build the same graph and fuse it the same way.
inline graph::BuildOptions cpu_like_cuda(bool allocate = true) {
    graph::BuildOptions o;
    o.convert_layout = false;
    o.allocate = allocate;
    return o;
}

// Every kernel of `m` is CUDA C that NVRTC compiled for sm_90: its PTX defines the kernel.
inline void check_every_kernel_is_ptx(const graph::Module& m) {
    REQUIRE(m.compiled_kernels().size() == m.kernels().size());
    for (size_t k = 0; k < m.compiled_kernels().size(); ++k) {
        const Kernel& kernel = m.compiled_kernels()[k];
        const DeviceCode* dc = kernel.module()->device_code();
        REQUIRE_MESSAGE(dc != nullptr, "kernel ", m.kernels()[k].name, " is not a CUDA kernel");
        CHECK(dc->arch == "sm_90");
        CHECK(dc->source.find("__global__") != std::string::npos);
        CHECK_MESSAGE(dc->ptx.find(".entry " + dc->kernel_name + "(") != std::string::npos, "kernel ",
                      m.kernels()[k].name, ": no .entry ", dc->kernel_name, " in its PTX");
    }
}

// The fused groups (kernel names and the nodes each computes) of the GPU module equal the
// CPU module's: fusion does not depend on the target.
inline void check_same_groups(const graph::Module& cpu, const graph::Module& gpu) {
    REQUIRE(cpu.kernels().size() == gpu.kernels().size());
    for (size_t k = 0; k < cpu.kernels().size(); ++k) {
        CHECK(cpu.kernels()[k].name == gpu.kernels()[k].name);
        CHECK(cpu.kernels()[k].nodes == gpu.kernels()[k].nodes);
        CHECK(cpu.kernels()[k].master == gpu.kernels()[k].master);
    }
    CHECK(cpu.memory_bytes() == gpu.memory_bytes());  // the same plan
}

inline int count_kernels_named(const graph::Module& m, const std::string& part) {
    int n = 0;
    for (const graph::KernelInfo& k : m.kernels()) n += k.name.find(part) != std::string::npos;
    return n;
}

inline int count_ops(const graph::Graph& g, const std::string& op) {
    int n = 0;
    for (const graph::Node& node : g.nodes()) n += node.is_op() && node.op == op;
    return n;
}

// A transformer encoder block on [seq, dim]: single-head self-attention (dense q/k/v,
// batch_matmul scores, scale, softmax, batch_matmul with v), output projection + residual,
// layer norm, a GELU MLP + residual, layer norm.
inline graph::Graph transformer_block(int64_t seq = 16, int64_t dim = 64, int64_t hidden = 128, uint64_t seed = 5) {
    graph::Graph g;
    graph::testing::Weights w(g, seed);
    graph::Value x = g.input("x", {seq, dim});
    auto proj = [&](graph::Value v, int64_t out, int64_t in, const std::string& name) {
        return g.dense(v, w.dense_weight(name + ".weight", out, in), w.uniform(name + ".bias", {out}, -0.1f, 0.1f), name);
    };
    graph::Value q = g.reshape(proj(x, dim, dim, "q"), {1, seq, dim});
    graph::Value k = g.reshape(proj(x, dim, dim, "k"), {1, seq, dim});
    graph::Value v = g.reshape(proj(x, dim, dim, "v"), {1, seq, dim});
    graph::Value scores = g.batch_matmul(q, g.transpose(k, {0, 2, 1}), "scores");
    scores = g.mul(scores, g.constant("scale", Buffer<float>::random({1}, 0.12f, 0.13f, seed + 100)));
    graph::Value p = g.softmax(scores, -1, "attn");
    graph::Value ctx = g.reshape(g.batch_matmul(p, v, "context"), {seq, dim});
    graph::Value h = g.add(proj(ctx, dim, dim, "o"), x, "residual1");
    h = g.layer_norm(h, w.uniform("ln1.gamma", {dim}, 0.5f, 1.5f), w.uniform("ln1.beta", {dim}, -0.1f, 0.1f), 1e-5,
                     "ln1");
    graph::Value f = g.gelu(proj(h, hidden, dim, "fc1"), "gelu");
    graph::Value y = g.add(proj(f, dim, hidden, "fc2"), h, "residual2");
    y = g.layer_norm(y, w.uniform("ln2.gamma", {dim}, 0.5f, 1.5f), w.uniform("ln2.beta", {dim}, -0.1f, 0.1f), 1e-5,
                     "ln2");
    g.output(y, "y");
    return g;
}

// A small CNN with every kind of kernel a CNN has: conv + batch norm + relu, a strided
// conv with a residual 1x1 shortcut, depthwise conv, max pooling, global average pooling,
// dense and softmax. Small enough to run in the CPU emulator of CUDA C.
inline graph::Graph small_cnn(uint64_t seed = 9) {
    using graph::testing::Activation;
    graph::Graph g;
    graph::testing::Weights w(g, seed);
    graph::Value x = g.input("image", {1, 3, 12, 12});
    graph::Value a = graph::testing::conv_bn(g, w, x, 3, 8, 3, 1, 1, Activation::Relu, "conv1");
    graph::Value b = graph::testing::conv_bn(g, w, a, 8, 8, 3, 2, 1, Activation::None, "conv2");
    graph::Value s = graph::testing::conv_bn(g, w, a, 8, 8, 1, 2, 1, Activation::None, "shortcut");
    graph::Value r = g.relu(g.add(b, s), "block.relu");
    graph::Value d = graph::testing::conv_bn(g, w, r, 8, 8, 3, 1, 8, Activation::Relu6, "dw");
    graph::Value p = g.max_pool2d(d, {.kernel = 2, .stride = 2}, "pool");
    graph::Value logits = graph::testing::classifier(g, w, p, 8, 10);
    g.output(g.softmax(logits, -1, "prob"), "prob");
    g.output(logits, "logits");
    return g;
}

// |have - want| <= atol + rtol * |want| everywhere (float32).
inline void compare(const BufferRef& want, const BufferRef& have, double rtol = 1e-4, double atol = 1e-5) {
    REQUIRE(want.shape() == have.shape());
    REQUIRE(have.device().is_cpu());
    const float* w = static_cast<const float*>(want.data());
    const float* h = static_cast<const float*>(have.data());
    double worst = 0;
    int64_t bad = 0;
    for (int64_t i = 0; i < want.size(); ++i) {
        double err = std::abs(double(w[i]) - double(h[i]));
        worst = std::max(worst, err);
        if (!(err <= atol + rtol * std::abs(double(w[i])))) ++bad;
    }
    CHECK_MESSAGE(bad == 0, bad, " of ", want.size(), " elements differ; worst absolute error ", worst);
}

inline bool have_gpu() { return weft::cuda::device_count() > 0; }

inline void report_no_gpu() {
    std::cout << "skipped: no CUDA device (" << weft::cuda::unavailable_reason()
              << "); every kernel compiled, the network did not run\n";
}

}  // namespace cuda_graph_test
