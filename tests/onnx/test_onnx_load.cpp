// The ONNX importer: small models built with the protobuf classes, imported, built, run and
// compared with naive references; the opset-dependent forms of the operators.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

Buffer<float> rnd(std::vector<int64_t> shape, uint64_t seed) { return Buffer<float>::random(shape, -1.f, 1.f, seed); }

std::vector<float> values(const Buffer<float>& b) { return std::vector<float>(b.begin(), b.end()); }

void check_close(const Buffer<float>& got, const std::vector<float>& want, float tol = 1e-4f) {
    REQUIRE(size_t(got.size()) == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(got.data()[i] - want[i]) <= tol * (1 + std::abs(want[i])));
}

}  // namespace

TEST_CASE("onnx: a Relu model imports and runs") {
    Model m;
    m.input("x", {2, 3});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    graph::Graph g = m.load();
    Buffer<float> x = rnd({2, 3}, 1);
    Buffer<float> y = run(g, {x})[0];
    for (int i = 0; i < 6; ++i) CHECK(y.data()[i] == std::max(0.f, x.data()[i]));
    CHECK(g.find("y"));
    CHECK(g.inputs().size() == 1);
    CHECK(g.outputs().at(0).first == "y");
}

TEST_CASE("onnx: Gemm with transA, transB, alpha, beta and initializers as constants") {
    for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb) {
            CAPTURE(ta);
            CAPTURE(tb);
            const int M = 3, K = 4, N = 5;
            Model m(11);
            m.input("a", ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K});
            Buffer<float> b = rnd(tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, 2), c = rnd({N}, 3);
            m.initializer("b", b.shape(), values(b));
            m.initializer("c", {N}, values(c));
            auto& n = m.node("Gemm", {"a", "b", "c"}, {"y"});
            set_int(n, "transA", ta);
            set_int(n, "transB", tb);
            set_float(n, "alpha", 0.5f);
            set_float(n, "beta", 2.0f);
            m.output("y");
            graph::Graph g = m.load();
            CHECK(g.node(*g.find("b")).is_constant());
            Buffer<float> a = rnd(ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, 4);
            std::vector<float> want(M * N);
            for (int i = 0; i < M; ++i)
                for (int j = 0; j < N; ++j) {
                    double s = 0;
                    for (int k = 0; k < K; ++k) s += double(ta ? a(k, i) : a(i, k)) * double(tb ? b(j, k) : b(k, j));
                    want[size_t(i * N + j)] = float(0.5 * s + 2.0 * c(j));
                }
            check_close(run(g, {a})[0], want);
        }
}

TEST_CASE("onnx: Conv with groups, bias and auto_pad SAME_UPPER; a 1-D Conv") {
    const int64_t C = 4, O = 6, G = 2, H = 7, W = 6;
    Model m;
    m.input("x", {1, C, H, W});
    Buffer<float> w = rnd({O, C / G, 3, 3}, 5), b = rnd({O}, 6);
    m.initializer("w", w.shape(), values(w));
    m.initializer("b", {O}, values(b));
    auto& n = m.node("Conv", {"x", "w", "b"}, {"y"});
    set_int(n, "group", G);
    set_string(n, "auto_pad", "SAME_UPPER");
    set_ints(n, "strides", {2, 2});
    m.output("y");
    graph::Graph g = m.load();
    const int64_t OH = 4, OW = 3;  // ceil(7 / 2), ceil(6 / 2)
    CHECK(g.type(g.outputs()[0].second).shape == std::vector<int64_t>{1, O, OH, OW});
    // SAME_UPPER: total padding (OH-1)*2 + 3 - H = 2 rows (1 top), 1 column (0 left).
    Buffer<float> x = rnd({1, C, H, W}, 7);
    std::vector<float> want;
    for (int64_t o = 0; o < O; ++o)
        for (int64_t oy = 0; oy < OH; ++oy)
            for (int64_t ox = 0; ox < OW; ++ox) {
                double s = b(o);
                int64_t grp = o / (O / G);
                for (int64_t ci = 0; ci < C / G; ++ci)
                    for (int64_t ky = 0; ky < 3; ++ky)
                        for (int64_t kx = 0; kx < 3; ++kx) {
                            int64_t iy = oy * 2 + ky - 1, ix = ox * 2 + kx - 0;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                            s += double(x(0, grp * (C / G) + ci, iy, ix)) * double(w(o, ci, ky, kx));
                        }
                want.push_back(float(s));
            }
    check_close(run(g, {x})[0], want);

    Model m1;  // 1-D: [N, C, W] runs as 2-D over one row
    m1.input("x", {1, 2, 9});
    Buffer<float> w1 = rnd({3, 2, 3}, 8);
    m1.initializer("w", w1.shape(), values(w1));
    auto& n1 = m1.node("Conv", {"x", "w"}, {"y"});
    set_ints(n1, "pads", {1, 1});
    m1.output("y");
    graph::Graph g1 = m1.load();
    Buffer<float> x1 = rnd({1, 2, 9}, 9);
    std::vector<float> want1;
    for (int64_t o = 0; o < 3; ++o)
        for (int64_t ox = 0; ox < 9; ++ox) {
            double s = 0;
            for (int64_t ci = 0; ci < 2; ++ci)
                for (int64_t k = 0; k < 3; ++k) {
                    int64_t ix = ox + k - 1;
                    if (ix >= 0 && ix < 9) s += double(x1(0, ci, ix)) * double(w1(o, ci, k));
                }
            want1.push_back(float(s));
        }
    CHECK(g1.type(g1.outputs()[0].second).shape == std::vector<int64_t>{1, 3, 9});
    check_close(run(g1, {x1})[0], want1);
}

