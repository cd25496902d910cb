// A cost model ranks a task's candidates by predicted speed before any is measured, so that
// a tuner measures the promising ones: AutoTVM's XGBTuner. It is fit on measured candidates
// (their features, autotune/features.hpp, and a score: higher is faster) and refit as
// results arrive.
//
//   autotune::XGBoostModel model({.seed = 1});
//   model.fit(rows, scores, groups);                 // rows: one feature vector per candidate
//   std::vector<float> s = model.predict(candidates); // higher: predicted faster
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace weft::autotune {

class CostModel {
public:
    virtual ~CostModel() = default;
    // Fits the model to rows of features (all of one length) with their scores (higher:
    // faster). Rows of one group (a task) are ranked among themselves only, so scores of
    // different tasks need not compare (transfer from other tasks' measurements).
    virtual void fit(const std::vector<std::vector<float>>& rows, const std::vector<float>& scores,
                     const std::vector<int>& groups) = 0;
    // Scores of candidates (higher: predicted faster); any order-preserving scale. Before the
    // first fit, all zero.
    virtual std::vector<float> predict(const std::vector<std::vector<float>>& rows) const = 0;
};

// Gradient-boosted trees with XGBoost's pairwise ranking objective (rank:pairwise), as
// AutoTVM's XGBTuner. XGBoost (Debian's libxgboost0) is loaded with dlopen at the first
// XGBoostModel: without it, the constructor throws weft::Error saying what to install.
// Deterministic: the same rows, scores and seed give the same model (one thread, no sampling).
class XGBoostModel : public CostModel {
public:
    struct Options {
        int rounds = 100;       // boosting rounds per fit
        int max_depth = 3;
        double learning_rate = 0.3;
        uint64_t seed = 1;
    };
    explicit XGBoostModel(const Options& options);
    XGBoostModel() : XGBoostModel(Options{}) {}
    ~XGBoostModel() override;
    XGBoostModel(const XGBoostModel&) = delete;
    XGBoostModel& operator=(const XGBoostModel&) = delete;

    void fit(const std::vector<std::vector<float>>& rows, const std::vector<float>& scores,
             const std::vector<int>& groups) override;
    std::vector<float> predict(const std::vector<std::vector<float>>& rows) const override;

private:
    Options options_;
    void* booster_ = nullptr;  // BoosterHandle, after the first fit
    size_t columns_ = 0;       // the features per row it was fit on
};

// Whether XGBoost can be loaded here; if not, *why (when given) says why.
bool xgboost_available(std::string* why = nullptr);

}  // namespace weft::autotune
