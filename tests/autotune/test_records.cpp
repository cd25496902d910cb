// Tuning records: JSON lines written and read back, malformed lines refused with their line
// number, the best error-free record per (target, workload), and graph::build applying a
// record's config to the group of that workload (and only on the record's target).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "weft/weft.hpp"

using namespace weft;
namespace fs = std::filesystem;

namespace {

autotune::Record record(const std::string& target, const std::string& workload, Config c, std::vector<double> costs,
                        std::string error = "") {
    autotune::Record r;
    r.target = target;
    r.workload = workload;
    r.config = std::move(c);
    r.costs_ms = std::move(costs);
    r.error = std::move(error);
    r.timestamp = 1795000000;
    return r;
}

fs::path temp_file(const std::string& stem) {
    return fs::temp_directory_path() / (stem + "_" + std::to_string(std::random_device{}()) + ".jsonl");
}

// y = relu(x W^T + b): one dense group.
graph::Graph dense_graph() {
    graph::Graph g;
    graph::Value x = g.input("x", {48, 96});
    auto w = g.constant("w", Buffer<float>::random({80, 96}, -1, 1, 1));
    auto b = g.constant("b", Buffer<float>::random({80}, -1, 1, 2));
    g.output(g.relu(g.dense(x, w, b)), "y");
    return g;
}

std::vector<float> run(graph::Module& m) {
    auto x = Buffer<float>::random({48, 96}, -1, 1, 3);
    m.set_input("x", x);
    m.run();
    const BufferRef& y = m.get_output(0);
    const float* p = static_cast<const float*>(y.data());
    return {p, p + y.size()};
}

}  // namespace

TEST_CASE("a record round-trips through one line of JSON") {
    Config c;
    c.set("gemm.mr", 4).set("gemm.nr", 32);
    autotune::Record r = record("llvm -mcpu=x -threads=2", "dense(float32[1, 2]){}", c, {0.5, 0.25, 0.75});
    const std::string line = r.to_json();
    CHECK(line.find('\n') == std::string::npos);
    autotune::Record back = autotune::Record::from_json(line);
    CHECK(back.target == r.target);
    CHECK(back.workload == r.workload);
    CHECK(back.config == c);
    CHECK(back.costs_ms == r.costs_ms);
    CHECK(back.cost_ms() == 0.5);  // the median
    CHECK(back.timestamp == r.timestamp);
    CHECK(back.version == autotune::kWeftVersion);
    CHECK(!record("t", "w", {}, {}, "did not build").ok());
}

TEST_CASE("records are stamped with the project's version") {
    CHECK(std::string(autotune::kWeftVersion) == WEFT_TEST_PROJECT_VERSION);
}

TEST_CASE("malformed records are refused, naming the file and line") {
    const fs::path path = temp_file("weft_bad_records");
    {
        std::ofstream f(path);
        f << record("t", "w", {}, {1.0}).to_json() << "\n\n";
        f << "{\"target\": \"t\", \"workload\": \"w\", \"config\": {\"k\": 1}, \"costs_ms\": [\"fast\"]}\n";
    }
    CHECK_THROWS_WITH_AS(autotune::Records::load(path.string()), doctest::Contains("line 3"), Error);
    CHECK_THROWS_WITH_AS(autotune::Records::load(path.string()), doctest::Contains("non-negative numbers"), Error);
    CHECK_THROWS_WITH_AS(autotune::Record::from_json("[]"), doctest::Contains("expected a JSON object"), Error);
    CHECK_THROWS_WITH_AS(autotune::Record::from_json("{\"target\": 1}"), doctest::Contains("'target' must be a string"),
                         Error);
    CHECK_THROWS_AS(autotune::Records::load((fs::temp_directory_path() / "weft_no_such_records.jsonl").string()), Error);
    fs::remove(path);
}

TEST_CASE("best and pick_best keep the fastest error-free record of each target and workload") {
    autotune::Records rs;
    Config a, b, c;
    a.set("k", 1);
    b.set("k", 2);
    c.set("k", 3);
    rs.add(record("t1", "w", a, {2.0}));
    rs.add(record("t1", "w", b, {1.0}));
    rs.add(record("t1", "w", c, {}, "crashed"));  // a failure never wins
    rs.add(record("t2", "w", c, {5.0}));
    REQUIRE(rs.best("t1", "w"));
    CHECK(rs.best("t1", "w")->config == b);
    CHECK(rs.best("t2", "w")->config == c);
    CHECK(rs.best("t1", "other") == nullptr);
    autotune::Records best = rs.pick_best();
    CHECK(best.size() == 2);
    // Appended lines load back the same.
    const fs::path path = temp_file("weft_records");
    for (const auto& r : rs.all()) autotune::Records::append_to_file(path.string(), r);
    autotune::Records loaded = autotune::Records::load(path.string());
    CHECK(loaded.size() == 4);
    CHECK(loaded.best("t1", "w")->config == b);
    fs::remove(path);
}

