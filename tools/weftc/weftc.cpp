// weftc: weft's command line (like TVM's tvmc). See docs/weftc.md.
//
//   weftc compile model.onnx -o model.weft [--input-shape x:1x3x224x224] [--dim batch=1] [--symbol seq=512]
//   weftc run model.weft --inputs in.npz --output out.npz [--print-time --repeat N]
//   weftc info model.onnx
//   weftc bench model.weft --repeat 50 --threads 2
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "command_line.hpp"
#include "io.hpp"
#include "model.hpp"
#ifdef WEFTC_HAVE_RPC
#include <weft/rpc/rpc.hpp>
#endif

namespace {

using namespace weftc;

// ---- the commands ------------------------------------------------------------------------

// weftc compile --target cuda: every kernel compiled by NVRTC (no GPU needed, nothing
// allocated), each kernel's CUDA C and PTX written to the directory `out`.
int compile_for_cuda(const std::string& model, std::string out, ModelOptions o) {
    if (out.empty()) out = std::filesystem::path(model).replace_extension(".cuda").string();
    o.allocate = false;
    OpenedModel m = open_model(model, o);
    std::error_code ec;
    std::filesystem::create_directories(out, ec);
    if (ec) fail("cannot create the directory '" + out + "': " + ec.message());
    const auto& kernels = m.module.compiled_kernels();
    for (size_t k = 0; k < kernels.size(); ++k) {
        const DeviceCode* dc = kernels[k].module()->device_code();
        char stem[32];
        std::snprintf(stem, sizeof stem, "%03zu_", k);
        std::string base = (std::filesystem::path(out) / (stem + m.module.kernels()[k].name)).string();
        std::ofstream(base + ".cu") << dc->source;
        std::ofstream(base + ".ptx") << dc->ptx;
        if (!std::ofstream(base + ".ptx", std::ios::app)) fail("cannot write '" + base + ".ptx'");
    }
    std::printf("wrote %s: %zu CUDA kernels (.cu and .ptx, %s), memory plan %s, compiled in %.2f s\n"
                "(a CUDA module is not saved as an artifact: 'weftc run --target cuda %s' compiles and runs it)\n",
                out.c_str(), kernels.size(), m.module.target().str().c_str(), mb(m.module.memory_bytes()).c_str(),
                m.build_ms / 1000, model.c_str());
    return 0;
}

int cmd_compile(const std::vector<std::string>& args) {
    CommandLine cl = parse("compile", args, joined(kModelValueOptions, {"--output"}), joined(kModelFlags, {"--time-phases"}));
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
    if (o.target.is_cuda()) return compile_for_cuda(model, value_or(cl, "--output"), o);
    OpenedModel m = open_model(model, o);
    graph::ArtifactMetadata meta;
    meta["source"] = std::filesystem::path(model).filename().string();
    meta["fuse"] = o.fuse ? "1" : "0";
    std::string shapes;
    for (auto& [n, d] : o.load.input_shapes) shapes += (shapes.empty() ? "" : " ") + n + ":" + graph::shape_str(d);
    for (auto& [n, v] : o.load.dim_values) shapes += (shapes.empty() ? "" : " ") + n + "=" + std::to_string(v);
    for (auto& sym : o.load.symbols) shapes += (shapes.empty() ? "" : " ") + sym.name + "<=" + std::to_string(sym.max);
    if (!shapes.empty()) meta["shapes"] = shapes;
    if (threads > 0) meta["threads"] = std::to_string(threads);
    const auto save_start = Clock::now();
    graph::save(m.module, out, meta);
    const double save_ms = ms_since(save_start);
    int64_t weights = 0;
    for (const graph::Node& n : m.module.graph().nodes())
        if (n.is_constant()) weights += n.type.bytes();
    std::error_code ec;
    auto size = std::filesystem::file_size(out, ec);
    std::printf("wrote %s: %zu kernels, %s (weights %s), compiled in %.2f s\n", out.c_str(), m.module.kernels().size(),
                mb(int64_t(size)).c_str(), mb(weights).c_str(), m.build_ms / 1000);
    if (cl.flags.count("--time-phases")) print_phases(m, save_ms);
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
    NamedBuffers inputs = set_inputs(m.module, value_or(cl, "--inputs"), uint64_t(seed), o.max_file_bytes);
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
    set_inputs(m.module, value_or(cl, "--inputs"), 0, o.max_file_bytes);
    time_runs(m.module, warmup);
    m.module.wait_optimized();    // a tiered build is timed at its optimized kernels,
    m.module.wait_specialized();  // a symbolic one at the kernels its warm-up runs specialized
    Stats s = stats_of(time_runs(m.module, repeat));
    std::printf("%s: %zu kernels, %s %.1f ms, %d threads\n", cl.positional[0].c_str(), m.module.kernels().size(),
                m.artifact ? "loaded in" : "compiled in", m.build_ms, num_threads());
    std::printf("latency over %d runs (after %d warm-up): mean %.3f ms  median %.3f ms  p90 %.3f ms  min %.3f ms  "
                "max %.3f ms  std %.3f ms\n",
                repeat, warmup, s.mean, s.median, s.p90, s.min, s.max, s.stddev);
    return 0;
}

// What the .onnx file itself says (read with the ONNX protobuf classes, up to the size limit).
void print_onnx_facts(const std::string& path, const weft::onnx::LoadOptions& load) {
    ::onnx::ModelProto model;
    const std::string bytes = detail::read_file_limited(path, load.max_file_bytes, "onnx", "LoadOptions::max_file_bytes");
    if (bytes.size() > size_t(std::numeric_limits<int>::max()) || !model.ParseFromArray(bytes.data(), int(bytes.size())))
        fail("'" + path + "' is not a valid ONNX model (the protobuf does not parse)");
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

void print_module(const graph::Module& m, bool with_records = false) {
    const graph::Graph& g = m.graph();
    std::printf("compiled graph: %d nodes\n", g.size());
    std::printf("  inputs:\n");
    for (int i = 0; i < m.num_inputs(); ++i)
        std::printf("    %s: %s\n", m.input_names()[size_t(i)].c_str(), type_str(m.input(i)).c_str());
    std::printf("  outputs:\n");
    std::vector<std::string> checks;  // run-time checks (graph::Graph::check_at_run), listed apart
    for (auto& [name, v] : g.outputs()) {
        if (name.starts_with(graph::kRunCheckPrefix)) checks.push_back(name.substr(graph::kRunCheckPrefix.size()));
        else std::printf("    %s: %s\n", name.c_str(), g.type(v).str().c_str());
    }
    if (!checks.empty()) {
        std::printf("  run-time checks (a run whose data fails one is an error):\n");
        for (const std::string& c : checks) std::printf("    %s\n", c.c_str());
    }
    if (!m.symbols().empty()) {  // (the shapes above are at each symbol's max)
        std::printf("  symbolic dimensions (any value in the bounds; shapes above at the max):\n");
        for (const graph::Symbol& sym : m.symbols()) {
            std::string where;
            for (const graph::SymbolicAxis& a : m.symbolic_axes())
                if (a.symbol == sym.name)
                    where += (where.empty() ? "" : ", ") + a.input + " dimension " + std::to_string(a.axis);
            std::printf("    %s in [%lld, %lld]: %s\n", sym.name.c_str(), (long long)sym.min, (long long)sym.max,
                        where.c_str());
        }
    }
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
        // A kernel only one branch needs runs when its condition is (graph.md, "Branches").
        const std::string when = info.condition < 0 ? ""
                                                    : "  [runs when " + g.node(info.condition).name + " is " +
                                                          (info.condition_value ? "true" : "false") + "]";
        // Compiled again at each size it runs at (graph.md, "Symbolic dimensions").
        const char* per_size = info.per_size ? "  [compiled per size]" : "";
        std::printf("  %3zu %-32s -> %-28s %zu node%s: %s%s%s%s\n", k, info.name.c_str(), root.type.str().c_str(),
                    info.nodes.size(), info.nodes.size() == 1 ? "" : "s", nodes.c_str(),
                    !with_records || !info.tunable ? "" : info.tuned ? "  [tuned]" : "  [default: no record]",
                    when.c_str(), per_size);
    }
    if (with_records) {
        int tasks = 0, tuned = 0;
        for (const auto& info : kernels) tasks += info.tunable, tuned += info.tuned;
        std::printf("tuning records: %d of %d kernels with a tuning task built from a record\n", tuned, tasks);
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
    CommandLine cl = parse("info", args, {"--input-shape", "--dim", "--symbol", "--max-loop-iterations", "--max-file-size", "--records", "--threads"},
                           joined(kModelFlags, {"--no-compile"}));
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
    weft::onnx::ModelInfo info = weft::onnx::inspect(path, o.load);
    std::printf("%s: ONNX ir_version %lld, opset %d, producer '%s'\n", path.c_str(), (long long)info.ir_version, info.opset,
                info.producer.c_str());
    if (!info.unsupported_ops.empty()) {
        std::string ops;
        for (auto& op : info.unsupported_ops) ops += (ops.empty() ? "" : ", ") + op;
        std::printf("UNSUPPORTED operators (weft cannot compile this model): %s\n", ops.c_str());
    } else {
        std::printf("every operator is supported\n");
    }
    print_onnx_facts(path, o.load);
    if (!info.unsupported_ops.empty() || cl.flags.count("--no-compile")) return 0;
    OpenedModel m = open_model(path, o);
    std::printf("compiled in %.2f s\n", m.build_ms / 1000);
    // The tuning state where records were given or pre-tuned ones applied.
    bool any_tuned = false;
    for (const auto& k : m.module.kernels()) any_tuned = any_tuned || k.tuned;
    print_module(m.module, !o.records.empty() || any_tuned);
    return 0;
}

int cmd_tune(const std::vector<std::string>& args) {
    CommandLine cl = parse("tune", args,
                           joined(kModelValueOptions, {"--output", "--trials", "--total-trials", "--time-budget",
                                                       "--tuner", "--seed", "--repeat", "--timeout", "--tracker",
                                                       "--key"}),
                           kModelFlags);
    if (cl.help) {
        std::printf("%s%s", kTuneHelp, kModelOptionsHelp);
        return 0;
    }
    if (cl.positional.size() != 1) usage_error("weftc tune: expected one model file (MODEL.onnx)");
    const std::string model = cl.positional[0];
    check_exists(model);
    if (graph::is_artifact_file(model)) usage_error("weftc tune: '" + model + "' is a compiled artifact; tune the .onnx model");
    ModelOptions o = model_options(cl);
    if (!o.records.empty()) usage_error("weftc tune: --records applies to compile, run, bench and info; give -o");
    std::string out = value_or(cl, "--output");
    if (out.empty()) out = std::filesystem::path(model).replace_extension(".jsonl").string();
    graph::TuneOptions t;
    t.trials = int_option(cl, "--trials", 32, 1, 1000000);
    t.total_trials = int_option(cl, "--total-trials", 0, 1, 100000000);
    t.seed = uint64_t(parse_int(value_or(cl, "--seed", "1"), "--seed", 0, std::numeric_limits<int64_t>::max()));
    t.measure.repeats = int_option(cl, "--repeat", 5, 1, 100000);
    t.measure.timeout_s = double(parse_int(value_or(cl, "--timeout", "10"), "--timeout", 1, 86400));
    t.time_budget_s = double(parse_int(value_or(cl, "--time-budget", "0"), "--time-budget", 0, 1 << 30));
    const std::string tuner = value_or(cl, "--tuner", "random");
    if (tuner == "grid") t.tuner = graph::TuneOptions::Tuner::Grid;
    else if (tuner == "genetic") t.tuner = graph::TuneOptions::Tuner::Genetic;
    else if (tuner == "model") t.tuner = graph::TuneOptions::Tuner::Model;
    else if (tuner != "random") usage_error("bad --tuner '" + tuner + "' (expected random, grid, genetic or model)");
    t.records_file = out;
    const std::string tracker = value_or(cl, "--tracker"), key = value_or(cl, "--key");
    if (tracker.empty() != key.empty()) usage_error("weftc tune: --tracker and --key go together");
    if (!tracker.empty()) {
#ifdef WEFTC_HAVE_RPC
        if (!o.target.is_cpu()) usage_error("weftc tune: --tracker measures CPU kernels (--target cpu)");
        t.runner = std::make_shared<rpc::RpcRunner>(rpc::RpcRunnerOptions{tracker, key});
#else
        usage_error("weftc tune: --tracker needs weftc built with gRPC (libgrpc++-dev, protobuf-compiler-grpc)");
#endif
    }
    const bool quiet = o.quiet, tty = isatty(2);
    t.progress = [quiet, tty](const graph::TuneProgress& p) {
        if (quiet) return;
        if (tty) std::fprintf(stderr, "\r\033[K%s", graph::progress_line(p).c_str());
        if (!tty || p.trial == p.trials) std::fprintf(stderr, "%s\n", tty ? "" : graph::progress_line(p).c_str());
        std::fflush(stderr);
    };
    check_supported(model, o.load);
    graph::Graph g = weft::onnx::load(model, o.load);
    graph::BuildOptions b;
    b.fuse = o.fuse;
    auto start = Clock::now();
    autotune::Records records = graph::tune(g, o.target, t, b);
    int failed = 0;
    for (const auto& r : records.all()) failed += !r.ok();
    std::printf("%s: %zu tasks, %zu candidates measured (%d failed) in %.1f s on %d threads; records appended to %s\n",
                model.c_str(), records.pick_best().size(), records.size(), failed, ms_since(start) / 1000,
                o.target.num_threads, out.c_str());
    std::printf("use them: weftc compile %s --records %s%s\n", model.c_str(), out.c_str(),
                cl.values.count("--threads") ? (" --threads " + value_or(cl, "--threads")).c_str() : "");
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
    if (command == "tune") return cmd_tune(args);
    usage_error("unknown command '" + command + "' (commands: compile, run, info, bench, tune)");
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
        bool known = command == "compile" || command == "run" || command == "info" || command == "bench" ||
                     command == "tune";
        std::fprintf(stderr, "weftc: error: %s (see 'weftc %s--help')\n", e.message.c_str(),
                     known ? (command + " ").c_str() : "");
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "weftc: error: %s\n", one_line(in_weftc_terms(e.what())).c_str());
        return 1;
    } catch (...) {
        std::fprintf(stderr, "weftc: error: unknown failure\n");
        return 1;
    }
}
