// The weftc binary end to end: compile an ONNX model, run the artifact (and the .onnx) on an
// .npz input, compare the .npz output with a reference; --help; one-line errors with a
// non-zero exit for bad input.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "artifact_edit.hpp"
#include "npy.hpp"
#include "onnx/onnx_model.hpp"
#include "weft/runtime/bytes.hpp"
#include "weft/runtime/cuda/cuda.hpp"

using namespace weft;
namespace fs = std::filesystem;

namespace {

struct Result {
    int status = -1;
    std::string out, err;
};

// A scratch directory for one test case, removed afterwards.
struct Scratch {
    fs::path dir;
    explicit Scratch(const std::string& name) {
        dir = fs::temp_directory_path() / ("weftc_test_" + name + "_" + std::to_string(getpid()));
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    ~Scratch() { fs::remove_all(dir); }
    std::string operator/(const std::string& f) const { return (dir / f).string(); }
};

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// weftc with `args`; with timeout_s, killed after that long (coreutils' timeout: status 124).
// `environment`: NAME=VALUE settings for weftc's process ("" : none).
Result run_weftc(const Scratch& s, const std::string& args, int timeout_s = 0, const std::string& environment = "") {
    std::string out = s / "stdout.txt", err = s / "stderr.txt";
    std::string cmd = (timeout_s ? "timeout " + std::to_string(timeout_s) + " " : std::string()) +
                      (environment.empty() ? std::string() : "env " + environment + " ") + WEFTC_PATH + " " + args +
                      " >" + out + " 2>" + err;
    int rc = std::system(cmd.c_str());
    Result r;
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

// conv (bias) + relu + flatten + Gemm: two inputs so that names matter.
onnx_test::Model small_model() {
    onnx_test::Model m(13);
    m.input("image", {1, 2, 6, 6});
    m.input("shift", {1, 4});
    std::vector<float> w(3 * 2 * 3 * 3), b(3), fc(4 * 48), fb(4);
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(std::sin(double(i))) * 0.3f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * float(i);
    for (size_t i = 0; i < fc.size(); ++i) fc[i] = float(std::cos(double(i) * 0.7)) * 0.2f;
    for (size_t i = 0; i < fb.size(); ++i) fb[i] = -0.05f * float(i);
    m.initializer("w", {3, 2, 3, 3}, w);
    m.initializer("b", {3}, b);
    m.initializer("fc", {4, 48}, fc);
    m.initializer("fb", {4}, fb);
    auto& conv = m.node("Conv", {"image", "w", "b"}, {"conv"});
    onnx_test::attr(conv, "kernel_shape", ::onnx::AttributeProto::INTS).add_ints(3);
    conv.mutable_attribute(0)->add_ints(3);
    m.node("Relu", {"conv"}, {"relu"});
    m.node("Flatten", {"relu"}, {"flat"});
    auto& gemm = m.node("Gemm", {"flat", "fc", "fb"}, {"logits"});
    onnx_test::attr(gemm, "transB", ::onnx::AttributeProto::INT).set_i(1);
    m.node("Add", {"logits", "shift"}, {"y"});
    m.output("y");
    return m;
}

// weftc fails with `status` and exactly one line on stderr, "weftc: error: ..." saying `says`.
void check_one_line_error(const Result& r, const std::string& args, int status, const std::string& says) {
    CHECK_MESSAGE(r.status == status, args, " -> ", r.status, ": ", r.err);
    CHECK_MESSAGE(r.err.rfind("weftc: error: ", 0) == 0, args, ": ", r.err);
    CHECK_MESSAGE(r.err.find(says) != std::string::npos, args, ": ", r.err);
    CHECK_MESSAGE(std::count(r.err.begin(), r.err.end(), '\n') == 1, args, ": ", r.err);
}

void write_model(const onnx_test::Model& m, const std::string& path) {
    std::ofstream out(path, std::ios::binary);
    out << m.bytes();
}

void check_close(const BufferRef& got, const BufferRef& want) {
    REQUIRE(got.dtype() == DataType::float_(32));
    REQUIRE(got.size() == want.size());
    const float* g = static_cast<const float*>(got.data());
    const float* w = static_cast<const float*>(want.data());
    int bad = 0;
    for (int64_t i = 0; i < got.size(); ++i) bad += !(std::abs(g[i] - w[i]) <= 1e-5f + 1e-4f * std::abs(w[i]));
    CHECK(bad == 0);
}

}  // namespace

TEST_CASE("weftc compile then run matches the model run in memory") {
    Scratch s("e2e");
    onnx_test::Model model = small_model();
    write_model(model, s / "model.onnx");
    BufferRef image = Buffer<float>::random({1, 2, 6, 6}, -1.f, 1.f, 3), shift = Buffer<float>::random({1, 4}, -1.f, 1.f, 4);
    weftc::save_npz(s / "in.npz", {{"shift", shift}, {"image", image}});  // order does not matter: names do

    Result c = run_weftc(s, "compile " + (s / "model.onnx") + " -o " + (s / "model.weft") + " --threads 1");
    INFO(c.err);
    REQUIRE(c.status == 0);
    CHECK(c.out.find("wrote") != std::string::npos);
    CHECK(c.err.find("compiling kernel 1/") != std::string::npos);  // progress
    // --time-phases: the import, the passes, the kernels' compile and the plan, each timed.
    Result timed = run_weftc(s, "compile " + (s / "model.onnx") + " -o " + (s / "timed.weft") + " --quiet --time-phases");
    REQUIRE(timed.status == 0);
    for (const char* phase : {"import (onnx::load)", "pass fold_constants", "fuse", "compile kernels", "  LLVM",
                              "plan memory and allocate", "save", "total"})
        CHECK_MESSAGE(timed.out.find(phase) != std::string::npos, phase);

    Result r = run_weftc(s, "run " + (s / "model.weft") + " --inputs " + (s / "in.npz") + " --output " + (s / "out.npz") +
                            " --print-time --repeat 3");
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("load") != std::string::npos);
    CHECK(r.err.find("compiling") == std::string::npos);  // an artifact compiles nothing

