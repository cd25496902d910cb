// weftc: weft's command line (like TVM's tvmc). See docs/weftc.md.
//
//   weftc compile model.onnx -o model.weft [--input-shape x:1x3x224x224] [--dim batch=1] [--no-fuse]
//   weftc run model.weft --inputs in.npz --output out.npz [--print-time --repeat N]
//   weftc info model.onnx
//   weftc bench model.weft --repeat 50 --threads 2
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <weft/frontend/onnx/onnx.hpp>
#include <weft/graph/artifact.hpp>
#include <weft/weft.hpp>

#include "npy.hpp"

namespace {

using namespace weft;
using Clock = std::chrono::steady_clock;
using weftc::NamedBuffers;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A mistake in the command line (exit status 2, with a pointer to --help).
struct UsageError {
    std::string message;
};

[[noreturn]] void usage_error(const std::string& msg) { throw UsageError{msg}; }
[[noreturn]] void fail(const std::string& msg) { detail::throw_user_error(msg); }

// ---- help --------------------------------------------------------------------------------

const char* kMainHelp = R"(weftc: compile and run ONNX models with weft

usage: weftc <command> [options]

commands:
  compile   compile an .onnx model into a .weft artifact (object code, graph, weights)
  run       run a .weft artifact or an .onnx model on inputs from an .npz/.npy file
  info      show a model's inputs, outputs, operators, fused kernels and memory plan
  bench     time a model's runs (latency statistics)

'weftc <command> --help' describes a command's options. See docs/weftc.md.
)";

const char* kModelOptionsHelp = R"(
model options (for .onnx models):
  --input-shape NAME:D1xD2x...   the shape of input NAME (e.g. input:1x3x224x224); repeatable
  --dim SYMBOL=VALUE             the value of a symbolic dimension (e.g. batch=1); repeatable
  --no-fuse                      one kernel per operator (no operator fusion)
  --quiet                        no progress while compiling
)";

const char* kCompileHelp = R"(usage: weftc compile MODEL.onnx -o OUT.weft [options]

Imports the ONNX model, compiles it (graph passes, operator fusion, one JIT-compiled kernel
per fused group, a static memory plan) and writes everything 'weftc run' needs into one
file: each kernel's object code, the compiled graph, the memory plan and the weights.
Loading it compiles nothing. Progress goes to stderr.

options:
  -o, --output PATH              the artifact to write (default: MODEL with .weft)
  --threads N                    the thread count 'weftc run' uses by default (default: all cores)
)";

const char* kRunHelp = R"(usage: weftc run MODEL(.weft|.onnx) [--inputs IN.npz] [--output OUT.npz] [options]

Runs the model once (or --repeat times) and writes its outputs. An .onnx model is compiled
first (in memory); a .weft artifact is loaded without compiling.

options:
  --inputs PATH        an .npz with one array per model input (by input name; arrays named
                       arr_0, arr_1, ... as np.savez(path, a, b) writes them are taken in
                       order), or an .npy for a model with one input. Without it, inputs
                       are random (uniform in [-1, 1); integers in [0, 10)), see --seed
  --output PATH        write the outputs: an .npz (one array per output name), or an .npy
                       for a model with one output. Without it, a summary is printed
  --seed N             the random inputs' seed (default 0)
  --save-inputs PATH   write the inputs used (random or not) to an .npz
  --print-time         print the run time (mean, min, max over the repeats)
  --repeat N           run N times (default 1)
  --threads N          threads for the kernels (default: the artifact's, else all cores)
)";

const char* kInfoHelp = R"(usage: weftc info MODEL(.onnx|.weft) [options]

For an .onnx model: its opset and producer, the operators weft does not support (listed
first: such a model cannot be compiled), its inputs and outputs (with symbolic dimensions)
and operator counts. When it is supported, it is compiled and the compiled graph is shown
too: the graph's inputs and outputs, the fused kernels (name, nodes, output type) and the
memory plan (arena size, and where each intermediate lives). For a .weft artifact: what
it was compiled from, its target, kernels and memory plan.

