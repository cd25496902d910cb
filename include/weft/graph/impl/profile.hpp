// Definitions of graph/inspect.hpp's profiler: Module::profile and ProfileReport::str.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "weft/graph/impl/module.hpp"
#include "weft/graph/inspect.hpp"

namespace weft::graph {

std::string ProfileReport::str() const {
    std::vector<const KernelTiming*> rows;
    for (const KernelTiming& k : kernels) rows.push_back(&k);
    std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->mean_ms > b->mean_ms; });
    size_t width = 6;
    for (auto* k : rows) width = std::max(width, k->name.size());
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "%4s  %-*s  %5s  %9s  %9s  %6s\n", "#", int(width), "kernel", "nodes", "mean ms",
                  "min ms", "share");
    out += line;
    for (auto* k : rows) {
        std::snprintf(line, sizeof line, "%4d  %-*s  %5zu  %9.4f  %9.4f  %5.1f%%\n", k->index, int(width),
                      k->name.c_str(), k->nodes.size(), k->mean_ms, k->min_ms, 100.0 * k->share);
        out += line;
    }
    std::snprintf(line, sizeof line, "%4s  %-*s  %5s  %9.4f  %9s  %5.1f%%\n", "", int(width), "total (kernels)", "",
                  kernels_ms, "", kernels.empty() ? 0.0 : 100.0);
    out += line;
    std::snprintf(line, sizeof line, "%4s  %-*s  %5s  %9.4f   (mean of %d runs)\n", "", int(width), "run()", "", run_ms,
                  repeats);
    out += line;
    return out;
}

ProfileReport Module::profile(int repeats) {
    WEFT_CHECK(repeats > 0, "graph::Module::profile: repeats must be positive, got ", repeats);
    State& s = state();
    using clock = std::chrono::steady_clock;
    using detail::ms_since;
    // A CUDA module's kernels return at launch: wait for each, so the time is the kernel's.
    auto wait = [&s] {
        if (s.device.is_cuda()) s.stream.synchronize();
    };
    std::optional<cuda::StreamGuard> on_stream;
    if (s.device.is_cuda()) on_stream.emplace(s.stream);
    run();  // warm-up: caches, pages of the arena, the thread pool
    wait();
    const size_t n = s.kernels.size();
    std::vector<double> total(n, 0.0), best(n, 1e300);
    std::vector<int> runs(n, 0);
    double run_total = 0;
    for (int r = 0; r < repeats; ++r) {
        for (size_t k = 0; k < n; ++k) {
            runs[k] += s.needed(k);
            auto t0 = clock::now();
            s.run_kernel(k);
            wait();
            double t = ms_since(t0);
            total[k] += t;
            best[k] = std::min(best[k], t);
        }
        auto t0 = clock::now();
        run();
        wait();
        run_total += ms_since(t0);
    }
    ProfileReport report;
    report.repeats = repeats;
    report.run_ms = run_total / repeats;
    for (size_t k = 0; k < n; ++k) {
        const KernelInfo& info = s.infos[k];
        report.kernels.push_back({int(k), info.name, info.nodes, total[k] / repeats, best[k], 0.0, runs[k]});
        report.kernels_ms += total[k] / repeats;
    }
    for (KernelTiming& k : report.kernels) k.share = report.kernels_ms > 0 ? k.mean_ms / report.kernels_ms : 0.0;
    return report;
}

}  // namespace weft::graph
