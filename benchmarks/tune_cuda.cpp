// weft_tune_cuda: graph::tune on a GPU, then tuned against default against cuBLAS (float32
// GEMMs) and PyTorch (ResNet-50, its figure read from benchmarks/torch_resnet50.py's JSON),
// timed in the same process. benchmarks/run_tune_cuda.sh runs it and writes the "Tuning on
// the GPU" section of RESULTS.md (tune_report.py gpu); the markdown tables go to stdout, the
// progress lines to stderr.
//
// The tuning comes first and the timing after: graph::tune measures each candidate in a
// child process, and the children of a process that has used CUDA cannot, so nothing here
// touches the GPU until every tuning run has ended.
//
//   --gemm-trials N      per GEMM shape (default 64)
//   --gemms LIST         MxNxK,MxNxK,... (default 4096x4096x4096,1024x1024x1024,512x3072x768)
//   --resnet-trials N    per ResNet-50 batch, shared by its tasks by their run time (default 300)
//   --batches LIST       ResNet-50 batches, 1,8 (default 1; 0: none)
//   --time-budget S      seconds per GEMM's tuning run (default 0: no limit)
//   --resnet-budget S    seconds per ResNet-50's (default: --time-budget)
//   --tuner NAME         model (default), random, genetic, grid
//   --rounds R           alternating timing rounds (default 7)
//   --save-records PATH  every record measured, appended
//   --torch-json PATH    torch_resnet50.py's output (absent: PyTorch "not measured")
#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include <weft/graph/testing/models.hpp>
#include <weft/runtime/cuda/cuda.hpp>
#include <weft/weft.hpp>

#include "cublas.hpp"
#include "tune_util.hpp"

namespace {

using namespace weft;

const Device kGpu = Device::cuda(0);

std::vector<std::string> split(const std::string& text, char sep) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, sep);)
        if (!item.empty()) out.push_back(item);
    return out;
}

std::string extra(const tune_bench::Options& o, const char* name, const std::string& fallback) {
    for (const auto& [k, v] : o.extra)
        if (k == name) return v;
    return fallback;
}

struct Tuned {
    std::string name;
    graph::Graph graph;
    std::shared_ptr<autotune::Records> records = std::make_shared<autotune::Records>();
    int tasks = 0, trials = 0, failed = 0;
    double tuning_s = 0;
};

// Tunes g for `target` (no CUDA used in this process), its progress on stderr.
Tuned tune(std::string name, graph::Graph g, const Target& target, int trials, bool total,
           const tune_bench::Options& o, double budget_s) {
    Tuned t{std::move(name), std::move(g)};
    graph::TuneOptions options;
    (total ? options.total_trials : options.trials) = trials;
    options.tuner = o.tuner;
    options.seed = o.seed;
    options.time_budget_s = budget_s;
    options.records_file = o.save_records;
    options.progress = [&](const graph::TuneProgress& p) {
        if (p.trial == p.trials || p.trial % 16 == 0) std::fprintf(stderr, "%s: %s\n", t.name.c_str(), graph::progress_line(p).c_str());
    };
    const auto t0 = std::chrono::steady_clock::now();
    *t.records = graph::tune(t.graph, target, options);
    t.tuning_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t.tasks = int(graph::extract_tasks(t.graph, target).size());
    t.trials = int(t.records->all().size());
    for (const auto& r : t.records->all()) t.failed += !r.ok();
    return t;
}

// One run of m on its stream, timed with CUDA events over enough runs to last ~2 ms.
double module_ms(graph::Module& m) {
    cuda::Stream stream = m.cuda_stream();
    cuda::Event start = cuda::Event::create(kGpu), end = cuda::Event::create(kGpu);
    start.record(stream);
    m.run();
    end.record(stream);
    const double one = cuda::Event::elapsed_ms(start, end);
    const int n = int(std::clamp(std::ceil(2.0 / std::max(one, 1e-3)), 1.0, 200.0));
    start.record(stream);
    for (int i = 0; i < n; ++i) m.run();
    end.record(stream);
    return cuda::Event::elapsed_ms(start, end) / n;
}

