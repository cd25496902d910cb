// onnx::compile with a cache directory: the first compile builds and keeps the module, the
// second loads it without compiling anything and computes the same outputs; other options
// make another module; a damaged or foreign cache file is built again and replaced; a
// module that cannot be saved (kernels compiled per size) is built each time.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <weft/codegen/llvm/codegen_llvm.hpp>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

// x [1, 3, H, W] -> Conv 3x3 (8 channels, bias) -> Relu -> GlobalAveragePool -> y. With
// `same_stride_2`, the Conv has stride 2 and auto_pad SAME_UPPER: its padding changes with the
// height's parity, so its kernels are compiled per size of a symbolic height.
Model small_cnn(int64_t height, bool same_stride_2 = false) {
    Model m(13);
    m.input("x", {1, 3, height < 0 ? -1 : height, 16}, pb::TensorProto::FLOAT, "height");
    std::vector<float> w(8 * 27), b(8);
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i * 7 % 13) - 6) / 13.f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(i) / 8.f;
    m.initializer("w", {8, 3, 3, 3}, w);
    m.initializer("b", {8}, b);
    pb::NodeProto& conv = m.node("Conv", {"x", "w", "b"}, {"c"});
    if (same_stride_2) {
        set_string(conv, "auto_pad", "SAME_UPPER");
        set_ints(conv, "strides", {2, 2});
    } else {
        set_ints(conv, "pads", {1, 1, 1, 1});
    }
    m.node("Relu", {"c"}, {"r"});
    m.node("GlobalAveragePool", {"r"}, {"y"});
    m.output("y");
    return m;
}

struct TempDir {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("weft_model_cache_" + std::to_string(::getpid()));
    TempDir() {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() { std::filesystem::remove_all(path); }
    std::string file(const std::string& name) const { return (path / name).string(); }
    std::vector<std::filesystem::path> cached() const {
        std::vector<std::filesystem::path> r;
        for (auto& e : std::filesystem::directory_iterator(path / "cache")) r.push_back(e.path());
        return r;
    }
};

std::vector<float> run_once(graph::Module& m) {
    Buffer<float> x(m.input("x").shape());
    for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = float(i % 17) / 17.f - 0.4f;
    m.set_input("x", x);
    m.run();
    const BufferRef& y = m.get_output("y");
    const float* p = static_cast<const float*>(y.data());
    return {p, p + y.size()};
}

}  // namespace

TEST_CASE("onnx::compile: a second compile loads the cached module and compiles nothing") {
    TempDir dir;
    const std::string model = dir.file("cnn.onnx");
    { std::ofstream(model, std::ios::binary) << small_cnn(16).bytes(); }
    weft::onnx::CompileOptions o{.cache_dir = dir.file("cache")};
    graph::Module first = weft::onnx::compile(model, o);
    const std::vector<float> want = run_once(first);
    REQUIRE(dir.cached().size() == 1);

    const uint64_t compiles = codegen::compile_llvm_count();
    graph::Module second = weft::onnx::compile(model, o);
    CHECK(codegen::compile_llvm_count() == compiles);  // loaded: no kernel compiled
    CHECK(run_once(second) == want);
    // Without a cache the same model builds to the same outputs.
    graph::Module plain = graph::build(weft::onnx::load(model));
    CHECK(run_once(plain) == want);

    // Other options, another module beside the first.
    o.build.fuse = false;
    graph::Module unfused = weft::onnx::compile(model, o);
    CHECK(dir.cached().size() == 2);
    CHECK(unfused.kernels().size() > first.kernels().size());
    o.build.fuse = true;

    // Another model in the same file: its bytes differ, so it is built, not loaded.
    { std::ofstream(model, std::ios::binary | std::ios::trunc) << small_cnn(20).bytes(); }
    graph::Module taller = weft::onnx::compile(model, o);
    CHECK(taller.input("x").shape() == std::vector<int64_t>{1, 3, 20, 16});
    CHECK(dir.cached().size() == 3);
}

