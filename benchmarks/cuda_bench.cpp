// weft_cuda_bench: weft on the GPU (Target::cuda(), topi::cuda schedules, graph::build) next to
// its peers in the same run — cuBLAS for the matmuls, the device-to-device copy of the same
// bytes (BufferRef::copy_from, a cuMemcpyDtoD) for the memory-bound kernels. benchmarks/run_cuda.sh runs it and
// benchmarks/report_cuda.py writes the "## GPU" section of RESULTS.md from its JSON.
//
// Cases, named gpu/<case>/<impl> (impl: weft, cublas, copy):
//   matmul_f32/4096x4096x4096      float32: topi::matmul + topi::cuda::schedule_matmul vs
//                                  cublasSgemm (no TF32); TFLOP/s = 2MNK / time
//   matmul_f16/4096x4096x4096      float16 inputs, float32 products and result:
//                                  topi::cuda::matmul_tensorcore (mma.sync) vs cublasGemmEx
//                                  (CUBLAS_COMPUTE_32F, f32 C)
//   fused_chain/64M                y = max(a*x + b, 0) + c (a, b, c scalars) over 64M floats,
//                                  one kernel (topi::cuda::schedule_injective); GB/s = x read +
//                                  y written
//   softmax/4096x1024, /16384x4096 along rows (topi::cuda::schedule_softmax); GB/s = x + y
//   resnet50/b1, /b8               graph::testing::resnet50 through graph::build(g,
//                                  Target::cuda()), end to end (run() to the device's
//                                  synchronize, wall clock); PyTorch's figure comes from
//                                  benchmarks/torch_resnet50.py, in the report
// Each memory-bound case has a "copy" peer: cuMemcpyDtoD of as many bytes as it reads (so as
// many read and written), timed the same way. Kernels are timed with CUDA events
// (weft::cuda::Event) on the default stream, where weft's kernels, its copies and cuBLAS run, `repeat` launches back to back per sample (~2 GB moved: short kernels would
// otherwise measure the launch; buffers under the L2's 50 MiB then stay in it, for the kernel
// and its copy peer alike); a case's inputs are random and built once (set-up is not timed).
// The weft matmuls, the chain and the softmaxes are checked once, at set-up, against cuBLAS
// or a host reference (counter max_rel_err); ResNet-50 b1 against its CPU build. Each peer
// runs just before weft's case, whose counter x_cublas (weft / cuBLAS) or pct_copy (% of the
// copy's GB/s) gives the ratio on the console.
//
// Without a CUDA device every case reports "no CUDA device: <why>" (SkipWithError) and the
// binary exits 0.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <random>

#include <weft/graph/testing/models.hpp>
#include <weft/runtime/cuda/cuda.hpp>
#include <weft/topi/cuda.hpp>
#include <weft/topi/topi.hpp>
#include <weft/weft.hpp>

#include "cublas.hpp"
#include "network_flops.hpp"

namespace {

using namespace weft;
using cuda_bench::Cublas;

const Device kGpu = Device::cuda(0);

// What a case measures, once set up: `launch` enqueues the work (asynchronously) on the
// default stream; `work` is flops or bytes per launch.
struct Prepared {
    std::function<void()> launch;
    double work = 0;
    int repeat = 1;          // launches per timed sample
    bool wall_clock = false; // time with the host clock around launch + synchronize (graphs)
    std::map<std::string, double> counters;  // reported as they are (checks, sizes)
};
using Setup = std::function<Prepared()>;

enum class Unit { TFlops, GBytes };

Target gpu_target() { return Target::cuda(weft::cuda::properties(kGpu).arch()); }

// ---- data ------------------------------------------------------------------------------

BufferRef random_device(std::vector<int64_t> shape, uint64_t seed) {
    return BufferRef(Buffer<float>::random(std::move(shape), -1.f, 1.f, seed)).copy_to(kGpu);
}

Buffer<float> to_host(const BufferRef& device) {
    Buffer<float> host(device.shape());
    host.copy_from(device);
    return host;
}

// Random multiples of 1/8 in [-2, 2] as float16 bits: exactly representable, and so are their
// products' sums over 4096 terms in float32, so weft and cuBLAS must agree exactly.
BufferRef eighths_f16_device(std::vector<int64_t> shape, uint64_t seed) {
    BufferRef host = BufferRef::allocate(f16, shape);
    std::mt19937 rng{uint32_t(seed)};
    std::uniform_int_distribution<int> eighths(-16, 16);
    auto* bits = static_cast<uint16_t*>(host.data());
    for (int64_t i = 0; i < host.size(); ++i) {
        float x = float(eighths(rng)) / 8;
        uint32_t u;
        std::memcpy(&u, &x, 4);
        uint32_t sign = (u >> 16) & 0x8000, exp = (u >> 23) & 0xff, mant = u & 0x7fffff;
        bits[i] = x == 0 ? uint16_t(sign) : uint16_t(sign | ((exp - 127 + 15) << 10) | (mant >> 13));
    }
    return host.copy_to(kGpu);
}

// max |got - want| / max |want|.
double max_rel_err(const float* got, const float* want, int64_t n) {
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < n; ++i) {
        worst = std::max(worst, double(std::abs(got[i] - want[i])));
        scale = std::max(scale, double(std::abs(want[i])));
    }
    return worst / std::max(scale, 1e-30);
}

