// weftc's command line: the help texts, the parsed command line and its option values.
#pragma once
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

namespace weftc {

using namespace weft;
using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A mistake in the command line (exit status 2, with a pointer to --help).
struct UsageError {
    std::string message;
};

[[noreturn]] inline void usage_error(const std::string& msg) { throw UsageError{msg}; }
[[noreturn]] inline void fail(const std::string& msg) { detail::throw_user_error(msg); }

// ---- help --------------------------------------------------------------------------------

inline const char* kMainHelp = R"(weftc: compile and run ONNX models with weft

usage: weftc <command> [options]

commands:
  compile   compile an .onnx model into a .weft artifact (object code, graph, weights)
  run       run a .weft artifact or an .onnx model on inputs from an .npz/.npy file
  info      show a model's inputs, outputs, operators, fused kernels and memory plan
  bench     time a model's runs (latency statistics)
  tune      search each kernel's schedule space on this machine, writing tuning records

'weftc <command> --help' describes a command's options. See docs/weftc.md.
)";

inline const char* kModelOptionsHelp = R"(
model options (for .onnx models):
  --input-shape NAME:D1xD2x...   the shape of input NAME (e.g. input:1x3x224x224); repeatable
  --dim SYMBOL=VALUE             the value of a symbolic dimension (e.g. batch=1); repeatable
  --symbol SYMBOL=MAX            keep a symbolic dimension symbolic, up to MAX (e.g. seq=512):
                                 compiled once, the model runs at any value in [1, MAX]; repeatable
  --max-loop-iterations N        run a Loop whose trip count or condition the inputs decide up to
                                 N iterations (a run that needs more is an error)
  --no-fuse                      one kernel per operator (no operator fusion)
  --tier optimized|fast|tiered   compile the kernels for speed (default), for a short compile
                                 (a fifth of the time, kernels 4-11x slower), or fast first
                                 with the optimized kernels compiled in the background and used
                                 from the first run after they are ready
  --precision f32|bf16|int8      bf16: linear layers and convolutions of constant weights
                                 multiply in bfloat16, accumulating in float32 (AVX512_BF16
                                 where the CPU has it); int8: the same layers on 8-bit
                                 integers (VNNI where the CPU has it), quantized with the ranges
                                 the --calibrate inputs give; the rest stays float32 (default f32)
  --calibrate IN.npz             with --precision int8: a typical input (one array per model
                                 input, by name, as run --inputs takes); repeatable, a few
  --calibrate-percentile P       the share (percent, 50-100) of each activation's calibration
                                 values its int8 range holds: 100 (default) is min-max, 99.99
                                 leaves the rarest extremes out
  --target cpu|cuda              compile for this CPU (default) or an NVIDIA GPU (CUDA C compiled
                                 by NVRTC; run and bench need a GPU; see docs/cuda.md)
  --quiet                        no progress while compiling
  --records PATH                 tuning records ('weftc tune'): each kernel with a record for
                                 this machine and thread count is built with its best config
  --no-pretuned                  ignore weft's pre-tuned records (used by default for kernels
                                 without a record of --records, where this CPU and thread
                                 count are the ones they were measured on)
  --cache-dir DIR                keep the compiled module in DIR (default: the directory
                                 WEFT_MODEL_CACHE_DIR names, else none): the next run of the
                                 same model with the same options loads it, compiling nothing

file options:
  --max-file-size SIZE           refuse a model, artifact or input file larger than SIZE bytes
                                 (a suffix K, M or G multiplies by 1024, 1024^2, 1024^3;
                                 default: 2G less a byte for .onnx, protobuf's limit; 4G else)
)";

inline const char* kCompileHelp = R"(usage: weftc compile MODEL.onnx -o OUT.weft [options]

Imports the ONNX model, compiles it (graph passes, operator fusion, one JIT-compiled kernel
per fused group, a static memory plan) and writes everything 'weftc run' needs into one
file: each kernel's object code, the compiled graph, the memory plan and the weights.
Loading it compiles nothing. Progress goes to stderr.

options:
  -o, --output PATH              the artifact to write (default: MODEL with .weft)
  --threads N                    the thread count 'weftc run' uses by default (default: all cores)
  --time-phases                  print where the compile's time went: the import, the int8
                                 calibration, each graph pass, fusion, compiling the kernels (their schedules, lowering
                                 and LLVM, summed over the compile threads), the memory plan, saving

With --target cuda every kernel is compiled for the GPU (NVRTC; no GPU needed) and -o names a
directory (default: MODEL with .cuda) that gets each kernel's CUDA C (.cu) and PTX (.ptx): an
artifact holds CPU object code only, so 'weftc run --target cuda MODEL.onnx' compiles and runs.
)";

inline const char* kRunHelp = R"(usage: weftc run MODEL(.weft|.onnx) [--inputs IN.npz] [--output OUT.npz] [options]

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

inline const char* kInfoHelp = R"(usage: weftc info MODEL(.onnx|.weft) [options]

For an .onnx model: its opset and producer, the operators weft does not support (listed
first: such a model cannot be compiled), its inputs and outputs (with symbolic dimensions)
and operator counts. When it is supported, it is compiled and the compiled graph is shown
too: the graph's inputs and outputs, the fused kernels (name, nodes, output type) and the
memory plan (arena size, and where each intermediate lives). For a .weft artifact: what
it was compiled from, its target, kernels and memory plan.

options:
  --no-compile         only what the .onnx file says (no import or compilation)
)";

inline const char* kTuneHelp = R"(usage: weftc tune MODEL.onnx -o RECORDS.jsonl [options]