options:
  --no-compile         only what the .onnx file says (no import or compilation)
)";

const char* kBenchHelp = R"(usage: weftc bench MODEL(.onnx|.weft) [options]

Loads or compiles the model, feeds it random inputs (or --inputs), and times --repeat runs
after --warmup runs: mean, median, p90, min, max and standard deviation in milliseconds.

options:
  --repeat N           timed runs (default 20)
  --warmup N           untimed runs first (default 3)
  --threads N          threads for the kernels (default: the artifact's, else all cores)
  --inputs PATH        inputs from an .npz / .npy instead of random ones
)";

// ---- the command line ------------------------------------------------------------------

struct CommandLine {
    std::vector<std::string> positional;
    std::map<std::string, std::vector<std::string>> values;  // --opt VALUE (repeatable)
    std::map<std::string, bool> flags;
    bool help = false;
};

// Parses args: `with_value` options take the next argument (or --opt=value), `flags` take none.
CommandLine parse(const std::string& command, const std::vector<std::string>& args,
                  const std::vector<std::string>& with_value, const std::vector<std::string>& flags) {
    CommandLine cl;
    auto has = [](const std::vector<std::string>& v, const std::string& s) {
        return std::find(v.begin(), v.end(), s) != v.end();
    };
    for (size_t i = 0; i < args.size(); ++i) {
        std::string a = args[i];
        if (a == "-h" || a == "--help") {
            cl.help = true;
            continue;
        }
        if (a == "-o") a = "--output";
        if (a.size() > 1 && a[0] == '-') {
            std::string value;
            bool inline_value = false;
            if (auto eq = a.find('='); eq != std::string::npos && a.rfind("--", 0) == 0) {
                value = a.substr(eq + 1);
                a = a.substr(0, eq);
                inline_value = true;
            }
            if (has(with_value, a)) {
                if (!inline_value) {
                    if (i + 1 >= args.size()) usage_error("weftc " + command + ": option " + a + " needs a value");
                    value = args[++i];
                }
                cl.values[a].push_back(value);
            } else if (has(flags, a) && !inline_value) {
                cl.flags[a] = true;
            } else {
                usage_error("weftc " + command + ": unknown option '" + args[i] + "'");
            }
        } else {
            cl.positional.push_back(a);
        }
    }
    return cl;
}

std::string value_or(const CommandLine& cl, const std::string& key, const std::string& fallback = "") {
    auto it = cl.values.find(key);
    return it == cl.values.end() ? fallback : it->second.back();
}

int64_t parse_int(const std::string& text, const std::string& what, int64_t lo, int64_t hi) {
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (...) {
        used = 0;
    }
    if (text.empty() || used != text.size() || v < lo || v > hi)
        usage_error(detail::concat("bad ", what, " '", text, "': expected an integer from ", lo, " to ", hi));
    return v;
}

int int_option(const CommandLine& cl, const std::string& key, int fallback, int lo, int hi) {
    std::string v = value_or(cl, key);
    return v.empty() ? fallback : int(parse_int(v, key, lo, hi));
}

// "input:1x3x224x224" (the name may itself contain ':'; the last one separates).
std::pair<std::string, std::vector<int64_t>> parse_input_shape(const std::string& text) {
    auto colon = text.rfind(':');
    auto bad = [&](const std::string& why) {
        usage_error("bad --input-shape '" + text + "': " + why + " (expected NAME:D1xD2x..., e.g. input:1x3x224x224)");
    };
    if (colon == std::string::npos || colon == 0) bad("no NAME:");
    std::vector<int64_t> dims;
    std::string rest = text.substr(colon + 1), piece;
    if (rest.empty()) bad("no dimensions");
    std::stringstream in(rest);
    while (std::getline(in, piece, 'x')) {
        if (piece.empty() || piece.find_first_not_of("0123456789") != std::string::npos || piece.size() > 12)
            bad("'" + piece + "' is not a positive integer");
        int64_t d = std::stoll(piece);
        if (d <= 0) bad("dimension " + piece + " is not positive");
        dims.push_back(d);
    }
    if (rest.back() == 'x') bad("a trailing 'x'");
    return {text.substr(0, colon), dims};
}

