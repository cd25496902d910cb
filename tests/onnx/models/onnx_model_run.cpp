// onnx_model_run: loads an .onnx model with weft::onnx::load, builds it twice (cold: a fresh
// process, every kernel JIT-compiled; warm: the same graph again, served by the kernel
// cache), runs it on the inputs given as raw little-endian files, writes each output as a raw
// file and times run() at the thread counts asked for. models/compare.py drives it next to
// ONNX Runtime; the CTest onnx/models uses it through models/compare.py --check.
//
//   onnx_model_run model.onnx [--dim NAME=V]... [--shape INPUT=D0,D1,...]...
//                  [--symbol NAME=MAX --at NAME=V]...
//                  [--input INPUT=FILE]... [--out DIR] [--threads 1,2] [--min-time S]
//                  [--min-runs N] [--no-warm] [--profile] [--specialize-after N]
//
// Prints one JSON object on stdout (times in ms; latency: median and minimum per run();
// first_run_ms: the first run(), which compiles a symbolic module's per-size kernels;
// specialize_wait_ms: after the warm-up runs, the wait for the kernels a symbolic module
// specializes for the size it runs at, BuildOptions::specialize_after_runs, which
// --specialize-after sets: 0 times the kernels compiled once over the symbols).
// --profile prints Module::profile's table per thread count on stderr.
// An input without --input gets uniform random values in [-1, 1) (float32 only).
#include <weft/frontend/onnx/onnx.hpp>
#include <weft/weft.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace weft;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::vector<int64_t> parse_dims(const std::string& s) {
    std::vector<int64_t> v;
    std::stringstream ss(s);
    std::string tok;
    while (std::getline(ss, tok, ',')) v.push_back(std::stoll(tok));
    return v;
}

std::pair<std::string, std::string> split_eq(const std::string& s) {
    auto p = s.find('=');
    if (p == std::string::npos) throw std::runtime_error("expected NAME=VALUE, got '" + s + "'");
    return {s.substr(0, p), s.substr(p + 1)};
}

std::string json_str(const std::string& s) {
    std::string r = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') r += '\\';
        if (ch == '\n') { r += "\\n"; continue; }
        r += ch;
    }
    return r + "\"";
}

std::string json_dims(const std::vector<int64_t>& v) {
    std::string r = "[";
    for (size_t k = 0; k < v.size(); ++k) r += (k ? "," : "") + std::to_string(v[k]);
    return r + "]";
}

void read_raw(const std::string& path, const BufferRef& dst) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot open " + path);
    f.seekg(0, std::ios::end);
    auto bytes = int64_t(f.tellg());
    if (bytes != dst.size_bytes())
        throw std::runtime_error(path + ": " + std::to_string(bytes) + " bytes, the input needs " +
                                 std::to_string(dst.size_bytes()));
    f.seekg(0);
    f.read(static_cast<char*>(dst.data()), bytes);
}

void write_raw(const std::string& path, const BufferRef& src) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot write " + path);
    if (src.is_compact()) {
        f.write(static_cast<const char*>(src.data()), src.size_bytes());
    } else if (src.dtype() == DataType::float_(32)) {
        Buffer<float> c = Buffer<float>(src).copy();
        f.write(reinterpret_cast<const char*>(c.data()), c.size_bytes());
    } else {
        throw std::runtime_error("output " + path + " is strided and not float32");
    }
}

// Median and minimum of run() in ms: at least min_runs runs and min_time seconds, after two
// warm-up runs and the specialization they may have started (its wait into *specialize_ms).
std::pair<double, double> time_runs(graph::Module& m, double min_time, int min_runs, double* specialize_ms) {
    m.run();
    m.run();
    const auto w0 = Clock::now();
    m.wait_specialized();
    *specialize_ms = std::max(*specialize_ms, ms_since(w0));
    std::vector<double> t;
    auto start = Clock::now();
    while (int(t.size()) < min_runs || ms_since(start) < min_time * 1e3) {
        auto t0 = Clock::now();
        m.run();
        t.push_back(ms_since(t0));
        if (t.size() >= 100000) break;
    }
    std::sort(t.begin(), t.end());
    return {t[t.size() / 2], t.front()};
}

}  // namespace

