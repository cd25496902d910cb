// Definitions of autotune/model_search.hpp.
#pragma once
#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

#include "weft/autotune/model_search.hpp"
#include "weft/ir/error.hpp"

namespace weft::autotune {

ModelSearch::ModelSearch(const ConfigSpace& space, Featurize featurize, const Options& options,
                         std::unique_ptr<CostModel> model, SearchHistory history)
    : space_(space), featurize_(std::move(featurize)), options_(options), model_(std::move(model)),
      history_(std::move(history)), rng_(options.seed) {
    WEFT_CHECK(options.batch >= 1 && options.initial >= 0 && options.epsilon >= 0 && options.epsilon <= 1 &&
                   options.anneal_walkers >= 1 && options.anneal_steps >= 1,
               "autotune::ModelSearch: batch, anneal_walkers and anneal_steps must be at least 1, initial at least "
               "0 and epsilon in [0, 1]");
    if (!model_) model_ = std::make_unique<XGBoostModel>(options.model);
}

const std::vector<float>& ModelSearch::features(uint64_t index) {
    auto it = features_.find(index);
    if (it != features_.end()) return it->second;
    return features_[index] = featurize_(index);
}

uint64_t ModelSearch::random_untaken() {
    for (;;) {
        const uint64_t i = rng_() % space_.size();
        if (!taken_.count(i)) return i;
    }
}

std::optional<uint64_t> ModelSearch::next() {
    if (taken_.size() >= space_.size()) return std::nullopt;
    size_t measured_ok = 0;
    for (const auto& m : measured_) measured_ok += std::isfinite(m.second);
    // With another task's measurements the model can rank from the start.
    const size_t initial = history_.rows.empty() ? size_t(options_.initial) : std::min(size_t(2), size_t(options_.initial));
    uint64_t i = 0;
    if (measured_ok < initial) {
        i = random_untaken();
    } else {
        auto drop_taken = [&] {
            queue_.erase(std::remove_if(queue_.begin(), queue_.end(), [&](uint64_t q) { return taken_.count(q) > 0; }),
                         queue_.end());
        };
        drop_taken();
        if (queue_.empty()) plan_batch();
        drop_taken();
        if (queue_.empty()) {
            i = random_untaken();
        } else {
            i = queue_.front();
            queue_.erase(queue_.begin());
        }
    }
    taken_.insert(i);
    return i;
}

void ModelSearch::observe(uint64_t index, double cost_ms) {
    taken_.insert(index);
    measured_.push_back({index, cost_ms});
}

void ModelSearch::append_history(SearchHistory& history, int group) {
    double best = std::numeric_limits<double>::infinity();
    for (const auto& m : measured_) best = std::min(best, m.second);
    for (const auto& [index, cost] : measured_) {
        const std::vector<float>& f = features(index);
        if (f.empty()) continue;
        history.rows.push_back(f);
        history.scores.push_back(std::isfinite(cost) && cost > 0 ? float(best / cost) : 0.f);
        history.groups.push_back(group);
    }
}

std::vector<float> ModelSearch::predict(const std::vector<uint64_t>& points) {
    std::vector<std::vector<float>> rows;
    std::vector<size_t> where;  // row -> point
    for (size_t p = 0; p < points.size(); ++p) {
        const std::vector<float>& f = features(points[p]);
        if (f.empty()) continue;
        rows.push_back(f);
        where.push_back(p);
    }
    std::vector<float> out(points.size(), -std::numeric_limits<float>::infinity());
    const std::vector<float> scores = model_->predict(rows);
    for (size_t r = 0; r < rows.size(); ++r) out[where[r]] = scores[r];
    return out;
}

// One knob of the point moved to another of its candidates.
uint64_t ModelSearch::neighbour(uint64_t index) {
    const std::vector<Knob>& knobs = space_.knobs();
    std::vector<uint64_t> genes = space_.positions(index);
    std::vector<size_t> movable;
    for (size_t k = 0; k < knobs.size(); ++k)
        if (knobs[k].candidates.size() > 1) movable.push_back(k);
    if (movable.empty()) return index;
    const size_t k = movable[rng_() % movable.size()];
    const uint64_t n = knobs[k].candidates.size();
    genes[k] = (genes[k] + 1 + rng_() % (n - 1)) % n;
    return space_.index_of_positions(genes);
}

// Simulated annealing over the space with the model's score as the (negated) energy: the
// walkers start at the best measured points and random ones, each step moves every walker
// to a neighbour (one knob changed), kept when it scores higher or, with the probability
// exp(gain / temperature), lower. Returns the best-scored unmeasured points it visited.
std::vector<uint64_t> ModelSearch::anneal() {
    std::vector<std::pair<uint64_t, double>> good;
    for (const auto& m : measured_)
        if (std::isfinite(m.second)) good.push_back(m);
    std::sort(good.begin(), good.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    std::vector<uint64_t> walkers;
    for (size_t i = 0; i < good.size() && walkers.size() < size_t(options_.anneal_walkers / 2); ++i)
        walkers.push_back(good[i].first);
    while (walkers.size() < size_t(options_.anneal_walkers)) walkers.push_back(rng_() % space_.size());
    std::vector<float> scores = predict(walkers);
    std::map<uint64_t, float> visited;  // unmeasured points and their scores
    auto note = [&](uint64_t p, float s) {
        if (!taken_.count(p) && std::isfinite(s)) visited[p] = s;
    };
    for (size_t w = 0; w < walkers.size(); ++w) note(walkers[w], scores[w]);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int step = 0; step < options_.anneal_steps; ++step) {
        const double temperature = 1.0 - double(step) / options_.anneal_steps;
        std::vector<uint64_t> moved;
        for (uint64_t w : walkers) moved.push_back(neighbour(w));
        const std::vector<float> moved_scores = predict(moved);
        for (size_t w = 0; w < walkers.size(); ++w) {
            note(moved[w], moved_scores[w]);
            const double gain = double(moved_scores[w]) - double(scores[w]);
            if (!std::isfinite(moved_scores[w])) continue;
            if (gain >= 0 || !std::isfinite(scores[w]) || uniform(rng_) < std::exp(gain / std::max(temperature, 1e-3))) {
                walkers[w] = moved[w];
                scores[w] = moved_scores[w];
            }
        }
    }
    std::vector<uint64_t> out;
    for (const auto& v : visited) out.push_back(v.first);
    return out;
}

void ModelSearch::plan_batch() {
    // Fit: the history, then this task's measurements (score: best cost / cost; failures 0).
    SearchHistory data = history_;
    append_history(data, INT_MAX);
    model_->fit(data.rows, data.scores, data.groups);

    std::vector<uint64_t> candidates;
    if (space_.size() <= options_.exhaustive_limit) {
        for (uint64_t i = 0; i < space_.size(); ++i)
            if (!taken_.count(i)) candidates.push_back(i);
    } else {
        candidates = anneal();
    }
    const std::vector<float> scores = predict(candidates);
    std::vector<size_t> order;
    for (size_t c = 0; c < candidates.size(); ++c)
        if (std::isfinite(scores[c])) order.push_back(c);
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return scores[a] != scores[b] ? scores[a] > scores[b] : a < b; });
    const size_t random_share = size_t(std::lround(options_.epsilon * options_.batch));
    const size_t from_model = size_t(options_.batch) - std::min(random_share, size_t(options_.batch));
    // Points whose features equal a measured or queued point's are the same program (knobs
    // that the path taken ignores): measuring them again would teach nothing.
    std::set<std::vector<float>> known;
    for (const auto& m : measured_) known.insert(features(m.first));
    std::vector<uint64_t> window;  // the top distinct points, best first
    const size_t window_size = from_model * size_t(std::max(1, options_.diversity));
    for (size_t i = 0; i < order.size() && window.size() < window_size; ++i)
        if (known.insert(features(candidates[order[i]])).second) window.push_back(candidates[order[i]]);
    // Greedily, the point with the most (knob, value) pairs no point of the batch has yet;
    // among equals the better ranked.
    queue_.clear();
    std::set<std::pair<size_t, uint64_t>> covered;
    std::vector<bool> picked(window.size(), false);
    while (queue_.size() < std::min(from_model, window.size())) {
        size_t best = 0;
        int best_new = -1;
        for (size_t w = 0; w < window.size(); ++w) {
            if (picked[w]) continue;
            const std::vector<uint64_t> g = space_.positions(window[w]);
            int fresh = 0;
            for (size_t k = 0; k < g.size(); ++k) fresh += !covered.count({k, g[k]});
            if (fresh > best_new) best_new = fresh, best = w;
        }
        picked[best] = true;
        const std::vector<uint64_t> g = space_.positions(window[best]);
        for (size_t k = 0; k < g.size(); ++k) covered.insert({k, g[k]});
        queue_.push_back(window[best]);
    }
    // The random share: points the model would not have chosen.
    std::set<uint64_t> queued(queue_.begin(), queue_.end());
    for (size_t tries = 0; queue_.size() < size_t(options_.batch) && tries < 256; ++tries) {
        if (taken_.size() + queued.size() >= space_.size()) break;
        const uint64_t r = random_untaken();
        if (queued.count(r) || (tries < 128 && !known.insert(features(r)).second)) continue;
        queued.insert(r);
        queue_.push_back(r);
    }
}

}  // namespace weft::autotune