// "batch=1".
std::pair<std::string, int64_t> parse_dim(const std::string& text) {
    auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        usage_error("bad --dim '" + text + "' (expected SYMBOL=VALUE, e.g. batch=1)");
    return {text.substr(0, eq), parse_int(text.substr(eq + 1), "--dim value", 1, int64_t(1) << 40)};
}

const std::vector<std::string> kModelValueOptions = {"--input-shape", "--dim", "--threads"};
const std::vector<std::string> kModelFlags = {"--no-fuse", "--quiet"};

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// ---- opening a model ---------------------------------------------------------------------

struct ModelOptions {
    weft::onnx::LoadOptions load;
    bool fuse = true;
    bool quiet = false;
    bool any_onnx_option = false;
};

ModelOptions model_options(const CommandLine& cl) {
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
    o.fuse = !cl.flags.count("--no-fuse");
    o.any_onnx_option = o.any_onnx_option || !o.fuse;
    o.quiet = cl.flags.count("--quiet") > 0;
    return o;
}

void check_exists(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) fail("no such file: '" + path + "'");
    if (std::filesystem::is_directory(path, ec)) fail("'" + path + "' is a directory, not a model file");
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
void check_supported(const std::string& path) {
    weft::onnx::ModelInfo info = weft::onnx::inspect(path);
    if (info.unsupported_ops.empty()) return;
    std::string ops;
    for (auto& op : info.unsupported_ops) ops += (ops.empty() ? "" : ", ") + op;
    fail("'" + path + "' uses operators weft does not support: " + ops);
}

struct OpenedModel {
    graph::Module module;
    bool artifact = false;
    double build_ms = 0;  // compile (.onnx) or load (.weft) time
    graph::ArtifactMetadata metadata;
};

OpenedModel open_model(const std::string& path, const ModelOptions& o) {
    check_exists(path);
    OpenedModel m;
    auto start = Clock::now();
    if (graph::is_artifact_file(path)) {
        if (o.any_onnx_option)
            usage_error("--input-shape, --dim and --no-fuse apply to .onnx models; '" + path +
                        "' is a compiled artifact (compile it again to change them)");
        m.module = graph::load_module(path, &m.metadata);
        m.artifact = true;
    } else {
        check_supported(path);
        graph::Graph g;
        try {
            g = weft::onnx::load(path, o.load);
        } catch (const Error& e) {  // say it in weftc's options
            std::string msg = e.what();
            const std::string api = "LoadOptions::input_shapes or LoadOptions::dim_values";
            if (auto at = msg.find(api); at != std::string::npos)
                msg.replace(at, api.size(), "--input-shape NAME:D1xD2x... or --dim SYMBOL=VALUE");
            throw Error(msg);
        }
        graph::BuildOptions b;
        b.fuse = o.fuse;
        b.progress = progress_printer(o.quiet);
        m.module = graph::build(g, Target::host(), b);
    }
    m.build_ms = ms_since(start);
    return m;
}

void apply_threads(const CommandLine& cl, const OpenedModel& m) {
    int threads = int_option(cl, "--threads", 0, 1, 4096);
    if (threads == 0 && m.metadata.count("threads")) threads = std::atoi(m.metadata.at("threads").c_str());
    if (threads > 0) set_num_threads(threads);
}

std::string type_str(const BufferRef& b) { return b.dtype().str() + graph::shape_str(b.shape()); }

std::string mb(int64_t bytes) {
    char s[32];
    if (bytes >= 1 << 20) std::snprintf(s, sizeof s, "%.2f MB", double(bytes) / (1 << 20));
    else if (bytes >= 1 << 10) std::snprintf(s, sizeof s, "%.1f KB", double(bytes) / (1 << 10));
    else std::snprintf(s, sizeof s, "%lld B", (long long)bytes);
    return s;
}