// ---- cases -----------------------------------------------------------------------------

constexpr int64_t kMatmul = 4096;
constexpr int kSamples = 20;  // timed samples per repetition, each of `repeat` launches

struct MatmulData {
    BufferRef a, b, c;
};

std::shared_ptr<MatmulData> matmul_data(bool f16_inputs) {
    static std::map<bool, std::shared_ptr<MatmulData>> cache;  // shared by weft and cuBLAS
    auto& d = cache[f16_inputs];
    if (!d) {
        const int64_t n = kMatmul;
        d = std::make_shared<MatmulData>();
        d->a = f16_inputs ? eighths_f16_device({n, n}, 1) : random_device({n, n}, 1);
        d->b = f16_inputs ? eighths_f16_device({n, n}, 2) : random_device({n, n}, 2);
        d->c = BufferRef::allocate(f32, {n, n}, kGpu);
    }
    return d;
}

void cublas_matmul(const MatmulData& d, bool f16_inputs) {
    const int64_t n = kMatmul;
    if (f16_inputs) Cublas::get().gemm_f16_f32(n, n, n, d.a.data(), d.b.data(), d.c.data());
    else Cublas::get().sgemm(n, n, n, d.a.data(), d.b.data(), d.c.data());
}

Prepared weft_matmul(bool f16_inputs) {
    const int64_t n = kMatmul;
    Tensor A = placeholder({n, n}, f16_inputs ? f16 : f32, "A"), B = placeholder({n, n}, f16_inputs ? f16 : f32, "B");
    Tensor C = f16_inputs ? topi::cuda::matmul_tensorcore(A, B) : topi::matmul(A, B);
    Schedule s = create_schedule(C);
    if (f16_inputs) topi::cuda::schedule_matmul_tensorcore(s, C);
    else topi::cuda::schedule_matmul(s, C);
    Kernel k = build(s, {A, B, C}, gpu_target());
    auto d = matmul_data(f16_inputs);
    Prepared p{[k, d] { k(d->a, d->b, d->c); }, 2.0 * double(n) * double(n) * double(n)};
    // Checked against cuBLAS on the same inputs (exactly equal for float16: see eighths_f16);
    // without cuBLAS weft is still timed, unchecked.
    p.launch();
    Buffer<float> mine = to_host(d->c);
    try {
        cublas_matmul(*d, f16_inputs);
    } catch (const std::exception& e) {
        std::cerr << "weft_cuda_bench: weft's matmul not checked: " << e.what() << "\n";
        return p;
    }
    Buffer<float> theirs = to_host(d->c);
    p.counters["max_rel_err"] = max_rel_err(mine.data(), theirs.data(), mine.size());
    return p;
}

Prepared cublas_case(bool f16_inputs) {
    auto d = matmul_data(f16_inputs);
    Cublas::get();  // fails here (skipping the case) when cuBLAS is missing
    return {[d, f16_inputs] { cublas_matmul(*d, f16_inputs); }, 2.0 * double(kMatmul) * double(kMatmul) * double(kMatmul)};
}

// The memory-bound cases' peer: a device-to-device copy (cuMemcpyDtoD, asynchronous to the
// host) of as many floats as the case reads, so as many bytes read and written, between
// buffers of its own.
Prepared copy_case(int64_t elements) {
    auto x = std::make_shared<BufferRef>(random_device({elements}, 5));
    auto y = std::make_shared<BufferRef>(BufferRef::allocate(f32, {elements}, kGpu));
    const double bytes = 2.0 * 4 * double(elements);
    return {[x, y] { y->copy_from(*x); }, bytes, std::max(1, int(2e9 / bytes))};
}

constexpr int64_t kChain = int64_t(64) << 20;
constexpr float kA = 1.5f, kB = -0.25f, kC = 0.5f;