TEST_CASE("graph::build applies a record's config to its workload's group, on its target only") {
    graph::Graph g = dense_graph();
    graph::Module plain = graph::build(g);
    // One group has a master (the dense, which simplify_operators made a matmul with the
    // constant weight transposed, and pack_matmul_weights a matmul_packed of its panels),
    // with the epilogue fused: its workload names it.
    std::string workload;
    for (const auto& k : plain.kernels()) {
        CHECK(!k.tuned);
        if (!k.workload.empty()) workload = k.workload;
    }
    CAPTURE(workload);
    REQUIRE(workload.rfind("matmul_packed(float32[48, 96], float32[", 0) == 0);  // (panels of the host's width)
    const std::vector<float> want = run(plain);

    Config tuned;
    tuned.set("gemm.mr", 2).set("gemm.k_unroll", 1).set("gemm.parallel_panels", 0);
    auto records = std::make_shared<autotune::Records>();
    records->add(record(autotune::target_key(Target::host()), workload, tuned, {0.01}));
    graph::Module m = graph::build(g, Target::host(), {.records = records});
    int tuned_kernels = 0;
    for (const auto& k : m.kernels()) tuned_kernels += k.tuned;
    CHECK(tuned_kernels == 1);
    // The config reached the template: the kernel differs from the default one, and
    // computes the same numbers.
    std::string ir_plain, ir_tuned;
    for (const Kernel& k : plain.compiled_kernels()) ir_plain += k.llvm_ir();
    for (const Kernel& k : m.compiled_kernels()) ir_tuned += k.llvm_ir();
    CHECK(ir_plain != ir_tuned);
    const std::vector<float> got = run(m);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) REQUIRE(std::abs(got[i] - want[i]) <= 1e-4f * (1 + std::abs(want[i])));

    // A config that does not fit the workload is an error naming the knob, not a silent default.
    auto wrong = std::make_shared<autotune::Records>();
    wrong->add(record(autotune::target_key(Target::host()), workload, Config{}.set("gemm.mr", 40), {0.01}));
    CHECK_THROWS_WITH_AS(graph::build(g, Target::host(), {.records = wrong}), doctest::Contains("gemm.mr"), Error);

    // Records of another target (or another thread count) are not applied.
    Target other = Target::host();
    other.num_threads += 1;
    auto elsewhere = std::make_shared<autotune::Records>();
    elsewhere->add(record(autotune::target_key(other), workload, tuned, {0.01}));
    graph::Module untuned = graph::build(g, Target::host(), {.records = elsewhere});
    for (const auto& k : untuned.kernels()) CHECK(!k.tuned);
}

TEST_CASE("WEFT_TUNING_RECORDS names a records file graph::build reads") {
    graph::Graph g = dense_graph();
    std::string workload;
    graph::Module plain = graph::build(g);
    for (const auto& k : plain.kernels())
        if (!k.workload.empty()) workload = k.workload;
    REQUIRE(!workload.empty());
    const fs::path path = temp_file("weft_env_records");
    autotune::Records::append_to_file(
        path.string(), record(autotune::target_key(Target::host()), workload, Config{}.set("gemm.mr", 3), {0.02}));
    ::setenv("WEFT_TUNING_RECORDS", path.c_str(), 1);
    graph::Module m = graph::build(g);
    ::unsetenv("WEFT_TUNING_RECORDS");
    int tuned = 0;
    for (const auto& k : m.kernels()) tuned += k.tuned;
    CHECK(tuned == 1);
    // BuildOptions::records_file does the same.
    graph::Module n = graph::build(g, Target::host(), {.records_file = path.string()});
    tuned = 0;
    for (const auto& k : n.kernels()) tuned += k.tuned;
    CHECK(tuned == 1);
    fs::remove(path);
}

TEST_CASE("an artifact keeps each kernel's workload and whether it was tuned") {
    graph::Graph g = dense_graph();
    graph::Module plain = graph::build(g);
    std::string workload;
    for (const auto& k : plain.kernels())
        if (!k.workload.empty()) workload = k.workload;
    REQUIRE(!workload.empty());
    auto records = std::make_shared<autotune::Records>();
    records->add(record(autotune::target_key(Target::host()), workload, Config{}.set("gemm.mr", 2), {0.01}));
    graph::Module tuned = graph::build(g, Target::host(), {.records = records});
    graph::Module loaded = graph::load_module_from_memory(graph::save_to_memory(tuned));
    REQUIRE(loaded.kernels().size() == tuned.kernels().size());
    for (size_t k = 0; k < tuned.kernels().size(); ++k) {
        CHECK(loaded.kernels()[k].workload == tuned.kernels()[k].workload);
        CHECK(loaded.kernels()[k].tunable == tuned.kernels()[k].tunable);
        CHECK(loaded.kernels()[k].tuned == tuned.kernels()[k].tuned);
    }
    int tuned_kernels = 0;
    for (const auto& k : loaded.kernels()) tuned_kernels += k.tuned;
    CHECK(tuned_kernels == 1);
}