// ---- inputs and outputs ------------------------------------------------------------------

void fill_random(const BufferRef& b, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::uniform_int_distribution<int> small(0, 9), bit(0, 1);
    char* p = static_cast<char*>(b.data());
    for (int64_t i = 0; i < b.size(); ++i) {
        DataType t = b.dtype();
        if (t == DataType::float_(32)) reinterpret_cast<float*>(p)[i] = float(real(rng));
        else if (t == DataType::float_(64)) reinterpret_cast<double*>(p)[i] = real(rng);
        else if (t.is_bool()) reinterpret_cast<uint8_t*>(p)[i] = uint8_t(bit(rng));
        else {
            int64_t v = small(rng);
            std::memcpy(p + i * t.bytes(), &v, size_t(t.bytes()));  // little-endian: the low bytes
        }
    }
}

// Sets every input of m: from `path` (.npz by name, or .npy for one input) or random.
// Returns the inputs used.
NamedBuffers set_inputs(graph::Module& m, const std::string& path, uint64_t seed) {
    NamedBuffers used;
    if (path.empty()) {
        for (int i = 0; i < m.num_inputs(); ++i) {
            fill_random(m.input(i), seed + uint64_t(i));
            used.emplace_back(m.input_names()[size_t(i)], m.input(i));
        }
        return used;
    }
    check_exists(path);
    NamedBuffers given;
    bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    if (npy) {
        if (m.num_inputs() != 1)
            fail(detail::concat("'", path, "' is one array but the model has ", m.num_inputs(),
                                " inputs; give an .npz with one array per input"));
        given.emplace_back(m.input_names()[0], weftc::load_npy(path));
    } else {
        given = weftc::load_npz(path);
    }
    std::string names;
    for (auto& [n, b] : given) names += (names.empty() ? "" : ", ") + n;
    bool positional = given.size() == size_t(m.num_inputs());
    for (size_t i = 0; i < given.size() && positional; ++i) positional = given[i].first == "arr_" + std::to_string(i);
    for (int i = 0; i < m.num_inputs(); ++i) {
        const std::string& name = m.input_names()[size_t(i)];
        const BufferRef* b = nullptr;
        for (auto& [n, buf] : given)
            if (n == name) b = &buf;
        if (!b && positional) b = &given[size_t(i)].second;
        if (!b) fail("'" + path + "' has no array named '" + name + "' (it has: " + names + ")");
        const BufferRef& want = m.input(i);
        if (b->dtype() != want.dtype())
            fail("input '" + name + "': the model takes " + type_str(want) + ", '" + path + "' has " + type_str(*b));
        BufferRef data = *b;
        if (b->shape() != want.shape()) {
            // A rank-0 array (or any single element) feeds a [1] input.
            if (b->size() == 1 && want.size() == 1) data = BufferRef(b->data(), b->dtype(), want.shape());
            else
                fail("input '" + name + "': the model takes " + type_str(want) + ", '" + path + "' has " + type_str(*b));
        }
        m.set_input(i, data);
        used.emplace_back(name, m.input(i));
    }
    for (auto& [n, buf] : given) {
        bool known = positional;
        for (auto& name : m.input_names()) known = known || n == name;
        if (!known) std::fprintf(stderr, "weftc: warning: '%s' has an array '%s' that is no model input (ignored)\n",
                                 path.c_str(), n.c_str());
    }
    return used;
}

NamedBuffers outputs_of(const graph::Module& m) {
    NamedBuffers out;
    for (int i = 0; i < m.num_outputs(); ++i) out.emplace_back(m.output_names()[size_t(i)], m.get_output(i));
    return out;
}

