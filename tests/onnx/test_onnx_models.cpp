// What the real models (models/export.py, models/compare.py) needed from the importer, on
// small protobuf-built models: a Linear layer's Gemm (transB with a constant weight) becomes
// matmul with the weight transposed at build time, not dense (which packs its weight in the
// kernel on every run: 37x slower on a batch-1 MLP); Pow by a constant 2 becomes x * x; a
// model file is read in one piece.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

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

TEST_CASE("onnx models: Gemm transB with a constant weight builds as a matmul of the folded transpose") {
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
            CHECK(count_op(g, "dense") == 1);
            // graph::simplify_operators: dense -> matmul; pack_matmul_weights: its weight
            // packed once (matmul_packed)
            graph::Module mod = graph::build(g);
            CHECK(count_op(mod.graph(), "dense") == (weight_is_input ? 1 : 0));
            CHECK(count_op(mod.graph(), "matmul_packed") == (weight_is_input ? 0 : 1));
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

TEST_CASE("onnx models: Pow by a constant 2 or 3 builds as products (a decomposed LayerNorm's variance, a tanh GELU)") {
    // exponent: a constant 2 (scalar and [1]), a constant 3 (two products), a constant 4, a
    // constant 2 of another shape (broadcasting x up: stays pow) and an exponent that is an input.
    struct Case {
        std::vector<int64_t> e_shape;
        float e;
        bool e_is_input;
        int muls;
    };
    for (const Case& k : {Case{{}, 2.f, false, 1}, Case{{1}, 2.f, false, 1}, Case{{}, 3.f, false, 2},
                          Case{{}, 4.f, false, 0}, Case{{2, 1, 1}, 2.f, false, 0}, Case{{1}, 2.f, true, 0}}) {
        CAPTURE(k.e);
        CAPTURE(k.e_shape.size());
        CAPTURE(k.e_is_input);
        Model m(13);
        m.input("x", {3, 5});
        if (k.e_is_input) m.input("e", k.e_shape);
        else m.initializer("e", k.e_shape, std::vector<float>(size_t(k.e_shape.empty() ? 1 : k.e_shape[0]), k.e));
        m.node("Pow", {"x", "e"}, {"y"});
        m.output("y");
        graph::Module mod = graph::build(m.load());  // graph::simplify_operators: pow(x, 2) -> x * x
        CHECK(count_op(mod.graph(), "mul") == k.muls);
        CHECK(count_op(mod.graph(), "pow") == (k.muls ? 0 : 1));
        Buffer<float> x = Buffer<float>::random({3, 5}, -3.f, 3.f, 5);
        mod.set_input("x", x);
        if (k.e_is_input) {
            Buffer<float> e({1});
            e(0) = k.e;
            mod.set_input("e", e);
        }
        mod.run();
        Buffer<float> y(mod.get_output("y"));
        REQUIRE(y.size() == (k.e_shape.size() == 3 ? 30 : 15));
        for (int64_t i = 0; i < y.size(); ++i) {
            float xv = x.data()[i % 15];
            CHECK(y.data()[i] == doctest::Approx(std::pow(xv, k.e)).epsilon(1e-6));
        }
    }
}

TEST_CASE("onnx models: load reads a file in one piece, a pipe as it comes, a directory is an error") {
    Model m(13);
    m.input("x", {2, 3});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    std::string dir = "/tmp/weft_onnx_models_test_" + std::to_string(::getpid());
    std::filesystem::create_directories(dir);
    std::string file = dir + "/relu.onnx";
    {
        std::ofstream f(file, std::ios::binary);
        f << m.bytes();
    }
    CHECK(weft::onnx::load(file).find("y"));
    std::string fifo = dir + "/relu.fifo";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::thread writer([&] {
        std::ofstream f(fifo, std::ios::binary);
        f << m.bytes();
    });
    CHECK(weft::onnx::load(fifo).find("y"));
    writer.join();
    std::string err = error_of([&] { weft::onnx::load(dir); });
    CHECK(err.find("cannot read '" + dir + "'") != std::string::npos);
    std::filesystem::remove_all(dir);
}