TEST_CASE("onnx: Softmax before opset 13 flattens at axis, from 13 it normalizes one axis") {
    Buffer<float> x = rnd({2, 3, 4}, 10);
    for (int opset : {11, 13}) {
        CAPTURE(opset);
        Model m(opset);
        m.input("x", {2, 3, 4});
        set_int(m.node("Softmax", {"x"}, {"y"}), "axis", 1);
        m.output("y");
        Buffer<float> y = run(m.load(), {x})[0];
        std::vector<float> want(24);
        if (opset == 11) {  // over the 12 elements of each batch
            for (int n = 0; n < 2; ++n) {
                double s = 0;
                for (int i = 0; i < 12; ++i) s += std::exp(double(x.data()[n * 12 + i]));
                for (int i = 0; i < 12; ++i) want[size_t(n * 12 + i)] = float(std::exp(double(x.data()[n * 12 + i])) / s);
            }
        } else {  // over axis 1 only
            for (int n = 0; n < 2; ++n)
                for (int k = 0; k < 4; ++k) {
                    double s = 0;
                    for (int c = 0; c < 3; ++c) s += std::exp(double(x(n, c, k)));
                    for (int c = 0; c < 3; ++c) want[size_t(n * 12 + c * 4 + k)] = float(std::exp(double(x(n, c, k))) / s);
                }
        }
        check_close(y, want);
    }
}

TEST_CASE("onnx: Clip's bounds as attributes (opset 6) and as inputs (opset 11+, one omitted)") {
    Buffer<float> x = rnd({10}, 11);
    auto want = [&](float lo, float hi) {
        std::vector<float> r;
        for (float v : x) r.push_back(std::min(std::max(v, lo), hi));
        return r;
    };
    Model m6(6);
    m6.input("x", {10});
    auto& n = m6.node("Clip", {"x"}, {"y"});
    set_float(n, "min", -0.25f);
    set_float(n, "max", 0.5f);
    m6.output("y");
    check_close(run(m6.load(), {x})[0], want(-0.25f, 0.5f));

    Model m13(13);
    m13.input("x", {10});
    m13.initializer("hi", {}, {0.5f});
    m13.node("Clip", {"x", "", "hi"}, {"y"});
    m13.output("y");
    check_close(run(m13.load(), {x})[0], want(-INFINITY, 0.5f));

    Model mv(13);  // a bound that is a graph input: maximum / minimum
    mv.input("x", {10});
    mv.input("lo", {});
    mv.node("Clip", {"x", "lo"}, {"y"});
    mv.output("y");
    Buffer<float> lo({1});
    lo(0) = -0.1f;
    check_close(run(mv.load(), {x, lo})[0], want(-0.1f, INFINITY));

    // A bound computed from the input (an audio front end's max(x) - 0.8): run time too.
    Model mr(13);
    mr.input("x", {10});
    mr.initializer("drop", {}, {0.8f});
    set_int(mr.node("ReduceMax", {"x"}, {"top"}), "keepdims", 0);
    mr.node("Sub", {"top", "drop"}, {"floor"});
    mr.node("Clip", {"x", "floor"}, {"y"});
    mr.output("y");
    float top = -INFINITY;
    for (float v : x) top = std::max(top, v);
    check_close(run(mr.load(), {x})[0], want(top - 0.8f, INFINITY));
}