double element(const BufferRef& b, int64_t i) {
    const char* p = static_cast<const char*>(b.data());
    DataType t = b.dtype();
    if (t == DataType::float_(32)) return reinterpret_cast<const float*>(p)[i];
    if (t == DataType::float_(64)) return reinterpret_cast<const double*>(p)[i];
    if (t.is_bool() || t == DataType::uint(8)) return reinterpret_cast<const uint8_t*>(p)[i];
    if (t == DataType::int_(8)) return reinterpret_cast<const int8_t*>(p)[i];
    if (t == DataType::int_(16)) return reinterpret_cast<const int16_t*>(p)[i];
    if (t == DataType::uint(16)) return reinterpret_cast<const uint16_t*>(p)[i];
    if (t == DataType::int_(32)) return reinterpret_cast<const int32_t*>(p)[i];
    if (t == DataType::uint(32)) return reinterpret_cast<const uint32_t*>(p)[i];
    if (t == DataType::int_(64)) return double(reinterpret_cast<const int64_t*>(p)[i]);
    if (t == DataType::uint(64)) return double(reinterpret_cast<const uint64_t*>(p)[i]);
    return 0;
}

void print_summary(const std::string& name, const BufferRef& b) {
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    int64_t argmax = 0;
    for (int64_t i = 0; i < b.size(); ++i) {
        double v = element(b, i);
        lo = std::min(lo, v);
        if (v > hi) hi = v, argmax = i;
        sum += v;
    }
    std::printf("%s: %s  min %.6g  max %.6g (at %lld)  mean %.6g\n  [", name.c_str(), type_str(b).c_str(), lo, hi,
                (long long)argmax, sum / double(b.size()));
    for (int64_t i = 0; i < std::min<int64_t>(b.size(), 8); ++i) std::printf("%s%.6g", i ? ", " : "", element(b, i));
    std::printf("%s]\n", b.size() > 8 ? ", ..." : "");
}

void write_outputs(const std::string& path, const NamedBuffers& outputs) {
    bool npy = path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0;
    if (npy) {
        if (outputs.size() != 1)
            fail(detail::concat("'", path, "' is one array but the model has ", outputs.size(),
                                " outputs; write an .npz"));
        weftc::save_npy(path, outputs[0].second);
    } else {
        weftc::save_npz(path, outputs);
    }
}

struct Stats {
    double mean = 0, median = 0, p90 = 0, min = 0, max = 0, stddev = 0;
};

Stats stats_of(std::vector<double> t) {
    Stats s;
    if (t.empty()) return s;
    std::sort(t.begin(), t.end());
    for (double x : t) s.mean += x;
    s.mean /= double(t.size());
    for (double x : t) s.stddev += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(s.stddev / double(t.size()));
    s.min = t.front();
    s.max = t.back();
    s.median = t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2;
    s.p90 = t[std::min(t.size() - 1, size_t(std::ceil(0.9 * double(t.size()))) - 1)];
    return s;
}

std::vector<double> time_runs(graph::Module& m, int repeat) {
    std::vector<double> times;
    for (int i = 0; i < repeat; ++i) {
        auto start = Clock::now();
        m.run();
        times.push_back(ms_since(start));
    }
    return times;
}

// ---- the commands ------------------------------------------------------------------------

