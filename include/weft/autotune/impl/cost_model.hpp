// Definitions of autotune/cost_model.hpp: XGBoost's C API, loaded with dlopen.
//
// Why dlopen: the model tuner is one of several tuners, and a program that never uses it
// should neither need libxgboost to link nor load its OpenMP runtime.
#pragma once
#include <dlfcn.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "weft/autotune/cost_model.hpp"
#include "weft/ir/error.hpp"

namespace weft::autotune {
namespace xgboost_detail {

using Handle = void*;
using bst_ulong = uint64_t;

// The C API functions weft calls (xgboost/c_api.h, stable since 1.0).
#define WEFT_XGBOOST_FUNCTIONS(X)                                                                              \
    X(XGBGetLastError, const char*())                                                                      \
    X(XGDMatrixCreateFromMat, int (const float*, bst_ulong, bst_ulong, float, Handle*))                     \
    X(XGDMatrixSetFloatInfo, int (Handle, const char*, const float*, bst_ulong))                            \
    X(XGDMatrixSetUIntInfo, int (Handle, const char*, const unsigned*, bst_ulong))                          \
    X(XGDMatrixFree, int (Handle))                                                                          \
    X(XGBoosterCreate, int (const Handle*, bst_ulong, Handle*))                                             \
    X(XGBoosterFree, int (Handle))                                                                          \
    X(XGBoosterSetParam, int (Handle, const char*, const char*))                                            \
    X(XGBoosterUpdateOneIter, int (Handle, int, Handle))                                                    \
    X(XGBoosterPredict, int (Handle, Handle, int, unsigned, int, bst_ulong*, const float**))

template <class Signature>
using Function = Signature*;

struct Api {
#define WEFT_XGBOOST_MEMBER(name, type) Function<type> name = nullptr;
    WEFT_XGBOOST_FUNCTIONS(WEFT_XGBOOST_MEMBER)
#undef WEFT_XGBOOST_MEMBER
    std::string why;  // non-empty: not loaded, and why
};

// Loaded once per process (the library stays loaded).
const Api& api() {
    static const Api loaded = [] {
        Api a;
        void* lib = nullptr;
        for (const char* name : {"libxgboost.so.0", "libxgboost.so"})
            if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
        if (!lib) {
            const char* err = dlerror();
            a.why = std::string("libxgboost.so.0 not found (the model-based tuner needs XGBoost: apt-get install "
                                "libxgboost0; dlopen: ") +
                    (err ? err : "failed") + ")";
            return a;
        }
#define WEFT_XGBOOST_LOOK_UP(name, type)                                                    \
        a.name = reinterpret_cast<Function<type>>(dlsym(lib, #name));                                 \
        if (!a.name) {                                                                      \
            a.why = "libxgboost has no function " #name " (XGBoost 1.0 or newer is needed)"; \
            return a;                                                                       \
        }
        WEFT_XGBOOST_FUNCTIONS(WEFT_XGBOOST_LOOK_UP)
#undef WEFT_XGBOOST_LOOK_UP
        return a;
    }();
    return loaded;
}

const Api& checked_api() {
    const Api& a = api();
    WEFT_CHECK(a.why.empty(), "autotune::XGBoostModel: ", a.why);
    return a;
}

void check(int rc, const char* what) {
    if (rc == 0) return;
    const char* err = api().XGBGetLastError ? api().XGBGetLastError() : nullptr;
    ::weft::detail::throw_user_error(std::string("autotune::XGBoostModel: ") + what + " failed: " + (err ? err : "?"));
}

// A DMatrix of rows (all of one length), freed with the object.
class Matrix {
public:
    explicit Matrix(const std::vector<std::vector<float>>& rows) {
        const size_t cols = rows.empty() ? 0 : rows[0].size();
        std::vector<float> flat;
        flat.reserve(rows.size() * cols);
        for (const auto& r : rows) {
            WEFT_CHECK(r.size() == cols, "autotune::XGBoostModel: rows of different lengths (", r.size(), " and ",
                       cols, ")");
            flat.insert(flat.end(), r.begin(), r.end());
        }
        // Missing values: NaN (none are).
        check(api().XGDMatrixCreateFromMat(flat.data(), rows.size(), cols, std::numeric_limits<float>::quiet_NaN(),
                                           &handle_),
              "XGDMatrixCreateFromMat");
    }
    ~Matrix() {
        if (handle_) api().XGDMatrixFree(handle_);
    }
    Matrix(const Matrix&) = delete;
    Matrix& operator=(const Matrix&) = delete;
    Handle get() const { return handle_; }

private:
    Handle handle_ = nullptr;
};

}  // namespace xgboost_detail

bool xgboost_available(std::string* why) {
    const auto& a = xgboost_detail::api();
    if (why) *why = a.why;
    return a.why.empty();
}

XGBoostModel::XGBoostModel(const Options& options) : options_(options) {
    xgboost_detail::checked_api();
    WEFT_CHECK(options.rounds >= 1 && options.max_depth >= 1 && options.learning_rate > 0,
               "autotune::XGBoostModel: rounds and max_depth must be at least 1 and learning_rate positive");
}

XGBoostModel::~XGBoostModel() {
    if (booster_) xgboost_detail::api().XGBoosterFree(booster_);
}

void XGBoostModel::fit(const std::vector<std::vector<float>>& rows, const std::vector<float>& scores,
                       const std::vector<int>& groups) {
    using namespace xgboost_detail;
    WEFT_CHECK(rows.size() == scores.size() && rows.size() == groups.size(),
               "autotune::XGBoostModel::fit: ", rows.size(), " rows, ", scores.size(), " scores and ", groups.size(),
               " groups (one of each per row)");
    if (rows.empty()) return;
    // XGBoost wants each group's rows together: sorted by group, stably.
    std::vector<size_t> order(rows.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return groups[a] != groups[b] ? groups[a] < groups[b] : a < b; });
    std::vector<std::vector<float>> sorted_rows;
    std::vector<float> labels;
    std::vector<unsigned> group_sizes;
    for (size_t i = 0; i < order.size(); ++i) {
        sorted_rows.push_back(rows[order[i]]);
        labels.push_back(scores[order[i]]);
        if (i == 0 || groups[order[i]] != groups[order[i - 1]]) group_sizes.push_back(0);
        ++group_sizes.back();
    }
    Matrix train(sorted_rows);
    columns_ = rows[0].size();
    const Api& a = api();
    check(a.XGDMatrixSetFloatInfo(train.get(), "label", labels.data(), labels.size()), "setting the labels");
    check(a.XGDMatrixSetUIntInfo(train.get(), "group", group_sizes.data(), group_sizes.size()), "setting the groups");
    if (booster_) a.XGBoosterFree(booster_);
    booster_ = nullptr;
    Handle train_handle = train.get();
    check(a.XGBoosterCreate(&train_handle, 1, &booster_), "XGBoosterCreate");
    const std::string depth = std::to_string(options_.max_depth), eta = std::to_string(options_.learning_rate),
                      seed = std::to_string(options_.seed % 2147483647);
    const std::pair<const char*, const char*> params[] = {
        {"objective", "rank:pairwise"}, {"max_depth", depth.c_str()}, {"eta", eta.c_str()},
        {"gamma", "0.0001"},           {"min_child_weight", "1"},    {"subsample", "1"},
        {"lambda", "1"},               {"alpha", "0"},               {"tree_method", "exact"},
        {"nthread", "1"},              {"verbosity", "0"},           {"seed", seed.c_str()}};
    for (const auto& [name, value] : params) check(a.XGBoosterSetParam(booster_, name, value), "XGBoosterSetParam");
    for (int i = 0; i < options_.rounds; ++i) check(a.XGBoosterUpdateOneIter(booster_, i, train.get()), "training");
}

std::vector<float> XGBoostModel::predict(const std::vector<std::vector<float>>& rows) const {
    using namespace xgboost_detail;
    std::vector<float> out(rows.size(), 0.f);
    if (!booster_ || rows.empty()) return out;
    Matrix m(rows);
    WEFT_CHECK(rows[0].size() == columns_, "autotune::XGBoostModel::predict: rows of different lengths (",
               rows[0].size(), " features, fit on ", columns_, ")");
    bst_ulong n = 0;
    const float* result = nullptr;
    check(api().XGBoosterPredict(booster_, m.get(), 0, 0, 0, &n, &result), "XGBoosterPredict");
    WEFT_CHECK(n == rows.size(), "autotune::XGBoostModel::predict: XGBoost returned ", n, " scores for ", rows.size(),
               " rows");
    std::copy(result, result + n, out.begin());
    return out;
}

}  // namespace weft::autotune
