// onnx::LoadOptions::symbols: a model whose sequence length is a dim_param compiles once and
// runs at any length; each length computes what the model imported at that length computes
// (checked against ONNX Runtime by the conformance and model tests).
#include <doctest/doctest.h>

#include <cmath>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

std::vector<float> random_values(size_t n, uint64_t seed) {
    std::vector<float> v(n);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (float& x : v) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x = float(double(s >> 40) / double(1ull << 24)) - 0.5f;
    }
    return v;
}

// `module` (built once with symbols) against `fixed` (built for the values set) on input
// "x" = x: every output equal to 1e-6.
void check_against_fixed(graph::Module& module, graph::Module& fixed, const BufferRef& x) {
    module.set_input("x", x);
    fixed.set_input("x", x);
    module.run();
    fixed.run();
    for (int o = 0; o < fixed.num_outputs(); ++o) {
        CAPTURE(o);
        const BufferRef &got = module.get_output(o), &want = fixed.get_output(o);
        REQUIRE(got.shape() == want.shape());
        for (int64_t i = 0; i < got.size(); ++i)
            CHECK(std::abs(static_cast<const float*>(got.data())[i] - static_cast<const float*>(want.data())[i]) < 1e-6);
    }
}

// X [seq, 1, 4] -> LSTM (hidden 3) -> Y [seq, 1, 1, 3] reshaped to [seq, 3] by a shape
// computed from X's (Shape, Gather, Concat: folded at import, so the reshape's attribute
// changes with seq), plus Y_h and the last step of Y by a Slice that starts at seq - 1.
Model lstm_model() {
    Model m(14);
    m.input("x", {-1, 1, 4}, pb::TensorProto::FLOAT, "seq");
    const int H = 3;
    m.initializer("w", {1, 4 * H, 4}, random_values(4 * H * 4, 1));
    m.initializer("r", {1, 4 * H, H}, random_values(4 * H * H, 2));
    m.initializer("b", {1, 8 * H}, random_values(8 * H, 3));
    set_int(m.node("LSTM", {"x", "w", "r", "b"}, {"y", "y_h"}), "hidden_size", H);
    m.node("Shape", {"x"}, {"x_shape"});
    m.initializer_i64("zero", {1}, {0});
    m.initializer_i64("three", {1}, {3});
    m.node("Gather", {"x_shape", "zero"}, {"seq_len"});
    m.node("Concat", {"seq_len", "three"}, {"rows_shape"}).add_attribute()->CopyFrom([] {
        pb::AttributeProto a;
        a.set_name("axis");
        a.set_type(pb::AttributeProto::INT);
        a.set_i(0);
        return a;
    }());
    m.node("Reshape", {"y", "rows_shape"}, {"rows"});
    m.initializer_i64("minus_one", {1}, {-1});
    m.initializer_i64("big", {1}, {1 << 20});
    m.node("Slice", {"rows", "minus_one", "big", "zero"}, {"last"});
    m.output("rows");
    m.output("y_h");
    m.output("last");
    return m;
}

}  // namespace

TEST_CASE("onnx: a symbolic sequence length: an LSTM model compiled once runs at lengths 2, 5 and 9") {
    Model m = lstm_model();
    graph::Graph g = m.load({.symbols = {{"seq", 9}}});
    REQUIRE(g.symbols().size() == 1);
    graph::Module module = graph::build(g);
    for (int64_t seq : {2, 5, 9, 5}) {
        CAPTURE(seq);
        Buffer<float> x({seq, 1, 4});
        std::vector<float> v = random_values(size_t(seq * 4), uint64_t(10 + seq));
        std::copy(v.begin(), v.end(), x.begin());
        graph::Module fixed = graph::build(m.load({.dim_values = {{"seq", seq}}}));
        check_against_fixed(module, fixed, x);
        CHECK(module.get_output("rows").shape() == std::vector<int64_t>{seq, 3});
    }
}

TEST_CASE("onnx: LoadOptions::symbols names a dim_param no input has: an error") {
    Model m = lstm_model();
    const std::string e = error_of([&] { m.load({.symbols = {{"seq", 9}, {"batch", 4}}}); });
    CHECK_MESSAGE(e.find("no graph input has") != std::string::npos, e);
}

TEST_CASE("onnx: a symbolic length through position embeddings (Range, Gather) and an Expand of a scalar") {
    // y = (x + table[arange(seq)]) * expand(2, shape(x)): both fold into constants that change
    // with seq (a prefix of the table's rows, a splat), read by the module as views.
    Model m(14);
    m.input("x", {1, -1, 4}, pb::TensorProto::FLOAT, "seq");
    std::vector<float> table = random_values(16 * 4, 5);
    m.initializer("table", {16, 4}, table);
    m.node("Shape", {"x"}, {"x_shape"});
    m.initializer_i64("one", {}, {1});
    m.initializer_i64("zero", {}, {0});
    m.node("Gather", {"x_shape", "one"}, {"len"});
    m.node("Range", {"zero", "len", "one"}, {"ids"});
    m.node("Gather", {"table", "ids"}, {"emb"});
    m.node("Add", {"x", "emb"}, {"sum"});
    m.initializer("two", {}, {2.0f});
    m.node("Expand", {"two", "x_shape"}, {"twos"});
    m.node("Mul", {"sum", "twos"}, {"y"});
    m.output("y");
    graph::Module module = graph::build(m.load({.symbols = {{"seq", 16}}}));
    for (int64_t seq : {3, 16, 7}) {
        CAPTURE(seq);
        Buffer<float> x({1, seq, 4});
        std::vector<float> v = random_values(size_t(seq * 4), uint64_t(20 + seq));
        std::copy(v.begin(), v.end(), x.begin());
        module.set_input("x", x);
        module.run();
        const BufferRef& y = module.get_output("y");
        REQUIRE(y.shape() == std::vector<int64_t>{1, seq, 4});
        const float* got = static_cast<const float*>(y.data());
        for (int64_t t = 0; t < seq; ++t)
            for (int64_t c = 0; c < 4; ++c)
                CHECK(got[t * 4 + c] == doctest::Approx((v[size_t(t * 4 + c)] + table[size_t(t * 4 + c)]) * 2.0));
    }
}