int cmd_compile(const std::vector<std::string>& args) {
    CommandLine cl = parse("compile", args, joined(kModelValueOptions, {"--output"}), kModelFlags);
    if (cl.help) {
        std::printf("%s%s", kCompileHelp, kModelOptionsHelp);
        return 0;
    }
    if (cl.positional.size() != 1) usage_error("weftc compile: expected one model file (MODEL.onnx)");
    const std::string model = cl.positional[0];
    std::string out = value_or(cl, "--output");
    if (out.empty()) out = std::filesystem::path(model).replace_extension(".weft").string();
    if (out == model) usage_error("weftc compile: the output would overwrite the model; give -o");
    int threads = int_option(cl, "--threads", 0, 1, 4096);
    ModelOptions o = model_options(cl);
    check_exists(model);
    if (graph::is_artifact_file(model)) fail("'" + model + "' is already a compiled artifact (weftc compile reads .onnx)");
    OpenedModel m = open_model(model, o);
    graph::ArtifactMetadata meta;
    meta["source"] = std::filesystem::path(model).filename().string();
    meta["fuse"] = o.fuse ? "1" : "0";
    std::string shapes;
    for (auto& [n, d] : o.load.input_shapes) shapes += (shapes.empty() ? "" : " ") + n + ":" + graph::shape_str(d);
    for (auto& [n, v] : o.load.dim_values) shapes += (shapes.empty() ? "" : " ") + n + "=" + std::to_string(v);
    if (!shapes.empty()) meta["shapes"] = shapes;
    if (threads > 0) meta["threads"] = std::to_string(threads);
    graph::save(m.module, out, meta);
    int64_t weights = 0;
    for (const graph::Node& n : m.module.graph().nodes())
        if (n.is_constant()) weights += n.type.bytes();
    std::error_code ec;
    auto size = std::filesystem::file_size(out, ec);
    std::printf("wrote %s: %zu kernels, %s (weights %s), compiled in %.2f s\n", out.c_str(), m.module.kernels().size(),
                mb(int64_t(size)).c_str(), mb(weights).c_str(), m.build_ms / 1000);
    return 0;
}

int cmd_run(const std::vector<std::string>& args) {
    CommandLine cl = parse("run", args, joined(kModelValueOptions, {"--inputs", "--output", "--seed", "--repeat", "--save-inputs"}),
                           joined(kModelFlags, {"--print-time"}));
    if (cl.help) {
        std::printf("%s%s", kRunHelp, kModelOptionsHelp);
        return 0;
    }
    if (cl.positional.size() != 1) usage_error("weftc run: expected one model file (MODEL.weft or MODEL.onnx)");
    int repeat = int_option(cl, "--repeat", 1, 1, 1000000);
    int64_t seed = cl.values.count("--seed") ? parse_int(value_or(cl, "--seed"), "--seed", 0, INT64_MAX) : 0;
    ModelOptions o = model_options(cl);
    OpenedModel m = open_model(cl.positional[0], o);
    apply_threads(cl, m);
    NamedBuffers inputs = set_inputs(m.module, value_or(cl, "--inputs"), uint64_t(seed));
    if (cl.values.count("--save-inputs")) weftc::save_npz(value_or(cl, "--save-inputs"), inputs);
    std::vector<double> times = time_runs(m.module, repeat);
    NamedBuffers outputs = outputs_of(m.module);
    std::string out = value_or(cl, "--output");
    if (!out.empty()) write_outputs(out, outputs);
    else
        for (auto& [name, b] : outputs) print_summary(name, b);
    if (cl.flags.count("--print-time")) {
        Stats s = stats_of(times);
        std::printf("%s %.2f ms; run: mean %.3f ms, min %.3f ms, max %.3f ms over %d run%s (%d threads)\n",
                    m.artifact ? "load" : "compile", m.build_ms, s.mean, s.min, s.max, repeat, repeat == 1 ? "" : "s",
                    num_threads());
    }
    return 0;
}

int cmd_bench(const std::vector<std::string>& args) {
    CommandLine cl = parse("bench", args, joined(kModelValueOptions, {"--inputs", "--repeat", "--warmup", "--seed"}),
                           kModelFlags);
    if (cl.help) {
        std::printf("%s%s", kBenchHelp, kModelOptionsHelp);
        return 0;
    }
    if (cl.positional.size() != 1) usage_error("weftc bench: expected one model file (MODEL.weft or MODEL.onnx)");
    int repeat = int_option(cl, "--repeat", 20, 1, 1000000);
    int warmup = int_option(cl, "--warmup", 3, 0, 1000000);
    ModelOptions o = model_options(cl);
    OpenedModel m = open_model(cl.positional[0], o);
    apply_threads(cl, m);
    set_inputs(m.module, value_or(cl, "--inputs"), 0);
    time_runs(m.module, warmup);
    Stats s = stats_of(time_runs(m.module, repeat));
    std::printf("%s: %zu kernels, %s %.1f ms, %d threads\n", cl.positional[0].c_str(), m.module.kernels().size(),
                m.artifact ? "loaded in" : "compiled in", m.build_ms, num_threads());
    std::printf("latency over %d runs (after %d warm-up): mean %.3f ms  median %.3f ms  p90 %.3f ms  min %.3f ms  "
                "max %.3f ms  std %.3f ms\n",
                repeat, warmup, s.mean, s.median, s.p90, s.min, s.max, s.stddev);
    return 0;
}

