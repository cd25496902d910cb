// weftc: opening a model (an .onnx file, compiled with progress shown, or a .weft artifact
// loaded without compiling) with the command line's options.
#pragma once
#include "command_line.hpp"

namespace weftc {

// ---- opening a model ---------------------------------------------------------------------

struct ModelOptions {
    weft::onnx::LoadOptions load;
    bool fuse = true;
    bool quiet = false;
    bool any_onnx_option = false;
    Target target = Target::host();  // --target cpu | cuda
    bool allocate = true;            // false: compile only (graph::BuildOptions::allocate)
    // --max-file-size: the largest artifact or input file read (an .onnx: load.max_file_bytes).
    int64_t max_file_bytes = graph::kDefaultMaxArtifactBytes;
    std::string records;             // --records: tuning records applied when compiling
    bool pretuned = true;            // false: --no-pretuned
    std::string cache_dir;           // --cache-dir (onnx::CompileOptions::cache_dir)
    graph::CompileTier tier = graph::CompileTier::optimized;  // --tier
    graph::Precision precision = graph::Precision::f32;       // --precision
    std::vector<std::string> calibrate;                       // --calibrate (precision int8)
    double calibrate_percentile = 100.0;                      // --calibrate-percentile
};

inline ModelOptions model_options(const CommandLine& cl) {
    ModelOptions o;
    if (auto it = cl.values.find("--input-shape"); it != cl.values.end())
        for (auto& s : it->second) {
            auto [name, dims] = parse_input_shape(s);
            o.load.input_shapes[name] = dims;
            o.any_onnx_option = true;
        }
    if (auto it = cl.values.find("--dim"); it != cl.values.end())
        for (auto& s : it->second) {
            auto [name, value] = parse_dim(s);
            o.load.dim_values[name] = value;
            o.any_onnx_option = true;
        }
    if (auto it = cl.values.find("--symbol"); it != cl.values.end())
        for (auto& s : it->second) {
            auto [name, max] = parse_dim(s, "--symbol");
            o.load.symbols.push_back({name, max});
            o.any_onnx_option = true;
        }
    if (int64_t n = int_option(cl, "--max-loop-iterations", 0, 1, 4096); n > 0) {
        o.load.max_loop_iterations = n;
        o.any_onnx_option = true;
    }
    o.fuse = !cl.flags.count("--no-fuse");
    o.any_onnx_option = o.any_onnx_option || !o.fuse;
    o.quiet = cl.flags.count("--quiet") > 0;
    // The thread count first: a CPU target (and the records it matches) carries it.
    if (int threads = int_option(cl, "--threads", 0, 1, 4096); threads > 0) set_num_threads(threads);
    o.target = Target::host();
    std::string target = value_or(cl, "--target", "cpu");
    if (target == "cuda") o.target = Target::cuda();
    else if (target != "cpu") usage_error("bad --target '" + target + "' (expected cpu or cuda)");
    o.any_onnx_option = o.any_onnx_option || target != "cpu";
    o.records = value_or(cl, "--records");
    o.pretuned = !cl.flags.count("--no-pretuned");
    o.any_onnx_option = o.any_onnx_option || !o.records.empty() || !o.pretuned;
    o.cache_dir = value_or(cl, "--cache-dir");
    try {
        o.tier = graph::compile_tier(value_or(cl, "--tier", "optimized"));
    } catch (const Error& e) {
        usage_error(std::string("--tier: ") + e.what());
    }
    o.any_onnx_option = o.any_onnx_option || o.tier != graph::CompileTier::optimized;
    try {
        o.precision = graph::precision(value_or(cl, "--precision", "f32"));
    } catch (const Error& e) {
        usage_error(std::string("--precision: ") + e.what());
    }
    o.any_onnx_option = o.any_onnx_option || o.precision != graph::Precision::f32;
    if (auto it = cl.values.find("--calibrate"); it != cl.values.end()) o.calibrate = it->second;
    if (o.precision == graph::Precision::int8 && o.calibrate.empty())
        usage_error("--precision int8 needs --calibrate IN.npz (a few typical inputs, repeatable) to choose the "
                    "activations' scales");
    if (!o.calibrate.empty() && o.precision != graph::Precision::int8)
        usage_error("--calibrate applies to --precision int8");
    if (cl.values.count("--calibrate-percentile")) {
        o.calibrate_percentile = parse_float(value_or(cl, "--calibrate-percentile"), "--calibrate-percentile", 50, 100);
        if (o.precision != graph::Precision::int8) usage_error("--calibrate-percentile applies to --precision int8");
    }
    if (cl.values.count("--max-file-size"))
        o.max_file_bytes = o.load.max_file_bytes = parse_size(value_or(cl, "--max-file-size"), "--max-file-size");
    return o;
}



// Prints "compiling kernel 12/28 conv2d_nchwc_add_relu" on stderr (one updating line on a
// terminal, a line per kernel otherwise).
std::function<void(int, int, const std::string&)> progress_printer(bool quiet) {
    if (quiet) return {};
    bool tty = isatty(2);
    auto start = std::make_shared<Clock::time_point>(Clock::now());
    return [tty, start](int index, int count, const std::string& name) {
        if (tty) {
            std::fprintf(stderr, "\r\033[Kcompiling kernel %d/%d %s (%.1f s)", index + 1, count, name.c_str(),
                         ms_since(*start) / 1000);
            if (index + 1 == count) std::fprintf(stderr, "\n");
        } else {
            std::fprintf(stderr, "compiling kernel %d/%d %s\n", index + 1, count, name.c_str());
        }
        std::fflush(stderr);
    };
}

// Refuses a model with operators weft lacks, naming all of them.
inline void check_supported(const std::string& path, const weft::onnx::LoadOptions& load) {
    weft::onnx::ModelInfo info = weft::onnx::inspect(path, load);
    if (info.unsupported_ops.empty()) return;
    std::string ops;
    for (auto& op : info.unsupported_ops) ops += (ops.empty() ? "" : ", ") + op;
    fail("'" + path + "' uses operators weft does not support: " + ops);
}

struct OpenedModel {
    graph::Module module;
    bool artifact = false;
    double build_ms = 0;  // compile (.onnx) or load (.weft) time
    double import_ms = 0;  // onnx::load of an .onnx model
    graph::ArtifactMetadata metadata;
};

inline OpenedModel open_model(const std::string& path, const ModelOptions& o) {
    check_exists(path);
    OpenedModel m;
    auto start = Clock::now();
    if (graph::is_artifact_file(path)) {
        if (o.any_onnx_option)
            usage_error("--input-shape, --dim, --no-fuse, --target, --tier, --precision, --records and --no-pretuned apply to "
                        ".onnx models; '" + path +
                        "' is a compiled artifact (compile it again to change them)");
        m.module = graph::load_module(path, &m.metadata, o.max_file_bytes);
        m.artifact = true;
    } else {
        weft::onnx::CompileOptions c{.load = o.load, .target = o.target, .cache_dir = o.cache_dir};
        c.build.fuse = o.fuse;
        c.build.progress = progress_printer(o.quiet);
        c.build.allocate = o.allocate;
        c.build.records_file = o.records;
        c.build.pretuned_records = o.pretuned;
        c.build.tier = o.tier;
        c.build.precision = o.precision;
        c.build.calibration_percentile = o.calibrate_percentile;
        // --calibrate: each file one input map (a rank-0 array feeds a [1] input); the files'
        // buffers outlive the build that reads them.
        std::vector<NamedBuffers> samples;
        for (const std::string& file : o.calibrate) {
            check_exists(file);
            samples.push_back(weftc::load_npz(file, o.max_file_bytes));
            std::map<std::string, BufferRef> sample;
            for (auto& [name, b] : samples.back())
                sample[name] = b.ndim() == 0 ? BufferRef(b.data(), b.dtype(), {1}) : b;
            c.build.calibration.push_back(std::move(sample));
        }
        try {
            if (!c.cache_dir.empty() || std::getenv("WEFT_MODEL_CACHE_DIR")) {
                m.module = weft::onnx::compile(path, c);  // loaded from the cache, or built and kept
            } else {
                graph::Graph g = weft::onnx::load(path, o.load);
                m.import_ms = ms_since(start);
                m.module = graph::build(g, o.target, c.build);
            }
        } catch (const weft::onnx::UnsupportedError&) {
            check_supported(path, o.load);  // every operator it lacks, in one message (a second read)
            throw;
        }
    }
    m.build_ms = ms_since(start);
    return m;
}

// `weftc compile --time-phases`: where the compile's time went, step by step.
inline void print_phases(const OpenedModel& m, double save_ms) {
    std::printf("phases (ms; the indented ones are the compile threads' time, summed):\n");
    std::printf("  %-40s %9.1f\n", "import (onnx::load)", m.import_ms);
    for (const graph::BuildPhase& p : m.module.build_phases()) std::printf("  %-40s %9.1f\n", p.name.c_str(), p.ms);
    std::printf("  %-40s %9.1f\n", "save", save_ms);
    std::printf("  %-40s %9.1f\n", "total", m.build_ms + save_ms);
}

inline void apply_threads(const CommandLine& cl, const OpenedModel& m) {
    int threads = int_option(cl, "--threads", 0, 1, 4096);
    if (threads == 0 && m.metadata.count("threads")) threads = std::atoi(m.metadata.at("threads").c_str());
    if (threads > 0) set_num_threads(threads);
}


inline std::string mb(int64_t bytes) {
    char s[32];
    if (bytes >= 1 << 20) std::snprintf(s, sizeof s, "%.2f MB", double(bytes) / (1 << 20));
    else if (bytes >= 1 << 10) std::snprintf(s, sizeof s, "%.1f KB", double(bytes) / (1 << 10));
    else std::snprintf(s, sizeof s, "%lld B", (long long)bytes);
    return s;
}

}  // namespace weftc