    // The reference: the same model imported and run in this process.
    graph::Module m = graph::build(model.load());
    m.set_input("image", image);
    m.set_input("shift", shift);
    m.run();
    weftc::NamedBuffers out = weftc::load_npz(s / "out.npz");
    REQUIRE(out.size() == 1);
    CHECK(out[0].first == "y");
    check_close(out[0].second, m.get_output("y"));

    // Running the .onnx directly gives the same; so does a single-output .npy.
    Result o = run_weftc(s, "run " + (s / "model.onnx") + " --inputs " + (s / "in.npz") + " --output " + (s / "out.npy") + " --quiet");
    INFO(o.err);
    REQUIRE(o.status == 0);
    check_close(weftc::load_npy(s / "out.npy"), m.get_output("y"));

    // --cache-dir (and WEFT_MODEL_CACHE_DIR): the first run compiles and keeps the module, the
    // next loads it (no "compiling" progress) and gives the same outputs.
    for (const std::string how : {"--cache-dir " + (s / "cache"), std::string()}) {
        const std::string env = how.empty() ? "WEFT_MODEL_CACHE_DIR=" + (s / "envcache") : "";
        const std::string run = "run " + (s / "model.onnx") + " --inputs " + (s / "in.npz") + " --output " +
                                (s / "cached.npy") + " " + how;
        Result first = run_weftc(s, run, 0, env);
        INFO(first.err);
        REQUIRE(first.status == 0);
        CHECK(first.err.find("compiling kernel") != std::string::npos);
        Result second = run_weftc(s, run, 0, env);
        REQUIRE(second.status == 0);
        CHECK(second.err.find("compiling") == std::string::npos);
        check_close(weftc::load_npy(s / "cached.npy"), m.get_output("y"));
        CHECK(!fs::is_empty(how.empty() ? s / "envcache" : s / "cache"));
    }

    // Random inputs when none are given, saved with --save-inputs; a summary without --output.
    Result rnd = run_weftc(s, "run " + (s / "model.weft") + " --seed 7 --save-inputs " + (s / "rnd.npz"));
    INFO(rnd.err);
    REQUIRE(rnd.status == 0);
    CHECK(rnd.out.find("y: float32[1, 4]") != std::string::npos);
    CHECK(weftc::load_npz(s / "rnd.npz").size() == 2);

    Result info = run_weftc(s, "info " + (s / "model.onnx"));
    INFO(info.err);
    REQUIRE(info.status == 0);
    for (const char* want : {"opset 13", "every operator is supported", "Conv", "Gemm", "image: FLOAT[1, 2, 6, 6]",
                             "fused kernels", "memory plan"})
        CHECK_MESSAGE(info.out.find(want) != std::string::npos, want);
    Result ainfo = run_weftc(s, "info " + (s / "model.weft"));
    REQUIRE(ainfo.status == 0);
    CHECK(ainfo.out.find("source: model.onnx") != std::string::npos);