// What the .onnx file itself says (read with the ONNX protobuf classes).
void print_onnx_facts(const std::string& path) {
    ::onnx::ModelProto model;
    {
        std::ifstream in(path, std::ios::binary);
        if (!model.ParseFromIstream(&in)) fail("'" + path + "' is not a valid ONNX model (the protobuf does not parse)");
    }
    auto value_info = [](const ::onnx::ValueInfoProto& v) {
        std::string s = v.name() + ": ";
        if (!v.type().has_tensor_type()) return s + "(not a tensor)";
        const auto& t = v.type().tensor_type();
        s += ::onnx::TensorProto::DataType_Name(::onnx::TensorProto::DataType(t.elem_type()));
        if (!t.has_shape()) return s + "[?]";
        s += "[";
        for (int i = 0; i < t.shape().dim_size(); ++i) {
            const auto& d = t.shape().dim(i);
            s += (i ? ", " : "") + (d.has_dim_value() ? std::to_string(d.dim_value())
                                   : d.has_dim_param() ? d.dim_param() : std::string("?"));
        }
        return s + "]";
    };
    std::set<std::string> initializers;
    for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
    std::printf("inputs:\n");
    for (const auto& v : model.graph().input())
        if (!initializers.count(v.name())) std::printf("  %s\n", value_info(v).c_str());
    std::printf("outputs:\n");
    for (const auto& v : model.graph().output()) std::printf("  %s\n", value_info(v).c_str());
    std::map<std::string, int> counts;
    for (const auto& n : model.graph().node()) ++counts[(n.domain().empty() ? "" : n.domain() + ":") + n.op_type()];
    std::printf("operators (%d nodes, %zu initializers):\n", model.graph().node_size(), initializers.size());
    for (auto& [op, c] : counts) std::printf("  %-24s %d\n", op.c_str(), c);
}

void print_module(const graph::Module& m) {
    const graph::Graph& g = m.graph();
    std::printf("compiled graph: %d nodes\n", g.size());
    std::printf("  inputs:\n");
    for (int i = 0; i < m.num_inputs(); ++i)
        std::printf("    %s: %s\n", m.input_names()[size_t(i)].c_str(), type_str(m.input(i)).c_str());
    std::printf("  outputs:\n");
    for (auto& [name, v] : g.outputs()) std::printf("    %s: %s\n", name.c_str(), g.type(v).str().c_str());
    std::map<std::string, int> ops;
    int64_t weights = 0;
    int constants = 0;
    for (const graph::Node& n : g.nodes()) {
        if (n.is_op()) ++ops[n.op];
        if (n.is_constant()) weights += n.type.bytes(), ++constants;
    }
    std::printf("  operators:");
    for (auto& [op, c] : ops) std::printf(" %s %d,", op.c_str(), c);
    std::printf(" (%d constants, %s)\n", constants, mb(weights).c_str());
    const auto& kernels = m.kernels();
    std::printf("fused kernels (%zu, in execution order):\n", kernels.size());
    for (size_t k = 0; k < kernels.size(); ++k) {
        const auto& info = kernels[k];
        const graph::Node& root = g.node(info.nodes.back());
        std::string nodes;
        for (int id : info.nodes) nodes += (nodes.empty() ? "" : ", ") + g.node(id).name;
        std::printf("  %3zu %-32s -> %-28s %zu node%s: %s\n", k, info.name.c_str(), root.type.str().c_str(),
                    info.nodes.size(), info.nodes.size() == 1 ? "" : "s", nodes.c_str());
    }
    auto placements = graph::memory_placements(m);
    std::printf("memory plan: arena %s for %zu intermediates (one buffer each: %s; one per operator: %s)\n",
                mb(m.memory_bytes()).c_str(), placements.size(), mb(m.memory_naive_bytes()).c_str(),
                mb(m.memory_operator_bytes()).c_str());
    for (const auto& p : placements)
        std::printf("  [%10lld, %10lld) %-10s %s\n", (long long)p.offset, (long long)(p.offset + p.bytes),
                    mb(p.bytes).c_str(), g.node(p.node).name.c_str());
}

