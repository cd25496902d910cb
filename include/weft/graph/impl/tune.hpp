// Definitions of graph/tune.hpp.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include "weft/autotune/features.hpp"
#include "weft/graph/impl/compile_group.hpp"
#include "weft/graph/impl/build.hpp"
#include "weft/graph/tune.hpp"
#include "weft/runtime/cuda/cuda.hpp"

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

// Chooses the points a task measures, one at a time: the defaults first, then distinct
// points of the space (never one measured before). `observe` gives each point's cost
// (infinity when it failed) before the next is asked.
class PointChooser {
public:
    // `featurize`: the features of a point, for the model tuner (autotune/features.hpp).
    PointChooser(const ConfigSpace& space, const TuneOptions& options, uint64_t seed,
                 autotune::ModelSearch::Featurize featurize = {})
        : space_(space), options_(options), rng_(seed), seed_(seed),
          limit_(std::min<uint64_t>(uint64_t(options.trials), space.size())), featurize_(std::move(featurize)) {}

    // The model tuner learns from these measurements of other tasks of the same template.
    void set_history(const autotune::SearchHistory* history) { history_ = history; }
    // This task's measurements, for the next task of its template (the model tuner only).
    void append_history(autotune::SearchHistory& history, int group) {
        if (model_) model_->append_history(history, group);
    }

    // How many points in all the task may measure (at most the space).
    void set_limit(uint64_t n) { limit_ = std::min<uint64_t>(n, space_.size()); }

    // The next point, or nothing when the task has measured its trials (or its whole space).
    std::optional<Config> next() {
        if (taken_.size() >= limit_) return std::nullopt;
        if (taken_.empty()) return take(space_.index_of(space_.defaults()));
        switch (options_.tuner) {
            case TuneOptions::Tuner::Grid:
                while (taken_.count(grid_)) ++grid_;
                return take(grid_);
            case TuneOptions::Tuner::Genetic: return take(bred());
            case TuneOptions::Tuner::Model: return take(from_model());
            case TuneOptions::Tuner::Random: break;
        }
        return take(random_untaken());
    }

    void observe(const Config& config, double cost_ms) {
        const uint64_t index = space_.index_of(config);
        measured_.push_back({index, cost_ms});
        if (model_) model_->observe(index, cost_ms);
    }

private:
    Config take(uint64_t index) {
        taken_.insert(index);
        return space_.at(index);
    }

    uint64_t random_untaken() {
        for (;;) {
            const uint64_t i = rng_() % space_.size();
            if (!taken_.count(i)) return i;
        }
    }

    // A child of two parents drawn from the fastest measured points (the better, the likelier),
    // each knob from one parent or the other, then each knob re-drawn with probability
    // 1/knobs; a random point while fewer than two points have a cost, or when breeding
    // keeps giving points measured already.
    uint64_t bred() {
        std::vector<std::pair<uint64_t, double>> good;
        for (const auto& m : measured_)
            if (std::isfinite(m.second)) good.push_back(m);
        if (good.size() < 2) return random_untaken();
        std::sort(good.begin(), good.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        good.resize(std::min<size_t>(good.size(), kElite));
        std::vector<double> weights;  // fitness: the inverse cost
        for (const auto& g : good) weights.push_back(1.0 / std::max(g.second, 1e-9));
        std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
        const size_t knobs = space_.knobs().size();
        for (int attempt = 0; attempt < 64; ++attempt) {
            std::vector<uint64_t> a = space_.positions(good[pick(rng_)].first),
                                  b = space_.positions(good[pick(rng_)].first), child(knobs);
            for (size_t k = 0; k < knobs; ++k) {
                child[k] = (rng_() & 1) ? a[k] : b[k];
                if (rng_() % knobs == 0) child[k] = rng_() % space_.knobs()[k].candidates.size();
            }
            const uint64_t index = space_.index_of_positions(child);
            if (!taken_.count(index)) return index;
        }
        return random_untaken();
    }

    // The model search's next point, made at the first call: what was measured before (the
    // default) and the history of its template are known by then.
    uint64_t from_model() {
        if (!model_) {
            autotune::ModelSearch::Options o = options_.model;
            o.seed = seed_;
            model_ = std::make_unique<autotune::ModelSearch>(space_, featurize_, o, nullptr,
                                                             history_ ? *history_ : autotune::SearchHistory{});
            for (const auto& [index, cost] : measured_) model_->observe(index, cost);
        }
        std::optional<uint64_t> i = model_->next();
        return i ? *i : random_untaken();
    }

    static constexpr size_t kElite = 8;  // the parents are drawn from this many of the fastest
    const ConfigSpace& space_;
    const TuneOptions& options_;
    std::mt19937_64 rng_;
    uint64_t seed_;
    uint64_t limit_;
    autotune::ModelSearch::Featurize featurize_;
    const autotune::SearchHistory* history_ = nullptr;
    std::unique_ptr<autotune::ModelSearch> model_;
    uint64_t grid_ = 0;
    std::set<uint64_t> taken_;
    std::vector<std::pair<uint64_t, double>> measured_;  // (index, cost)
};

}  // namespace tune_detail