TEST_CASE("onnx: Squeeze / Unsqueeze / ReduceSum axes as attributes (opset 11) and as inputs (opset 13)") {
    Buffer<float> x = rnd({2, 1, 3}, 12);
    for (int opset : {11, 13}) {
        CAPTURE(opset);
        Model m(opset);
        m.input("x", {2, 1, 3});
        if (opset >= 13) {
            m.initializer_i64("ax1", {1}, {1});
            m.initializer_i64("ax0", {1}, {0});
            m.initializer_i64("ax2", {1}, {-1});
            m.node("Squeeze", {"x", "ax1"}, {"s"});
            m.node("Unsqueeze", {"s", "ax0"}, {"u"});
            set_int(m.node("ReduceSum", {"u", "ax2"}, {"y"}), "keepdims", 0);
        } else {
            set_ints(m.node("Squeeze", {"x"}, {"s"}), "axes", {1});
            set_ints(m.node("Unsqueeze", {"s"}, {"u"}), "axes", {0});
            auto& r = m.node("ReduceSum", {"u"}, {"y"});
            set_ints(r, "axes", {-1});
            set_int(r, "keepdims", 0);
        }
        m.output("y");
        graph::Graph g = m.load();
        CHECK(g.type(g.outputs()[0].second).shape == std::vector<int64_t>{1, 2});
        Buffer<float> y = run(g, {x})[0];
        for (int i = 0; i < 2; ++i) CHECK(y.data()[i] == doctest::Approx(x(i, 0, 0) + x(i, 0, 1) + x(i, 0, 2)));
    }
}

TEST_CASE("onnx: Shape -> Gather -> Unsqueeze -> Concat -> Reshape (PyTorch's flatten) folds to a constant shape") {
    Model m(13);
    m.input("x", {2, 3, 4});
    m.initializer_i64("zero", {}, {0});
    m.initializer_i64("ax0", {1}, {0});
    m.initializer_i64("minus1", {1}, {-1});
    m.node("Shape", {"x"}, {"shape"});
    m.node("Gather", {"shape", "zero"}, {"batch"});  // a scalar index: a scalar
    m.node("Unsqueeze", {"batch", "ax0"}, {"batch1"});
    set_int(m.node("Concat", {"batch1", "minus1"}, {"new_shape"}), "axis", 0);
    m.node("Reshape", {"x", "new_shape"}, {"y"});
    m.output("y");
    graph::Graph g = m.load();
    CHECK(g.type(g.outputs()[0].second).shape == std::vector<int64_t>{2, 12});
    Buffer<float> x = rnd({2, 3, 4}, 13);
    check_close(run(g, {x})[0], values(x));
}

TEST_CASE("onnx: MatMul with broadcast batch dimensions and a vector operand") {
    Model m(13);
    m.input("a", {2, 1, 3, 4});
    m.input("b", {5, 4, 2});
    m.input("v", {2});
    m.node("MatMul", {"a", "b"}, {"y"});
    m.node("MatMul", {"y", "v"}, {"z"});  // [2, 5, 3, 2] x [2] -> [2, 5, 3]
    m.output("y");
    m.output("z");
    graph::Graph g = m.load();
    CHECK(g.type(g.outputs()[0].second).shape == std::vector<int64_t>{2, 5, 3, 2});
    CHECK(g.type(g.outputs()[1].second).shape == std::vector<int64_t>{2, 5, 3});
    Buffer<float> a = rnd({2, 1, 3, 4}, 14), b = rnd({5, 4, 2}, 15), v = rnd({2}, 16);
    auto out = run(g, {a, b, v});
    std::vector<float> wy, wz;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 5; ++j)
            for (int r = 0; r < 3; ++r) {
                double z = 0;
                for (int c = 0; c < 2; ++c) {
                    double s = 0;
                    for (int k = 0; k < 4; ++k) s += double(a(i, 0, r, k)) * double(b(j, k, c));
                    wy.push_back(float(s));
                    z += s * double(v(c));
                }
                wz.push_back(float(z));
            }
    check_close(out[0], wy);
    check_close(out[1], wz);
}

