// graph::build for Target::cuda() and a CUDA module used the wrong way: an operator with no
// GPU schedule is named, a build that needs a device says there is none and how to compile
// without one, and host-only calls on a CUDA module say what to do instead.
#include <doctest/doctest.h>

#include "weft/codegen/cuda/codegen_cuda.hpp"
#include "weft/graph/artifact.hpp"
#include "weft/runtime/cuda/cuda.hpp"
#include "weft/topi/topi.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

graph::BuildOptions compile_only() {
    graph::BuildOptions o;
    o.allocate = false;
    return o;
}

// The weft::Error message `f` throws ("" when it throws none).
template <class F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

graph::Graph small_mlp() {
    graph::Graph g;
    graph::Value x = g.input("x", {4, 8});
    graph::Value w = g.constant("w", Buffer<float>::random({16, 8}, -1, 1, 3));
    g.output(g.relu(g.dense(x, w)), "y");
    return g;
}

}  // namespace

TEST_CASE("cuda_graph errors: an operator with a CPU schedule and no GPU schedule is named") {
    graph::register_op({.name = "cg_test_row_max", .pattern = graph::OpPattern::CommReduce,
                        .infer = [](const std::vector<graph::TensorType>& in,
                                    const graph::Attrs&) { return graph::TensorType{{in[0].shape[0]}, in[0].dtype}; },
                        .compute = [](const std::vector<Tensor>& in,
                                      const graph::Attrs&) { return topi::max(in[0], {1}, false); },
                        .schedule = [](Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>&,
                                       const graph::Attrs&) { topi::schedule_reduce(s, op, out); }});
    graph::Graph g;
    graph::Value x = g.input("x", {4, 8});
    g.output(g.relu(g.add_node("cg_test_row_max", {x}, {}, "rowmax")), "y");
    CHECK_NOTHROW(graph::build(g, Target::host()));
    std::string msg = message_of([&] { graph::build(g, Target::cuda(), compile_only()); });
    CHECK(contains(msg, "operator 'cg_test_row_max'"));
    CHECK(contains(msg, "rowmax"));
    CHECK(contains(msg, "no GPU schedule"));
    CHECK(contains(msg, "gpu_schedule"));
}

TEST_CASE("cuda_graph errors: building a runnable CUDA module without a device says how to compile only") {
    if (cuda::device_count() > 0) {
        MESSAGE("skipped: a CUDA device is present, so the build succeeds");
        return;
    }
    std::string msg = message_of([] { graph::build(small_mlp(), Target::cuda()); });
    CHECK(contains(msg, "no CUDA device: "));
    CHECK(contains(msg, "BuildOptions::allocate = false"));
    graph::BuildOptions o;
    o.cuda_device = 3;
    CHECK_THROWS_WITH_AS(graph::build(small_mlp(), Target::cuda(), o), doctest::Contains("cuda(3)"), Error);
}

TEST_CASE("cuda_graph errors: host-only calls on a CUDA module say what to do") {
    std::string why;
    if (!codegen::nvrtc_available(&why)) {  // a WEFT_CUDA=OFF build compiles no CUDA module
        MESSAGE("skipped: " << why);
        return;
    }
    graph::Module m = graph::build(small_mlp(), Target::cuda(), compile_only());
    std::string debug = message_of([&] { m.run_debug(); });
    CHECK(contains(debug, "run_debug"));
    CHECK(contains(debug, "Target::host()"));
    std::string save = message_of([&] { graph::save_to_memory(m); });
    CHECK(contains(save, "artifacts hold CPU object code"));
    CHECK(contains(save, "graph::build(g, Target::cuda())"));
    CHECK_THROWS_WITH_AS(m.set_input("x", Buffer<float>({4, 8})), doctest::Contains("BuildOptions::allocate"), Error);
    graph::Module cpu = graph::build(small_mlp());
    CHECK_THROWS_WITH_AS(cpu.cuda_stream(), doctest::Contains("only a module built for Target::cuda() has a stream"),
                         Error);
}