std::vector<TuningTask> extract_tasks(const Graph& g, const Target& target, const BuildOptions& options) {
    return tune_detail::prepare(g, target, options).tasks;
}

double TuneProgress::left_s() const {
    if (planned <= 0 || done <= 0) return -1;
    return elapsed_s / done * std::max(0, planned - done);
}

std::string progress_line(const TuneProgress& p) {
    char text[1024];
    char best[32] = "-", left[48] = "";
    const bool have = std::isfinite(p.best_ms);
    if (have) std::snprintf(best, sizeof best, "%.4g", p.best_ms);
    if (p.left_s() >= 0) std::snprintf(left, sizeof left, ", ~%.0f s left", p.left_s());
    std::snprintf(text, sizeof text, "task %d/%d %s: %d/%d trials, best %s ms (default %.4g ms, %.2fx), %.1f s%s",
                  p.task + 1, p.tasks, p.workload.c_str(), p.trial, p.trials, best, p.default_ms,
                  have && p.best_ms > 0 ? p.default_ms / p.best_ms : 0.0, p.elapsed_s, left);
    return text;
}

namespace tune_detail {

// One task's state while it is tuned: its inputs, the default config's output, its chooser.
struct TaskRun {
    const TuningTask* task = nullptr;
    const FusedGroup* group = nullptr;
    std::vector<BufferRef> args;
    BufferRef reference;
    std::unique_ptr<PointChooser> chooser;
    TuneProgress progress;
    double weight = 0;  // its share of the run time: groups x the default's cost
};

// The features of a task's points: its lowered program's (no machine code is made; the
// knobs' values are left out, so that points whose programs are the same look the same);
// empty for a point that does not schedule or lower.
inline autotune::ModelSearch::Featurize featurizer(const PreparedTasks& p, size_t task, const Target& target) {
    return [&p, task, target](uint64_t index) -> std::vector<float> {
        const ConfigSpace& space = p.tasks[task].space;
        const FusedGroup& group = p.groups[p.task_group[task]];
        try {
            detail::ScheduledGroup sg = detail::schedule_group(p.g, group, target, space.at(index));
            return autotune::program_features(detail::lower_group(p.g, group, sg.schedule, sg.args, target));
        } catch (const Error&) {
            return {};
        }
    };
}

// Measures the lowered candidates of a task: on the CPU each compiled here (a compile error
// is its error), checked in a child and timed here; on a GPU each compiled and measured in
// child processes (NVRTC would spoil this process for them), the task's first measurement
// (the default) giving back its output as the reference of the others.
inline std::vector<autotune::MeasureResult> measure_candidates(const std::vector<ir::PrimFunc>& lowered, TaskRun& run,
                                                               const Target& target,
                                                               const autotune::MeasureOptions& options,
                                                               autotune::Runner& runner, Device device) {
    const size_t output = run.args.size() - 1;
    if (target.is_cpu()) {
        std::vector<autotune::MeasureResult> out;
        for (const ir::PrimFunc& f : lowered) {
            Kernel kernel;
            try {
                kernel = build(f, target);
            } catch (const Error& e) {
                out.push_back({{}, std::string("build: ") + e.what()});
                continue;
            }
            out.push_back(runner.measure(kernel, target, run.args, output, &run.reference, options));
        }
        return out;
    }
    if (lowered.empty()) return {};
    const bool first = !run.reference.defined();
    return autotune::measure_on_device(
        lowered.size(), [&](size_t i) { return build(lowered[i], target); }, run.args, output,
        first ? nullptr : &run.reference, device, options, first ? &run.reference : nullptr);
}

// Before tuning for CUDA: this process must not have used CUDA (its children, which compile
// and measure the candidates, could not), and a child must find a device.
inline void check_device_for_children(int device) {
    WEFT_CHECK(cuda::fork_safe(),
               "graph::tune for CUDA measures each candidate in a child process, and the children of a process that "
               "has used CUDA (run on a GPU, or compiled a CUDA kernel: NVRTC initializes the driver) cannot use it: "
               "tune before this process touches CUDA, or in a process of its own (weftc tune --target cuda)");
    const std::string why = autotune::run_isolated(
        [device] {
            const int count = cuda::device_count();
            if (count == 0) return "no CUDA device: " + cuda::unavailable_reason();
            return device < count ? std::string()
                                  : "no CUDA device " + std::to_string(device) + " (BuildOptions::cuda_device): there are " +
                                        std::to_string(count);
        },
        60);
    WEFT_CHECK(why.empty(), "graph::tune for CUDA: ", why);
}

// Tasks of one template (the same knobs) share what the model tuner learned.
inline std::string template_key(const ConfigSpace& space) {
    std::string key;
    for (const Knob& k : space.knobs()) key += k.name + ";";
    return key;
}

// How many candidates each task gets (the default included): TuneOptions::trials each, or
// with total_trials a share of them by weight (at least 1, the default), as TVM's task
// scheduler gives the tasks that take the most time the most trials.
inline std::vector<int> allot_trials(const std::vector<TaskRun>& runs, const TuneOptions& options) {
    std::vector<int> out;
    double total_weight = 0;
    for (const auto& r : runs) total_weight += std::isfinite(r.weight) ? r.weight : 0;
    for (const auto& r : runs) {
        int n = options.trials;
        if (options.total_trials > 0) {
            const double share = total_weight > 0 && std::isfinite(r.weight) ? r.weight / total_weight : 0;
            n = std::max(1, int(std::floor(share * options.total_trials)));
        }
        out.push_back(int(std::min<uint64_t>(uint64_t(n), r.task->space.size())));
    }
    return out;
}

}  // namespace tune_detail

