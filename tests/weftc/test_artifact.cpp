// graph/artifact.hpp: a compiled module saved and loaded back without compiling; corrupt
// artifacts refused, also those whose checksum was recomputed after the damage (a plan whose
// tensors overlap, object code swapped between kernels or a kernel given another's object).
#include <doctest/doctest.h>

#include <unistd.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <weft/codegen/llvm/codegen_llvm.hpp>
#include <weft/graph/artifact.hpp>
#include <weft/weft.hpp>

#include "artifact_edit.hpp"
#include "graph/graph_check.hpp"

using namespace weft;
using artifact_edit::fix_checksum;

namespace {

// A small CNN: conv + bias + relu, max pool, a residual conv block, global pool, dense,
// softmax; plus a second input and output so that names and order matter.
graph::Graph small_net() {
    graph::Graph g;
    auto w = [&](const char* name, std::vector<int64_t> shape, uint64_t seed) {
        return g.constant(name, Buffer<float>::random(shape, -0.3f, 0.3f, seed));
    };
    graph::Value x = g.input("x", {1, 3, 16, 16});
    graph::Value s = g.input("scale", {1, 10});
    graph::Value c1 = g.relu(g.conv2d(x, w("w1", {16, 3, 3, 3}, 1), w("b1", {16}, 2), {.pad = 1}), "c1");
    graph::Value p = g.max_pool2d(c1, {.kernel = 2, .stride = 2}, "pool");
    graph::Value c2 = g.relu(g.conv2d(p, w("w2", {16, 16, 3, 3}, 3), w("b2", {16}, 4), {.pad = 1}));
    graph::Value c3 = g.relu(g.add(g.conv2d(c2, w("w3", {16, 16, 3, 3}, 5), {.pad = 1}), p), "res");
    graph::Value f = g.flatten(g.global_avg_pool2d(c3));
    graph::Value d = g.dense(f, w("wd", {10, 16}, 6), w("bd", {10}, 7), "fc");
    g.output(g.softmax(g.mul(d, s)), "probs");
    g.output(c3, "features");
    return g;
}

void feed(graph::Module& m) {
    m.set_input("x", Buffer<float>::random({1, 3, 16, 16}, -1.f, 1.f, 11));
    m.set_input("scale", Buffer<float>::random({1, 10}, 0.5f, 2.f, 12));
}

bool same_bytes(const BufferRef& a, const BufferRef& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() &&
           std::memcmp(a.data(), b.data(), size_t(a.size_bytes())) == 0;
}

// Where the artifact stores kernel k's object code: its symbol's length, the symbol, the
// object's length and the object (found by their bytes, which are unique to the kernel).
std::pair<size_t, size_t> object_record(const std::string& a, const graph::Module& m, size_t k) {
    ObjectCode o = m.compiled_kernels()[k].module()->object_code();
    std::string symbol(8, '\0');
    uint64_t length = o.symbol.size();
    std::memcpy(symbol.data(), &length, 8);
    symbol += o.symbol;
    size_t begin = a.find(symbol), object = a.find(o.bytes, begin);
    REQUIRE(begin != std::string::npos);
    REQUIRE(object == begin + symbol.size() + 8);
    return {begin, object + o.bytes.size()};
}

// The artifact with the object code of kernels first < second exchanged, the checksum fixed.
std::string swap_objects(const std::string& a, const graph::Module& m, size_t first, size_t second) {
    auto [b0, e0] = object_record(a, m, first);
    auto [b1, e1] = object_record(a, m, second);
    REQUIRE(e0 <= b1);
    std::string swapped = a.substr(0, b0) + a.substr(b1, e1 - b1) + a.substr(e0, b1 - e0) + a.substr(b0, e0 - b0) +
                          a.substr(e1);
    fix_checksum(swapped);
    return swapped;
}

// Where kernel k's record starts: its nodes (a count and the ids), its master, its fusion
// pattern (one byte) and its name.
size_t kernel_record_start(const std::string& a, const graph::Module& m, size_t k) {
    const graph::KernelInfo& info = m.kernels()[k];
    std::string nodes, name;
    auto put = [](std::string& s, auto v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); };
    put(nodes, uint32_t(info.nodes.size()));
    for (int id : info.nodes) put(nodes, int32_t(id));
    put(nodes, int32_t(info.master));
    put(name, uint64_t(info.name.size()));
    name += info.name;
    for (size_t at = a.find(nodes); at != std::string::npos; at = a.find(nodes, at + 1))
        if (a.compare(at + nodes.size() + 1, name.size(), name) == 0) return at;
    FAIL("no record of kernel ", k);
    return 0;
}

