// Test helpers of the graph tests: run a graph on given inputs and compare its outputs,
// fused against unfused.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "weft/weft.hpp"

namespace graph_check {

using namespace weft;

// How many of m's kernels have `part` in their name.
inline int count_kernels_named(const graph::Module& m, const std::string& part) {
    int n = 0;
    for (const graph::KernelInfo& k : m.kernels()) n += k.name.find(part) != std::string::npos;
    return n;
}

// Random inputs for every input of g, uniform in [-1, 1), one seed each from `seed` on.
inline std::map<std::string, BufferRef> random_inputs(const graph::Graph& g, uint64_t seed) {
    std::map<std::string, BufferRef> inputs;
    for (graph::Value v : g.inputs()) inputs[g.node(v).name] = Buffer<float>::random(g.type(v).shape, -1.f, 1.f, seed++);
    return inputs;
}

// Builds g, sets the inputs, runs it once and returns a copy of every output (float32).
inline std::vector<std::vector<float>> run_graph(graph::Module& m, const std::map<std::string, BufferRef>& inputs) {
    for (auto& [name, data] : inputs) m.set_input(name, data);
    m.run();
    std::vector<std::vector<float>> outputs;
    for (int i = 0; i < m.num_outputs(); ++i) {
        const BufferRef& out = m.get_output(i);
        const float* p = static_cast<const float*>(out.data());
        outputs.emplace_back(p, p + out.size());
    }
    return outputs;
}

// max |a - b| / max(1, |b|) over the elements (b the reference).
inline double max_error(const std::vector<float>& a, const std::vector<float>& b) {
    REQUIRE(a.size() == b.size());
    double worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        double e = std::abs(double(a[i]) - double(b[i])) / std::max(1.0, std::abs(double(b[i])));
        worst = std::max(worst, std::isnan(e) ? 1e30 : e);
    }
    return worst;
}

// A float32 buffer of `shape`, uniform in [-1, 1).
inline Buffer<float> random_buffer(std::vector<int64_t> shape, uint64_t seed) {
    return Buffer<float>::random(shape, -1.f, 1.f, seed);
}

// max |a - b| over the elements of two float32 buffers of one shape.
inline double max_difference(const BufferRef& a, const BufferRef& b) {
    REQUIRE(a.shape() == b.shape());
    const float *p = static_cast<const float*>(a.data()), *q = static_cast<const float*>(b.data());
    double worst = 0;
    for (int64_t i = 0; i < a.size(); ++i) worst = std::max(worst, double(std::abs(p[i] - q[i])));
    return worst;
}

// `m`, a module with symbolic dimensions built once from `g`, at the symbols' `values`
// (input 0 of `input_shape`, random from `seed`) against a module built for those values:
// the same output 0 to `tolerance` (0: the same bits), and run_debug there checking every
// kernel.
inline void check_symbolic_at(graph::Module& m, const graph::Graph& g, const std::map<std::string, int64_t>& values,
                              const std::vector<int64_t>& input_shape, uint64_t seed, double tolerance) {
    graph::Module fixed = graph::build(g.instantiate(values));
    auto x = random_buffer(input_shape, seed);
    m.set_input(0, x);
    fixed.set_input(0, x);
    m.run();
    fixed.run();
    REQUIRE(m.get_output(0).shape() == fixed.get_output(0).shape());
    CHECK(max_difference(m.get_output(0), fixed.get_output(0)) <= tolerance);
    if (tolerance == 0)
        CHECK(std::memcmp(m.get_output(0).data(), fixed.get_output(0).data(), size_t(m.get_output(0).size_bytes())) == 0);
    // run_debug at these sizes: every kernel against its nodes compiled for them.
    const graph::DebugReport debug = m.run_debug();
    CHECK(debug.ok);
    CHECK(debug.kernels_checked == int(m.kernels().size()));
    CHECK(max_difference(m.get_output(0), fixed.get_output(0)) <= tolerance);
}

