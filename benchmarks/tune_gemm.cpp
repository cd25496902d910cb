// weft_tune_gemm: what tuning gains on GEMM shapes topi's defaults were not hand-tuned for,
// against the default config and the best library peer (OpenBLAS, oneDNN's sgemm), one
// thread. For each shape: graph::tune (random search, --trials candidates, the default
// first) on a graph of one matmul, then the default module, the tuned module (the best
// record applied by graph::build), OpenBLAS and oneDNN timed in alternating rounds (each
// round the median of a few runs of each; the figure is the median over rounds).
//
//   weft_tune_gemm [--trials N] [--rounds R] [--seed S] [--tuner random|grid|genetic|model]
//                  [--save-records PATH]   (every record measured, appended to PATH)
//   (prints a markdown table)
//
// Set OPENBLAS_CORETYPE=SkylakeX on AVX-512 CPUs (Debian's OpenBLAS 0.3.21 takes some for
// Haswell). benchmarks/run_tune_gemm.sh runs it and writes its section of RESULTS.md.
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <weft/weft.hpp>

#include "tune_util.hpp"

extern "C" void openblas_set_num_threads(int);
extern "C" void omp_set_num_threads(int);  // oneDNN's threads (libgomp)

using namespace weft;

namespace {

using tune_bench::median;
using tune_bench::time_ms;

struct Shape {
    int64_t M, N, K;
};

}  // namespace

int main(int argc, char** argv) {
    const tune_bench::Options o = tune_bench::parse(argc, argv, graph::TuneOptions::Tuner::Random);
    const int trials = o.trials, rounds = o.rounds;
    set_num_threads(1);
    openblas_set_num_threads(1);
    omp_set_num_threads(1);
    const Target target = Target::host();  // 1 thread now
    std::printf("| shape MxNxK | trials | tuning s | default ms | tuned ms | OpenBLAS ms | oneDNN ms | tuned / default "
                "speed | tuned / best peer speed | best config |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (Shape sh : std::vector<Shape>{{300, 700, 200}, {999, 333, 555}, {1536, 48, 1536}, {30, 2304, 768}}) {
        graph::Graph g;
        graph::Value a = g.input("a", {sh.M, sh.K}), b = g.input("b", {sh.K, sh.N});
        g.output(g.matmul(a, b), "c");
        auto t0 = std::chrono::steady_clock::now();
        auto records = std::make_shared<autotune::Records>(
            graph::tune(g, target, {.trials = trials, .tuner = o.tuner, .seed = o.seed, .measure = {.warmup = 1, .repeats = 5},
                                    .records_file = o.save_records}));
        const double tuning_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        graph::Module plain = graph::build(g, target), tuned = graph::build(g, target, {.records = records});
        std::string best = "(default)";
        for (const auto& k : tuned.kernels())
            if (k.tuned) best = records->best(autotune::target_key(target), k.workload)->config.str();

        Buffer<float> A = Buffer<float>::random({sh.M, sh.K}, -1, 1, 1), B = Buffer<float>::random({sh.K, sh.N}, -1, 1, 2);
        std::vector<float> C(size_t(sh.M * sh.N));
        for (graph::Module* m : {&plain, &tuned}) {
            m->set_input("a", A);
            m->set_input("b", B);
        }
        const int runs = 5;
        std::vector<double> t_plain, t_tuned, t_blas, t_dnnl;
        for (int r = 0; r < rounds; ++r) {
            t_plain.push_back(time_ms([&] { plain.run(); }, runs));
            t_tuned.push_back(time_ms([&] { tuned.run(); }, runs));
            t_blas.push_back(time_ms(
                [&] {
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(sh.M), int(sh.N), int(sh.K), 1.f,
                                A.data(), int(sh.K), B.data(), int(sh.N), 0.f, C.data(), int(sh.N));
                },
                runs));
            t_dnnl.push_back(time_ms(
                [&] {
                    dnnl_sgemm('N', 'N', sh.M, sh.N, sh.K, 1.f, A.data(), sh.K, B.data(), sh.N, 0.f, C.data(), sh.N);
                },
                runs));
        }
        const double p = median(t_plain), t = median(t_tuned), o = median(t_blas), d = median(t_dnnl);
        std::printf("| %lldx%lldx%lld | %d | %.1f | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | `%s` |\n",
                    (long long)sh.M, (long long)sh.N, (long long)sh.K, trials, tuning_s, p, t, o, d, p / t,
                    std::min(o, d) / t, best.c_str());
        std::fflush(stdout);
    }
    return 0;
}