TEST_CASE("onnx: symbolic dimensions take LoadOptions::input_shapes or dim_values") {
    Model m(13);
    m.input("x", {-1, 3}, onnx_test::pb::TensorProto::FLOAT, "batch");
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    std::string e = error_of([&] { m.load(); });
    CHECK(e.find("symbolic dimension 'batch'") != std::string::npos);
    CHECK(e.find("LoadOptions::input_shapes") != std::string::npos);
    CHECK_THROWS_AS(m.load(), weft::onnx::UnsupportedError);

    graph::Graph g = m.load({.input_shapes = {{"x", {4, 3}}}});
    CHECK(g.type(*g.find("x")).shape == std::vector<int64_t>{4, 3});
    graph::Graph h = m.load({.dim_values = {{"batch", 7}}});
    CHECK(h.type(*h.find("x")).shape == std::vector<int64_t>{7, 3});

    CHECK(error_of([&] { m.load({.input_shapes = {{"x", {4, 5}}}}); }).find("fixes at 3") != std::string::npos);
    CHECK(error_of([&] { m.load({.input_shapes = {{"x", {4}}}}); }).find("rank") != std::string::npos);
    CHECK(error_of([&] { m.load({.input_shapes = {{"nope", {4, 3}}}}); }).find("'nope'") != std::string::npos);
}

TEST_CASE("onnx: LoadOptions::constant_inputs freezes a shape input") {
    Model m(13);
    m.input("x", {2, 6});
    m.input("shape", {2}, onnx_test::pb::TensorProto::INT64);
    m.node("Reshape", {"x", "shape"}, {"y"});
    m.output("y");
    std::string e = error_of([&] { m.load(); });
    CHECK(e.find("node 'y' (Reshape, opset 13)") != std::string::npos);
    CHECK(e.find("must be a constant") != std::string::npos);
    Buffer<int64_t> s({2});
    s(0) = 3;
    s(1) = 4;
    graph::Graph g = m.load({.constant_inputs = {{"shape", s}}});
    CHECK(g.inputs().size() == 1);
    CHECK(g.type(g.outputs()[0].second).shape == std::vector<int64_t>{3, 4});
}

TEST_CASE("onnx: Gather with a scalar index drops the axis; BatchNormalization and Dropout in inference") {
    Model m(13);
    m.input("x", {3, 2, 2, 2});
    m.initializer_i64("i", {}, {1});
    m.node("Gather", {"x", "i"}, {"g"});  // [2, 2, 2]
    m.node("Unsqueeze", {"g", "i0"}, {"u"});
    m.initializer_i64("i0", {1}, {0});
    for (const char* p : {"gamma", "beta", "mean", "var"}) m.initializer(p, {2}, {0.5f, 2.f});
    m.node("BatchNormalization", {"u", "gamma", "beta", "mean", "var"}, {"bn"});
    m.node("Dropout", {"bn"}, {"y", "mask"});
    m.output("y");
    graph::Graph g = m.load();
    CHECK(g.type(*g.find("g")).shape == std::vector<int64_t>{2, 2, 2});
    Buffer<float> x = rnd({3, 2, 2, 2}, 17);
    Buffer<float> y = run(g, {x})[0];
    std::vector<float> want;
    for (int c = 0; c < 2; ++c)
        for (int i = 0; i < 4; ++i) {
            float gm = c ? 2.f : 0.5f;
            float v = x.data()[8 + c * 4 + i];
            want.push_back((v - gm) / std::sqrt(gm + 1e-5f) * gm + gm);
        }
    check_close(y, want);

    // Training mode with a ratio of 0 (torch's export of Swin's attention dropout) drops
    // nothing: the identity; with another ratio it is refused.
    for (float ratio : {0.f, 0.25f}) {
        Model t(17);
        t.input("x", {2, 3});
        t.initializer("ratio", {}, {ratio});
        t.g->add_initializer()->CopyFrom([] {
            onnx_test::pb::TensorProto b;
            b.set_name("training");
            b.set_data_type(onnx_test::pb::TensorProto::BOOL);
            b.add_int32_data(1);
            return b;
        }());
        t.node("Dropout", {"x", "ratio", "training"}, {"y"});
        t.output("y");
        if (ratio != 0.f) {
            CHECK(error_of([&] { t.load(); }).find("Dropout in training mode") != std::string::npos);
            continue;
        }
        Buffer<float> tx = rnd({2, 3}, 18);
        check_close(run(t.load(), {tx})[0], std::vector<float>(tx.begin(), tx.end()), 0);
    }
}