// A CNN over a symbolic height and width (bounds [8, 32] and [8, 40]) and, with max_batch > 1,
// a symbolic batch: strided convs, pooling, a depthwise conv, a residual add, a global pool
// and a dense head.
inline graph::Graph symbolic_cnn(int64_t max_batch = 1) {
    graph::Graph g;
    graph::Value x = g.input("x", {max_batch, 3, 32, 40});
    if (max_batch > 1) g.set_symbolic(x, 0, {"batch", max_batch});
    g.set_symbolic(x, 2, {"height", 32, 8});
    g.set_symbolic(x, 3, {"width", 40, 8});
    graph::Value c = g.relu(g.conv2d(x, g.constant("w1", random_buffer({16, 3, 3, 3}, 1)),
                                     g.constant("b1", random_buffer({16}, 2)), {.stride = 2, .pad = 1}));
    c = g.max_pool2d(c, {.kernel = 3, .stride = 2, .pad = 1});
    graph::Value d =
        g.relu(g.conv2d(c, g.constant("w2", random_buffer({16, 1, 3, 3}, 3)), graph::Conv2dAttrs{.pad = 1, .groups = 16}));
    c = g.add(c, g.conv2d(d, g.constant("w3", random_buffer({16, 16, 1, 1}, 4))));
    graph::Value pooled = g.flatten(g.global_avg_pool2d(c), 1);
    g.output(g.softmax(g.dense(pooled, g.constant("w4", random_buffer({10, 16}, 5)))), "y");
    return g;
}

// The build options of tests that count the kernels or bytes of NCHW convolutions: the
// layout pass (blocked tensors, layout transforms) off, fusion as asked.
inline graph::BuildOptions nchw(bool fuse = true) {
    graph::BuildOptions o;
    o.fuse = fuse;
    o.convert_layout = false;
    return o;
}

// Builds g with `options` fused and unfused, runs both on the same random inputs and checks
// every output agrees within `tolerance`; returns the fused module (inputs set, run once).
inline graph::Module check_fused_matches_unfused(const graph::Graph& g, double tolerance = 1e-4,
                                                 graph::BuildOptions options = {}, uint64_t seed = 7) {
    auto inputs = random_inputs(g, seed);
    options.fuse = true;
    graph::Module fused = graph::build(g, Target::host(), options);
    options.fuse = false;
    graph::Module unfused = graph::build(g, Target::host(), options);
    auto got = run_graph(fused, inputs);
    auto want = run_graph(unfused, inputs);
    CHECK(fused.kernels().size() < unfused.kernels().size());
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        CAPTURE(fused.output_names()[i]);
        CHECK(max_error(got[i], want[i]) < tolerance);
        // Not all zeros: the network computes something (a relu of everything negative would
        // hide a wrong kernel).
        CHECK(std::any_of(want[i].begin(), want[i].end(), [](float x) { return std::abs(x) > 1e-3f; }));
    }
    return fused;
}

// The kernels' names of a module, for messages.
inline std::string kernel_names(const graph::Module& m) {
    std::string s;
    for (auto& k : m.kernels()) s += (s.empty() ? "" : ", ") + k.name;
    return s;
}

// Attention's scores over a symbolic length `seq` (up to max_seq): q [batch, seq, dim] times
// k [batch, dim, seq] (graph inputs "q" and "k").
inline graph::Value symbolic_attention_scores(graph::Graph& g, int64_t batch, int64_t max_seq, int64_t dim) {
    graph::Value q = g.input("q", {batch, max_seq, dim}), k = g.input("k", {batch, dim, max_seq});
    g.set_symbolic(q, 1, {"seq", max_seq});
    g.set_symbolic(k, 2, {"seq", max_seq});
    return g.batch_matmul(q, k);
}

// Sets inputs "q" and "k" of each module and runs it.
inline void run_attention(std::initializer_list<graph::Module*> modules, const BufferRef& q, const BufferRef& k) {
    for (graph::Module* m : modules) {
        m->set_input("q", q);
        m->set_input("k", k);
        m->run();
    }
}

}  // namespace graph_check