Prepared weft_chain() {
    Tensor X = placeholder({kChain}, f32, "x");
    Var a("a", f32), b("b", f32), c("c", f32);
    Tensor Y = topi::add(topi::relu(topi::add(topi::mul(X, a), b)), c);
    Schedule s = create_schedule(Y);
    topi::cuda::schedule_injective(s, Y);
    Kernel k = build(s, {X, a, b, c, Y}, gpu_target(), {.name = "fused_chain"});
    auto io = std::make_shared<std::pair<BufferRef, BufferRef>>(random_device({kChain}, 3),
                                                                BufferRef::allocate(f32, {kChain}, kGpu));
    Prepared p{[k, io] { k(io->first, kA, kB, kC, io->second); }, 2.0 * 4 * double(kChain), 4};
    p.launch();
    Buffer<float> x = to_host(io->first), y = to_host(io->second), want({kChain});
    for (int64_t i = 0; i < kChain; ++i) want.data()[i] = std::max(kA * x.data()[i] + kB, 0.f) + kC;
    p.counters["max_rel_err"] = max_rel_err(y.data(), want.data(), kChain);
    return p;
}

Prepared weft_softmax(int64_t rows, int64_t cols) {
    Tensor X = placeholder({rows, cols}, f32, "x");
    Tensor Y = topi::softmax(X);
    Schedule s = create_schedule(Y);
    topi::cuda::schedule_softmax(s, Y);
    Kernel k = build(s, {X, Y}, gpu_target(), {.name = "softmax"});
    auto io = std::make_shared<std::pair<BufferRef, BufferRef>>(random_device({rows, cols}, 4),
                                                                BufferRef::allocate(f32, {rows, cols}, kGpu));
    const double bytes = 2.0 * 4 * double(rows * cols);
    Prepared p{[k, io] { k(io->first, io->second); }, bytes, std::max(1, int(2e9 / bytes))};  // ~2 GB a sample
    p.launch();
    Buffer<float> x = to_host(io->first), y = to_host(io->second), want({rows, cols});
    for (int64_t r = 0; r < rows; ++r) {
        const float* in = x.data() + r * cols;
        float* out = want.data() + r * cols;
        double m = *std::max_element(in, in + cols), sum = 0;
        for (int64_t j = 0; j < cols; ++j) sum += std::exp(double(in[j]) - m);
        for (int64_t j = 0; j < cols; ++j) out[j] = float(std::exp(double(in[j]) - m) / sum);
    }
    p.counters["max_rel_err"] = max_rel_err(y.data(), want.data(), rows * cols);
    return p;
}

Prepared weft_resnet50(int64_t batch) {
    graph::Graph g = graph::testing::resnet50(batch);
    auto t0 = std::chrono::steady_clock::now();
    auto m = std::make_shared<graph::Module>(graph::build(g, gpu_target()));
    double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto x = Buffer<float>::random(g.type(g.inputs()[0]).shape, -1.f, 1.f, 7);
    m->set_input(0, x);
    Prepared p{[m] { m->run(); }, bench::network_flops(g), 1, true};
    p.counters["build_s"] = build_s;
    p.counters["kernels"] = double(m->kernels().size());
    if (batch == 1) {  // the logits against the CPU build of the same graph
        p.launch();
        weft::cuda::synchronize(kGpu);
        Buffer<float> got = to_host(m->get_output(0));
        graph::Module cpu = graph::build(g);
        cpu.set_input(0, x);
        cpu.run();
        const BufferRef& want = cpu.get_output(0);
        p.counters["max_rel_err"] = max_rel_err(got.data(), static_cast<const float*>(want.data()), got.size());
    }
    return p;
}

// ---- timing ----------------------------------------------------------------------------

std::string no_device_reason() {
    static const std::string why =
        weft::cuda::device_count() > 0 ? "" : "no CUDA device: " + weft::cuda::unavailable_reason();
    return why;
}