Searches the schedule space of each of the model's tuning tasks (one per distinct workload
of a fused kernel whose schedule has choices) on this machine: the default schedule first,
then points drawn by the tuner, each checked against the default's output in a child process
(a crash, hang or wrong result is that candidate's error) and timed here. Every measurement
is appended to RECORDS.jsonl as it comes; 'weftc compile|run|bench --records RECORDS.jsonl'
then builds each kernel with its best config. Records are for this CPU and thread count:
tune with the --threads you will run with. With --target cuda the candidates are compiled
and measured on the GPU in child processes (up to 8 per process), timed with CUDA events;
records for CUDA apply to 'weftc compile|run --target cuda'. A line per trial goes to stderr.

options:
  -o, --output PATH    the records file to append to (default: MODEL with .jsonl)
  --trials N           candidates per task, the default included (default 32)
  --total-trials N     instead: N candidates in all, shared by each task's share of the
                       model's run time (its kernels x its default's time)
  --time-budget S      stop starting candidates after S seconds (default: no limit)
  --tuner random|grid|genetic|model
                       how candidates are drawn (default random; genetic breeds the
                       fastest measured so far; model ranks them with an XGBoost model
                       fit on those measured, which needs libxgboost0)
  --seed N             the tuner's seed (default 1)
  --repeat N           timed runs per candidate (default 5)
  --timeout S          a candidate's checking run may take this long (default 10)
  --threads N          the threads kernels run on (default: all cores)
  --tracker HOST:PORT  measure on the RPC servers this tracker hands out (weft-rpc-tracker,
  --key KEY            weft-rpc-server) with device key KEY, instead of on this machine;
                       the kernels are compiled here for this CPU (or --target's): the
                       servers' CPUs must have its features
)";

inline const char* kBenchHelp = R"(usage: weftc bench MODEL(.onnx|.weft) [options]

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

inline std::string value_or(const CommandLine& cl, const std::string& key, const std::string& fallback = "") {
    auto it = cl.values.find(key);
    return it == cl.values.end() ? fallback : it->second.back();
}

inline int64_t parse_int(const std::string& text, const std::string& what, int64_t lo, int64_t hi) {
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

inline double parse_float(const std::string& text, const std::string& what, double lo, double hi) {
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (...) {
        used = 0;
    }
    if (text.empty() || used != text.size() || !(v >= lo && v <= hi))
        usage_error(detail::concat("bad ", what, " '", text, "': expected a number from ", lo, " to ", hi));
    return v;
}

inline int int_option(const CommandLine& cl, const std::string& key, int fallback, int lo, int hi) {
    std::string v = value_or(cl, key);
    return v.empty() ? fallback : int(parse_int(v, key, lo, hi));
}

// "4096", "64K", "2G": a byte count, the suffixes K, M and G multiplying by powers of 1024.
inline int64_t parse_size(const std::string& text, const std::string& what) {
    static const std::string suffixes = "KMG";
    size_t suffix = text.empty() ? std::string::npos : suffixes.find(char(std::toupper(uint8_t(text.back()))));
    int shift = suffix == std::string::npos ? 0 : 10 * int(suffix + 1);
    std::string digits = suffix == std::string::npos ? text : text.substr(0, text.size() - 1);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
        usage_error("bad " + what + " '" + text + "': expected a byte count such as 1048576, 512M or 8G");
    return parse_int(digits, what, 1, (int64_t(1) << (62 - shift))) << shift;
}

// "input:1x3x224x224" (the name may itself contain ':'; the last one separates).
inline std::pair<std::string, std::vector<int64_t>> parse_input_shape(const std::string& text) {
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
inline std::pair<std::string, int64_t> parse_dim(const std::string& text, const std::string& option = "--dim") {
    auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        usage_error("bad " + option + " '" + text + "' (expected SYMBOL=VALUE, e.g. batch=" +
                    (option == "--dim" ? "1" : "16") + ")");
    return {text.substr(0, eq), parse_int(text.substr(eq + 1), option + " value", 1, int64_t(1) << 40)};
}

inline const std::vector<std::string> kModelValueOptions = {"--input-shape", "--dim", "--symbol", "--threads",
                                                            "--target", "--max-file-size", "--records",
                                                            "--max-loop-iterations", "--cache-dir", "--tier",
                                                            "--precision", "--calibrate",
                                                            "--calibrate-percentile"};
inline const std::vector<std::string> kModelFlags = {"--no-fuse", "--quiet", "--no-pretuned"};

inline std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

inline void check_exists(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) fail("no such file: '" + path + "'");
    if (std::filesystem::is_directory(path, ec)) fail("'" + path + "' is a directory, not a model file");
}

// The library's error message in weftc's terms: the API settings it names (which a weftc
// user cannot reach) replaced by the command-line options that set them.
inline std::string in_weftc_terms(std::string message) {
    static const std::pair<const char*, const char*> settings[] = {
        {"LoadOptions::input_shapes or LoadOptions::dim_values", "--input-shape NAME:D1xD2x... or --dim SYMBOL=VALUE"},
        {"LoadOptions::input_shapes", "--input-shape"},
        {"LoadOptions::max_file_bytes", "--max-file-size"},
        {"the max_file_bytes argument of graph::load_module", "--max-file-size"},
    };
    for (auto& [api, option] : settings)
        for (size_t at = message.find(api); at != std::string::npos; at = message.find(api, at + std::strlen(option)))
            message.replace(at, std::strlen(api), option);
    return message;
}

// "float32[1, 3, 224, 224]".
inline std::string type_str(const BufferRef& b) { return b.dtype().str() + graph::shape_str(b.shape()); }

}  // namespace weftc
