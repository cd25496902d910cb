// Definitions of graph/tune.hpp.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "weft/graph/impl/compile_group.hpp"
#include "weft/graph/impl/module.hpp"
#include "weft/graph/tune.hpp"

namespace weft::graph {
namespace tune_detail {

struct PreparedTasks {
    Graph g;                          // after the passes, as graph::build compiles it
    std::vector<FusedGroup> groups;
    std::vector<TuningTask> tasks;
    std::vector<size_t> task_group;   // each task's first group
};

inline PreparedTasks prepare(const Graph& graph, const Target& target, const BuildOptions& options) {
    PreparedTasks p;
    p.g = graph;
    p.groups = detail::run_passes_and_fuse(p.g, target, options);
    std::map<std::string, size_t> task_of;  // workload -> task index
    std::set<std::string> fixed;            // workloads without a choice
    for (size_t i = 0; i < p.groups.size(); ++i) {
        const std::string workload = detail::group_workload(p.g, p.groups[i]);
        if (workload.empty() || fixed.count(workload)) continue;
        if (auto it = task_of.find(workload); it != task_of.end()) {
            ++p.tasks[it->second].groups;
            continue;
        }
        ConfigSpace space;
        detail::schedule_group(p.g, p.groups[i], target, Config::recording(&space));
        if (space.size() <= 1) {
            fixed.insert(workload);
            continue;
        }
        task_of[workload] = p.tasks.size();
        p.tasks.push_back({workload, group_name(p.g, p.groups[i]), 1, std::move(space)});
        p.task_group.push_back(i);
    }
    return p;
}

// Inputs for a kernel's arguments (the last, its output, zeroed): floats uniform in [-1, 1),
// other types zero (a valid index for any gather).
inline std::vector<BufferRef> kernel_inputs(const Graph& g, const std::vector<int>& arg_ids, uint64_t seed) {
    std::vector<BufferRef> args;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uniform(-1.f, 1.f);
    for (size_t a = 0; a < arg_ids.size(); ++a) {
        const TensorType& t = g.node(arg_ids[a]).type;
        BufferRef b = BufferRef::allocate(t.dtype, t.shape);
        if (a + 1 < arg_ids.size() && t.dtype == f32) {
            float* p = static_cast<float*>(b.data());
            for (int64_t i = 0; i < b.size(); ++i) p[i] = uniform(rng);
        }
        args.push_back(std::move(b));
    }
    return args;
}

// The points a task measures: the defaults first, then distinct points (random: drawn with
// the seed; grid: in index order), `trials` in all or the whole space.
inline std::vector<Config> candidates(const ConfigSpace& space, const TuneOptions& options, uint64_t seed) {
    const uint64_t size = space.size();
    const uint64_t count = std::min<uint64_t>(uint64_t(std::max(1, options.trials)), size);
    const uint64_t first = space.index_of(space.defaults());
    std::vector<Config> out = {space.defaults()};
    std::set<uint64_t> taken = {first};
    if (options.tuner == TuneOptions::Tuner::Grid) {
        for (uint64_t i = 0; out.size() < count && i < size; ++i)
            if (taken.insert(i).second) out.push_back(space.at(i));
        return out;
    }
    std::mt19937_64 rng(seed);
    while (out.size() < count) {
        const uint64_t i = rng() % size;
        if (taken.insert(i).second) out.push_back(space.at(i));
    }
    return out;
}

}  // namespace tune_detail

std::vector<TuningTask> extract_tasks(const Graph& g, const Target& target, const BuildOptions& options) {
    return tune_detail::prepare(g, target, options).tasks;
}

std::string progress_line(const TuneProgress& p) {
    char text[1024];
    char best[32] = "-";
    const bool have = std::isfinite(p.best_ms);
    if (have) std::snprintf(best, sizeof best, "%.4g", p.best_ms);
    std::snprintf(text, sizeof text, "task %d/%d %s: %d/%d trials, best %s ms (default %.4g ms, %.2fx), %.1f s",
                  p.task + 1, p.tasks, p.workload.c_str(), p.trial, p.trials, best, p.default_ms,
                  have && p.best_ms > 0 ? p.default_ms / p.best_ms : 0.0, p.elapsed_s);
    return text;
}

autotune::Records tune(const Graph& graph, const Target& target, const TuneOptions& options,
                       const BuildOptions& build_options) {
    WEFT_CHECK(options.trials >= 1, "graph::tune: TuneOptions::trials must be at least 1, got ", options.trials);
    WEFT_CHECK(target.is_cpu(), "graph::tune: only CPU targets can be measured here, got ", target.str());
    const auto start = std::chrono::steady_clock::now();
    tune_detail::PreparedTasks p = tune_detail::prepare(graph, target, build_options);
    autotune::Records records;
    const std::string target_key = autotune::target_key(target);
    for (size_t t = 0; t < p.tasks.size(); ++t) {
        const TuningTask& task = p.tasks[t];
        const FusedGroup& group = p.groups[p.task_group[t]];
        // The reference output: the default config's, run here (it is what graph::build
        // runs without records).
        detail::CompiledGroup reference_kernel = detail::compile_group(p.g, group, target, Config{});
        std::vector<BufferRef> args = tune_detail::kernel_inputs(p.g, reference_kernel.args, options.seed + t);
        {
            std::vector<KernelArgValue> values(args.begin(), args.end());
            reference_kernel.kernel.call(std::span<const KernelArgValue>(values.data(), values.size()));
        }
        BufferRef reference = BufferRef::allocate(args.back().dtype(), args.back().shape());
        reference.copy_from(args.back());

        const std::vector<Config> points = tune_detail::candidates(task.space, options, options.seed * 1000003 + t);
        TuneProgress progress{int(t), int(p.tasks.size()), task.workload, 0, int(points.size()),
                              std::numeric_limits<double>::infinity(), 0, 0};
        for (const Config& config : points) {
            const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (options.time_budget_s > 0 && elapsed > options.time_budget_s && progress.trial > 0) break;
            autotune::Record r;
            r.target = target_key;
            r.workload = task.workload;
            r.config = config;
            r.timestamp = int64_t(std::time(nullptr));
            try {
                detail::CompiledGroup c = detail::compile_group(p.g, group, target, config);
                autotune::MeasureResult m =
                    autotune::measure(c.kernel, args, args.size() - 1, &reference, options.measure);
                r.costs_ms = std::move(m.costs_ms);
                r.error = std::move(m.error);
            } catch (const Error& e) {
                r.error = std::string("build: ") + e.what();
            }
            if (progress.trial == 0) progress.default_ms = r.cost_ms();
            if (r.ok()) progress.best_ms = std::min(progress.best_ms, r.cost_ms());
            ++progress.trial;
            if (!options.records_file.empty()) autotune::Records::append_to_file(options.records_file, r);
            records.add(std::move(r));
            progress.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            if (options.progress) options.progress(progress);
        }
    }
    return records;
}

}  // namespace weft::graph