autotune::Records tune(const Graph& graph, const Target& target, const TuneOptions& options,
                       const BuildOptions& build_options) {
    WEFT_CHECK(options.trials >= 1, "graph::tune: TuneOptions::trials must be at least 1, got ", options.trials);
    WEFT_CHECK(options.total_trials >= 0, "graph::tune: TuneOptions::total_trials must not be negative, got ",
               options.total_trials);
    WEFT_CHECK(target.is_cpu() || target.is_cuda(), "graph::tune: measures CPU and CUDA targets, got ", target.str());
    if (target.is_cuda()) tune_detail::check_device_for_children(build_options.cuda_device);
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    tune_detail::PreparedTasks p = tune_detail::prepare(graph, target, build_options);
    autotune::Records records;
    const std::string target_key = autotune::target_key(target);
    const std::shared_ptr<autotune::Runner> runner =
        options.runner ? options.runner : std::make_shared<autotune::LocalRunner>();
    WEFT_CHECK(!options.runner || target.is_cpu(), "graph::tune: TuneOptions::runner measures CPU candidates; ",
               target.str(), " is measured in child processes here");

    int done = 0, planned_all = 0;  // trials measured, and planned in all (once the defaults are measured)
    // Measures up to `count` next candidates of the task (compiled here, then measured: on a
    // GPU together, in one child process); returns how many, 0 when it has none left.
    auto trials = [&](tune_detail::TaskRun& run, int count) {
        std::vector<Config> configs;
        std::vector<autotune::Record> batch;
        std::vector<ir::PrimFunc> lowered;
        std::vector<size_t> compiled;  // the batch's records whose candidate is in `lowered`
        while (int(configs.size()) < count) {
            std::optional<Config> next = run.chooser->next();
            if (!next) break;
            configs.push_back(*next);
            autotune::Record r;
            r.target = target_key;
            r.workload = run.task->workload;
            r.config = *next;
            r.timestamp = int64_t(std::time(nullptr));
            try {
                detail::ScheduledGroup sg = detail::schedule_group(p.g, *run.group, target, *next);
                lowered.push_back(detail::lower_group(p.g, *run.group, sg.schedule, sg.args, target));
                compiled.push_back(batch.size());
            } catch (const Error& e) {
                r.error = std::string("build: ") + e.what();
            }
            batch.push_back(std::move(r));
        }
        std::vector<autotune::MeasureResult> measured =
            tune_detail::measure_candidates(lowered, run, target, options.measure, *runner,
                                            Device::cuda(build_options.cuda_device));
        for (size_t k = 0; k < compiled.size(); ++k) {
            batch[compiled[k]].costs_ms = std::move(measured[k].costs_ms);
            batch[compiled[k]].error = std::move(measured[k].error);
        }
        for (size_t i = 0; i < batch.size(); ++i) {
            autotune::Record& r = batch[i];
            run.chooser->observe(configs[i], r.cost_ms());
            TuneProgress& progress = run.progress;
            if (progress.trial == 0) progress.default_ms = r.cost_ms();
            if (r.ok()) progress.best_ms = std::min(progress.best_ms, r.cost_ms());
            ++progress.trial;
            ++done;
            if (!options.records_file.empty()) autotune::Records::append_to_file(options.records_file, r);
            records.add(std::move(r));
            progress.elapsed_s = elapsed();
            progress.done = done;
            progress.planned = planned_all;
            if (options.progress) options.progress(progress);
        }
        return int(batch.size());
    };
    // Candidates measured together: one on a CPU (each checked in its own child, timed here),
    // MeasureOptions::device_batch on a GPU (a child's CUDA context serves them all).
    const int batch_size = target.is_cpu() ? 1 : std::max(1, options.measure.device_batch);

    // Every task's default first: its reference output (what graph::build runs without
    // records) and its cost, which weighs the task.
    std::vector<tune_detail::TaskRun> runs(p.tasks.size());
    for (size_t t = 0; t < p.tasks.size(); ++t) {
        tune_detail::TaskRun& run = runs[t];
        run.task = &p.tasks[t];
        run.group = &p.groups[p.task_group[t]];
        if (target.is_cpu()) {
            detail::CompiledGroup reference_kernel = detail::compile_group(p.g, *run.group, target, Config{});
            run.args = tune_detail::kernel_inputs(p.g, reference_kernel.args, options.seed + t);
            std::vector<KernelArgValue> values(run.args.begin(), run.args.end());
            reference_kernel.kernel.call(std::span<const KernelArgValue>(values.data(), values.size()));
            run.reference = BufferRef::allocate(run.args.back().dtype(), run.args.back().shape());
            run.reference.copy_from(run.args.back());
        } else {
            // Nothing compiled here (NVRTC): the default's measurement gives the reference back.
            const std::vector<int> arg_ids = detail::schedule_group(p.g, *run.group, target, Config{}).arg_ids;
            run.args = tune_detail::kernel_inputs(p.g, arg_ids, options.seed + t);
        }
        run.chooser = std::make_unique<tune_detail::PointChooser>(run.task->space, options, options.seed * 1000003 + t,
                                                                  tune_detail::featurizer(p, t, target));
        // Its planned trials (with total_trials, known once every default is measured).
        const int planned = options.total_trials > 0
                                ? 1
                                : int(std::min<uint64_t>(uint64_t(options.trials), run.task->space.size()));
        run.progress = TuneProgress{int(t), int(p.tasks.size()), run.task->workload, 0, planned,
                                    std::numeric_limits<double>::infinity(), 0, 0};
        trials(run, 1);
        run.weight = double(run.task->groups) * run.progress.default_ms;
    }
    // Then the other candidates, the tasks that take the most time first.
    const std::vector<int> allotted = tune_detail::allot_trials(runs, options);
    for (int a : allotted) planned_all += a;
    std::vector<size_t> order(runs.size());
    for (size_t t = 0; t < order.size(); ++t) order[t] = t;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return runs[a].weight > runs[b].weight; });
    std::map<std::string, autotune::SearchHistory> histories;  // per template (its knobs' names)
    for (size_t t : order) {
        tune_detail::TaskRun& run = runs[t];
        run.progress.trials = allotted[t];
        run.chooser->set_limit(uint64_t(allotted[t]));
        autotune::SearchHistory& history = histories[tune_detail::template_key(run.task->space)];
        run.chooser->set_history(&history);
        while (run.progress.trial < allotted[t]) {
            if (options.time_budget_s > 0 && elapsed() > options.time_budget_s) return records;
            if (trials(run, std::min(batch_size, allotted[t] - run.progress.trial)) == 0) break;
        }
        run.chooser->append_history(history, int(t));
    }
    return records;
}

}  // namespace weft::graph