namespace {

// ConvTranspose by its definition: every input element scatters its kernel, times itself,
// into the output at stride * i + dilation * k - pad_begin (2-D, groups).
std::vector<double> naive_conv_transpose(const Buffer<float>& x, const Buffer<float>& w, int64_t group,
                                         std::vector<int64_t> stride, std::vector<int64_t> dil,
                                         std::vector<int64_t> pads, std::vector<int64_t> out_pad,
                                         std::vector<int64_t>* out_shape) {
    const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
    const int64_t Og = w.shape()[1], KH = w.shape()[2], KW = w.shape()[3], O = Og * group, Cg = C / group;
    const int64_t OH = stride[0] * (H - 1) + out_pad[0] + (KH - 1) * dil[0] + 1 - pads[0] - pads[2];
    const int64_t OW = stride[1] * (W - 1) + out_pad[1] + (KW - 1) * dil[1] + 1 - pads[1] - pads[3];
    *out_shape = {N, O, OH, OW};
    std::vector<double> y(size_t(N * O * OH * OW), 0.0);
    for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t i = 0; i < H; ++i)
                for (int64_t j = 0; j < W; ++j)
                    for (int64_t o = 0; o < Og; ++o)
                        for (int64_t kh = 0; kh < KH; ++kh)
                            for (int64_t kw = 0; kw < KW; ++kw) {
                                const int64_t oy = stride[0] * i + dil[0] * kh - pads[0];
                                const int64_t ox = stride[1] * j + dil[1] * kw - pads[1];
                                if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
                                const int64_t oc = (c / Cg) * Og + o;
                                y[size_t(((n * O + oc) * OH + oy) * OW + ox)] +=
                                    double(x(n, c, i, j)) * double(w(c, o, kh, kw));
                            }
    return y;
}

}  // namespace

