// weft_tune_sketch: template-free schedules (autotune::auto_schedule, Ansor's idea) against the
// hand-written templates, one thread. Each task is a plain tensor expression registered as an
// operator without a schedule (no template knows it: it gets the sketch), built with the
// sketch's default and tuned by graph::tune (the model tuner by default), its kernel timed;
// beside it, the same computation through weft's own operator and its template (topi: packed
// GEMM, blocked convolution, the row reduction), untuned. Kernels are timed by the profiler (mean
// of 9 runs), in alternating rounds; a figure is the median over rounds.
//
//   weft_tune_sketch [--trials N] [--rounds R] [--tuner model|random] [--seed S] [--save-records PATH]
//   (prints a markdown table; benchmarks/run_tune_sketch.sh writes its RESULTS.md section)
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <weft/weft.hpp>

#include "tune_util.hpp"

using namespace weft;

namespace {

// Plain tensor expressions, as a user would write them.
Tensor plain_matmul(const std::vector<Tensor>& in, const graph::Attrs&) {
    IterVar k = reduce_axis(0, in[0].shape()[1], "k");
    return compute({in[0].shape()[0], in[1].shape()[1]},
                   [&](Expr i, Expr j) { return sum(in[0](i, k) * in[1](k, j), {k}); }, "mm");
}

Tensor plain_conv3x3(const std::vector<Tensor>& in, const graph::Attrs&) {
    const Tensor& x = in[0];
    const Tensor& w = in[1];
    Expr C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
    Tensor p = compute({x.shape()[0], C, H + 2, W + 2}, [&](Expr n, Expr c, Expr h, Expr v) {
        return if_then_else(h >= 1 && h <= H && v >= 1 && v <= W, x(n, c, h - 1, v - 1), 0.f);
    }, "pad");
    IterVar rc = reduce_axis(0, C, "rc"), ry = reduce_axis(0, 3, "ry"), rx = reduce_axis(0, 3, "rx");
    return compute({x.shape()[0], w.shape()[0], H, W}, [&](Expr n, Expr f, Expr y, Expr v) {
        return sum(p(n, rc, y + ry, v + rx) * w(f, rc, ry, rx), {rc, ry, rx});
    }, "conv");
}

Tensor plain_row_sum(const std::vector<Tensor>& in, const graph::Attrs&) {
    IterVar k = reduce_axis(0, in[0].shape()[1], "k");
    return compute({in[0].shape()[0]}, [&](Expr i) { return sum(in[0](i, k), {k}); }, "rows");
}

// Registered without a schedule: a reduction without one gets the sketch.
void register_plain_ops() {
    graph::register_op({.name = "user_row_sum", .pattern = graph::OpPattern::CommReduce, .min_inputs = 1,
                        .max_inputs = 1,
                        .infer = [](const std::vector<graph::TensorType>& in, const graph::Attrs&) {
                            return graph::TensorType{{in[0].shape[0]}, f32};
                        },
                        .compute = plain_row_sum});
    graph::register_op({.name = "user_matmul", .pattern = graph::OpPattern::OutEWiseFusable, .min_inputs = 2,
                        .max_inputs = 2,
                        .infer = [](const std::vector<graph::TensorType>& in, const graph::Attrs&) {
                            return graph::TensorType{{in[0].shape[0], in[1].shape[1]}, f32};
                        },
                        .compute = plain_matmul});
    graph::register_op({.name = "user_conv3x3", .pattern = graph::OpPattern::OutEWiseFusable, .min_inputs = 2,
                        .max_inputs = 2,
                        .infer = [](const std::vector<graph::TensorType>& in, const graph::Attrs&) {
                            return graph::TensorType{{in[0].shape[0], in[1].shape[0], in[0].shape[2], in[0].shape[3]}, f32};
                        },
                        .compute = plain_conv3x3});
}

struct Task {
    std::string name;
    std::vector<std::vector<int64_t>> inputs;
    std::function<graph::Graph(const std::string& op)> make;  // op: user_*, or "" for weft's own
};

graph::Graph gemm(int64_t M, int64_t N, int64_t K, const std::string& op) {
    graph::Graph g;
    graph::Value a = g.input("a", {M, K}), b = g.input("b", {K, N});
    g.output(op.empty() ? g.matmul(a, b) : g.add_node(op, {a, b}), "c");
    return g;
}

graph::Graph row_sum(int64_t rows, int64_t cols, const std::string& op) {
    graph::Graph g;
    graph::Value x = g.input("x", {rows, cols});
    g.output(op.empty() ? g.sum(x, {1}) : g.add_node(op, {x}), "y");
    return g;
}

graph::Graph conv(int64_t C, int64_t F, int64_t H, const std::string& op) {
    graph::Graph g;
    graph::Value x = g.input("x", {1, C, H, H}), w = g.input("w", {F, C, 3, 3});
    g.output(op.empty() ? g.conv2d(x, w, {.pad = 1}) : g.add_node(op, {x, w}), "y");
    return g;
}

// The mean time of m's kernels that are not layout transforms (the computation's own).
double compute_ms(graph::Module& m) {
    double total = 0;
    for (const graph::KernelTiming& k : m.profile(9).kernels) {
        const std::string& name = m.kernels()[size_t(k.index)].name;
        if (name.find("layout") == std::string::npos && name.find("pack") == std::string::npos) total += k.mean_ms;
    }
    return total;
}

}  // namespace

