// The model-based tuner's parts: features of a lowered program, the XGBoost ranking model,
// the model search (on a synthetic cost, so that it can be checked exactly), and graph::tune
// with Tuner::Model.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "weft/weft.hpp"

using namespace weft;

namespace {

std::map<std::string, float> named_features(const ir::PrimFunc& f) {
    std::vector<float> v = autotune::program_features(f);
    const std::vector<std::string>& names = autotune::program_feature_names();
    REQUIRE(v.size() == size_t(autotune::kProgramFeatures));
    REQUIRE(names.size() == v.size());
    std::map<std::string, float> out;
    for (size_t i = 0; i < v.size(); ++i) out[names[i]] = v[i];
    return out;
}

float log2p(double x) { return float(std::log2(1 + x)); }

// Spearman's rank correlation of two sequences.
double rank_correlation(const std::vector<float>& a, const std::vector<float>& b) {
    auto ranks = [](const std::vector<float>& v) {
        std::vector<size_t> order(v.size());
        for (size_t i = 0; i < v.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](size_t x, size_t y) { return v[x] < v[y]; });
        std::vector<double> r(v.size());
        for (size_t i = 0; i < order.size(); ++i) r[order[i]] = double(i);
        return r;
    };
    std::vector<double> ra = ranks(a), rb = ranks(b);
    double d2 = 0;
    for (size_t i = 0; i < ra.size(); ++i) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
    const double n = double(ra.size());
    return 1 - 6 * d2 / (n * (n * n - 1));
}

}  // namespace

TEST_CASE("program features count a loop nest's work, strides, footprints and loop kinds") {
    Tensor X = placeholder({1000}, f32, "x");
    Tensor Y = compute({1000}, [&](Expr i) { return X(i) * 2.f; }, "y");
    Schedule s = create_schedule(Y);
    auto [outer, inner] = s[Y].split(Y.axis(0), 100);
    s[Y].parallel(outer);
    std::map<std::string, float> f = named_features(lower(s, {X, Y}));
    CHECK(f["flops"] == doctest::Approx(log2p(1000)));
    CHECK(f["load_bytes"] == doctest::Approx(log2p(4000)));
    CHECK(f["loops"] == 2);
    CHECK(f["parallel_loops"] == 1);
    CHECK(f["parallel_extent"] == doctest::Approx(log2p(10)));
    // loop0: the inner loop (100, serial, stride 1); loop1: the outer (10, parallel, stride 100).
    CHECK(f["loop0.extent"] == doctest::Approx(log2p(100)));
    CHECK(f["loop0.serial"] == 1);
    CHECK(f["loop0.buf0.stride"] == doctest::Approx(log2p(1)));
    CHECK(f["loop0.buf0.footprint_bytes"] == doctest::Approx(log2p(400)));
    CHECK(f["loop1.parallel"] == 1);
    CHECK(f["loop1.buf1.stride"] == doctest::Approx(log2p(100)));
    CHECK(f["loop1.buf1.footprint_bytes"] == doctest::Approx(log2p(4000)));
    CHECK(f["loop2.extent"] == 0);  // no third loop

    // A reduction: the output is reused along k (stride 0), the inputs are not.
    Tensor A = placeholder({16, 32}, f32, "A"), B = placeholder({32}, f32, "B");
    IterVar k = reduce_axis(0, 32, "k");
    Tensor C = compute({16}, [&](Expr i) { return sum(A(i, k.var()) * B(k.var()), {k}); }, "C");
    Schedule s2 = create_schedule(C);
    std::map<std::string, float> g = named_features(lower(s2, {A, B, C}));
    CHECK(g["loop0.extent"] == doctest::Approx(log2p(32)));
    CHECK(g["loop0.buf0.stride"] == 0);
    CHECK(g["loop0.buf0.reuse"] == doctest::Approx(log2p(32)));
    // Lowered as `let x0 = C[i]; let y0 = A[..] * B[k]; C[i] = x0 + y0`: the loads and the
    // multiply are found through the lets. buf1 is C read, buf2 A, buf3 B.
    CHECK(g["hot_flops"] == doctest::Approx(log2p(2)));
    CHECK(g["hot_buffers"] == doctest::Approx(log2p(4)));
    CHECK(g["loop0.buf1.stride"] == 0);
    CHECK(g["loop0.buf2.stride"] == doctest::Approx(log2p(1)));
    CHECK(g["loop1.buf2.stride"] == doctest::Approx(log2p(32)));
    CHECK(g["loop0.buf3.reuse"] == doctest::Approx(log2p(1)));
    CHECK(g["loop1.buf3.reuse"] == doctest::Approx(log2p(16)));
}

TEST_CASE("program features tell apart points of the GEMM space") {
    Tensor A = placeholder({96, 64}, f32, "A"), B = placeholder({64, 128}, f32, "B");
    ConfigSpace space;
    topi::matmul(A, B, "matmul", Target::host(), Config::recording(&space));
    // As many distinct feature vectors as distinct programs (several points lower alike here).
    std::set<std::vector<float>> distinct;
    std::set<std::string> programs;
    for (uint64_t i = 0; i < space.size(); ++i) {
        const Config c = space.at(i);
        Tensor C = topi::matmul(A, B, "matmul", Target::host(), c);
        Schedule s = create_schedule(C);
        topi::schedule_matmul(s, C, C, Target::host(), c);
        ir::PrimFunc f = lower(s, {A, B, C});
        std::ostringstream text;
        text << f;
        programs.insert(text.str());
        distinct.insert(autotune::program_features(f));
    }
    CHECK(programs.size() >= 3);
    CHECK(distinct.size() == programs.size());
    CHECK(autotune::knob_features(space, space.defaults()).size() == space.knobs().size());
}