TEST_CASE("onnx: ConvTranspose against its definition: strides, dilations, groups, pads and output_padding") {
    struct Case {
        int64_t C, O, H, W, K, group;
        std::vector<int64_t> stride, dil, pads, out_pad;
    };
    const std::vector<Case> cases = {
        {3, 2, 4, 5, 3, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, {0, 0}},
        {4, 6, 3, 3, 2, 2, {2, 3}, {1, 1}, {1, 0, 0, 1}, {1, 2}},  // crops at both ends, output_padding
        {2, 2, 5, 4, 3, 2, {1, 1}, {2, 1}, {2, 1, 2, 1}, {0, 0}},  // dilation, depthwise-like groups
        {8, 4, 6, 6, 4, 1, {2, 2}, {1, 1}, {1, 1, 1, 1}, {0, 0}},  // DBNet's upsampling head shape
        {2, 3, 3, 4, 1, 1, {3, 2}, {1, 1}, {0, 0, 0, 0}, {2, 1}},  // a kernel smaller than the stride: phases without taps
    };
    // Strided without dilation runs by phases: random strides, kernels (smaller than the stride
    // too), asymmetric pads and output_padding.
    std::vector<Case> all = cases;
    uint64_t state = 7;
    auto dice = [&](int64_t lo, int64_t hi) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return lo + int64_t((state >> 33) % uint64_t(hi - lo + 1));
    };
    for (int i = 0; i < 12; ++i) {
        const int64_t group = dice(1, 2), K = dice(1, 5);
        std::vector<int64_t> stride = {dice(1, 4), dice(2, 4)};
        std::vector<int64_t> pads = {dice(0, K - 1), dice(0, K - 1), dice(0, K - 1), dice(0, K - 1)};
        std::vector<int64_t> out_pad = {dice(0, stride[0] - 1), dice(0, stride[1] - 1)};
        all.push_back({2 * group, 2 * group, dice(2, 6), dice(2, 6), K, group, stride, {1, 1}, pads, out_pad});
    }
    uint64_t seed = 90;
    for (const Case& k : all) {
        CAPTURE(k.C); CAPTURE(k.group); CAPTURE(k.K); CAPTURE(k.stride[0]); CAPTURE(k.stride[1]); CAPTURE(k.pads[0]);
        CAPTURE(k.pads[1]); CAPTURE(k.pads[2]); CAPTURE(k.pads[3]); CAPTURE(k.out_pad[0]); CAPTURE(k.out_pad[1]);
        if (k.stride[0] * (k.H - 1) + k.out_pad[0] + k.K - k.pads[0] - k.pads[2] < 1 ||
            k.stride[1] * (k.W - 1) + k.out_pad[1] + k.K - k.pads[1] - k.pads[3] < 1)
            continue;  // an empty output
        Buffer<float> x = rnd({2, k.C, k.H, k.W}, seed++), w = rnd({k.C, k.O / k.group, k.K, k.K}, seed++),
                      b = rnd({k.O}, seed++);
        std::vector<int64_t> out_shape;
        std::vector<double> want = naive_conv_transpose(x, w, k.group, k.stride, k.dil, k.pads, k.out_pad, &out_shape);
        for (int64_t i = 0; i < int64_t(want.size()); ++i) want[size_t(i)] += b.data()[(i / (out_shape[2] * out_shape[3])) % k.O];
        Model m(13);
        m.input("x", x.shape());
        m.initializer("w", w.shape(), values(w));
        m.initializer("b", b.shape(), values(b));
        auto& n = m.node("ConvTranspose", {"x", "w", "b"}, {"y"});
        set_ints(n, "strides", k.stride);
        set_ints(n, "dilations", k.dil);
        set_ints(n, "pads", k.pads);
        set_ints(n, "output_padding", k.out_pad);
        set_int(n, "group", k.group);
        m.output("y");
        graph::Graph g = m.load();
        CHECK(g.type(g.outputs().at(0).second).shape == out_shape);
        Buffer<float> y = run(g, {x})[0];
        REQUIRE(y.size() == int64_t(want.size()));
        int bad = 0;
        for (size_t i = 0; i < want.size(); ++i) bad += std::abs(y.data()[i] - want[i]) > 1e-4 * (1 + std::abs(want[i]));
        CHECK(bad == 0);
    }
}

TEST_CASE("onnx: BitShift left and right on uint8, shifts past the width give 0") {
    for (const char* dir : {"LEFT", "RIGHT"}) {
        CAPTURE(dir);
        Model m(11);
        m.input("x", {12}, onnx_test::pb::TensorProto::UINT8);
        m.input("s", {12}, onnx_test::pb::TensorProto::UINT8);
        set_string(m.node("BitShift", {"x", "s"}, {"y"}), "direction", dir);
        m.output("y", onnx_test::pb::TensorProto::UINT8);
        graph::Graph g = m.load();
        Buffer<uint8_t> x({12}), s({12});
        for (int i = 0; i < 12; ++i) {
            x.data()[i] = uint8_t(37 * i + 201);
            s.data()[i] = uint8_t(i);  // 0 .. 11: 8 and past shift everything out
        }
        graph::Module mod = graph::build(g);
        mod.set_input("x", x);
        mod.set_input("s", s);
        mod.run();
        Buffer<uint8_t> y(mod.get_output(0));
        for (int i = 0; i < 12; ++i) {
            const unsigned want = i >= 8 ? 0u : std::string(dir) == "LEFT" ? unsigned(uint8_t(x.data()[i] << i)) : unsigned(x.data()[i] >> i);
            CHECK(unsigned(y.data()[i]) == want);
        }
    }
}

namespace {

// IEEE half and bfloat16 from and to float, rounding to nearest even (the test's own, for
// its reference: independent of the LLVM casts weft compiles).
uint16_t to_half(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    const uint32_t sign = (u >> 16) & 0x8000;
    const int e = int((u >> 23) & 255) - 127 + 15;
    uint32_t m = u & 0x7FFFFF;
    if (e >= 31) return uint16_t(sign | 0x7C00);
    if (e <= 0) {  // subnormal
        if (e < -10) return uint16_t(sign);
        m |= 0x800000;
        const int shift = 14 - e;
        uint32_t r = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rest > half || (rest == half && (r & 1))) ++r;
        return uint16_t(sign | r);
    }
    uint32_t r = (uint32_t(e) << 10) | (m >> 13), rest = m & 0x1FFF;
    if (rest > 0x1000 || (rest == 0x1000 && (r & 1))) ++r;
    return uint16_t(sign | r);
}
float from_half(uint16_t h) {
    const uint32_t e = (h >> 10) & 31, m = h & 1023;
    if (e == 31) return (h & 0x8000 ? -1.f : 1.f) * (m ? std::nanf("") : INFINITY);
    float f = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(m | 1024), int(e) - 25);
    return (h & 0x8000) ? -f : f;
}
uint16_t to_bfloat(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}
float from_bfloat(uint16_t b) {
    uint32_t u = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

}  // namespace

