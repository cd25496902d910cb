// What the real models (models/export.py, models/compare.py) needed from the importer, on
// small protobuf-built models: a Linear layer's Gemm (transB with a constant weight) becomes
// matmul with the weight transposed at build time, not dense (which packs its weight in the
// kernel on every run: 37x slower on a batch-1 MLP).
#include <doctest/doctest.h>

#include <cmath>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

int count_op(const graph::Graph& g, const std::string& op) {
    int n = 0;
    for (const auto& node : g.nodes()) n += node.op == op;
    return n;
}

}  // namespace

TEST_CASE("onnx models: Gemm transB with a constant weight is a matmul of the folded transpose") {
    const int64_t K = 64, N = 40;  // N not a multiple of the vector width
    Buffer<float> w = Buffer<float>::random({N, K}, -1.f, 1.f, 11), bias = Buffer<float>::random({N}, -1.f, 1.f, 12);
    for (int64_t M : {1, 3, 37}) {
        for (bool weight_is_input : {false, true}) {
            CAPTURE(M);
            CAPTURE(weight_is_input);
            Model m(13);
            m.input("x", {M, K});
            if (weight_is_input) m.input("w", {N, K});
            else m.initializer("w", {N, K}, std::vector<float>(w.begin(), w.end()));
            m.initializer("b", {N}, std::vector<float>(bias.begin(), bias.end()));
            set_int(m.node("Gemm", {"x", "w", "b"}, {"y"}), "transB", 1);
            m.output("y");
            graph::Graph g = m.load();
            CHECK(count_op(g, "dense") == (weight_is_input ? 1 : 0));
            CHECK(count_op(g, "matmul") == (weight_is_input ? 0 : 1));
            graph::Module mod = graph::build(g);
            if (!weight_is_input) {  // the transpose is folded into a constant: one kernel
                CHECK(count_op(mod.graph(), "transpose") == 0);
                CHECK(mod.kernels().size() == 1);
            }
            Buffer<float> x = Buffer<float>::random({M, K}, -1.f, 1.f, uint64_t(M));
            mod.set_input("x", x);
            if (weight_is_input) mod.set_input("w", w);
            mod.run();
            Buffer<float> y(mod.get_output("y"));
            REQUIRE(y.shape() == std::vector<int64_t>{M, N});
            for (int64_t i = 0; i < M; ++i)
                for (int64_t j = 0; j < N; ++j) {
                    double s = bias(j);
                    for (int64_t k = 0; k < K; ++k) s += double(x(i, k)) * double(w(j, k));
                    CHECK(std::abs(y(i, j) - s) <= 1e-4 * (1 + std::abs(s)));
                }
        }
    }
}