// The host clock from run() to the stream's synchronize (how PyTorch's wall_ms is taken).
double module_wall_ms(graph::Module& m) {
    const auto t0 = std::chrono::steady_clock::now();
    m.run();
    m.cuda_stream().synchronize();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double max_rel_err(const BufferRef& got, const BufferRef& want) {
    Buffer<float> g(got.shape()), w(want.shape());
    g.copy_from(got);
    w.copy_from(want);
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < g.size(); ++i) {
        worst = std::max(worst, double(std::abs(g.data()[i] - w.data()[i])));
        scale = std::max(scale, double(std::abs(w.data()[i])));
    }
    return worst / std::max(scale, 1e-30);
}

std::string best_config(const Tuned& t) {
    std::map<std::string, const autotune::Record*> best;
    for (const auto& r : t.records->all())
        if (r.ok() && (!best[r.workload] || r.cost_ms() < best[r.workload]->cost_ms())) best[r.workload] = &r;
    return best.size() == 1 ? "`" + best.begin()->second->config.str() + "`" : std::to_string(best.size()) + " tasks";
}

// PyTorch's fp32 wall-clock ms for `batch`, or a negative value.
double torch_ms(const std::string& path, int64_t batch) {
    std::ifstream in(path);
    if (!in) return -1;
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.value("available", false)) return -1;
    for (const auto& r : j["results"])
        if (r.value("mode", "") == "fp32" && r.value("batch", 0) == batch) return r.value("wall_ms", -1.0);
    return -1;
}

}  // namespace

