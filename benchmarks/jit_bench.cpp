// JIT compile time of a tiled GEMM kernel (lower + LLVM O3 + ORC link), the first one in the
// process (which also creates the JIT; benchmarks/run.sh runs it in a process of its own) and
// later ones (kernel cache emptied before each), a rebuild served by the kernel cache and one
// served by its disk level;
// the peer: Halide 14's JIT compile of its hand-scheduled GEMM (halide_gemm.hpp) at the same
// size, in the same run.
#include "halide_gemm.hpp"
#include "harness.hpp"

#include <unistd.h>

#include <filesystem>
#include <string>

#include <weft/weft.hpp>

namespace {

// topi's SGEMM at 1024^3 with its default schedule: packed B panels, a 6 x 64 register
// tile, parallel panels (the kernel benchmarks/gemm_bench.cpp times).
weft::Schedule tiled_gemm(std::vector<weft::Argument>* args) {
    using namespace weft;
    const int64_t n = 1024;
    Tensor A = placeholder({n, n}, f32, "A"), B = placeholder({n, n}, f32, "B");
    Tensor C = topi::matmul(A, B);
    Schedule s = create_schedule(C);
    topi::schedule_matmul(s, C);
    *args = {A, B, C};
    return s;
}

void BM_jit_first_build(benchmark::State& state) {
    for (auto _ : state) {
        std::vector<weft::Argument> args;
        weft::Schedule s = tiled_gemm(&args);
        benchmark::DoNotOptimize(weft::build(s, args).defined());
    }
}
BENCHMARK(BM_jit_first_build)->Name("jit/first_build/weft")->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_jit_compile(benchmark::State& state) {
    std::vector<weft::Argument> args;
    weft::Schedule s = tiled_gemm(&args);
    weft::build(s, args);  // the JIT exists before timing
    for (auto _ : state) {
        weft::KernelCache::global().clear();
        benchmark::DoNotOptimize(weft::build(s, args).defined());
    }
}
BENCHMARK(BM_jit_compile)->Name("jit/compile/weft")->Unit(benchmark::kMillisecond)->UseRealTime();

// Halide defines the pipeline anew each time (compile_jit of a Func it compiled already
// returns at once); the definition is microseconds next to the compile.
void BM_jit_compile_halide(benchmark::State& state) {
    const int n = 1024;
    Halide::Buffer<float> a(n, n), b(n, n);
    bench::halide_gemm_pipeline(a, b, 2).compile_jit(Halide::get_jit_target_from_environment());  // JIT runtime made
    for (auto _ : state) {
        Halide::Func f = bench::halide_gemm_pipeline(a, b, 2);
        f.compile_jit(Halide::get_jit_target_from_environment());
        benchmark::DoNotOptimize(f.defined());
    }
}
BENCHMARK(BM_jit_compile_halide)->Name("jit/compile/halide")->Unit(benchmark::kMillisecond)->UseRealTime();

// build() again on the same Schedule object: served without lowering.
void BM_build_cached(benchmark::State& state) {
    std::vector<weft::Argument> args;
    weft::Schedule s = tiled_gemm(&args);
    weft::build(s, args);
    for (auto _ : state) benchmark::DoNotOptimize(weft::build(s, args).defined());
}
BENCHMARK(BM_build_cached)->Name("jit/cached_build/weft")->Unit(benchmark::kMillisecond)->UseRealTime();

// An equal schedule written again from scratch (a new object): lowering plus the structural
// hash lookup, no compile.
void BM_build_cached_equal_schedule(benchmark::State& state) {
    std::vector<weft::Argument> args;
    weft::build(tiled_gemm(&args), args);
    for (auto _ : state) {
        weft::Schedule s = tiled_gemm(&args);
        benchmark::DoNotOptimize(weft::build(s, args).defined());
    }
}
BENCHMARK(BM_build_cached_equal_schedule)->Name("jit/cached_build_equal_schedule/weft")->Unit(benchmark::kMillisecond)->UseRealTime();

// A build served by the kernel cache's disk level, as in a later run of a program that
// JIT-compiles at start-up: memory cache emptied before each, the object code loaded from a
// directory the first build filled.
void BM_build_from_disk(benchmark::State& state) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("weft_bench_disk_cache_" + std::to_string(::getpid()));
    weft::KernelCache::global().set_disk_directory(dir.string());
    std::vector<weft::Argument> args;
    weft::Schedule s = tiled_gemm(&args);
    weft::KernelCache::global().clear();
    weft::build(s, args);  // compiled and stored
    for (auto _ : state) {
        weft::KernelCache::global().clear();
        benchmark::DoNotOptimize(weft::build(s, args).defined());
    }
    weft::KernelCache::global().set_disk_directory("");
    weft::KernelCache::global().clear();
    std::error_code ec;
    fs::remove_all(dir, ec);
}
BENCHMARK(BM_build_from_disk)->Name("jit/disk_cached_build/weft")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