int main(int argc, char** argv) {
    const tune_bench::Options o = tune_bench::parse(argc, argv, graph::TuneOptions::Tuner::Model);
    register_plain_ops();
    const Target target = Target::host();  // threads: set_num_threads(1) below
    set_num_threads(1);
    Target one = target;
    one.num_threads = 1;
    const std::vector<Task> tasks = {
        {"matmul 256x256x256", {{256, 256}, {256, 256}}, [](const std::string& op) { return gemm(256, 256, 256, op); }},
        {"matmul 300x700x200", {{300, 200}, {200, 700}}, [](const std::string& op) { return gemm(300, 700, 200, op); }},
        {"conv3x3 64->64 28x28", {{1, 64, 28, 28}, {64, 64, 3, 3}},
         [](const std::string& op) { return conv(64, 64, 28, op); }},
        {"row sum 64x4096", {{64, 4096}}, [](const std::string& op) { return row_sum(64, 4096, op); }},
    };
    std::printf("| task | trials | tuning s | sketch default ms | sketch tuned ms | weft template ms | "
                "tuned / default speed | tuned / template speed | best config |\n"
                "|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (const Task& t : tasks) {
        const std::string user_op = t.name.rfind("conv", 0) == 0  ? "user_conv3x3"
                                    : t.name.rfind("row", 0) == 0 ? "user_row_sum"
                                                                  : "user_matmul";
        graph::Graph sketch_graph = t.make(user_op);
        graph::TuneOptions options;
        options.trials = o.trials;
        options.tuner = o.tuner;
        options.seed = o.seed;
        options.records_file = o.save_records;
        const auto t0 = std::chrono::steady_clock::now();
        auto records = std::make_shared<autotune::Records>(graph::tune(sketch_graph, one, options));
        const double tuning_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        graph::Module sketch_default = graph::build(sketch_graph, one, {.pretuned_records = false});
        graph::Module tuned = graph::build(sketch_graph, one, {.records = records});
        graph::Module templ = graph::build(t.make(""), one, {.pretuned_records = false});
        std::vector<graph::Module*> modules = {&sketch_default, &tuned, &templ};
        for (size_t i = 0; i < t.inputs.size(); ++i) {
            Buffer<float> x = Buffer<float>::random(t.inputs[i], -1, 1, i + 1);
            for (graph::Module* m : modules) m->set_input(int(i), x);
        }
        std::vector<std::vector<double>> ms(modules.size());
        for (int r = 0; r < o.rounds; ++r)
            for (size_t m = 0; m < modules.size(); ++m) ms[m].push_back(compute_ms(*modules[m]));
        std::vector<double> med;
        for (auto& v : ms) med.push_back(tune_bench::median(v));
        const autotune::Record* best = nullptr;
        for (const auto& r : records->all())
            if (r.ok() && (!best || r.cost_ms() < best->cost_ms())) best = &r;
        std::printf("| %s | %zu | %.0f | %.3f | %.3f | %.3f | %.2f | %.2f | `%s` |\n", t.name.c_str(), records->size(),
                    tuning_s, med[0], med[1], med[2], med[0] / med[1], med[2] / med[1],
                    best ? best->config.str().c_str() : "-");
        std::fflush(stdout);
    }
    return 0;
}