TEST_CASE("onnx: a symbolic length of token ids gathered from an embedding table") {
    Model m(14);
    m.input("ids", {1, -1}, pb::TensorProto::INT64, "seq");
    std::vector<float> table = random_values(10 * 3, 6);
    m.initializer("table", {10, 3}, table);
    m.node("Gather", {"table", "ids"}, {"y"});
    m.output("y");
    graph::Module module = graph::build(m.load({.symbols = {{"seq", 32}}}));
    for (int64_t seq : {1, 5, 32}) {
        CAPTURE(seq);
        Buffer<int64_t> ids({1, seq});
        for (int64_t t = 0; t < seq; ++t) ids(0, t) = (t * 7 + 3) % 10 - (t % 3 == 0 ? 10 : 0);  // some negative
        module.set_input("ids", ids);
        module.run();
        const BufferRef& y = module.get_output("y");
        REQUIRE(y.shape() == std::vector<int64_t>{1, seq, 3});
        for (int64_t t = 0; t < seq; ++t) {
            int64_t row = ids(0, t) < 0 ? ids(0, t) + 10 : ids(0, t);
            for (int64_t c = 0; c < 3; ++c)
                CHECK(static_cast<const float*>(y.data())[t * 3 + c] == table[size_t(row * 3 + c)]);
        }
    }
}

namespace {

// A detector's shape (DBNet's, in miniature): x [1, 3, height, width] -> strided Conv, Conv,
// Resize x2 (scales), a 1x1 Conv, Sigmoid -> "prob", and "full": prob resized back to the
// input's height and width by sizes computed from Shape(x) (Slice, Concat).
Model detector_model() {
    Model m(13);
    m.input("x", {1, 3, -1, -1});
    auto* dims = m.g->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    dims->mutable_dim(2)->set_dim_param("height");
    dims->mutable_dim(3)->set_dim_param("width");
    m.initializer("w1", {8, 3, 3, 3}, random_values(8 * 27, 21));
    m.initializer("b1", {8}, random_values(8, 22));
    m.initializer("w2", {8, 8, 3, 3}, random_values(8 * 72, 23));
    m.initializer("w3", {1, 8, 1, 1}, random_values(8, 24));
    pb::NodeProto& c1 = m.node("Conv", {"x", "w1", "b1"}, {"c1"});
    set_ints(c1, "strides", {2, 2});
    set_ints(c1, "pads", {1, 1, 1, 1});
    m.node("Relu", {"c1"}, {"r1"});
    set_ints(m.node("Conv", {"r1", "w2"}, {"c2"}), "pads", {1, 1, 1, 1});
    m.node("Relu", {"c2"}, {"r2"});
    m.initializer("scales", {4}, {1.f, 1.f, 2.f, 2.f});
    m.initializer("no_roi", {0}, {});
    m.node("Resize", {"r2", "no_roi", "scales"}, {"up"});
    m.node("Conv", {"up", "w3"}, {"logits"});
    m.node("Sigmoid", {"logits"}, {"prob"});
    m.node("Shape", {"x"}, {"x_shape"});
    m.initializer_i64("from", {1}, {2});
    m.initializer_i64("to", {1}, {4});
    m.node("Slice", {"x_shape", "from", "to"}, {"hw"});
    m.initializer_i64("one_one", {2}, {1, 1});
    set_int(m.node("Concat", {"one_one", "hw"}, {"full_size"}), "axis", 0);
    m.node("Resize", {"prob", "no_roi", "", "full_size"}, {"full"});
    m.output("prob");
    m.output("full");
    return m;
}

}  // namespace

TEST_CASE("onnx: a symbolic image height and width: a detector compiled once runs at three sizes") {
    Model m = detector_model();
    graph::Graph g = m.load({.symbols = {{"height", 64}, {"width", 64}}});
    REQUIRE(g.symbols().size() == 2);
    graph::Module module = graph::build(g);
    int per_size = 0;
    for (const graph::KernelInfo& k : module.kernels()) per_size += k.per_size;
    CHECK(per_size >= 2);  // the strided convolution's output is no sum of products of the sizes
    for (auto [h, w] : std::vector<std::pair<int64_t, int64_t>>{{64, 64}, {40, 56}, {33, 17}, {64, 64}, {33, 17}}) {
        CAPTURE(h);
        CAPTURE(w);
        Buffer<float> x({1, 3, h, w});
        std::vector<float> v = random_values(size_t(3 * h * w), uint64_t(h * 1000 + w));
        std::copy(v.begin(), v.end(), x.begin());
        graph::Module fixed = graph::build(m.load({.dim_values = {{"height", h}, {"width", w}}}));
        check_against_fixed(module, fixed, x);
        CHECK(module.get_output("full").shape() == std::vector<int64_t>{1, 1, h, w});
    }
}
