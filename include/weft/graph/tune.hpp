// Tuning a network: its tasks (one per distinct workload of a fused group whose template has
// knobs), each searched by measuring candidates (autotune/measure.hpp: checked in a child
// process, timed here), the results kept as tuning records that graph::build applies.
//
//   autotune::Records r = graph::tune(g, Target::host(), {.trials = 64, .records_file = "net.jsonl"});
//   graph::Module m = graph::build(g, Target::host(), {.records_file = "net.jsonl"});
//
// Every task's default is measured first (its cost weighs the task); then each task's other
// candidates, the heaviest tasks first. The tuners: random (distinct points of the space,
// seeded), grid (the space in index order), genetic (AutoTVM's GA: a population bred from the
// fastest points measured, knob by knob, with mutations) and model (AutoTVM's XGBTuner,
// autotune/model_search.hpp: an XGBoost ranking model over features of each candidate's
// lowered program, refit as results arrive, searched by simulated annealing; a task learns
// from the tasks of the same template tuned before it). Each task's first trial is the
// default config, so tuned is never slower than the default as measured.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "weft/autotune/measure.hpp"
#include "weft/autotune/model_search.hpp"
#include "weft/autotune/records.hpp"
#include "weft/autotune/runner.hpp"
#include "weft/graph/graph.hpp"
#include "weft/graph/module.hpp"
#include "weft/schedule/config.hpp"

namespace weft::graph {

struct TuningTask {
    std::string workload;  // KernelInfo::workload of its groups
    std::string name;      // the first group's kernel name ("conv2d_nchwc_add_relu")
    int groups = 1;        // fused groups of the graph with this workload
    ConfigSpace space;     // its template's knobs for the target
};

// The tasks of g built for `target` with `options` (the passes and fusion of graph::build):
// one per distinct workload whose space has more than one point, in the graph's order.
std::vector<TuningTask> extract_tasks(const Graph& g, const Target& target = Target::host(),
                                      const BuildOptions& options = {});

struct TuneProgress {
    int task = 0, tasks = 0;       // this task's index and the number of tasks
    std::string workload;
    int trial = 0, trials = 0;     // trials done in this task, and planned
    double best_ms = 0;            // the best error-free cost so far (infinity: none yet)
    double default_ms = 0;         // the default config's cost
    double elapsed_s = 0;          // since tune() started
    int done = 0, planned = 0;     // trials measured and planned in all tasks (planned is known
                                   // once every task's default is measured; 0 before)
    // The time the planned trials not yet measured should take at the rate so far; a
    // negative value when not known yet.
    double left_s() const;
};

struct TuneOptions {
    enum class Tuner { Random, Grid, Genetic, Model };
    int trials = 32;               // per task, the default config included (at most the space's size)
    int total_trials = 0;          // > 0: instead of `trials` each, this many in all, shared by the
                                   // tasks' share of the run time (groups x default cost; each at
                                   // least its default), the heaviest tasks tuned first
    double time_budget_s = 0;      // stop starting trials after this long (0: no limit); each task
                                   // measures at least its default
    Tuner tuner = Tuner::Random;
    uint64_t seed = 1;             // the same seed (and measurements) give the same candidates
    autotune::ModelSearch::Options model;  // Tuner::Model's settings (its seed: from `seed`)
    autotune::MeasureOptions measure;
    std::shared_ptr<autotune::Runner> runner;  // where CPU candidates are measured (null: here,
                                               // autotune::measure; rpc::RpcRunner: remote servers)
    std::string records_file;      // each record is appended here as it is measured ("": none)
    std::function<void(const TuneProgress&)> progress;  // after each trial
};

// Tunes every task of g for `target`; returns every record measured (failures included).
autotune::Records tune(const Graph& g, const Target& target = Target::host(), const TuneOptions& options = {},
                       const BuildOptions& build_options = {});

// "task T/N WORKLOAD: DONE/PLANNED trials, best B ms (default D ms, D/B x), ELAPSED s, ~LEFT s left"
std::string progress_line(const TuneProgress& p);

}  // namespace weft::graph
