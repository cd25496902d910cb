// What the tuning benchmarks (tune_gemm, tune_conv, tune_model) share: their command line,
// medians, and timing a function or one kernel of a module.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <weft/weft.hpp>

namespace tune_bench {

// The options every tuning benchmark takes; each keeps the others it knows in `extra`.
struct Options {
    int trials = 64, rounds = 7;
    uint64_t seed = 1;
    std::string save_records;  // --save-records: every record measured, appended here
    weft::graph::TuneOptions::Tuner tuner;
    std::vector<std::pair<std::string, std::string>> extra;  // other --name value pairs
};

inline weft::graph::TuneOptions::Tuner tuner_named(const char* name) {
    using T = weft::graph::TuneOptions::Tuner;
    if (!std::strcmp(name, "genetic")) return T::Genetic;
    if (!std::strcmp(name, "grid")) return T::Grid;
    if (!std::strcmp(name, "model")) return T::Model;
    if (!std::strcmp(name, "random")) return T::Random;
    std::fprintf(stderr, "bad --tuner '%s' (random, grid, genetic or model)\n", name);
    std::exit(2);
}

inline const char* tuner_name(weft::graph::TuneOptions::Tuner t) {
    using T = weft::graph::TuneOptions::Tuner;
    return t == T::Genetic ? "genetic" : t == T::Grid ? "grid" : t == T::Model ? "model" : "random";
}

// --trials N --rounds R --seed S --tuner NAME --save-records PATH, and any other --name value.
inline Options parse(int argc, char** argv, weft::graph::TuneOptions::Tuner default_tuner) {
    Options o;
    o.tuner = default_tuner;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char* value = argv[i + 1];
        if (!std::strcmp(argv[i], "--tuner")) o.tuner = tuner_named(value);
        else if (!std::strcmp(argv[i], "--trials")) o.trials = std::atoi(value);
        else if (!std::strcmp(argv[i], "--rounds")) o.rounds = std::atoi(value);
        else if (!std::strcmp(argv[i], "--seed")) o.seed = std::strtoull(value, nullptr, 10);
        else if (!std::strcmp(argv[i], "--save-records")) o.save_records = value;
        else o.extra.emplace_back(argv[i], value);
    }
    return o;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The median time of `runs` calls of f (after one untimed call).
inline double time_ms(const std::function<void()>& f, int runs) {
    f();
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        f();
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(t);
}

// The mean time of the module's kernel for `workload` over `runs` runs (the profiler's).
inline double kernel_ms(weft::graph::Module& m, const std::string& workload, int runs) {
    for (const weft::graph::KernelTiming& k : m.profile(runs).kernels)
        if (m.kernels()[size_t(k.index)].workload == workload) return k.mean_ms;
    std::fprintf(stderr, "no kernel for %s\n", workload.c_str());
    std::exit(1);
}

// The task of a graph's tasks that is worth tuning: the one with the largest space (a
// convolution's layout transforms have none).
inline const weft::graph::TuningTask& main_task(const std::vector<weft::graph::TuningTask>& tasks) {
    const weft::graph::TuningTask* t = &tasks.at(0);
    for (const auto& x : tasks)
        if (x.space.size() > t->space.size()) t = &x;
    return *t;
}

}  // namespace tune_bench
