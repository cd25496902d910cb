// The shared benchmark harness: every case of benchmarks/*_bench.cpp is registered through
// bench::add, named "<case>/<impl>/<threads>t", so benchmarks/run.sh can put weft next to its
// peers (same case, same thread count, same run) and next to the machine's measured limits.
//
//   bench::add({"sgemm/1024x1024x1024", bench::Unit::Flops, 2.0 * M * N * K}, "openblas", 1,
//              [=] { /* set-up: allocate, pack, JIT — not timed */
//                    return [=] { cblas_sgemm(...); };   // timed, once per iteration
//              });
//
// The set-up runs with the thread count already applied to every library (bench::set_threads).
// Counters: GFLOP/s or GB/s (work / wall time per iteration) and %peak (against the FMA loop
// or the triad loop measured in this binary at the same thread count).
#pragma once
#include <benchmark/benchmark.h>

#include <functional>
#include <string>

namespace bench {

enum class Unit { Flops, Bytes };

struct Case {
    std::string name;  // e.g. "sgemm/1024x1024x1024"; "/" separates words, no spaces
    Unit unit;
    double work;       // flops or bytes moved per iteration
};

using Runner = std::function<void()>;
using Setup = std::function<Runner()>;

// Registers one implementation of a case at a thread count (1 or 2).
void add(const Case& c, const std::string& impl, int threads, Setup setup);

// Applies a thread count to weft, OpenBLAS, OpenMP (oneDNN, Eigen) and to whatever else
// registered a setter (Halide's JIT runtime does, in halide_*.cpp).
void set_threads(int threads);
void on_set_threads(std::function<void(int)> setter);
// Halide's JIT runtime thread count (set_threads calls it; its runtime exists once a
// pipeline has been JIT-compiled, so call it again after compile_jit).
void set_halide_threads(int threads);

// The machine's limits, measured once per thread count in this process.
double peak_gflops(int threads);  // fp32 FMA loop
double triad_gbps(int threads);   // a[i] = b[i] + s * c[i] over 3 x 64 MiB

// An extra counter of the case being set up (e.g. a graph's planned memory), reported next to
// its rate: call it from the set-up.
void report_counter(const std::string& name, double value);
// Fills with uniform random values in [lo, hi) from a fixed seed (never zeros).
void fill_random(float* p, size_t n, float lo = -1.f, float hi = 1.f, unsigned seed = 1);

}  // namespace bench
