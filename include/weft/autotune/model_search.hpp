// The model-based search (AutoTVM's XGBTuner): which point of a space to measure next,
// chosen by a cost model fit on the points measured so far.
//
// The first points are drawn at random (until `initial` have a cost); then, batch by batch,
// the model is refit on every measurement (and on other tasks' measurements given as
// history), the space is searched for the points it ranks best — every point where the
// space is small enough, else simulated annealing with the model as the energy, started from
// the best measured points and random ones — and the batch is picked from its top points
// for diversity (AutoTVM's submodular pick: the most knob values new to the batch), a share
// `epsilon` of it replaced by random points so that the model sees where it is wrong.
// Seeded: the same seed and measurements give the same points.
//
//   autotune::ModelSearch search(space, featurize, {.seed = 7});
//   while (trials--) {
//       uint64_t i = search.next();               // a point not proposed before
//       search.observe(i, measure(space.at(i)));  // its cost in ms (infinity: it failed)
//   }
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <vector>

#include "weft/autotune/cost_model.hpp"
#include "weft/schedule/config.hpp"

namespace weft::autotune {

// Measured points of other tasks of the same template (the same knobs), for transfer.
struct SearchHistory {
    std::vector<std::vector<float>> rows;  // features (knob_features then program_features)
    std::vector<float> scores;             // higher: faster, comparable within a group
    std::vector<int> groups;               // one per task
};

class ModelSearch {
public:
    struct Options {
        int batch = 16;                   // points proposed per fit of the model
        int initial = 16;                 // random points before the first fit (fewer with history)
        double epsilon = 0.1;             // share of each batch drawn at random
        int diversity = 4;                // the batch is picked from the top diversity x batch points
                                          // for the most knob values new to it (1: the top points)
        uint64_t exhaustive_limit = 4096; // spaces up to this size are ranked whole
        int anneal_walkers = 32;          // simulated annealing: points moved in parallel,
        int anneal_steps = 40;            // and steps (the temperature falls from 1 to 0)
        uint64_t seed = 1;
        XGBoostModel::Options model;      // the default model's settings
    };
    // The features of point `index` (autotune/features.hpp: its knobs, then its lowered
    // program's); an empty vector when the point does not build (it is then never proposed).
    using Featurize = std::function<std::vector<float>(uint64_t index)>;

    // `model`: the cost model (default: an XGBoostModel, which needs libxgboost).
    ModelSearch(const ConfigSpace& space, Featurize featurize, const Options& options,
                std::unique_ptr<CostModel> model = nullptr, SearchHistory history = {});

    // The next point to measure: one not proposed before (nothing when the space is exhausted).
    std::optional<uint64_t> next();
    // Marks a point as proposed (the default config, measured before the search).
    void take(uint64_t index) { taken_.insert(index); }
    // The measured cost of a point (milliseconds; infinity when it failed).
    void observe(uint64_t index, double cost_ms);

    // This task's measurements as history for the next task of the same template (group `group`).
    void append_history(SearchHistory& history, int group);
    // The features of a point (cached; empty when it does not build).
    const std::vector<float>& features(uint64_t index);

private:
    uint64_t random_untaken();
    void plan_batch();
    std::vector<uint64_t> anneal();
    std::vector<float> predict(const std::vector<uint64_t>& points);
    uint64_t neighbour(uint64_t index);
    std::vector<uint64_t> genes(uint64_t index) const;

    const ConfigSpace& space_;
    Featurize featurize_;
    Options options_;
    std::unique_ptr<CostModel> model_;
    SearchHistory history_;
    std::mt19937_64 rng_;
    std::set<uint64_t> taken_;
    std::vector<std::pair<uint64_t, double>> measured_;
    std::vector<uint64_t> queue_;  // the planned batch, best first
    std::map<uint64_t, std::vector<float>> features_;
};

}  // namespace weft::autotune