void run_case(benchmark::State& state, const std::string& name, Unit unit, const Setup& setup) {
    // Set up once per process: Google Benchmark calls this function once per run length.
    static std::map<std::string, std::pair<std::shared_ptr<Prepared>, std::string>> prepared;
    if (!no_device_reason().empty()) return state.SkipWithError(no_device_reason().c_str());
    auto& [p, error] = prepared[name];
    if (!p && error.empty()) {
        try {
            auto ready = std::make_shared<Prepared>(setup());
            ready->launch();  // warm-up: modules loaded, cuBLAS's first-call set-up, caches
            weft::cuda::synchronize(kGpu);
            p = ready;
        } catch (const std::exception& e) {
            error = e.what();
        }
    }
    if (!p) return state.SkipWithError(error.c_str());
    try {
        weft::cuda::Event start = weft::cuda::Event::create(kGpu), end = weft::cuda::Event::create(kGpu);
        double total_s = 0;
        for (auto _ : state) {
            double seconds;
            if (p->wall_clock) {
                auto t0 = std::chrono::steady_clock::now();
                p->launch();
                weft::cuda::synchronize(kGpu);
                seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            } else {
                start.record();
                for (int r = 0; r < p->repeat; ++r) p->launch();
                end.record();
                seconds = weft::cuda::Event::elapsed_ms(start, end) / 1e3 / p->repeat;
            }
            state.SetIterationTime(seconds);
            total_s += seconds;
        }
        const double rate = p->work * double(state.iterations()) / total_s;
        if (unit == Unit::TFlops) state.counters["TFLOP/s"] = rate / 1e12;
        else state.counters["GB/s"] = rate / 1e9;
        for (const auto& [counter, value] : p->counters) state.counters[counter] = value;
        // The ratio to the peer of the same case, which runs first (report_cuda.py computes
        // the table's ratios from the medians; this one is for reading the console).
        static std::map<std::string, double> peer_rates;
        const std::string case_name = name.substr(0, name.rfind('/')), impl = name.substr(name.rfind('/') + 1);
        if (impl != "weft") peer_rates[case_name] = rate;
        else if (auto peer = peer_rates.find(case_name); peer != peer_rates.end())
            state.counters[unit == Unit::TFlops ? "x_cublas" : "pct_copy"] = rate / peer->second * (unit == Unit::TFlops ? 1 : 100);
    } catch (const std::exception& e) {
        state.SkipWithError(e.what());
    }
}

void add(const std::string& name, const std::string& impl, Unit unit, Setup setup) {
    std::string full = "gpu/" + name + "/" + impl;
    benchmark::RegisterBenchmark(full.c_str(), [full, unit, setup](benchmark::State& s) { run_case(s, full, unit, setup); })
        ->UseManualTime()
        // A fixed number of samples: Google Benchmark would otherwise run until the *manual*
        // time reaches its minimum, and a sample's manual time is one launch of `repeat`
        // (10 us for a 16 MB copy), so it ran ~50000 samples of 60 launches each (minutes).
        ->Iterations(kSamples)
        ->Unit(benchmark::kMillisecond);
}

void register_cases() {
    const std::string mm = std::to_string(kMatmul) + "x" + std::to_string(kMatmul) + "x" + std::to_string(kMatmul);
    for (bool half : {false, true}) {
        std::string name = std::string(half ? "matmul_f16" : "matmul_f32") + "/" + mm;
        add(name, "cublas", Unit::TFlops, [half] { return cublas_case(half); });
        add(name, "weft", Unit::TFlops, [half] { return weft_matmul(half); });
    }
    add("fused_chain/64M", "copy", Unit::GBytes, [] { return copy_case(kChain); });
    add("fused_chain/64M", "weft", Unit::GBytes, weft_chain);
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4096, 1024}, {16384, 4096}}) {
        std::string name = "softmax/" + std::to_string(rows) + "x" + std::to_string(cols);
        add(name, "copy", Unit::GBytes, [=] { return copy_case(rows * cols); });
        add(name, "weft", Unit::GBytes, [=] { return weft_softmax(rows, cols); });
    }
    for (int64_t batch : {1, 8})
        add("resnet50/b" + std::to_string(batch), "weft", Unit::TFlops, [batch] { return weft_resnet50(batch); });
}

// The device and cuBLAS, in the JSON's context for the report.
void describe_device() {
    if (!no_device_reason().empty()) {
        std::cerr << "weft_cuda_bench: " << no_device_reason() << "; every case is skipped\n";
        benchmark::AddCustomContext("gpu", "none (" + no_device_reason() + ")");
        return;
    }
    auto props = weft::cuda::properties(kGpu);
    benchmark::AddCustomContext("gpu", props.name);
    benchmark::AddCustomContext("gpu_arch", props.arch());
    benchmark::AddCustomContext("gpu_multiprocessors", std::to_string(props.multiprocessors));
    benchmark::AddCustomContext("gpu_memory_MiB", std::to_string(props.total_memory_bytes >> 20));
    try {
        BufferRef touch = BufferRef::allocate(f32, {1}, kGpu);  // the primary context, current
        const Cublas& cublas = Cublas::get();
        benchmark::AddCustomContext("cublas", cublas.version() + " (" + cublas.library() + ")");
    } catch (const std::exception& e) {
        benchmark::AddCustomContext("cublas", std::string("unavailable: ") + e.what());
    }
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    describe_device();
    register_cases();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