int main(int argc, char** argv) {
    const tune_bench::Options o = tune_bench::parse(argc, argv, graph::TuneOptions::Tuner::Model);
    const int gemm_trials = std::atoi(extra(o, "--gemm-trials", "64").c_str());
    const int resnet_trials = std::atoi(extra(o, "--resnet-trials", "300").c_str());
    const double budget_s = std::atof(extra(o, "--time-budget", "0").c_str());
    const double resnet_budget_s = std::atof(extra(o, "--resnet-budget", std::to_string(budget_s)).c_str());
    const std::string torch_json = extra(o, "--torch-json", "");
    // The device's architecture from the driver would load CUDA here: read it from the
    // environment (run_tune_cuda.sh asks nvidia-smi), sm_90 (H100, H200) by default.
    const char* arch = std::getenv("WEFT_CUDA_ARCH");
    const Target target = Target::cuda(arch && *arch ? arch : "sm_90");

    // ---- tuning (no CUDA in this process) ----
    std::vector<Tuned> gemms, nets;
    for (const std::string& shape : split(extra(o, "--gemms", "4096x4096x4096,1024x1024x1024,512x3072x768"), ',')) {
        std::vector<std::string> d = split(shape, 'x');
        const int64_t M = std::stoll(d.at(0)), N = std::stoll(d.at(1)), K = std::stoll(d.at(2));
        graph::Graph g;
        g.output(g.matmul(g.input("a", {M, K}), g.input("b", {K, N})), "c");
        gemms.push_back(tune(shape, std::move(g), target, gemm_trials, false, o, budget_s));
    }
    for (const std::string& b : split(extra(o, "--batches", "1"), ',')) {
        const int64_t batch = std::stoll(b);
        if (batch <= 0) continue;
        nets.push_back(tune("resnet50/b" + b, graph::testing::resnet50(batch), target, resnet_trials, true, o, resnet_budget_s));
    }

    // What the tuning must not have done here: load the CUDA driver (weft's, or NVRTC's, which
    // calls cuInit) — its children could not have measured.
    for (const char* lib : {"libcuda.so.1", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"})
        if (void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
            std::fprintf(stderr, "weft_tune_cuda: %s was loaded while tuning\n", lib);
            dlclose(h);
        }
    // ---- timing (CUDA from here on) ----
    if (cuda::device_count() == 0) {
        std::fprintf(stderr, "weft_tune_cuda: no CUDA device: %s\n", cuda::unavailable_reason().c_str());
        return 1;
    }
    const cuda::DeviceProperties props = cuda::properties(kGpu);
    std::printf("- device: %s (%s, %d SMs); tuner: %s; target %s\n\n", props.name.c_str(), props.arch().c_str(),
                props.multiprocessors, tune_bench::tuner_name(o.tuner), target.str().c_str());
    std::printf("| GEMM MxNxK | trials (failed) | tuning s | default TFLOP/s | tuned TFLOP/s | cuBLAS TFLOP/s | "
                "tuned / default | tuned / cuBLAS | check | best config |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (Tuned& t : gemms) {
        graph::Module plain = graph::build(t.graph, target), tuned = graph::build(t.graph, target, {.records = t.records});
        const auto shape_a = t.graph.type(t.graph.inputs()[0]).shape, shape_b = t.graph.type(t.graph.inputs()[1]).shape;
        const int64_t M = shape_a[0], K = shape_a[1], N = shape_b[1];
        Buffer<float> a = Buffer<float>::random(shape_a, -1, 1, 1), b = Buffer<float>::random(shape_b, -1, 1, 2);
        BufferRef da = a.copy_to(kGpu), db = b.copy_to(kGpu), dc = BufferRef::allocate(f32, {M, N}, kGpu);
        for (graph::Module* m : {&plain, &tuned}) {
            m->set_input("a", da);
            m->set_input("b", db);
        }
        bool have_cublas = true;
        try {
            cuda_bench::Cublas::get();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "weft_tune_cuda: no cuBLAS: %s\n", e.what());
            have_cublas = false;
        }
        std::vector<double> d_ms, t_ms, c_ms;
        for (int r = 0; r < o.rounds; ++r) {
            d_ms.push_back(module_ms(plain));
            t_ms.push_back(module_ms(tuned));
            if (have_cublas) {
                cuda::Event start = cuda::Event::create(kGpu), end = cuda::Event::create(kGpu);
                cuda_bench::Cublas::get().sgemm(M, N, K, da.data(), db.data(), dc.data());
                const int n = 10;
                start.record();
                for (int i = 0; i < n; ++i) cuda_bench::Cublas::get().sgemm(M, N, K, da.data(), db.data(), dc.data());
                end.record();
                c_ms.push_back(cuda::Event::elapsed_ms(start, end) / n);
            }
        }
        cuda::synchronize(kGpu);
        tuned.cuda_stream().synchronize();
        const double flop = 2.0 * double(M) * double(N) * double(K);
        auto tflops = [&](double ms) { return flop / (ms * 1e9); };
        const double dm = tune_bench::median(d_ms), tm = tune_bench::median(t_ms);
        const double cm = have_cublas ? tune_bench::median(c_ms) : NAN;
        std::printf("| %s | %d (%d) | %.0f | %.1f | %.1f | %.1f | %.2f | %.2f | %.1e | %s |\n", t.name.c_str(), t.trials,
                    t.failed, t.tuning_s, tflops(dm), tflops(tm), tflops(cm), dm / tm, cm / tm,
                    have_cublas ? max_rel_err(tuned.get_output(0), dc) : NAN, best_config(t).c_str());
    }
    if (!nets.empty()) {
        std::printf("\n| network | tasks | trials (failed) | tuning s | default ms | tuned ms | PyTorch fp32 ms | "
                    "tuned / default speed | tuned / PyTorch speed | check |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    }
    for (Tuned& t : nets) {
        graph::Module plain = graph::build(t.graph, target), tuned = graph::build(t.graph, target, {.records = t.records});
        Buffer<float> x = Buffer<float>::random(t.graph.type(t.graph.inputs()[0]).shape, -1, 1, 7);
        plain.set_input(0, x);
        tuned.set_input(0, x);
        for (int i = 0; i < 3; ++i) module_wall_ms(plain), module_wall_ms(tuned);
        std::vector<double> d_ms, t_ms;
        for (int r = 0; r < o.rounds; ++r) {
            std::vector<double> d, u;
            for (int i = 0; i < 20; ++i) d.push_back(module_wall_ms(plain));
            for (int i = 0; i < 20; ++i) u.push_back(module_wall_ms(tuned));
            d_ms.push_back(tune_bench::median(d));
            t_ms.push_back(tune_bench::median(u));
        }
        const double dm = tune_bench::median(d_ms), tm = tune_bench::median(t_ms);
        const int64_t batch = t.graph.type(t.graph.inputs()[0]).shape[0];
        const double pm = torch_json.empty() ? -1 : torch_ms(torch_json, batch);
        char torch[32] = "not measured", ratio[32] = "-";
        if (pm > 0) {
            std::snprintf(torch, sizeof torch, "%.3f", pm);
            std::snprintf(ratio, sizeof ratio, "%.2f", pm / tm);
        }
        std::printf("| %s | %d | %d (%d) | %.0f | %.3f | %.3f | %s | %.2f | %s | %.1e |\n", t.name.c_str(), t.tasks,
                    t.trials, t.failed, t.tuning_s, dm, tm, torch, dm / tm, ratio,
                    max_rel_err(tuned.get_output(0), plain.get_output(0)));
    }
    return 0;
}
