// BuildOptions::precision = bf16: linear layers multiply in bfloat16 and accumulate in
// float32. Checked against a double reference that rounds each layer's input and weight to
// bfloat16 as the build does (tight), and against the float32 build (within bfloat16's
// error); a layer whose shape does not fit stays float32; a target without AVX512_BF16
// computes the same with float32 FMAs, and one with AMX the convolutions on its tiles.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "graph_check.hpp"
#include "host_without.hpp"
#include "weft/weft.hpp"

using namespace weft;
using graph_check::count_kernels_named;

namespace {

struct Layer {
    Buffer<float> w, b;  // w [N, K], b [N]
    bool relu;
};

// x [5, 64] -> 128 (relu) -> 48 -> 10: the last layer's 10 columns are not a multiple of 16.
std::vector<Layer> layers() {
    return {{Buffer<float>::random({128, 64}, -0.3f, 0.3f, 1), Buffer<float>::random({128}, -0.1f, 0.1f, 2), true},
            {Buffer<float>::random({48, 128}, -0.3f, 0.3f, 3), Buffer<float>::random({48}, -0.1f, 0.1f, 4), false},
            {Buffer<float>::random({10, 48}, -0.3f, 0.3f, 5), Buffer<float>::random({10}, -0.1f, 0.1f, 6), false}};
}

graph::Graph mlp(const std::vector<Layer>& ls) {
    graph::Graph g;
    graph::Value x = g.input("x", {5, 64});
    for (size_t i = 0; i < ls.size(); ++i) {
        const std::string name = "fc" + std::to_string(i);
        x = g.dense(x, g.constant(name + ".w", ls[i].w), g.constant(name + ".b", ls[i].b), name);
        if (ls[i].relu) x = g.relu(x);
    }
    g.output(x, "y");
    return g;
}

// The network in double, each layer's input and weight rounded to bfloat16 where `bf16[i]`.
std::vector<double> reference(const std::vector<Layer>& ls, const Buffer<float>& x, const std::vector<bool>& bf16) {
    auto round = [](float v, bool r) { return r ? double(float(bfloat16(v))) : double(v); };
    std::vector<double> a(x.data(), x.data() + x.size());
    int64_t K = 64;
    for (size_t l = 0; l < ls.size(); ++l) {
        const int64_t N = ls[l].w.dim(0);
        std::vector<double> out(size_t(5 * N));
        for (int64_t i = 0; i < 5; ++i)
            for (int64_t j = 0; j < N; ++j) {
                double s = 0;
                for (int64_t k = 0; k < K; ++k)
                    s += round(float(a[size_t(i * K + k)]), bf16[l]) * round(ls[l].w(j, k), bf16[l]);
                s = double(float(s)) + ls[l].b(j);
                out[size_t(i * N + j)] = ls[l].relu ? std::max(s, 0.0) : s;
            }
        a = std::move(out);
        K = N;
    }
    return a;
}

std::vector<float> run(graph::Module& m, const Buffer<float>& x) {
    m.set_input("x", x);
    m.run();
    Buffer<float> y(m.get_output("y"));
    return std::vector<float>(y.data(), y.data() + y.size());
}


}  // namespace

TEST_CASE("precision bf16: linear layers in bfloat16 match a bfloat16-rounded reference, on any target") {
    const std::vector<Layer> ls = layers();
    const graph::Graph g = mlp(ls);
    auto x = Buffer<float>::random({5, 64}, -1.f, 1.f, 9);
    const std::vector<double> want = reference(ls, x, {true, true, false});
    const std::vector<double> want_f32 = reference(ls, x, {false, false, false});
    // The same CPU told it has no AVX512_BF16: the FMA tile.
    const Target without = weft::test::host_without("avx512bf16");
    for (const Target& target : {Target::host(), without}) {
        CAPTURE(target.features.find("+avx512bf16") != std::string::npos);
        graph::Module m = graph::build(g, target, {.precision = graph::Precision::bf16});
        CHECK(count_kernels_named(m, "matmul_bf16") == 2);  // the 10-column layer stays float32
        bool uses_instruction = false;
        for (const Kernel& k : m.compiled_kernels()) uses_instruction |= k.assembly().find("vdpbf16ps") != std::string::npos;
        CHECK(uses_instruction == target.has_feature("avx512bf16"));
        const std::vector<float> y = run(m, x);
        REQUIRE(y.size() == want.size());
        double worst = 0, worst_f32 = 0;
        for (size_t i = 0; i < y.size(); ++i) {
            worst = std::max(worst, std::abs(y[i] - want[i]) / (1 + std::abs(want[i])));
            worst_f32 = std::max(worst_f32, std::abs(y[i] - want_f32[i]) / (1 + std::abs(want_f32[i])));
        }
        CHECK(worst < 2e-5);       // the same rounding as the reference, sums in float32
        CHECK(worst_f32 < 3e-2);   // and within bfloat16's error of the float32 network
        CHECK(worst_f32 > 1e-5);   // (which it is not: the layers did round)
    }
    // The default stays float32.
    graph::Module f32 = graph::build(g);
    CHECK(count_kernels_named(f32, "matmul_bf16") == 0);
    const std::vector<float> y = run(f32, x);
    for (size_t i = 0; i < y.size(); ++i) CHECK(std::abs(y[i] - want_f32[i]) < 1e-4 * (1 + std::abs(want_f32[i])));
}

