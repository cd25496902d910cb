// The benchmark harness (see harness.hpp) and main(): machine limits, thread control,
// registration with Google Benchmark.
#include "harness.hpp"

#include <Halide.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include <weft/runtime/thread_pool.hpp>

extern "C" void openblas_set_num_threads(int);
extern "C" void omp_set_num_threads(int);  // libgomp, which oneDNN links

namespace bench {
namespace {

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs f(t) on `threads` threads at once (t = 0 on the calling thread).
void run_on_threads(int threads, const std::function<void(int)>& f) {
    std::vector<std::thread> others;
    for (int t = 1; t < threads; ++t) others.emplace_back(f, t);
    f(0);
    for (auto& th : others) th.join();
}

// ---- FMA peak -------------------------------------------------------------------------
// Independent chains of fused multiply-adds (enough to cover FMA latency x throughput);
// each lane does 2 flops per FMA. The binary is built with -march=native.
#if defined(__AVX512F__)
constexpr int kLanes = 16;
using Vec = __m512;
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline Vec vset(float x) { return _mm512_set1_ps(x); }
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kLanes = 8;
using Vec = __m256;
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline Vec vset(float x) { return _mm256_set1_ps(x); }
#else
#error "benchmarks need AVX2+FMA or AVX-512 (built with -march=native)"
#endif
constexpr int kChains = 16;

__attribute__((noinline)) double fma_loop(int64_t iters) {
    Vec acc[kChains];
    for (int c = 0; c < kChains; ++c) acc[c] = vset(1.0f + 0.01f * float(c));
    const Vec mul = vset(0.999999f), add = vset(1e-6f);
    for (int64_t i = 0; i < iters; ++i) {
        for (int c = 0; c < kChains; ++c) acc[c] = vfma(acc[c], mul, add);
        // Without this barrier clang folds chains together (12 registers for 16 chains) and
        // the loop reports ~1.4x the FMA units' real throughput.
        for (int c = 0; c < kChains; ++c) asm volatile("" : "+v"(acc[c]));
    }
    for (int c = 1; c < kChains; ++c) acc[0] = vfma(acc[0], mul, acc[c]);
    benchmark::DoNotOptimize(acc[0]);
    return 2.0 * kLanes * kChains * double(iters);
}

double measure_peak(int threads) {
    double best = 0;
    for (int rep = 0; rep < 7; ++rep) {
        double t0 = now_seconds();
        run_on_threads(threads, [](int) { fma_loop(1 << 22); });
        double flops = 2.0 * kLanes * kChains * double(1 << 22) * threads;
        best = std::max(best, flops / (now_seconds() - t0) / 1e9);
    }
    return best;
}

// ---- triad ----------------------------------------------------------------------------
constexpr size_t kTriadN = size_t(16) << 20;  // 64 MiB per array

struct TriadArrays {
    std::unique_ptr<float[]> a{new float[kTriadN]}, b{new float[kTriadN]}, c{new float[kTriadN]};
    TriadArrays() {
        fill_random(b.get(), kTriadN, -1, 1, 3);
        fill_random(c.get(), kTriadN, -1, 1, 4);
        std::memset(a.get(), 0, kTriadN * sizeof(float));
    }
};

TriadArrays& triad_arrays() {
    static TriadArrays arrays;
    return arrays;
}

void triad(int threads) {
    TriadArrays& t = triad_arrays();
    float* __restrict a = t.a.get();
    const float* __restrict b = t.b.get();
    const float* __restrict c = t.c.get();
    run_on_threads(threads, [&](int id) {
        size_t lo = kTriadN * size_t(id) / size_t(threads), hi = kTriadN * size_t(id + 1) / size_t(threads);
        for (size_t i = lo; i < hi; ++i) a[i] = b[i] + 0.5f * c[i];
    });
    benchmark::ClobberMemory();
}

double measure_triad(int threads) {
    double best = 0;
    triad(threads);
    for (int rep = 0; rep < 7; ++rep) {
        double t0 = now_seconds();
        triad(threads);
        best = std::max(best, 3.0 * kTriadN * sizeof(float) / (now_seconds() - t0) / 1e9);
    }
    return best;
}

double cached(std::map<int, double>& table, int threads, double (*measure)(int)) {
    static std::mutex m;
    std::lock_guard<std::mutex> lock(m);
    auto it = table.find(threads);
    if (it == table.end()) it = table.emplace(threads, measure(threads)).first;
    return it->second;
}

}  // namespace

double peak_gflops(int threads) {
    static std::map<int, double> table;
    return cached(table, threads, measure_peak);
}

double triad_gbps(int threads) {
    static std::map<int, double> table;
    return cached(table, threads, measure_triad);
}

void fill_random(float* p, size_t n, float lo, float hi, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (size_t i = 0; i < n; ++i) p[i] = dist(rng);
}

std::vector<std::function<void(int)>>& thread_setters() {
    static std::vector<std::function<void(int)>> setters;
    return setters;
}

void on_set_threads(std::function<void(int)> setter) { thread_setters().push_back(std::move(setter)); }

void set_halide_threads(int threads) {
    for (auto& m : Halide::Internal::JITSharedRuntime::get(nullptr, Halide::get_jit_target_from_environment(), false)) {
        auto sym = m.find_symbol_by_name("halide_set_num_threads");
        if (sym.address) reinterpret_cast<int (*)(int)>(sym.address)(threads);
    }
}

void set_threads(int threads) {
    weft::set_num_threads(threads);
    openblas_set_num_threads(threads);
    omp_set_num_threads(threads);
    set_halide_threads(threads);
    for (auto& setter : thread_setters()) setter(threads);
}

namespace {
std::map<std::string, double>& extra_counters() {
    static std::map<std::string, double> counters;
    return counters;
}
}  // namespace

void report_counter(const std::string& name, double value) { extra_counters()[name] = value; }

void add(const Case& c, const std::string& impl, int threads, Setup setup) {
    std::string name = c.name + "/" + impl + "/" + std::to_string(threads) + "t";
    benchmark::RegisterBenchmark(name.c_str(), [c, threads, setup](benchmark::State& state) {
        set_threads(threads);
        extra_counters().clear();
        Runner run = setup();
        for (auto& [key, value] : extra_counters()) state.counters[key] = value;
        run();  // warm-up: caches, pages, lazily created thread pools
        double t0 = now_seconds();
        for (auto _ : state) {
            run();
            benchmark::ClobberMemory();
        }
        double rate = c.work * double(state.iterations()) / (now_seconds() - t0) / 1e9;
        double limit = c.unit == Unit::Flops ? peak_gflops(threads) : triad_gbps(threads);
        state.counters[c.unit == Unit::Flops ? "GFLOP/s" : "GB/s"] = rate;
        state.counters["%peak"] = 100.0 * rate / limit;
        state.counters["threads"] = threads;
    })->UseRealTime()->Unit(benchmark::kMillisecond)->MinTime(0.3);
}

}  // namespace bench

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    for (int t : {1, 2}) {
        benchmark::AddCustomContext("peak_GFLOP/s_" + std::to_string(t) + "t", std::to_string(bench::peak_gflops(t)));
        benchmark::AddCustomContext("triad_GB/s_" + std::to_string(t) + "t", std::to_string(bench::triad_gbps(t)));
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
