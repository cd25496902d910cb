// weft_tune_conv: what tuning gains on convolution layers of odd widths (72, 120, 200
// channels; 17x17 and 35x35 images), which topi's defaults were not hand-tuned for, against
// the default config and oneDNN, one thread. For each layer: graph::tune on a graph of one
// conv2d (its task: the blocked convolution), then the blocked-convolution kernel of the
// default module and of the tuned one (the profiler's mean) and oneDNN's convolution with
// the layouts it chooses (reorders outside the timing), in alternating rounds; a figure is
// the median over rounds. Layout transforms are left out on both sides.
//
//   weft_tune_conv [--trials N] [--rounds R] [--seed S] [--tuner model|random|...] [--save-records PATH]
//   (prints a markdown table)
//
// benchmarks/run_tune_conv.sh runs it and writes its section of RESULTS.md.
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <weft/weft.hpp>

#include "tune_util.hpp"

extern "C" void omp_set_num_threads(int);  // oneDNN's threads (libgomp)

using namespace weft;

namespace {

struct Layer {
    int64_t C, O, H, K;  // square images, stride 1, "same" padding
    int64_t pad() const { return K / 2; }
};

using tune_bench::kernel_ms;
using tune_bench::median;
using tune_bench::time_ms;

// oneDNN's direct convolution, its layouts its own choice; returns the timed call.
std::function<void()> onednn_conv(const Layer& l) {
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    auto eng = std::make_shared<engine>(engine::kind::cpu, 0);
    auto strm = std::make_shared<stream>(*eng);
    memory::dims src_dims{1, l.C, l.H, l.H}, dst_dims{1, l.O, l.H, l.H}, w_dims{l.O, l.C, l.K, l.K};
    convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct,
                                memory::desc(src_dims, dt::f32, tag::any), memory::desc(w_dims, dt::f32, tag::any),
                                memory::desc(dst_dims, dt::f32, tag::any), {1, 1}, {l.pad(), l.pad()},
                                {l.pad(), l.pad()});
    convolution_forward::primitive_desc pd(d, *eng);
    auto src_user = std::make_shared<std::vector<float>>(size_t(l.C * l.H * l.H));
    auto w_user = std::make_shared<std::vector<float>>(size_t(l.O * l.C * l.K * l.K));
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& x : *src_user) x = u(rng);
    for (float& x : *w_user) x = u(rng);
    memory src_plain({src_dims, dt::f32, tag::nchw}, *eng, src_user->data());
    memory w_plain({w_dims, dt::f32, tag::oihw}, *eng, w_user->data());
    memory src(pd.src_desc(), *eng), wts(pd.weights_desc(), *eng), dst(pd.dst_desc(), *eng);
    reorder(src_plain, src).execute(*strm, src_plain, src);
    reorder(w_plain, wts).execute(*strm, w_plain, wts);
    strm->wait();
    auto prim = std::make_shared<convolution_forward>(pd);
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wts}, {DNNL_ARG_DST, dst}};
    return [eng, strm, prim, args, src_user, w_user] {
        prim->execute(*strm, args);
        strm->wait();
    };
}

}  // namespace

int main(int argc, char** argv) {
    const tune_bench::Options o = tune_bench::parse(argc, argv, graph::TuneOptions::Tuner::Model);
    const int trials = o.trials, rounds = o.rounds;
    set_num_threads(1);
    omp_set_num_threads(1);
    const Target target = Target::host();  // 1 thread now
    std::printf("| layer | trials | tuning s | default ms | tuned ms | oneDNN ms | tuned / default speed | tuned / oneDNN "
                "speed | best config |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (Layer l : std::vector<Layer>{{72, 72, 35, 3}, {120, 120, 17, 3}, {200, 200, 17, 1}, {120, 200, 17, 3}}) {
        graph::Graph g;
        graph::Value x = g.input("x", {1, l.C, l.H, l.H});
        g.output(g.conv2d(x, g.constant("w", Buffer<float>::random({l.O, l.C, l.K, l.K}, -1, 1, 2)), {.pad = l.pad()}),
                 "y");
        const std::vector<graph::TuningTask> tasks = graph::extract_tasks(g, target);
        const graph::TuningTask* task = &tune_bench::main_task(tasks);
        auto t0 = std::chrono::steady_clock::now();
        auto records = std::make_shared<autotune::Records>(graph::tune(
            g, target,
            {.trials = trials, .tuner = o.tuner, .seed = o.seed, .measure = {.warmup = 1, .repeats = 5}, .records_file = o.save_records}));
        const double tuning_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        graph::Module plain = graph::build(g, target, {.pretuned_records = false}),
                      tuned = graph::build(g, target, {.records = records, .pretuned_records = false});
        const autotune::Record* best = records->best(autotune::target_key(target), task->workload);
        Buffer<float> input = Buffer<float>::random({1, l.C, l.H, l.H}, -1, 1, 3);
        plain.set_input("x", input);
        tuned.set_input("x", input);
        std::function<void()> dnnl_run = onednn_conv(l);
        std::vector<double> tp, tt, td;
        for (int r = 0; r < rounds; ++r) {
            tp.push_back(kernel_ms(plain, task->workload, 9));
            tt.push_back(kernel_ms(tuned, task->workload, 9));
            td.push_back(time_ms(dnnl_run, 9));
        }
        const double p = median(tp), t = median(tt), d = median(td);
        std::printf("| %lld->%lld %lldx%lld %lldx%lld | %d | %.1f | %.4f | %.4f | %.4f | %.2f | %.2f | `%s` |\n",
                    (long long)l.C, (long long)l.O, (long long)l.H, (long long)l.H, (long long)l.K, (long long)l.K,
                    trials, tuning_s, p, t, d, p / t, d / t, best ? best->config.str().c_str() : "(default)");
        std::fflush(stdout);
    }
    return 0;
}