TEST_CASE("onnx::compile: a damaged or foreign cache file is built again and replaced") {
    TempDir dir;
    const std::string model = dir.file("cnn.onnx");
    { std::ofstream(model, std::ios::binary) << small_cnn(16).bytes(); }
    weft::onnx::CompileOptions o{.cache_dir = dir.file("cache")};
    const std::vector<float> want = [&] {
        graph::Module m = weft::onnx::compile(model, o);
        return run_once(m);
    }();
    const std::filesystem::path cached = dir.cached().at(0);
    std::string bytes;
    {
        std::ifstream in(cached, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    // Damaged: a flipped byte fails the checksum.
    std::string damaged = bytes;
    damaged[damaged.size() / 2] ^= 0x40;
    { std::ofstream(cached, std::ios::binary | std::ios::trunc) << damaged; }
    graph::Module rebuilt = weft::onnx::compile(model, o);
    CHECK(run_once(rebuilt) == want);
    {
        std::ifstream in(cached, std::ios::binary);
        CHECK(std::string(std::istreambuf_iterator<char>(in), {}) != damaged);  // replaced
    }
    // Foreign: a valid artifact of another model under this model's name (its key differs).
    { std::ofstream(model, std::ios::binary | std::ios::trunc) << small_cnn(20).bytes(); }
    graph::Module other = weft::onnx::compile(model, o);
    std::filesystem::path other_file;
    for (auto& p : dir.cached())
        if (p != cached) other_file = p;
    REQUIRE(!other_file.empty());
    { std::ofstream(model, std::ios::binary | std::ios::trunc) << small_cnn(16).bytes(); }
    std::filesystem::copy_file(other_file, cached, std::filesystem::copy_options::overwrite_existing);
    graph::Module again = weft::onnx::compile(model, o);
    CHECK(again.input("x").shape() == std::vector<int64_t>{1, 3, 16, 16});
    CHECK(run_once(again) == want);
}

TEST_CASE("onnx::compile: a module with kernels compiled per size is built each time, not cached") {
    TempDir dir;
    const std::string model = dir.file("cnn.onnx");
    { std::ofstream(model, std::ios::binary) << small_cnn(-1, true).bytes(); }
    weft::onnx::CompileOptions o{.cache_dir = dir.file("cache")};
    o.load.symbols = {{.name = "height", .max = 24, .min = 4}};
    graph::Module m = weft::onnx::compile(model, o);
    CHECK(dir.cached().empty());
    Buffer<float> x({1, 3, 9, 16});
    for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = float(i % 5) / 5.f;
    m.set_input("x", x);
    m.run();
    graph::Module fixed = graph::build(weft::onnx::load(model, {.dim_values = {{"height", 9}}}));
    fixed.set_input("x", x);
    fixed.run();
    CHECK(std::memcmp(m.get_output("y").data(), fixed.get_output("y").data(), 8 * sizeof(float)) == 0);
    // A missing model is the importer's error, cache or not.
    CHECK_THROWS_WITH_AS(weft::onnx::compile(dir.file("missing.onnx"), o), doctest::Contains("no such file"), Error);
}

TEST_CASE("onnx::compile: a bf16 build is cached apart from the float32 one and loads back the same") {
    // x [4, 32] -> MatMul [32, 48] -> Add bias -> y: one linear layer that converts.
    Model mlp(13);
    mlp.input("x", {4, 32});
    std::vector<float> w(32 * 48), b(48);
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i * 5 % 11) - 5) / 7.f + 0.001f * float(i % 3);
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(i) / 16.f;
    mlp.initializer("w", {32, 48}, w);
    mlp.initializer("b", {48}, b);
    mlp.node("MatMul", {"x", "w"}, {"t"});
    mlp.node("Add", {"t", "b"}, {"y"});
    mlp.output("y");
    TempDir dir;
    const std::string model = dir.file("mlp.onnx");
    { std::ofstream(model, std::ios::binary) << mlp.bytes(); }
    weft::onnx::CompileOptions o{.cache_dir = dir.file("cache")};
    o.build.precision = graph::Precision::bf16;
    graph::Module bf16 = weft::onnx::compile(model, o);
    auto converted = [](const graph::Module& m) {
        for (const graph::KernelInfo& k : m.kernels())
            if (k.name.find("matmul_bf16") != std::string::npos) return true;
        return false;
    };
    CHECK(converted(bf16));
    const std::vector<float> want = run_once(bf16);
    o.build.precision = graph::Precision::f32;
    graph::Module f32 = weft::onnx::compile(model, o);
    CHECK(dir.cached().size() == 2);  // not the bf16 module
    CHECK_FALSE(converted(f32));
    const std::vector<float> exact = run_once(f32);
    CHECK(exact != want);  // (the bf16 module rounded its inputs)
    o.build.precision = graph::Precision::bf16;
    const uint64_t compiles = codegen::compile_llvm_count();
    graph::Module again = weft::onnx::compile(model, o);
    CHECK(codegen::compile_llvm_count() == compiles);  // loaded, its bfloat16 weights with it
    CHECK(converted(again));
    CHECK(run_once(again) == want);
}