int cmd_info(const std::vector<std::string>& args) {
    CommandLine cl = parse("info", args, {"--input-shape", "--dim"}, joined(kModelFlags, {"--no-compile"}));
    if (cl.help) {
        std::printf("%s%s", kInfoHelp, kModelOptionsHelp);
        return 0;
    }
    if (cl.positional.size() != 1) usage_error("weftc info: expected one model file (MODEL.onnx or MODEL.weft)");
    const std::string path = cl.positional[0];
    ModelOptions o = model_options(cl);
    check_exists(path);
    if (graph::is_artifact_file(path)) {
        OpenedModel m = open_model(path, o);
        std::printf("%s: weft artifact (format %u), loaded in %.1f ms\n", path.c_str(), graph::kArtifactVersion, m.build_ms);
        for (auto& [k, v] : m.metadata) std::printf("  %s: %s\n", k.c_str(), v.c_str());
        print_module(m.module);
        return 0;
    }
    weft::onnx::ModelInfo info = weft::onnx::inspect(path);
    std::printf("%s: ONNX ir_version %lld, opset %d, producer '%s'\n", path.c_str(), (long long)info.ir_version, info.opset,
                info.producer.c_str());
    if (!info.unsupported_ops.empty()) {
        std::string ops;
        for (auto& op : info.unsupported_ops) ops += (ops.empty() ? "" : ", ") + op;
        std::printf("UNSUPPORTED operators (weft cannot compile this model): %s\n", ops.c_str());
    } else {
        std::printf("every operator is supported\n");
    }
    print_onnx_facts(path);
    if (!info.unsupported_ops.empty() || cl.flags.count("--no-compile")) return 0;
    OpenedModel m = open_model(path, o);
    std::printf("compiled in %.2f s\n", m.build_ms / 1000);
    print_module(m.module);
    return 0;
}

int dispatch(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::fputs(kMainHelp, stderr);
        return 2;
    }
    std::string command = args[0];
    args.erase(args.begin());
    if (command == "-h" || command == "--help" || command == "help") {
        std::fputs(kMainHelp, stdout);
        return 0;
    }
    if (command == "compile") return cmd_compile(args);
    if (command == "run") return cmd_run(args);
    if (command == "info") return cmd_info(args);
    if (command == "bench") return cmd_bench(args);
    usage_error("unknown command '" + command + "' (commands: compile, run, info, bench)");
}

// One line: weft's messages start "weft: "; later lines (a source location) are dropped.
std::string one_line(std::string msg) {
    if (msg.rfind("weft: ", 0) == 0) msg = msg.substr(6);
    if (auto nl = msg.find('\n'); nl != std::string::npos) msg = msg.substr(0, nl);
    return msg;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return dispatch(argc, argv);
    } catch (const UsageError& e) {
        std::string command = argc > 1 ? argv[1] : "";
        bool known = command == "compile" || command == "run" || command == "info" || command == "bench";
        std::fprintf(stderr, "weftc: error: %s (see 'weftc %s--help')\n", e.message.c_str(),
                     known ? (command + " ").c_str() : "");
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "weftc: error: %s\n", one_line(e.what()).c_str());
        return 1;
    } catch (...) {
        std::fprintf(stderr, "weftc: error: unknown failure\n");
        return 1;
    }
}