// The artifact with kernels 0 and 1 (each with an object of its own) saved in each other's
// place, the checksum fixed.
std::string swap_first_kernels(const std::string& a, const graph::Module& m) {
    size_t b0 = kernel_record_start(a, m, 0), b1 = kernel_record_start(a, m, 1);
    size_t e0 = object_record(a, m, 0).second, e1 = object_record(a, m, 1).second;
    REQUIRE(e0 == b1);
    std::string swapped = a.substr(0, b0) + a.substr(b1, e1 - b1) + a.substr(b0, e0 - b0) + a.substr(e1);
    fix_checksum(swapped);
    return swapped;
}

// The artifact with every planned tensor at offset 0, the checksum fixed. The plan ends the
// payload: a count, then a node id (4 bytes) and an offset (8 bytes) per planned tensor.
std::string plan_at_zero(const std::string& a, const graph::Module& m) {
    const size_t placed = graph::memory_placements(m).size();
    std::string zeroed = a;
    for (size_t i = 0; i < placed; ++i) std::memset(zeroed.data() + a.size() - 12 * (placed - i) + 4, 0, 8);
    fix_checksum(zeroed);
    return zeroed;
}

}  // namespace

TEST_CASE("artifact: a loaded module gives the in-memory module's outputs without compiling") {
    graph::Module m = graph::build(small_net());
    feed(m);
    m.run();
    std::string bytes = graph::save_to_memory(m, {{"source", "small_net"}, {"threads", "2"}});
    CHECK(bytes.rfind("WEFTMODL", 0) == 0);

    const uint64_t compiles = codegen::compile_llvm_count();
    const uint64_t hits = KernelCache::global().hits(), misses = KernelCache::global().misses();
    graph::ArtifactMetadata meta;
    graph::Module r = graph::load_module_from_memory(bytes, &meta);
    CHECK(codegen::compile_llvm_count() == compiles);  // no JIT compilation
    CHECK(KernelCache::global().hits() == hits);       // and no kernel cache involved
    CHECK(KernelCache::global().misses() == misses);
    CHECK(meta.at("source") == "small_net");
    CHECK(meta.at("threads") == "2");

    CHECK(r.input_names() == m.input_names());
    CHECK(r.output_names() == m.output_names());
    CHECK(r.graph().str() == m.graph().str());
    CHECK(r.memory_bytes() == m.memory_bytes());
    CHECK(r.memory_naive_bytes() == m.memory_naive_bytes());
    REQUIRE(r.kernels().size() == m.kernels().size());
    for (size_t k = 0; k < m.kernels().size(); ++k) {
        CHECK(r.kernels()[k].name == m.kernels()[k].name);
        CHECK(r.kernels()[k].nodes == m.kernels()[k].nodes);
    }
    auto pm = graph::memory_placements(m), pr = graph::memory_placements(r);
    REQUIRE(pm.size() == pr.size());
    for (size_t i = 0; i < pm.size(); ++i) CHECK((pm[i].node == pr[i].node && pm[i].offset == pr[i].offset));

    feed(r);
    r.run();
    for (int i = 0; i < m.num_outputs(); ++i) CHECK_MESSAGE(same_bytes(r.get_output(i), m.get_output(i)), m.output_names()[i]);

    // The loaded module saves to the same bytes, and outlives the module it came from.
    CHECK(graph::save_to_memory(r, {{"source", "small_net"}, {"threads", "2"}}) == bytes);
    std::vector<BufferRef> want;
    for (int i = 0; i < m.num_outputs(); ++i) {
        want.push_back(BufferRef::allocate(m.get_output(i).dtype(), m.get_output(i).shape()));
        std::memcpy(want.back().data(), m.get_output(i).data(), size_t(want.back().size_bytes()));
    }
    m = graph::Module();
    KernelCache::global().clear();
    r.set_input("x", Buffer<float>::random({1, 3, 16, 16}, -1.f, 1.f, 99));
    r.run();
    feed(r);
    r.run();
    for (int i = 0; i < r.num_outputs(); ++i) CHECK(same_bytes(r.get_output(i), want[size_t(i)]));
}

