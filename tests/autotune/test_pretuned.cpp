// weft's pre-tuned records (autotune::pretuned_records, include/weft/autotune/pretuned/):
// well-formed, one per (target, workload), and applied by graph::build where the target is
// the one they were measured on, and only there. The records were measured on one CPU; the
// test builds for that CPU's target (compile only) on any machine, and runs the kernels
// where the host is that CPU.
#include <doctest/doctest.h>

#include <regex>
#include <set>

#include "weft/weft.hpp"

using namespace weft;

namespace {

// The Target a records key names ("llvm -mtriple=T -mcpu=C -mattr=F -vector-bits=N -threads=K").
Target target_of_key(const std::string& key) {
    std::smatch m;
    const std::regex pattern(R"(llvm -mtriple=(\S*) -mcpu=(\S*) -mattr=(\S*) -vector-bits=(\d+) -threads=(\d+))");
    REQUIRE_MESSAGE(std::regex_match(key, m, pattern), key);
    Target t;
    t.triple = m[1];
    t.cpu = m[2];
    t.features = m[3];
    t.vector_bits = std::stoi(m[4]);
    t.num_threads = std::stoi(m[5]);
    return t;
}

}  // namespace

TEST_CASE("weft's pre-tuned records are one error-free record per target and workload") {
    const autotune::Records& records = autotune::pretuned_records();
    REQUIRE(records.size() > 0);
    std::set<std::pair<std::string, std::string>> keys;
    for (const autotune::Record& r : records.all()) {
        CAPTURE(r.workload);
        CHECK(r.ok());
        CHECK(keys.insert({r.target, r.workload}).second);
        CHECK(autotune::target_key(target_of_key(r.target)) == r.target);
    }
}

TEST_CASE("graph::build applies a pre-tuned record on its target only, and BuildOptions can refuse it") {
    // The pre-tuned GEMMs: matmul(float32[M, K], float32[K, N]){}.
    const std::regex matmul(R"(matmul\(float32\[(\d+), (\d+)\], float32\[(\d+), (\d+)\]\)\{\})");
    int checked = 0;
    for (const autotune::Record& r : autotune::pretuned_records().all()) {
        std::smatch m;
        if (!std::regex_match(r.workload, m, matmul)) continue;
        CAPTURE(r.workload);
        const int64_t M = std::stoll(m[1]), K = std::stoll(m[2]), N = std::stoll(m[4]);
        graph::Graph g;
        g.output(g.matmul(g.input("a", {M, K}), g.input("b", {K, N})), "c");
        const Target target = target_of_key(r.target);
        Target other = target;
        other.num_threads += 100;  // a thread count no record has: another key
        auto tuned_of = [&](const Target& t, bool pretuned) {
            graph::Module mod = graph::build(g, t, {.allocate = false, .pretuned_records = pretuned});
            REQUIRE(mod.kernels().size() == 1);
            CHECK(mod.kernels()[0].workload == r.workload);
            return mod.kernels()[0].tuned;
        };
        CHECK(tuned_of(target, true));
        CHECK(!tuned_of(target, false));
        CHECK(!tuned_of(other, true));
        ++checked;
        // On the machine they were measured on, the pre-tuned kernel computes what the default does.
        Target host = Target::host();
        host.num_threads = target.num_threads;
        if (autotune::target_key(host) != r.target) continue;
        const int threads_before = num_threads();
        set_num_threads(target.num_threads);
        graph::Module tuned = graph::build(g, Target::host()), plain = graph::build(g, Target::host(), {.pretuned_records = false});
        set_num_threads(threads_before);
        CHECK(tuned.kernels()[0].tuned);
        Buffer<float> a = Buffer<float>::random({M, K}, -1, 1, 1), b = Buffer<float>::random({K, N}, -1, 1, 2);
        for (graph::Module* mod : {&tuned, &plain}) {
            mod->set_input("a", a);
            mod->set_input("b", b);
            mod->run();
        }
        const float* x = static_cast<const float*>(tuned.get_output(0).data());
        const float* y = static_cast<const float*>(plain.get_output(0).data());
        int bad = 0;
        for (int64_t i = 0; i < M * N; ++i) bad += !(std::abs(x[i] - y[i]) <= 1e-3f * (1 + std::abs(y[i])));
        CHECK(bad == 0);
    }
    CHECK(checked > 0);
}
