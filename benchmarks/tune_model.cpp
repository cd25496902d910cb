// weft_tune_model: the model-based tuner (XGBoost, graph::TuneOptions::Tuner::Model) against
// random search at equal trials, on a GEMM, a 3x3 convolution and a depthwise convolution,
// one thread. For each task: random search for --random-trials candidates and the model
// tuner for --model-trials (each the default first, the same seed), the best cost measured
// after 64, 256, ... trials, the trial at which the model tuner first measured a cost as low
// as random search's best, and the two best configs built and their kernels timed again in
// alternating rounds (the tuners' own best costs are minima over noisy measurements: the
// one with more trials has more draws).
//
//   weft_tune_model [--random-trials N] [--model-trials N] [--rounds R] [--seed S] [--save-records PATH]
//                   [--tasks gemm,conv,depthwise]
//   (prints two markdown tables)
//
// benchmarks/run_tune_model.sh runs it and writes its section of RESULTS.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <weft/weft.hpp>

#include "tune_util.hpp"

using namespace weft;

namespace {

using tune_bench::kernel_ms;
using tune_bench::median;

struct Task {
    std::string key;  // for --tasks
    std::string name;
    std::function<graph::Graph()> make;
    std::vector<int64_t> input_shape;
};

// The costs of the task's records in the order measured (infinity for a failed one).
std::vector<double> costs_of(const autotune::Records& records, const std::string& workload) {
    std::vector<double> out;
    for (const auto& r : records.all())
        if (r.workload == workload) out.push_back(r.ok() ? r.cost_ms() : std::numeric_limits<double>::infinity());
    return out;
}

double best_after(const std::vector<double>& costs, size_t n) {
    double best = std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < std::min(n, costs.size()); ++i) best = std::min(best, costs[i]);
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    const tune_bench::Options o = tune_bench::parse(argc, argv, graph::TuneOptions::Tuner::Model);
    int random_trials = 1000, model_trials = 300;
    std::string only = "gemm,conv,depthwise";
    for (const auto& [name, value] : o.extra) {
        if (name == "--random-trials") random_trials = std::atoi(value.c_str());
        else if (name == "--model-trials") model_trials = std::atoi(value.c_str());
        else if (name == "--tasks") only = value;
    }
    const int rounds = o.rounds;
    const uint64_t seed = o.seed;
    const std::string& save_records = o.save_records;
    set_num_threads(1);
    const Target target = Target::host();  // 1 thread now
    const std::vector<Task> tasks = {
        {"gemm", "GEMM 300x700x200",
         [] {
             graph::Graph g;
             graph::Value a = g.input("x", {300, 200});
             g.output(g.matmul(a, g.constant("b", Buffer<float>::random({200, 700}, -1, 1, 2))), "y");
             return g;
         },
         {300, 200}},
        {"conv", "conv 3x3 64->64 56x56",
         [] {
             graph::Graph g;
             graph::Value x = g.input("x", {1, 64, 56, 56});
             g.output(g.conv2d(x, g.constant("w", Buffer<float>::random({64, 64, 3, 3}, -1, 1, 2)), {.pad = 1}), "y");
             return g;
         },
         {1, 64, 56, 56}},
        {"depthwise", "depthwise 3x3 128 56x56",
         [] {
             graph::Graph g;
             graph::Value x = g.input("x", {1, 128, 56, 56});
             g.output(g.conv2d(x, g.constant("w", Buffer<float>::random({128, 1, 3, 3}, -1, 1, 2)),
                               {.pad = 1, .groups = 128}),
                      "y");
             return g;
         },
         {1, 128, 56, 56}},
    };
    std::vector<size_t> checkpoints = {64, 256, size_t(model_trials), size_t(random_trials)};
    std::sort(checkpoints.begin(), checkpoints.end());
    checkpoints.erase(std::unique(checkpoints.begin(), checkpoints.end()), checkpoints.end());

    std::string curves = "| task | space | tuner | trials | tuning s |";
    for (size_t c : checkpoints) curves += " best after " + std::to_string(c) + " ms |";
    curves += "\n|---|---:|---|---:|---:|";
    for (size_t c = 0; c < checkpoints.size(); ++c) curves += "---:|";
    curves += "\n";
    std::string summary =
        "| task | random best ms (re-timed) | model best ms (re-timed) | model / random speed | model's trials to "
        "random's best |\n|---|---:|---:|---:|---:|\n";
    for (const Task& task : tasks) {
        if (only.find(task.key) == std::string::npos) continue;
        const graph::Graph g = task.make();
        const std::vector<graph::TuningTask> found = graph::extract_tasks(g, target);
        const graph::TuningTask* t = &tune_bench::main_task(found);
        std::shared_ptr<autotune::Records> results[2];
        double seconds[2];
        const graph::TuneOptions::Tuner tuners[2] = {graph::TuneOptions::Tuner::Random, graph::TuneOptions::Tuner::Model};
        const int trials[2] = {random_trials, model_trials};
        for (int k = 0; k < 2; ++k) {
            auto t0 = std::chrono::steady_clock::now();
            results[k] = std::make_shared<autotune::Records>(graph::tune(
                g, target, {.trials = trials[k], .tuner = tuners[k], .seed = seed, .measure = {.warmup = 1, .repeats = 5},
                            .records_file = k ? save_records : ""}));
            seconds[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            const std::vector<double> costs = costs_of(*results[k], t->workload);
            char line[256];
            std::snprintf(line, sizeof line, "| %s | %llu | %s | %zu | %.0f |", task.name.c_str(),
                          (unsigned long long)t->space.size(), k ? "model" : "random", costs.size(), seconds[k]);
            curves += line;
            for (size_t c : checkpoints) {
                if (c > costs.size()) {
                    curves += " |";
                    continue;
                }
                std::snprintf(line, sizeof line, " %.4f |", best_after(costs, c));
                curves += line;
            }
            curves += "\n";
            std::fprintf(stderr, "%s: %s done in %.0f s\n", task.name.c_str(), k ? "model" : "random", seconds[k]);
        }
        const std::vector<double> random_costs = costs_of(*results[0], t->workload),
                                  model_costs = costs_of(*results[1], t->workload);
        const double random_best = best_after(random_costs, random_costs.size());
        std::string reached = "not within " + std::to_string(model_costs.size());
        for (size_t i = 0; i < model_costs.size(); ++i)
            if (model_costs[i] <= random_best) {
                reached = std::to_string(i + 1);
                break;
            }
        graph::Module random_module = graph::build(g, target, {.records = results[0]}),
                      model_module = graph::build(g, target, {.records = results[1]});
        Buffer<float> input = Buffer<float>::random(task.input_shape, -1, 1, 3);
        random_module.set_input("x", input);
        model_module.set_input("x", input);
        std::vector<double> tr, tm;
        for (int r = 0; r < rounds; ++r) {
            tr.push_back(kernel_ms(random_module, t->workload, 9));
            tm.push_back(kernel_ms(model_module, t->workload, 9));
        }
        const double r = median(tr), m = median(tm);
        char line[512];
        std::snprintf(line, sizeof line, "| %s | %.4f | %.4f | %.2f | %s |\n", task.name.c_str(), r, m, r / m,
                      reached.c_str());
        summary += line;
    }
    std::printf("%s\n%s", curves.c_str(), summary.c_str());
    return 0;
}