TEST_CASE("artifact: save and load_module through a file, unfused and NCHW too") {
    graph::BuildOptions o;
    o.fuse = false;
    o.convert_layout = false;
    int progress_calls = 0, last_count = 0;
    o.progress = [&](int index, int count, const std::string& name) {
        CHECK(index == progress_calls);
        CHECK(!name.empty());
        ++progress_calls;
        last_count = count;
    };
    graph::Module m = graph::build(small_net(), Target::host(), o);
    CHECK(progress_calls == int(m.kernels().size()));
    CHECK(last_count == int(m.kernels().size()));
    feed(m);
    m.run();
    std::string path = (std::filesystem::temp_directory_path() / ("weft_artifact_test_" + std::to_string(getpid()) + ".weft")).string();
    graph::save(m, path);
    CHECK(graph::is_artifact_file(path));
    graph::Module r = graph::load_module(path);
    std::filesystem::remove(path);
    feed(r);
    r.run();
    for (int i = 0; i < m.num_outputs(); ++i) CHECK(same_bytes(r.get_output(i), m.get_output(i)));
    CHECK_THROWS_WITH_AS(graph::load_module(path), doctest::Contains("cannot open"), Error);
    CHECK_FALSE(graph::is_artifact_file(path));
}

TEST_CASE("artifact: a loaded module views its file's constants and runs on after the file is replaced") {
    graph::Module m = graph::build(small_net());
    feed(m);
    m.run();
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("weft_artifact_map_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "net.weft").string();
    graph::save(m, path);
    graph::Module r = graph::load_module(path);
    // Saved again over it (a rename: the mapping keeps the old file), then removed.
    graph::Graph other = small_net();
    graph::save(graph::build(other, Target::host(), {.fuse = false}), path);
    std::filesystem::remove(path);
    feed(r);
    r.run();
    for (int i = 0; i < m.num_outputs(); ++i) CHECK(same_bytes(r.get_output(i), m.get_output(i)));
    // save leaves no temporary file behind.
    CHECK(std::filesystem::is_empty(dir));
    std::filesystem::remove_all(dir);
    // Every constant sits at a multiple of 64 bytes in the file (the loader views it in place).
    const std::string bytes = graph::save_to_memory(m);
    for (const graph::Node& n : m.graph().nodes()) {
        if (!n.is_constant()) continue;
        const size_t at = bytes.find(std::string_view(static_cast<const char*>(n.value.data()), size_t(n.value.size_bytes())));
        REQUIRE(at != std::string::npos);
        CHECK(at % 64 == 0);
    }
}

TEST_CASE("artifact: a wrong magic or version or a truncated or corrupt file is refused") {
    graph::Module m = graph::build(small_net());
    const std::string good = graph::save_to_memory(m);
    auto refused = [](const std::string& bytes, const char* why) {
        CHECK_THROWS_WITH_AS(graph::load_module_from_memory(bytes), doctest::Contains(why), Error);
    };
    refused("", "magic");
    refused("not an artifact at all, just text", "magic");
    std::string onnx_like = good;
    onnx_like[0] = 0x08;
    refused(onnx_like, "magic");
    std::string v1 = good;
    v1[8] = 1;  // the first format (another checksum)
    refused(v1, "format version 1");
    std::string v3 = good;
    v3[8] = 3;  // the third: no hash binds a kernel to its object code
    refused(v3, "format version 3");
    refused(good.substr(0, 20), "header is truncated");
    refused(good.substr(0, good.size() - 1), "truncated");
    refused(good + "x", "bytes follow");  // the size in the header does not match
    std::string flipped = good;
    flipped[good.size() / 2] = char(flipped[good.size() / 2] ^ 4);
    refused(flipped, "checksum");

    // Every truncation and many bit flips: an error, never a crash.
    std::mt19937 rng(5);
    for (size_t n = 0; n < good.size(); n += 1 + good.size() / 300) CHECK_THROWS_AS(graph::load_module_from_memory(good.substr(0, n)), Error);
    for (int i = 0; i < 300; ++i) {
        std::string f = good;
        size_t at = rng() % f.size();
        f[at] = char(f[at] ^ (1 << (rng() % 8)));
        CHECK_THROWS_AS(graph::load_module_from_memory(f), Error);
    }

    // The parser itself, past the checksum: truncated payloads with a fixed-up header, and
    // bit flips in the graph and signature part (before the first object code, which
    // holds the first ".weft<N>" symbol) -- each loads or throws weft::Error.
    for (size_t n = graph::kArtifactHeaderBytes; n < good.size(); n += 1 + good.size() / 200) {
        std::string t = good.substr(0, n);
        fix_checksum(t);
        CHECK_THROWS_AS(graph::load_module_from_memory(t), Error);
    }
    size_t objects = good.find(".weft");
    while (objects != std::string::npos && !(objects + 5 < good.size() && std::isdigit(uint8_t(good[objects + 5]))))
        objects = good.find(".weft", objects + 1);
    REQUIRE(objects != std::string::npos);
    int loaded = 0, refused_count = 0;
    for (int i = 0; i < 400; ++i) {
        std::string f = good;
        size_t at = graph::kArtifactHeaderBytes + rng() % (objects - graph::kArtifactHeaderBytes);
        f[at] = char(f[at] ^ (1 << (rng() % 8)));
        fix_checksum(f);
        try {
            graph::load_module_from_memory(f);
            ++loaded;  // a flip in constant data, say
        } catch (const Error&) {
            ++refused_count;
        }
    }
    CHECK(refused_count > 0);
    MESSAGE("bit flips past the checksum: ", loaded, " loaded, ", refused_count, " refused");
}

TEST_CASE("artifact: an artifact for CPU features this machine lacks is refused") {
    graph::Module m = graph::build(small_net());
    std::string bytes = graph::save_to_memory(m);
    // The target's feature string follows the cpu name: add one no CPU has.
    const std::string features = Target::host().features;
    size_t at = bytes.find(features);
    REQUIRE(at != std::string::npos);
    uint64_t len = 0;
    std::memcpy(&len, bytes.data() + at - 8, 8);
    REQUIRE(len == features.size());
    std::string extra = ",+weft-imaginary-feature";
    bytes.insert(at + features.size(), extra);
    len += extra.size();
    std::memcpy(bytes.data() + at - 8, &len, 8);
    fix_checksum(bytes);
    CHECK_THROWS_WITH_AS(graph::load_module_from_memory(bytes), doctest::Contains("weft-imaginary-feature"), Error);
}

TEST_CASE("artifact: kernels the cache shares are stored once and shared again on load") {
    // Without common-subexpression elimination, relu(x) twice compiles to the same program:
    // the kernel cache serves the second from the first.
    graph::Graph g;
    graph::Value x = g.input("x", {4, 33});
    g.output(g.relu(x, "a"), "a");
    g.output(g.relu(x, "b"), "b");
    graph::BuildOptions o;
    o.eliminate_common_subexpressions = false;
    graph::Module m = graph::build(g, Target::host(), o);
    REQUIRE(m.kernels().size() == 2);
    std::string bytes = graph::save_to_memory(m);
    size_t elf = 0;
    for (size_t at = bytes.find("\x7f" "ELF"); at != std::string::npos; at = bytes.find("\x7f" "ELF", at + 1)) ++elf;
    CHECK(elf == 1);
    graph::Module r = graph::load_module_from_memory(bytes);
    Buffer<float> in = Buffer<float>::random({4, 33}, -1.f, 1.f, 3);
    m.set_input("x", in);
    r.set_input("x", in);
    m.run();
    r.run();
    for (int i = 0; i < 2; ++i) CHECK(same_bytes(r.get_output(i), m.get_output(i)));
    CHECK(graph::save_to_memory(r) == bytes);
}

TEST_CASE("artifact: a memory plan whose live tensors share bytes is refused") {
    graph::Module m = graph::build(small_net());
    const std::string good = graph::save_to_memory(m);
    REQUIRE(graph::memory_placements(m).size() > 2);
    // Every tensor at offset 0 (checksum recomputed): without the check it would load and
    // run, each kernel overwriting what a later one still reads.
    CHECK_THROWS_WITH_AS(graph::load_module_from_memory(plan_at_zero(good, m)),
                         doctest::Contains("share bytes while both are live"), Error);

    // The one sharing allowed: exp written in place over the relu it reads, which dies there.
    graph::Graph g;
    graph::Value x = g.input("x", {4, 33});
    g.output(g.exp(g.relu(x, "r"), "e"), "e");
    graph::BuildOptions unfused;
    unfused.fuse = false;
    graph::Module in_place = graph::build(g, Target::host(), unfused);
    auto placements = graph::memory_placements(in_place);
    REQUIRE(placements.size() == 2);
    REQUIRE(placements[0].offset == placements[1].offset);
    CHECK_NOTHROW(graph::load_module_from_memory(graph::save_to_memory(in_place)));
}

TEST_CASE("artifact: a kernel given another kernel's object code is refused, naming it") {
    graph::Module m = graph::build(small_net());
    const std::string good = graph::save_to_memory(m);
    REQUIRE(m.compiled_kernels().size() > 2);
    REQUIRE(m.compiled_kernels()[0].module() != m.compiled_kernels()[1].module());
    const std::string first = m.compiled_kernels()[0].signature().name;
    CHECK_THROWS_WITH_AS(graph::load_module_from_memory(swap_objects(good, m, 0, 1)),
                         doctest::Contains(("kernel '" + first + "': its object code").c_str()), Error);
}

TEST_CASE("artifact: a kernel that refers to the wrong earlier kernel's object is refused") {
    // relu(x) twice (no common-subexpression elimination) shares one module; exp(x) between
    // them has another. The second relu's kernel stores a reference to the first's object.
    graph::Graph g;
    graph::Value x = g.input("x", {4, 33});
    g.output(g.relu(x, "a"), "a");
    g.output(g.exp(x, "e"), "e");
    g.output(g.relu(x, "b"), "b");
    graph::BuildOptions o;
    o.eliminate_common_subexpressions = false;
    graph::Module m = graph::build(g, Target::host(), o);
    const auto& kernels = m.compiled_kernels();
    REQUIRE(kernels.size() == 3);
    REQUIRE(m.kernels()[2].name == m.kernels()[0].name);
    REQUIRE(kernels[2].module() == kernels[0].module());
    REQUIRE(kernels[1].module() != kernels[0].module());
    std::string bytes = graph::save_to_memory(m);
    // The last kernel's record ends with the reference (1, kernel 0); the plan's arena and
    // naive sizes follow it.
    std::string reference = "\x01";
    auto put = [&](auto v) { reference.append(reinterpret_cast<const char*>(&v), sizeof v); };
    put(int32_t(0));
    put(int64_t(m.memory_bytes()));
    put(int64_t(m.memory_naive_bytes()));
    size_t at = bytes.find(reference);
    REQUIRE(at != std::string::npos);
    bytes[at + 1] = 1;  // kernel 1's object (exp) instead
    fix_checksum(bytes);
    CHECK_THROWS_WITH_AS(graph::load_module_from_memory(bytes),
                         doctest::Contains("its object code, that of kernel 1 which it refers to, does not match"), Error);
}

TEST_CASE("artifact: kernels saved out of order are refused") {
    // x -> relu -> exp, one kernel each and one buffer each (no plan to catch the reorder).
    graph::Graph g;
    graph::Value x = g.input("x", {4, 33});
    g.output(g.exp(g.relu(x, "r"), "e"), "e");
    graph::BuildOptions o;
    o.fuse = false;
    o.plan_memory = false;
    graph::Module m = graph::build(g, Target::host(), o);
    REQUIRE(m.kernels().size() == 2);
    // Exchanged, exp would run first, reading the relu's output before the relu writes it.
    CHECK_THROWS_WITH_AS(graph::load_module_from_memory(swap_first_kernels(graph::save_to_memory(m), m)),
                         doctest::Contains("reads 'r' before any kernel computes it"), Error);
}

TEST_CASE("artifact: whatever save writes, load reads; what it cannot, save refuses") {
    // Outputs that are an input and a constant: a module without kernels.
    graph::Graph g;
    graph::Value x = g.input("x", {2, 3});
    g.output(x, "same");
    g.output(g.constant("c", Buffer<float>::random({4}, -1.f, 1.f, 2)), "c");
    graph::Module m = graph::build(g);
    CHECK(m.kernels().empty());
    graph::Module r = graph::load_module_from_memory(graph::save_to_memory(m));
    auto in = Buffer<float>::random({2, 3}, -1.f, 1.f, 3);
    r.set_input("x", in);
    r.run();
    CHECK(same_bytes(r.get_output("same"), in));
    CHECK(same_bytes(r.get_output("c"), g.node(*g.find("c")).value));
    // Rank 17 (a graph whose limits allow it) is refused by save, naming the node.
    graph::Graph deep;
    deep.set_limits({.max_rank = 17});
    graph::Value d = deep.input("d", std::vector<int64_t>(17, 1));
    deep.output(deep.relu(d, "r17"), "y");
    graph::Module dm = graph::build(deep);
    CHECK_THROWS_WITH_AS(graph::save_to_memory(dm), doctest::Contains("has 17 dimensions; artifacts hold tensors of up to 16"),
                         Error);
}

namespace {

// The process's resident memory, in bytes (Linux).
int64_t resident_bytes() {
    std::ifstream statm("/proc/self/statm");
    int64_t pages = 0, resident = 0;
    statm >> pages >> resident;
    return resident * int64_t(sysconf(_SC_PAGESIZE));
}

}  // namespace

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WEFT_TEST_UNDER_ASAN 1  // clang's way to say it
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WEFT_TEST_UNDER_ASAN 1  // GCC's
#endif

TEST_CASE("artifact: loading a module again and again does not grow the process") {
#ifdef WEFT_TEST_UNDER_ASAN
    // (LeakSanitizer checks the same process for leaks at its exit.)
    MESSAGE("skipped: AddressSanitizer's quarantine holds freed memory back");
    return;
#endif
    // Before: each kernel's object went into a JITDylib of its own that was never removed,
    // ~70 KB per kernel for ever (fuzz_artifact's RSS climbed to its limit): 200 loads of this
    // 6-kernel module grew the process by ~70 MB.
    std::string bytes = graph::save_to_memory(graph::build(small_net()));
    for (int i = 0; i < 20; ++i) graph::load_module_from_memory(bytes);  // the allocator's pools fill
    const int64_t before = resident_bytes();
    for (int i = 0; i < 200; ++i) graph::load_module_from_memory(bytes);
    const int64_t grown = resident_bytes() - before;
    MESSAGE("200 loads grew the resident memory by ", grown / 1024, " KB");
    CHECK(grown < (int64_t(20) << 20));
}

TEST_CASE("artifact: a module with symbolic dimensions is saved and loaded, and runs at any size") {
    // A batch through a convolution (run per image), a flatten and a dense over the batch
    // (the kernel that assumes 12 rows and pads fewer).
    graph::Graph g;
    graph::Value x = g.input("x", {20, 3, 8, 8});
    g.set_symbolic(x, 0, {"batch", 20});
    graph::Value c = g.relu(g.conv2d(x, g.constant("w", Buffer<float>::random({4, 3, 3, 3}, -1, 1, 1)), {.pad = 1}));
    graph::Value f = g.flatten(c, 1);
    g.output(g.dense(f, g.constant("wd", Buffer<float>::random({5, 4 * 8 * 8}, -1, 1, 2))), "y");
    graph::Module m = graph::build(g);
    const std::string bytes = graph::save_to_memory(m);
    graph::Module r = graph::load_module_from_memory(bytes);
    for (int64_t batch : {1, 7, 20, 3}) {
        CAPTURE(batch);
        auto xv = Buffer<float>::random({batch, 3, 8, 8}, -1, 1, uint64_t(batch));
        m.set_input("x", xv);
        r.set_input("x", xv);
        m.run();
        r.run();
        CHECK(r.get_output("y").shape() == std::vector<int64_t>{batch, 5});
        CHECK(same_bytes(m.get_output("y"), r.get_output("y")));
    }
    CHECK(graph::save_to_memory(r) == bytes);

    // A symbol's bounds edited: its input's extent at the max no longer fits.
    auto le64 = [](int64_t v) { return std::string(reinterpret_cast<const char*>(&v), 8); };
    std::string edited = bytes;
    REQUIRE(artifact_edit::replace_first(edited, "batch" + le64(20), "batch" + le64(19)));
    fix_checksum(edited);
    CHECK_THROWS_WITH_AS(graph::load_module_from_memory(edited), doctest::Contains("does not fit the graph"), Error);
}

TEST_CASE("artifact: a symbolic module's large-size variants (attention over 64+) are saved and run") {
    graph::Graph g;
    g.output(graph_check::symbolic_attention_scores(g, 2, 80, 8), "scores");
    graph::Module m = graph::build(g);
    const std::string bytes = graph::save_to_memory(m);
    graph::Module r = graph::load_module_from_memory(bytes);
    for (int64_t seq : {5, 64, 80}) {
        CAPTURE(seq);
        auto qv = Buffer<float>::random({2, seq, 8}, -1, 1, uint64_t(seq)), kv = Buffer<float>::random({2, 8, seq}, -1, 1, 9);
        graph_check::run_attention({&m, &r}, qv, kv);
        CHECK(same_bytes(m.get_output("scores"), r.get_output("scores")));
        // and against naive loops
        const float* got = static_cast<const float*>(r.get_output("scores").data());
        double worst = 0;
        for (int64_t b = 0; b < 2; ++b)
            for (int64_t i = 0; i < seq; ++i)
                for (int64_t j = 0; j < seq; ++j) {
                    double acc = 0;
                    for (int64_t c = 0; c < 8; ++c) acc += double(qv(b, i, c)) * kv(b, c, j);
                    worst = std::max(worst, std::abs(got[(b * seq + i) * seq + j] - acc));
                }
        CHECK(worst < 1e-4);
    }
    CHECK(graph::save_to_memory(r) == bytes);
}

TEST_CASE("artifact: run-time checks are saved and enforced by the loaded module") {
    Buffer<float> ten({1});
    ten(0) = 10.f;
    graph::Graph g;
    graph::Value x = g.input("x", {3});
    g.output(g.relu(x), "y");
    g.check_at_run(g.add_node("greater", {g.max(x, {0}, true), g.constant("ten", ten)}),
                   "x over ten");
    graph::Module r = graph::load_module_from_memory(graph::save_to_memory(graph::build(g)));
    CHECK(r.num_outputs() == 1);
    Buffer<float> xv = Buffer<float>::random({3}, 0.f, 1.f, 5);
    r.set_input("x", xv);
    r.run();
    xv(2) = 11.f;
    r.set_input("x", xv);
    CHECK_THROWS_WITH_AS(r.run(), doctest::Contains("x over ten"), Error);
}
