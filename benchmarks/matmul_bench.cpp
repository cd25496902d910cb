// Matrix multiplication, float32, 1024 x 1024 x 1024, one thread: weft against its peers,
// next to the machine's measured peak. Run through benchmarks/run.sh (writes RESULTS.md).
//
// Counters: GFLOP/s (2*M*N*K per iteration), and on the matmuls %peak, the share of the
// single-core FMA peak measured in this binary at start-up (BM_peak_fma shows it too).
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <Eigen/Core>
#include <algorithm>
#include <ctime>
#include <cstdint>
#include <string>

namespace {

constexpr int N = 1024;
constexpr double kMatmulFlops = 2.0 * N * N * N;

// Times a benchmark's loop for counters in plain units (kIsRate would print
// "GFLOP/s=.../s"). Single-thread cases use this thread's CPU time, which other processes
// on a shared machine do not inflate; a multi-threaded case must pass Clock::Wall.
struct LoopTimer {
    enum class Clock { ThreadCpu, Wall };
    explicit LoopTimer(Clock c = Clock::ThreadCpu) : clock(c), t0(now()) {}
    double seconds() const { return now() - t0; }

  private:
    double now() const {
        timespec ts{};
        clock_gettime(clock == Clock::Wall ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
    }
    Clock clock;
    double t0;
};

// ---- machine peak ---------------------------------------------------------------------
// Independent chains of fused multiply-adds (enough to cover latency x throughput of two
// FMA pipes); each lane does 2 flops per FMA. Values stay bounded (a*b + c with b < 1).
constexpr int kChains = 16;

// The binary is built with -march=native, so the widest ISA the build machine has is used.
#if defined(__AVX512F__)
constexpr const char* kPeakIsa = "avx512f";
constexpr int kLanes = 16;
using Vec = __m512;
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline Vec vset(float x) { return _mm512_set1_ps(x); }
#elif defined(__AVX2__) && defined(__FMA__)
constexpr const char* kPeakIsa = "avx2+fma";
constexpr int kLanes = 8;
using Vec = __m256;
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline Vec vset(float x) { return _mm256_set1_ps(x); }
#else
#error "benchmarks/matmul_bench.cpp needs AVX2+FMA or AVX-512 (built with -march=native)"
#endif

// Returns the flops done.
__attribute__((noinline)) double fma_loop(int64_t iters) {
    Vec acc[kChains];
    for (int c = 0; c < kChains; ++c) acc[c] = vset(1.0f + 0.01f * float(c));
    const Vec mul = vset(0.999999f), add = vset(1e-6f);
    for (int64_t i = 0; i < iters; ++i) {
        for (int c = 0; c < kChains; ++c) acc[c] = vfma(acc[c], mul, add);
    }
    for (int c = 1; c < kChains; ++c) acc[0] = vfma(acc[0], mul, acc[c]);
    benchmark::DoNotOptimize(acc[0]);
    return 2.0 * kLanes * kChains * double(iters);
}

// Best single-core fp32 FMA rate in GFLOP/s (max of a few short runs), measured once.
double peak_gflops() {
    static const double peak = [] {
        double best = 0;
        for (int rep = 0; rep < 5; ++rep) {
            LoopTimer timer;
            double flops = fma_loop(1 << 22);
            best = std::max(best, flops / timer.seconds() / 1e9);
        }
        return best;
    }();
    return peak;
}

void set_matmul_counters(benchmark::State& state, double seconds) {
    double gflops = kMatmulFlops * double(state.iterations()) / seconds / 1e9;
    state.counters["GFLOP/s"] = gflops;
    state.counters["%peak"] = 100.0 * gflops / peak_gflops();
}

void BM_peak_fma(benchmark::State& state) {
    double flops = 0;
    LoopTimer timer;
    for (auto _ : state) flops += fma_loop(1 << 20);
    state.counters["GFLOP/s"] = flops / timer.seconds() / 1e9;
    state.SetLabel(kPeakIsa);
}
BENCHMARK(BM_peak_fma)->Unit(benchmark::kMillisecond);

// ---- Eigen (peer) ---------------------------------------------------------------------
void BM_matmul_eigen(benchmark::State& state) {
    Eigen::setNbThreads(1);
    Eigen::MatrixXf a = Eigen::MatrixXf::Random(N, N), b = Eigen::MatrixXf::Random(N, N), c(N, N);
    LoopTimer timer;
    for (auto _ : state) {
        c.noalias() = a * b;
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    set_matmul_counters(state, timer.seconds());
}
BENCHMARK(BM_matmul_eigen)->Unit(benchmark::kMillisecond);

// ==== weft =============================================================================
// TODO(lead): add the weft cases here once build() exists (DESIGN.md, "What a user
// writes"), with the same counters as the peers:
//
//   void BM_matmul_weft(benchmark::State& state) {      // the tuned CPU schedule, 1 thread
//       Tensor A = placeholder({N, N}, f32, "A"), B = placeholder({N, N}, f32, "B");
//       IterVar k = reduce_axis(0, N, "k");
//       Tensor C = compute({N, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
//       Schedule s = create_schedule(C);  /* tile, reorder, vectorize as in examples/matmul.cpp */
//       Kernel mm = build(s, {A, B, C}, Target::host());
//       Buffer<float> a({N, N}), b({N, N}), c({N, N});
//       LoopTimer timer;
//       for (auto _ : state) mm(a, b, c);
//       set_matmul_counters(state, timer.seconds());
//   }
//   BENCHMARK(BM_matmul_weft)->Unit(benchmark::kMillisecond);
//
//   void BM_jit_compile_matmul(benchmark::State& state) {  // lower + LLVM O3 + ORC link,
//       for (auto _ : state) { /* build(s, ...) with the kernel cache bypassed */ }
//   }
//   BENCHMARK(BM_jit_compile_matmul)->Unit(benchmark::kMillisecond);
// =======================================================================================

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::AddCustomContext("peak_fp32_GFLOP/s_1core", std::to_string(peak_gflops()));
    benchmark::AddCustomContext("peak_isa", kPeakIsa);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