TEST_CASE("the XGBoost model learns a ranking, the same for the same data") {
    std::string why;
    REQUIRE_MESSAGE(autotune::xgboost_available(&why), why);
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<float> u(0, 1);
    auto truth = [](const std::vector<float>& x) { return -std::pow(x[0] - 0.3f, 2.f) - 0.5f * std::abs(x[1] - 0.7f); };
    std::vector<std::vector<float>> train, test;
    std::vector<float> scores, test_truth;
    for (int i = 0; i < 200; ++i) {
        std::vector<float> x = {u(rng), u(rng), u(rng)};  // the third is noise
        train.push_back(x);
        scores.push_back(truth(x));
    }
    for (int i = 0; i < 100; ++i) {
        std::vector<float> x = {u(rng), u(rng), u(rng)};
        test.push_back(x);
        test_truth.push_back(truth(x));
    }
    autotune::XGBoostModel model({.seed = 4}), again({.seed = 4});
    CHECK(model.predict(test) == std::vector<float>(100, 0.f));  // not fit yet
    model.fit(train, scores, std::vector<int>(200, 0));
    again.fit(train, scores, std::vector<int>(200, 0));
    const std::vector<float> p = model.predict(test);
    CHECK(rank_correlation(p, test_truth) > 0.8);
    CHECK(p == again.predict(test));
    CHECK_THROWS_WITH_AS(model.fit(train, scores, {0}), doctest::Contains("one of each per row"), Error);
    CHECK_THROWS_WITH_AS(model.predict({{1.f}}), doctest::Contains("rows of different lengths"), Error);
}

TEST_CASE("the model search finds a synthetic optimum in few trials, by ranking or by annealing") {
    // 64 x 64 x 2 points; cost: a bowl around (40, 10), knob c a 2x slowdown.
    ConfigSpace space;
    std::vector<int64_t> v64;
    for (int64_t i = 0; i < 64; ++i) v64.push_back(i);
    space.add({"a", v64, 0});
    space.add({"b", v64, 0});
    space.add({"c", {0, 1}, 0});
    auto cost = [&](uint64_t index) {
        const Config c = space.at(index);
        const double a = double(*c.get("a")), b = double(*c.get("b"));
        return (1 + (a - 40) * (a - 40) + 2 * (b - 10) * (b - 10)) * (*c.get("c") ? 2 : 1);
    };
    auto featurize = [&](uint64_t index) { return autotune::knob_features(space, space.at(index)); };
    for (uint64_t exhaustive_limit : {uint64_t(1) << 20, uint64_t(0)}) {
        CAPTURE(exhaustive_limit);
        std::vector<uint64_t> order[2];
        for (int run = 0; run < 2; ++run) {
            autotune::ModelSearch search(space, featurize,
                                         {.batch = 8, .initial = 16, .exhaustive_limit = exhaustive_limit, .seed = 9});
            double best = 1e30;
            std::set<uint64_t> seen;
            for (int t = 0; t < 120; ++t) {
                std::optional<uint64_t> i = search.next();
                REQUIRE(i);
                CHECK(seen.insert(*i).second);  // never the same point twice
                order[run].push_back(*i);
                best = std::min(best, cost(*i));
                search.observe(*i, cost(*i));
            }
            // 120 of 8192 points: the optimum (cost 1) or a point next to it (cost <= 3).
            CHECK(best <= 3);
        }
        CHECK(order[0] == order[1]);  // seeded: the same points for the same costs
    }
}

TEST_CASE("graph::tune with the model tuner measures distinct points, the default first") {
    graph::Graph g;
    graph::Value x = g.input("x", {48, 64});
    auto w1 = g.constant("w1", Buffer<float>::random({64, 64}, -0.2f, 0.2f, 1));
    auto w2 = g.constant("w2", Buffer<float>::random({40, 64}, -0.2f, 0.2f, 2));
    g.output(g.dense(g.relu(g.dense(x, w1)), w2), "y");
    graph::TuneOptions o{.trials = 12, .tuner = graph::TuneOptions::Tuner::Model, .seed = 5,
                         .measure = {.warmup = 0, .repeats = 1}};
    o.model.initial = 4;
    o.model.batch = 4;
    autotune::Records r = graph::tune(g, Target::host(), o);
    std::vector<graph::TuningTask> tasks = graph::extract_tasks(g);
    REQUIRE(tasks.size() == 2);
    REQUIRE(r.size() == 24);
    for (const auto& t : tasks) {
        std::vector<uint64_t> points;
        for (const auto& rec : r.all())
            if (rec.workload == t.workload) {
                CAPTURE(rec.error);
                CHECK(rec.ok());
                points.push_back(t.space.index_of(rec.config));
            }
        REQUIRE(points.size() == 12);
        CHECK(points[0] == t.space.index_of(t.space.defaults()));
        CHECK(std::set<uint64_t>(points.begin(), points.end()).size() == 12);
    }
}