TEST_CASE("onnx: float16 and bfloat16 models compute in float32 and round at their outputs and casts") {
    for (int elem : {int(pb::TensorProto::FLOAT16), int(pb::TensorProto::BFLOAT16)}) {
        const bool bf = elem == pb::TensorProto::BFLOAT16;
        CAPTURE(bf);
        auto narrow = [&](float f) { return bf ? to_bfloat(f) : to_half(f); };
        auto widen = [&](uint16_t h) { return bf ? from_bfloat(h) : from_half(h); };
        // y = tanh(x * w + 1) in the 16-bit type, w an initializer of that type; z = Cast(y, float).
        Model m(17);
        m.input("x", {2, 5}, elem);
        auto* w = m.g->add_initializer();
        w->set_name("w");
        w->set_data_type(elem);
        w->add_dims(5);
        Buffer<float> wv = rnd({5}, 31);
        for (float v : wv) w->add_int32_data(narrow(v));
        auto* one = m.g->add_initializer();
        one->set_name("one");
        one->set_data_type(elem);
        one->add_int32_data(narrow(1.f));
        m.node("Mul", {"x", "w"}, {"xw"});
        m.node("Add", {"xw", "one"}, {"s"});
        m.node("Tanh", {"s"}, {"y"});
        set_int(m.node("Cast", {"y"}, {"z"}), "to", pb::TensorProto::FLOAT);
        m.output("y", elem);
        m.output("z");
        graph::Graph g = m.load();
        const DataType t = bf ? DataType(DataType::Code::BFloat, 16) : DataType::float_(16);
        BufferRef x = BufferRef::allocate(t, {2, 5});
        Buffer<float> xv = rnd({2, 5}, 32);
        for (int64_t i = 0; i < 10; ++i) static_cast<uint16_t*>(x.data())[i] = narrow(xv.data()[i]);
        graph::Module mod = graph::build(g);
        mod.set_input("x", x);
        mod.run();
        const BufferRef& y = mod.get_output("y");
        REQUIRE(y.dtype() == t);
        Buffer<float> z(mod.get_output("z"));
        for (int64_t i = 0; i < 10; ++i) {
            const float xi = widen(narrow(xv.data()[i])), wi = widen(narrow(wv.data()[i % 5]));
            const float want = widen(narrow(std::tanh(xi * wi + 1.f)));  // float32 inside, one rounding
            const float got = widen(static_cast<const uint16_t*>(y.data())[i]);
            CHECK(std::abs(got - want) <= (bf ? 8e-3f : 1e-3f) * (1 + std::abs(want)));
            CHECK(z.data()[i] == got);  // Cast to float is exact
        }
    }
}

TEST_CASE("onnx: float16 values are rounded once to float16 by a Cast, then computed in float32") {
    // Cast(x: float -> float16) -> Cast(-> float): the rounding must happen, not be skipped.
    Model m(13);
    m.input("x", {8});
    set_int(m.node("Cast", {"x"}, {"h"}), "to", pb::TensorProto::FLOAT16);
    set_int(m.node("Cast", {"h"}, {"y"}), "to", pb::TensorProto::FLOAT);
    m.output("y");
    Buffer<float> x = rnd({8}, 33);
    x.data()[0] = 1.0f + 1.0f / 4096;  // halfway between two halves: to even (1.0)
    x.data()[1] = 70000.f;             // past the largest half: inf
    Buffer<float> y = run(m.load(), {x})[0];
    for (int64_t i = 0; i < 8; ++i) CHECK(y.data()[i] == from_half(to_half(x.data()[i])));
    CHECK(y.data()[0] == 1.0f);
    CHECK(std::isinf(y.data()[1]));
}
