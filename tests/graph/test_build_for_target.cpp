// graph::build for a target other than the host: every schedule and the blocked layout are
// planned for that target's vectors and threads, not the machine that builds. An AVX2
// target's MobileNetV2 and ResNet-18 use no 512-bit registers and compute what the host's
// modules compute (they run here: every x86-64 machine this project has seen has AVX2).
#include <doctest/doctest.h>

#include "graph/graph_check.hpp"
#include "weft/graph/testing/models.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

bool uses_zmm(const graph::Module& m) {
    for (const Kernel& k : m.compiled_kernels())
        if (k.assembly().find("zmm") != std::string::npos) return true;
    return false;
}

void check_avx2_build(const graph::Graph& g) {
    const Target host = Target::host();
    if (!host.has_feature("avx2") || !host.has_feature("fma")) {
        MESSAGE("skipped: this CPU has no AVX2");
        return;
    }
    graph::Module native = graph::build(g, host);
    graph::Module avx2 = graph::build(g, Target::x86_avx2(2));
    CHECK(!uses_zmm(avx2));
    if (host.uses_avx512()) CHECK(uses_zmm(native));  // the check above can fail
    auto inputs = graph_check::random_inputs(g, 5);
    auto got = graph_check::run_graph(avx2, inputs), want = graph_check::run_graph(native, inputs);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(graph_check::max_error(got[i], want[i]) < 1e-4);
}

}  // namespace

TEST_CASE("MobileNetV2 built for an AVX2 target is planned for AVX2 and computes like the host's") {
    check_avx2_build(graph::testing::mobilenet_v2(1, 32, 10));
}

TEST_CASE("ResNet-18 built for an AVX2 target is planned for AVX2 and computes like the host's") {
    check_avx2_build(graph::testing::resnet18(1, 32, 10));
}

TEST_CASE("the blocked layout's channel blocks follow the target's vector width") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 32, 8, 8});
    auto w = g.constant("w", Buffer<float>::random({64, 32, 3, 3}, -1, 1, 1));
    g.output(g.relu(g.conv2d(x, w, {.pad = 1})), "y");
    auto blocks = [&](const Target& t) {
        graph::Graph blocked = graph::convert_conv_layout(g, t);
        std::vector<int64_t> out;
        for (const graph::Node& n : blocked.nodes())
            if (n.op == "conv2d_nchwc") out.push_back(n.type.shape.back());
        return out;
    };
    CHECK(blocks(Target::x86_avx512()) == std::vector<int64_t>{32});  // two 16-lane vectors
    CHECK(blocks(Target::x86_avx2()) == std::vector<int64_t>{16});    // two 8-lane vectors
}