TEST_CASE("precision names parse, and an unknown one is named") {
    CHECK(graph::precision("f32") == graph::Precision::f32);
    CHECK(graph::precision("bf16") == graph::Precision::bf16);
    CHECK_THROWS_WITH_AS(graph::precision("fp16"), doctest::Contains("expected f32, bf16 or int8"), Error);
}

namespace {

// out[o, y, x] = bias[o] + sum of in * w over c, kh, kw (zero padding `pad`, stride 1), in
// double, the input and weight rounded to bfloat16 first.
std::vector<double> conv_bf16_reference(const std::vector<double>& in, int64_t C, int64_t H, const Buffer<float>& w,
                                        const Buffer<float>& bias, int64_t pad) {
    const int64_t O = w.dim(0), K = w.dim(2), OH = H + 2 * pad - K + 1;
    auto r = [](double v) { return double(float(bfloat16(float(v)))); };
    std::vector<double> out(size_t(O * OH * OH));
    for (int64_t o = 0; o < O; ++o)
        for (int64_t y = 0; y < OH; ++y)
            for (int64_t x = 0; x < OH; ++x) {
                double s = 0;
                for (int64_t c = 0; c < C; ++c)
                    for (int64_t kh = 0; kh < K; ++kh)
                        for (int64_t kw = 0; kw < K; ++kw) {
                            const int64_t iy = y + kh - pad, ix = x + kw - pad;
                            if (iy >= 0 && iy < H && ix >= 0 && ix < H)
                                s += r(in[size_t((c * H + iy) * H + ix)]) * r(w(o, c, kh, kw));
                        }
                out[size_t((o * OH + y) * OH + x)] = double(float(s)) + bias(o);
            }
    return out;
}

}  // namespace

TEST_CASE("precision bf16: convolutions in bfloat16 match a bfloat16-rounded reference, on any target") {
    // x [1, 16, 12, 12] -> conv 3x3 (32, pad 1) + bias -> relu -> conv 1x1 (32) + bias -> + the relu's output.
    auto w1 = Buffer<float>::random({32, 16, 3, 3}, -0.3f, 0.3f, 11), b1 = Buffer<float>::random({32}, -0.1f, 0.1f, 12);
    auto w2 = Buffer<float>::random({32, 32, 1, 1}, -0.3f, 0.3f, 13), b2 = Buffer<float>::random({32}, -0.1f, 0.1f, 14);
    graph::Graph g;
    graph::Value x = g.input("x", {1, 16, 12, 12});
    graph::Value a = g.relu(g.conv2d(x, g.constant("w1", w1), g.constant("b1", b1), {.pad = 1}, "conv1"));
    g.output(g.add(g.conv2d(a, g.constant("w2", w2), g.constant("b2", b2), {}, "conv2"), a), "y");
    auto in = Buffer<float>::random({1, 16, 12, 12}, -1.f, 1.f, 15);
    std::vector<double> h = conv_bf16_reference(std::vector<double>(in.data(), in.data() + in.size()), 16, 12, w1, b1, 1);
    for (double& v : h) v = std::max(v, 0.0);
    std::vector<double> want = conv_bf16_reference(h, 32, 12, w2, b2, 0);
    for (size_t i = 0; i < want.size(); ++i) want[i] += h[i];
    // (On a CPU with AMX the host's build runs both on tiles: data blocks of 16 and 32.)
    Target without = weft::test::host_without("avx512bf16");
    without.features += ",-amx-bf16";
    for (const Target& target : {Target::host(), without}) {
        CAPTURE(target.has_feature("avx512bf16"));
        graph::Module m = graph::build(g, target, {.precision = graph::Precision::bf16});
        CHECK(count_kernels_named(m, "conv2d_nchwc_bf16") == 2);
        int tiled = 0;
        for (const Kernel& k : m.compiled_kernels()) tiled += k.assembly().find("tdpbf16ps") != std::string::npos;
        CHECK(tiled == (topi::has_amx_bf16(target) ? 2 : 0));
        m.set_input("x", in);
        m.run();
        Buffer<float> y(m.get_output("y"));
        REQUIRE(y.size() == int64_t(want.size()));
        double worst = 0;
        for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(y.data()[i] - want[i]) / (1 + std::abs(want[i])));
        CHECK(worst < 2e-5);
    }
}

TEST_CASE("precision bf16: an input that several converted layers read is rounded once") {
    graph::Graph g;
    graph::Value x = g.input("x", {4, 64});
    uint64_t seed = 3;
    for (const char* name : {"q", "k", "v"})  // three projections of one input
        g.output(g.dense(x, g.constant(std::string(name) + ".w", Buffer<float>::random({32, 64}, -1.f, 1.f, seed++))),
                 name);
    graph::Module m = graph::build(g, Target::host(), {.precision = graph::Precision::bf16});
    CHECK(count_kernels_named(m, "matmul_bf16") == 3);
    int casts = 0;
    for (const graph::Node& n : m.graph().nodes()) casts += n.op == "cast";
    CHECK(casts == 1);
}
