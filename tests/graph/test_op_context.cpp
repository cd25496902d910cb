// Operators whose compute and schedule take the graph's OpContext (the target the group is
// built for, its config), beside operators that do not take it: both register and build.
// The snippet of docs/tuning.md ("In the graph layer") is this test's operator.
#include <doctest/doctest.h>

#include <cmath>

#include "weft/weft.hpp"

using namespace weft;

namespace {

std::vector<int> seen_threads;  // the target's thread count each compute and schedule saw

void register_context_gemm() {
    graph::register_op({.name = "test_ctx_gemm", .pattern = graph::OpPattern::OutEWiseFusable, .min_inputs = 2,
                        .max_inputs = 2,
                        .infer = [](const std::vector<graph::TensorType>& in, const graph::Attrs&) {
                            return graph::TensorType{{in[0].shape[0], in[1].shape[1]}, in[0].dtype};
                        },
                        .compute = [](const std::vector<Tensor>& in, const graph::Attrs&, const graph::OpContext& c) {
                            seen_threads.push_back(c.target.num_threads);
                            return topi::matmul(in[0], in[1], "my_gemm", c.target, c.config);
                        },
                        .schedule = [](Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>&,
                                       const graph::Attrs&, const graph::OpContext& c) {
                            seen_threads.push_back(c.target.num_threads);
                            topi::schedule_matmul(s, op, out, c.target, c.config);
                        }});
}

}  // namespace

TEST_CASE("an operator that takes the OpContext gets the group's target, and computes right") {
    register_context_gemm();
    const int64_t M = 40, N = 70, K = 33;
    for (int threads : {1, 2}) {
        set_num_threads(threads);
        seen_threads.clear();
        graph::Graph g;
        graph::Value a = g.input("a", {M, K}), b = g.input("b", {K, N});
        g.output(g.relu(g.add_node("test_ctx_gemm", {a, b}, {}, "gemm")), "y");
        graph::Module m = graph::build(g, Target::host());
        CHECK(seen_threads == std::vector<int>{threads, threads});
        auto x = Buffer<float>::random({M, K}, -1, 1, 1), w = Buffer<float>::random({K, N}, -1, 1, 2);
        m.set_input("a", x);
        m.set_input("b", w);
        m.run();
        const BufferRef& out = m.get_output(0);
        const float* y = static_cast<const float*>(out.data());
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
                double ref = 0;
                for (int64_t k = 0; k < K; ++k) ref += double(x(i, k)) * w(k, j);
                ref = std::max(ref, 0.0);
                REQUIRE(std::abs(y[i * N + j] - ref) <= 1e-4 * (1 + std::abs(ref)));
            }
    }
    set_num_threads(0);
}

TEST_CASE("an operator without the OpContext registers and builds as before") {
    graph::register_op({.name = "test_ctx_plain", .pattern = graph::OpPattern::ElemWise,
                        .infer = [](const std::vector<graph::TensorType>& in, const graph::Attrs&) { return in[0]; },
                        .compute = [](const std::vector<Tensor>& in, const graph::Attrs&) {
                            const Tensor& x = in[0];
                            return te::compute(x.shape(), [&](const std::vector<Expr>& i) { return x.at(i) * 2.f; },
                                               "twice");
                        }});
    graph::Graph g;
    graph::Value x = g.input("x", {3, 5});
    g.output(g.add_node("test_ctx_plain", {x}, {}, "t"), "y");
    graph::Module m = graph::build(g);
    auto in = Buffer<float>::random({3, 5}, -1, 1, 3);
    m.set_input("x", in);
    m.run();
    const float* y = static_cast<const float*>(m.get_output(0).data());
    for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 5; ++j) CHECK(y[i * 5 + j] == 2 * in(i, j));
}