int main(int argc, char** argv) {
    std::string model, out_dir;
    onnx::LoadOptions opts;
    std::map<std::string, std::string> input_files;
    graph::BuildOptions build_options;
    std::map<std::string, int64_t> run_at;  // --at: the symbols' values for the runs
    std::vector<int> threads;
    double min_time = 1.0;
    int min_runs = 10;
    bool warm = true, profile = false;
    int calibration_samples = 8;
    try {
        for (int k = 1; k < argc; ++k) {
            std::string a = argv[k];
            auto next = [&]() -> std::string {
                if (k + 1 >= argc) throw std::runtime_error(a + " needs a value");
                return argv[++k];
            };
            if (a == "--dim") {
                auto [n, v] = split_eq(next());
                opts.dim_values[n] = std::stoll(v);
            } else if (a == "--symbol") {  // kept symbolic, bounded by V; run at --at's value
                auto [n, v] = split_eq(next());
                opts.symbols.push_back({n, std::stoll(v)});
            } else if (a == "--compile-threads") {  // BuildOptions::compile_threads
                build_options.compile_threads = std::stoi(next());
            } else if (a == "--specialize-after") {  // BuildOptions::specialize_after_runs
                build_options.specialize_after_runs = std::stoi(next());
            } else if (a == "--tier") {  // BuildOptions::tier: optimized, fast or tiered
                build_options.tier = graph::compile_tier(next());
            } else if (a == "--precision") {  // BuildOptions::precision: f32, bf16 or int8
                build_options.precision = graph::precision(next());
            } else if (a == "--calibrate") {  // int8: this many random calibration inputs (8)
                calibration_samples = std::stoi(next());
            } else if (a == "--max-loop-iterations") {
                opts.max_loop_iterations = std::stoll(next());
            } else if (a == "--at") {
                auto [n, v] = split_eq(next());
                run_at[n] = std::stoll(v);
            } else if (a == "--shape") {
                auto [n, v] = split_eq(next());
                opts.input_shapes[n] = parse_dims(v);
            } else if (a == "--input") {
                auto [n, v] = split_eq(next());
                input_files[n] = v;
            } else if (a == "--out") {
                out_dir = next();
            } else if (a == "--threads") {
                for (int64_t t : parse_dims(next())) threads.push_back(int(t));
            } else if (a == "--min-time") {
                min_time = std::stod(next());
            } else if (a == "--min-runs") {
                min_runs = std::stoi(next());
            } else if (a == "--no-warm") {
                warm = false;
            } else if (a == "--profile") {
                profile = true;
            } else if (a == "--help" || a == "-h") {
                std::cout << "usage: onnx_model_run model.onnx [--dim NAME=V] [--shape INPUT=D0,D1,..] "
                             "[--symbol NAME=MAX --at NAME=V] [--max-loop-iterations N] [--compile-threads N] [--tier T] [--specialize-after N] [--precision P] [--calibrate N] "
                             "[--input INPUT=FILE] [--out DIR] [--threads 1,2] [--min-time S] [--min-runs N] "
                             "[--no-warm] [--profile]\n";
                return 0;
            } else if (model.empty() && a[0] != '-') {
                model = a;
            } else {
                throw std::runtime_error("unknown argument '" + a + "'");
            }
        }
        if (model.empty()) throw std::runtime_error("no model given (--help)");
    } catch (const std::exception& e) {
        std::cerr << "onnx_model_run: " << e.what() << "\n";
        return 2;
    }

    std::ostringstream js;
    try {
        auto t0 = Clock::now();
        graph::Graph g = onnx::load(model, opts);
        double load_ms = ms_since(t0);
        // int8: calibration inputs drawn as the run's float inputs are (other seeds), the
        // others from their --input files.
        if (build_options.precision == graph::Precision::int8)
            for (int s = 0; s < calibration_samples; ++s) {
                std::map<std::string, BufferRef> sample;
                for (graph::Value v : g.inputs()) {
                    const graph::Node& n = g.node(v);
                    if (auto f = input_files.find(n.name); f != input_files.end()) {
                        sample[n.name] = BufferRef::allocate(n.type.dtype, n.type.shape);
                        read_raw(f->second, sample[n.name]);
                    } else if (n.type.dtype == DataType::float_(32)) {
                        sample[n.name] = Buffer<float>::random(n.type.shape, -1.f, 1.f, 9000 + 64 * uint64_t(s) + uint64_t(v.id));
                    } else {
                        throw std::runtime_error("input '" + n.name + "' is not float32: give it with --input");
                    }
                }
                build_options.calibration.push_back(std::move(sample));
            }

        // Kernels compiled = the kernel cache's misses during a build (KernelInfo::compile_ms
        // is the time the kernel took when it was compiled, also when the cache serves it).
        KernelCache& cache = KernelCache::global();
        uint64_t misses = cache.misses();
        const auto build_start = Clock::now();
        graph::Module m = graph::build(g, Target::host(), build_options);
        double cold_ms = ms_since(build_start);
        uint64_t compiled = cache.misses() - misses;
        double jit_ms = 0;
        for (const auto& k : m.kernels()) jit_ms += k.compile_ms;

        double warm_ms = -1, warm_load_ms = -1;
        uint64_t warm_compiled = 0;
        if (warm) {
            t0 = Clock::now();
            graph::Graph g2 = onnx::load(model, opts);
            warm_load_ms = ms_since(t0);
            misses = cache.misses();
            t0 = Clock::now();
            graph::Module m2 = graph::build(g2, Target::host(), build_options);
            warm_ms = ms_since(t0);
            warm_compiled = cache.misses() - misses;
        }

        js << "{\"model\":" << json_str(model) << ",\"nodes\":" << g.nodes().size()
           << ",\"kernels\":" << m.kernels().size() << ",\"kernels_compiled\":" << compiled
           << ",\"load_ms\":" << load_ms << ",\"cold_build_ms\":" << cold_ms << ",\"jit_ms\":" << jit_ms
           << ",\"warm_load_ms\":" << warm_load_ms << ",\"warm_build_ms\":" << warm_ms
           << ",\"warm_kernels_compiled\":" << warm_compiled
           << ",\"memory_MiB\":" << double(m.memory_bytes()) / (1 << 20) << ",\"inputs\":[";
        for (int i = 0; i < m.num_inputs(); ++i) {
            const std::string& name = m.input_names()[size_t(i)];
            std::vector<int64_t> shape = m.input(i).shape();
            for (const graph::SymbolicAxis& a : g.symbolic_axes())
                if (a.input == name && run_at.count(a.symbol)) shape[size_t(a.axis)] = run_at.at(a.symbol);
            if (shape != m.input(i).shape()) m.set_input(i, BufferRef::allocate(m.input(i).dtype(), shape));
            const BufferRef& in = m.input(i);
            auto f = input_files.find(name);
            if (f != input_files.end()) {
                read_raw(f->second, in);
                input_files.erase(f);
            } else if (in.dtype() == DataType::float_(32)) {
                m.set_input(i, Buffer<float>::random(in.shape(), -1.f, 1.f, 1234 + uint64_t(i)));
            } else {
                throw std::runtime_error("input '" + name + "' is not float32: give it with --input");
            }
            js << (i ? "," : "") << "{\"name\":" << json_str(name) << ",\"shape\":" << json_dims(in.shape())
               << ",\"dtype\":" << json_str(in.dtype().str()) << "}";
        }
        if (!input_files.empty()) throw std::runtime_error("no input named '" + input_files.begin()->first + "'");
        js << "],\"outputs\":[";
        // The first run: with symbols, at a size whose kernels are compiled per size, it
        // compiles them (KernelInfo::per_size).
        t0 = Clock::now();
        m.run();
        const double first_run_ms = ms_since(t0);
        for (int i = 0; i < m.num_outputs(); ++i) {
            const BufferRef& y = m.get_output(i);
            std::string file;
            if (!out_dir.empty()) {
                file = out_dir + "/output_" + std::to_string(i) + ".bin";
                write_raw(file, y);
            }
            js << (i ? "," : "") << "{\"name\":" << json_str(m.output_names()[size_t(i)])
               << ",\"shape\":" << json_dims(y.shape()) << ",\"dtype\":" << json_str(y.dtype().str())
               << ",\"file\":" << json_str(file) << "}";
        }
        // A tiered build: when its optimized kernels were taken, from the build's start.
        double optimized_ms = -1;
        if (build_options.tier == graph::CompileTier::tiered) {
            m.wait_optimized();
            optimized_ms = ms_since(build_start);
        }
        js << "],\"first_run_ms\":" << first_run_ms << ",\"optimized_ms\":" << optimized_ms << ",\"latency_ms\":{";
        double specialize_ms = 0;
        for (size_t k = 0; k < threads.size(); ++k) {
            set_num_threads(threads[k]);
            auto [med, best] = time_runs(m, min_time, min_runs, &specialize_ms);
            if (profile) std::cerr << threads[k] << " thread(s):\n" << m.profile(20).str() << "\n";
            js << (k ? "," : "") << "\"" << threads[k] << "\":{\"median\":" << med << ",\"min\":" << best << "}";
        }
        js << "},\"specialize_wait_ms\":" << specialize_ms << ",\"specialized\":" << m.specialized_sizes().size() << "}";
    } catch (const std::exception& e) {
        std::cout << "{\"model\":" << json_str(model) << ",\"error\":" << json_str(e.what()) << "}\n";
        return 1;
    }
    std::cout << js.str() << "\n";
    return 0;
}
