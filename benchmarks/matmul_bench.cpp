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
#include <thread>
#include <vector>

#include <weft/weft.hpp>
#include <weft/runtime/kernel_cache.hpp>

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
// The schedule of examples/matmul.cpp: an 8x32 register tile accumulated in a "local"
// cache, vectorized 32 wide along j, k split by 4; columns of tiles outermost (one 128 KiB
// panel of B stays in L2 while every row of tiles uses it) and in parallel.
weft::Schedule matmul_schedule(std::vector<weft::Argument>* args) {
    using namespace weft;
    Tensor A = placeholder({N, N}, f32, "A"), B = placeholder({N, N}, f32, "B");
    IterVar k = reduce_axis(0, N, "k");
    Tensor C = compute({N, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule(C);
    Tensor CC = s.cache_write(C, "local");
    auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 8, 32);
    s[C].reorder({jo, io});
    s[C].vectorize(ji);
    s[C].parallel(jo);
    s[CC].compute_at(s[C], io);
    auto [ko, ki] = s[CC].split(k, 4);
    s[CC].reorder({ko, ki, CC.axis(0), CC.axis(1)});
    s[CC].unroll(CC.axis(0));
    s[CC].vectorize(CC.axis(1));
    *args = {A, B, C};
    return s;
}

void BM_matmul_weft(benchmark::State& state) {
    const int threads = int(state.range(0));
    weft::set_num_threads(threads);
    std::vector<weft::Argument> args;
    weft::Schedule s = matmul_schedule(&args);
    LoopTimer build_timer(LoopTimer::Clock::Wall);
    weft::Kernel mm = weft::build(s, args, weft::Target::host());
    // The first weft build in the process (Arg 1 runs first) also creates the JIT.
    state.counters["build_ms"] = build_timer.seconds() * 1e3;
    auto a = weft::Buffer<float>::random({N, N}, -1, 1, 1), b = weft::Buffer<float>::random({N, N}, -1, 1, 2);
    weft::Buffer<float> c({N, N});
    mm(a, b, c);
    LoopTimer timer(threads == 1 ? LoopTimer::Clock::ThreadCpu : LoopTimer::Clock::Wall);
    for (auto _ : state) {
        mm(a, b, c);
        benchmark::ClobberMemory();
    }
    set_matmul_counters(state, timer.seconds());
    state.counters["threads"] = threads;
    weft::set_num_threads(int(std::thread::hardware_concurrency()));
}
BENCHMARK(BM_matmul_weft)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_matmul_eigen_2threads(benchmark::State& state) {
    // Eigen threads its GEMM only with OpenMP, which this build does not use: split the rows
    // of the product over two std::threads instead (each a single-threaded Eigen GEMM).
    Eigen::setNbThreads(1);
    Eigen::MatrixXf a = Eigen::MatrixXf::Random(N, N), b = Eigen::MatrixXf::Random(N, N), c(N, N);
    auto half = [&](int h) { c.middleRows(h * N / 2, N / 2).noalias() = a.middleRows(h * N / 2, N / 2) * b; };
    LoopTimer timer(LoopTimer::Clock::Wall);
    for (auto _ : state) {
        std::thread other(half, 1);
        half(0);
        other.join();
        benchmark::DoNotOptimize(c.data());
        benchmark::ClobberMemory();
    }
    set_matmul_counters(state, timer.seconds());
}
BENCHMARK(BM_matmul_eigen_2threads)->Unit(benchmark::kMillisecond)->UseRealTime();

// JIT compile time of the tiled matmul: lower + LLVM O3 + ORC link, the kernel cache
// emptied before each build so every iteration compiles. (The first build in a process
// also creates the JIT; BM_matmul_weft/1's build_ms counter shows that first build.)
void BM_jit_compile_matmul(benchmark::State& state) {
    std::vector<weft::Argument> args;
    weft::Schedule s = matmul_schedule(&args);
    weft::build(s, args);  // the JIT exists before timing
    for (auto _ : state) {
        weft::KernelCache::global().clear();
        benchmark::DoNotOptimize(weft::build(s, args).defined());
    }
}
BENCHMARK(BM_jit_compile_matmul)->Unit(benchmark::kMillisecond)->UseRealTime();

// A rebuild of the same program served by the kernel cache: lowering plus a hash lookup.
void BM_build_cached_matmul(benchmark::State& state) {
    std::vector<weft::Argument> args;
    weft::Schedule s = matmul_schedule(&args);
    weft::build(s, args);
    for (auto _ : state) benchmark::DoNotOptimize(weft::build(s, args).defined());
}
BENCHMARK(BM_build_cached_matmul)->Unit(benchmark::kMillisecond)->UseRealTime();

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