    Result bench = run_weftc(s, "bench " + (s / "model.weft") + " --repeat 5 --warmup 1 --threads 1");
    INFO(bench.err);
    REQUIRE(bench.status == 0);
    CHECK(bench.out.find("median") != std::string::npos);
}

TEST_CASE("weftc runs an ONNX test model and matches its reference output") {
    const fs::path dir = "/usr/share/libonnx-testdata/data/pytorch-converted/test_Conv2d";
    if (!fs::exists(dir / "model.onnx")) {
        MESSAGE("skipped: ONNX's test data (libonnx-testdata) is not installed");
        return;
    }
    Scratch s("conv2d");
    std::string name;
    BufferRef input = weft::onnx::load_tensor((dir / "test_data_set_0/input_0.pb").string(), &name);
    BufferRef want = weft::onnx::load_tensor((dir / "test_data_set_0/output_0.pb").string());
    graph::Graph g = weft::onnx::load((dir / "model.onnx").string());
    const std::string input_name = g.node(g.inputs().at(0)).name;
    weftc::save_npz(s / "in.npz", {{input_name, input}});
    Result c = run_weftc(s, "compile " + (dir / "model.onnx").string() + " -o " + (s / "conv.weft") + " --quiet");
    INFO(c.err);
    REQUIRE(c.status == 0);
    Result r = run_weftc(s, "run " + (s / "conv.weft") + " --inputs " + (s / "in.npz") + " --output " + (s / "out.npz"));
    INFO(r.err);
    REQUIRE(r.status == 0);
    weftc::NamedBuffers out = weftc::load_npz(s / "out.npz");
    REQUIRE(out.size() == 1);
    check_close(out[0].second, want);
}

TEST_CASE("weftc --help for every command") {
    Scratch s("help");
    for (const char* cmd : {"compile", "run", "info", "bench"}) {
        Result r = run_weftc(s, std::string(cmd) + " --help");
        CHECK(r.status == 0);
        CHECK_MESSAGE(r.out.find(std::string("usage: weftc ") + cmd) != std::string::npos, cmd);
    }
    Result top = run_weftc(s, "--help");
    CHECK(top.status == 0);
    CHECK(top.out.find("commands:") != std::string::npos);
    Result none = run_weftc(s, "");
    CHECK(none.status == 2);
}

TEST_CASE("weftc bad input is a one-line error and a non-zero exit") {
    Scratch s("errors");
    write_model(small_model(), s / "model.onnx");
    auto one_line_error = [&](const std::string& args, int status, const std::string& says) {
        check_one_line_error(run_weftc(s, args), args, status, says);
    };
    one_line_error("compile " + (s / "missing.onnx") + " -o " + (s / "x.weft"), 1, "no such file");
    one_line_error("run " + (s / "missing.weft"), 1, "no such file");
    one_line_error("compile " + (s / "model.onnx") + " --input-shape image:1xAx6x6", 2, "bad --input-shape");
    one_line_error("compile " + (s / "model.onnx") + " --input-shape image", 2, "bad --input-shape");
    one_line_error("compile " + (s / "model.onnx") + " --input-shape image:1x2x6", 1, "rank");
    one_line_error("compile " + (s / "model.onnx") + " --dim batch", 2, "bad --dim");
    one_line_error("tune " + (s / "model.onnx") + " --tracker 127.0.0.1:1", 2, "--tracker and --key go together");
#ifdef WEFTC_HAVE_RPC
    // A tracker nobody listens on: the first measurement says so.
    one_line_error("tune " + (s / "model.onnx") + " --tracker 127.0.0.1:1 --key k --trials 2 -o " + (s / "r.jsonl"), 1,
                   "127.0.0.1:1");
#else
    one_line_error("tune " + (s / "model.onnx") + " --tracker 127.0.0.1:1 --key k", 2, "built with gRPC");
#endif
    one_line_error("compile " + (s / "model.onnx") + " --frobnicate", 2, "unknown option");
    one_line_error("run " + (s / "model.onnx") + " --repeat zero", 2, "--repeat");
    one_line_error("transmogrify x", 2, "unknown command");

    // An unsupported operator, named up front.
    onnx_test::Model unique;
    unique.input("x", {2, 3});
    unique.node("Unique", {"x"}, {"y"});
    unique.output("y");
    write_model(unique, s / "unique.onnx");
    one_line_error("compile " + (s / "unique.onnx") + " -o " + (s / "unique.weft"), 1, "Unique");
    Result info = run_weftc(s, "info " + (s / "unique.onnx"));
    CHECK(info.status == 0);
    CHECK(info.out.find("UNSUPPORTED operators (weft cannot compile this model): Unique") != std::string::npos);

    // Not a model, a truncated artifact, a bit-flipped artifact, inputs that do not fit.
    { std::ofstream(s / "junk.onnx") << "this is not protobuf"; }
    one_line_error("compile " + (s / "junk.onnx") + " -o " + (s / "junk.weft"), 1, "");
    REQUIRE(run_weftc(s, "compile " + (s / "model.onnx") + " -o " + (s / "m.weft") + " --quiet").status == 0);
    std::string art = slurp(s / "m.weft");
    { std::ofstream(s / "cut.weft", std::ios::binary) << art.substr(0, art.size() / 2); }
    one_line_error("run " + (s / "cut.weft"), 1, "truncated");
    std::string flipped = art;
    flipped[art.size() / 3] = char(flipped[art.size() / 3] ^ 1);
    { std::ofstream(s / "flip.weft", std::ios::binary) << flipped; }
    one_line_error("run " + (s / "flip.weft"), 1, "checksum");
    one_line_error("run " + (s / "m.weft") + " --input-shape image:1x2x6x6", 2, "compiled artifact");
    weftc::save_npz(s / "wrong.npz", {{"image", Buffer<float>::random({1, 2, 5, 5}, -1.f, 1.f, 1)},
                                      {"shift", Buffer<float>::random({1, 4}, -1.f, 1.f, 1)}});
    one_line_error("run " + (s / "m.weft") + " --inputs " + (s / "wrong.npz"), 1, "input 'image'");
    weftc::save_npz(s / "partial.npz", {{"image", Buffer<float>::random({1, 2, 6, 6}, -1.f, 1.f, 1)}});
    one_line_error("run " + (s / "m.weft") + " --inputs " + (s / "partial.npz"), 1, "no array named 'shift'");
    { std::ofstream(s / "bad.npz") << "PK not really"; }
    one_line_error("run " + (s / "m.weft") + " --inputs " + (s / "bad.npz"), 1, "bad.npz");
}

TEST_CASE("weftc refuses a device or a file over the size limit at once, in one line") {
    Scratch s("limits");
    write_model(small_model(), s / "model.onnx");
    REQUIRE(run_weftc(s, "compile " + (s / "model.onnx") + " -o " + (s / "m.weft") + " --quiet").status == 0);
    // Each must fail within seconds: reading /dev/zero to its end would never finish (the
    // timeout turns a hang into status 124, a failure here rather than a stuck suite).
    auto refused_at_once = [&](const std::string& args, const std::string& says) {
        auto start = std::chrono::steady_clock::now();
        Result r = run_weftc(s, args, 60);
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        check_one_line_error(r, args, 1, says);
        CHECK_MESSAGE(seconds < 5, args, " took ", seconds, " s");
    };
    refused_at_once("run /dev/zero", "'/dev/zero': it is a character device, not a regular file");
    refused_at_once("compile /dev/zero -o " + (s / "zero.weft"), "'/dev/zero': it is a character device");
    refused_at_once("info /dev/zero", "'/dev/zero': it is a character device");
    refused_at_once("run " + (s / "m.weft") + " --inputs /dev/zero", "'/dev/zero': it is a character device");
    refused_at_once("run " + (s / "model.onnx") + " --max-file-size 100",
                    "is larger than the limit of 100 bytes (--max-file-size)");
    refused_at_once("run " + (s / "m.weft") + " --max-file-size 1K", "is larger than the limit of 1024 bytes (--max-file-size)");
    refused_at_once("info " + (s / "m.weft") + " --max-file-size 1K", "limit of 1024 bytes");
    check_one_line_error(run_weftc(s, "run " + (s / "m.weft") + " --max-file-size lots"), "--max-file-size lots", 2,
                         "bad --max-file-size 'lots'");
    Result big_enough = run_weftc(s, "run " + (s / "m.weft") + " --max-file-size 1G --quiet");
    CHECK_MESSAGE(big_enough.status == 0, big_enough.err);
}

TEST_CASE("weftc: object code that fails to link is one error line, with LLVM's reason in it") {
    Scratch s("link");
    write_model(small_model(), s / "model.onnx");
    REQUIRE(run_weftc(s, "compile " + (s / "model.onnx") + " -o " + (s / "m.weft") + " --quiet").status == 0);
    std::string art = slurp(s / "m.weft");
    // Every kernel's object imports the runtime's argument check: renamed, the import resolves
    // nowhere and linking fails (in ORC, which reports why to its session, by default on
    // stderr). Each object's hash (beside its kernel's signature) is made to fit the edit.
    const std::string import = "weft_runtime_check_arguments", unknown = "weft_runtime_check_argumentX";
    graph::Module m = graph::load_module(s / "m.weft");
    std::set<const KernelModule*> edited;
    for (const Kernel& k : m.compiled_kernels()) {
        if (!edited.insert(k.module().get()).second) continue;
        const std::string object = k.module()->object_code().bytes;
        std::string renamed = object;
        while (artifact_edit::replace_first(renamed, import, unknown)) {
        }
        REQUIRE(renamed != object);
        REQUIRE(artifact_edit::replace_first(art, object, renamed));
        auto as_bytes = [](uint64_t h) { return std::string(reinterpret_cast<const char*>(&h), 8); };
        artifact_edit::replace_first(art, as_bytes(weft::detail::fnv1a64(object)), as_bytes(weft::detail::fnv1a64(renamed)));
    }
    artifact_edit::fix_checksum(art);
    { std::ofstream(s / "unlinkable.weft", std::ios::binary) << art; }
    Result r = run_weftc(s, "run " + (s / "unlinkable.weft"));
    check_one_line_error(r, "run unlinkable.weft", 1, "could not be linked");
    CHECK_MESSAGE(r.err.find(unknown) != std::string::npos, r.err);  // why, in weft's message
}

TEST_CASE("weftc compile --target cuda writes every kernel's CUDA C and PTX without a GPU") {
    Scratch s("cuda");
    write_model(small_model(), s / "model.onnx");
    Result c = run_weftc(s, "compile --target cuda " + (s / "model.onnx") + " -o " + (s / "kernels") + " --quiet");
    INFO(c.err);
    if (c.status != 0 && c.err.find("without CUDA support") != std::string::npos) {
        MESSAGE("skipped: weft was built without CUDA support (WEFT_CUDA=OFF)");
        return;
    }
    REQUIRE(c.status == 0);
    CHECK(c.out.find("CUDA kernels") != std::string::npos);
    CHECK(c.out.find("sm_90") != std::string::npos);
    int cu = 0, ptx = 0;
    for (const auto& e : fs::directory_iterator(s.dir / "kernels")) {
        std::string text = slurp(e.path().string());
        if (e.path().extension() == ".cu") cu += text.find("__global__") != std::string::npos;
        if (e.path().extension() == ".ptx") ptx += text.find(".entry") != std::string::npos;
    }
    // conv + bias + relu, flatten, matmul + bias + add: each fused group one kernel.
    CHECK(cu >= 2);
    CHECK(cu == ptx);
}

// (A case of its own: one that prints "skipped: " counts as skipped whatever it checked.)
TEST_CASE("weftc run --target cuda matches the CPU run on a GPU and says when there is none") {
    Scratch s("cuda_run");
    write_model(small_model(), s / "model.onnx");
    Result cpu = run_weftc(s, "run " + (s / "model.onnx") + " --seed 5 --output " + (s / "cpu.npz"));
    REQUIRE(cpu.status == 0);
    Result r = run_weftc(s, "run --target cuda " + (s / "model.onnx") + " --seed 5 --output " + (s / "gpu.npz"));
    if (weft::cuda::device_count() == 0) {
        CHECK(r.status != 0);
        CHECK(r.err.find("no CUDA device") != std::string::npos);
        MESSAGE("skipped: no CUDA device: weftc run --target cuda was not run on a GPU");
        return;
    }
    INFO(r.err);
    REQUIRE(r.status == 0);
    check_close(weftc::load_npz(s / "gpu.npz")[0].second, weftc::load_npz(s / "cpu.npz")[0].second);
}

TEST_CASE("weftc --target takes cpu or cuda and only for .onnx models") {
    Scratch s("target");
    write_model(small_model(), s / "model.onnx");
    Result bad = run_weftc(s, "run --target tpu " + (s / "model.onnx"));
    CHECK(bad.status == 2);
    CHECK(bad.err.find("bad --target 'tpu' (expected cpu or cuda)") != std::string::npos);
    REQUIRE(run_weftc(s, "compile " + (s / "model.onnx") + " -o " + (s / "m.weft") + " --quiet").status == 0);
    Result artifact = run_weftc(s, "run --target cuda " + (s / "m.weft"));
    CHECK(artifact.status == 2);
    CHECK(artifact.err.find("--records and --no-pretuned apply to .onnx models") != std::string::npos);
}

// --target cuda: candidates compiled and measured in child processes on the device. Without
// one, a one-line error before anything is measured; on the mock driver (whose kernels do
// nothing: every candidate's output is the same), records for the CUDA target, which
// compile --target cuda takes.
TEST_CASE("weftc tune --target cuda measures on the device and says when there is none") {
    Scratch s("tune_cuda");
    write_model(small_model(), s / "model.onnx");
    const std::string tune = "tune " + (s / "model.onnx") + " --target cuda --trials 3 --repeat 1 -o " + (s / "r.jsonl");
    check_one_line_error(run_weftc(s, tune, 0, "WEFT_LIBCUDA=/nonexistent/libcuda.so.1"), "tune --target cuda",
                         1, "no CUDA device");
#ifdef WEFT_MOCK_LIBCUDA
    Result t = run_weftc(s, tune, 0, "WEFT_LIBCUDA=" WEFT_MOCK_LIBCUDA);
    REQUIRE_MESSAGE(t.status == 0, t.err);
    autotune::Records records = autotune::Records::load(s / "r.jsonl");
    REQUIRE(records.size() >= 3);
    std::set<std::string> seen;
    for (const auto& r : records.all()) {
        CAPTURE(r.error);
        CHECK(r.target.rfind("cuda", 0) == 0);
        if (seen.insert(r.workload).second) CHECK(r.ok());           // a task's default
        else if (!r.ok()) CHECK(r.error.find("build: ") == 0);  // a point refused when built
    }
    Result c = run_weftc(s, "compile " + (s / "model.onnx") + " --target cuda --records " + (s / "r.jsonl") + " -o " +
                                (s / "m.weft") + " --quiet",
                         0, "WEFT_LIBCUDA=" WEFT_MOCK_LIBCUDA);
    CHECK_MESSAGE(c.status == 0, c.err);
#else
    MESSAGE("skipped: the mock part needs NVRTC (a build with WEFT_CUDA)");
#endif
}

TEST_CASE("weftc tune writes records that compile, run and info apply") {
    Scratch s("tune");
    write_model(small_model(), s / "model.onnx");
    Result t = run_weftc(s, "tune " + (s / "model.onnx") + " -o " + (s / "r.jsonl") +
                                " --trials 3 --repeat 1 --threads 1 --seed 5");
    REQUIRE_MESSAGE(t.status == 0, t.err);
    CHECK(t.out.find("candidates measured (0 failed)") != std::string::npos);
    CHECK(t.err.find("task 1/") != std::string::npos);  // a progress line per trial
    autotune::Records records = autotune::Records::load(s / "r.jsonl");
    REQUIRE(records.size() >= 3);
    for (const auto& r : records.all()) {
        CHECK(r.ok());
        CHECK(r.target.find("-threads=1") != std::string::npos);
    }
    // info shows which kernels the records reach; at the tuned thread count all of them.
    Result i = run_weftc(s, "info " + (s / "model.onnx") + " --records " + (s / "r.jsonl") + " --threads 1");
    REQUIRE_MESSAGE(i.status == 0, i.err);
    CHECK(i.out.find("[tuned]") != std::string::npos);
    CHECK(i.out.find("[default: no record]") == std::string::npos);
    // At another thread count the records do not apply.
    Result i2 = run_weftc(s, "info " + (s / "model.onnx") + " --records " + (s / "r.jsonl") + " --threads 2");
    REQUIRE_MESSAGE(i2.status == 0, i2.err);
    CHECK(i2.out.find("[tuned]") == std::string::npos);
    // Compiled with the records, the model computes what it computes without them.
    Result c = run_weftc(s, "compile " + (s / "model.onnx") + " -o " + (s / "tuned.weft") + " --records " +
                                (s / "r.jsonl") + " --threads 1 --quiet");
    REQUIRE_MESSAGE(c.status == 0, c.err);
    Result a = run_weftc(s, "run " + (s / "tuned.weft") + " --seed 3 --output " + (s / "a.npz"));
    Result b = run_weftc(s, "run " + (s / "model.onnx") + " --seed 3 --quiet --output " + (s / "b.npz"));
    REQUIRE_MESSAGE(a.status == 0, a.err);
    REQUIRE_MESSAGE(b.status == 0, b.err);
    check_close(weftc::load_npz(s / "a.npz")[0].second, weftc::load_npz(s / "b.npz")[0].second);
    // --records applies to .onnx models only; bad options are one-line errors.
    check_one_line_error(run_weftc(s, "run " + (s / "tuned.weft") + " --records " + (s / "r.jsonl")),
                         "run artifact --records", 2, "apply to .onnx models");
    check_one_line_error(run_weftc(s, "tune " + (s / "model.onnx") + " --tuner xgb"), "tune --tuner", 2,
                         "bad --tuner 'xgb'");
    check_one_line_error(run_weftc(s, "compile " + (s / "model.onnx") + " --records " + (s / "missing.jsonl")),
                         "compile missing records", 1, "missing.jsonl");
}

TEST_CASE("weftc compile --symbol keeps a batch symbolic; run takes inputs of any batch up to it") {
    Scratch s("symbolic");
    onnx_test::Model model(13);
    model.input("x", {-1, 6}, ::onnx::TensorProto::FLOAT, "batch");
    std::vector<float> fc(4 * 6);
    for (size_t i = 0; i < fc.size(); ++i) fc[i] = float(std::sin(double(i) * 0.9)) * 0.4f;
    model.initializer("fc", {4, 6}, fc);
    auto& gemm = model.node("Gemm", {"x", "fc"}, {"logits"});
    onnx_test::attr(gemm, "transB", ::onnx::AttributeProto::INT).set_i(1);
    model.node("Relu", {"logits"}, {"y"});
    model.output("y");
    write_model(model, s / "model.onnx");

    Result c = run_weftc(s, "compile " + (s / "model.onnx") + " -o " + (s / "model.weft") + " --symbol batch=16 --quiet");
    INFO(c.err);
    REQUIRE(c.status == 0);
    Result info = run_weftc(s, "info " + (s / "model.weft"));
    REQUIRE(info.status == 0);
    CHECK(info.out.find("batch in [1, 16]: x dimension 0") != std::string::npos);
    for (int64_t batch : {3, 16}) {
        CAPTURE(batch);
        BufferRef x = Buffer<float>::random({batch, 6}, -1.f, 1.f, uint64_t(batch));
        weftc::save_npz(s / "in.npz", {{"x", x}});
        Result r = run_weftc(s, "run " + (s / "model.weft") + " --inputs " + (s / "in.npz") + " --output " + (s / "out.npy"));
        INFO(r.err);
        REQUIRE(r.status == 0);
        graph::Module m = graph::build(model.load({.dim_values = {{"batch", batch}}}));
        m.set_input("x", x);
        m.run();
        BufferRef got = weftc::load_npy(s / "out.npy");
        CHECK(got.shape() == std::vector<int64_t>{batch, 4});
        check_close(got, m.get_output("y"));
    }
    weftc::save_npz(s / "big.npz", {{"x", Buffer<float>::random({17, 6}, -1.f, 1.f, 1)}});
    check_one_line_error(run_weftc(s, "run " + (s / "model.weft") + " --inputs " + (s / "big.npz")),
                         "run with a batch over the bound", 1, "outside its bounds [1, 16]");
    check_one_line_error(run_weftc(s, "compile " + (s / "model.onnx") + " --symbol batch"), "compile --symbol batch", 2,
                         "bad --symbol");
}

TEST_CASE("weftc info lists a module's run-time checks apart from its outputs; run stops on one") {
    Scratch s("checks");
    Buffer<float> ten({1});
    ten(0) = 10.f;
    graph::Graph g;
    graph::Value x = g.input("x", {3});
    g.output(g.relu(x), "y");
    g.check_at_run(g.add_node("greater", {g.max(x, {0}, true), g.constant("ten", ten)}), "x is over ten");
    graph::save(graph::build(g), s / "checked.weft");
    Result info = run_weftc(s, "info " + (s / "checked.weft"));
    REQUIRE(info.status == 0);
    const size_t checks = info.out.find("run-time checks");
    CHECK(checks != std::string::npos);
    CHECK(info.out.find("x is over ten", checks) != std::string::npos);
    CHECK(info.out.find("weft.check") == std::string::npos);  // not listed as an output
    Buffer<float> big = Buffer<float>::random({3}, 11.f, 12.f, 1);
    weftc::save_npz(s / "big.npz", {{"x", big}});
    Result r = run_weftc(s, "run " + (s / "checked.weft") + " --inputs " + (s / "big.npz"));
    CHECK(r.status != 0);
    CHECK(r.err.find("x is over ten") != std::string::npos);
}

TEST_CASE("weftc info marks the kernels that run only when their branch is taken") {
    Scratch s("branches");
    graph::Graph g;
    graph::Value x = g.input("x", {4, 8});
    graph::Value c = g.input("use_a", {1}, DataType::bool_());
    graph::Value a = g.dense(x, g.constant("wa", Buffer<float>::random({8, 8}, -1, 1, 1)), "branch_a");
    graph::Value b = g.dense(x, g.constant("wb", Buffer<float>::random({8, 8}, -1, 1, 2)), "branch_b");
    g.output(g.where(c, a, b), "y");
    graph::save(graph::build(g), s / "branches.weft");
    Result info = run_weftc(s, "info " + (s / "branches.weft"));
    REQUIRE(info.status == 0);
    CHECK(info.out.find("branch_a  [runs when use_a is true]") != std::string::npos);
    CHECK(info.out.find("branch_b  [runs when use_a is false]") != std::string::npos);
}

TEST_CASE("weftc --precision int8 quantizes linear layers with the --calibrate inputs") {
    Scratch s("int8");
    onnx_test::Model m(13);
    m.input("x", {4, 32});
    std::vector<float> w(32 * 48);
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(std::sin(double(i) * 0.37)) * 0.3f;
    m.initializer("w", {32, 48}, w);
    m.node("MatMul", {"x", "w"}, {"y"});
    m.output("y");
    write_model(m, s / "model.onnx");
    for (int k = 0; k < 3; ++k)
        weftc::save_npz(s / ("cal" + std::to_string(k) + ".npz"), {{"x", Buffer<float>::random({4, 32}, -1.f, 1.f, 10 + uint64_t(k))}});
    weftc::save_npz(s / "in.npz", {{"x", Buffer<float>::random({4, 32}, -1.f, 1.f, 3)}});
    const std::string calibrate = " --calibrate " + (s / "cal0.npz") + " --calibrate " + (s / "cal1.npz") +
                                  " --calibrate " + (s / "cal2.npz");
    const std::string model = s / "model.onnx", in = " --inputs " + (s / "in.npz");
    Result f = run_weftc(s, "run " + model + in + " --quiet --output " + (s / "f.npz"));
    Result q = run_weftc(s, "run " + model + in + " --quiet --precision int8" + calibrate + " --output " + (s / "q.npz"));
    INFO(q.err);
    REQUIRE(f.status == 0);
    REQUIRE(q.status == 0);
    // Within a percent of float32, and not float32 itself.
    const BufferRef fy = weftc::load_npz(s / "f.npz").at(0).second, qy = weftc::load_npz(s / "q.npz").at(0).second;
    float err = 0, scale = 0;
    for (int64_t i = 0; i < fy.size(); ++i) {
        err = std::max(err, std::abs(static_cast<const float*>(qy.data())[i] - static_cast<const float*>(fy.data())[i]));
        scale = std::max(scale, std::abs(static_cast<const float*>(fy.data())[i]));
    }
    CHECK(err > 0);
    CHECK(err / scale < 0.02f);
    // An artifact compiled so runs the same.
    Result c = run_weftc(s, "compile " + model + " -o " + (s / "q.weft") + " --quiet --precision int8" + calibrate);
    REQUIRE(c.status == 0);
    REQUIRE(run_weftc(s, "run " + (s / "q.weft") + in + " --quiet --output " + (s / "a.npz")).status == 0);
    check_close(weftc::load_npz(s / "a.npz").at(0).second, qy);
    // Without calibration inputs, or calibration without int8: one-line usage errors.
    check_one_line_error(run_weftc(s, "run " + model + " --precision int8"), "--precision int8", 2,
                         "--precision int8 needs --calibrate");
    check_one_line_error(run_weftc(s, "run " + model + calibrate), "--calibrate", 2, "--calibrate applies to --precision int8");
    // --calibrate-percentile: a range of the bulk of the values; a number from 50 to 100.
    Result p = run_weftc(s, "run " + model + in + " --quiet --precision int8" + calibrate +
                                " --calibrate-percentile 99 --output " + (s / "p.npz"));
    INFO(p.err);
    REQUIRE(p.status == 0);
    const BufferRef py = weftc::load_npz(s / "p.npz").at(0).second;
    bool differs = false;
    for (int64_t i = 0; i < py.size(); ++i)
        differs |= static_cast<const float*>(py.data())[i] != static_cast<const float*>(qy.data())[i];
    CHECK(differs);  // (other scales than min-max's)
    check_one_line_error(run_weftc(s, "run " + model + " --precision int8" + calibrate + " --calibrate-percentile 101"),
                         "--calibrate-percentile", 2, "expected a number from 50 to 100");
}
