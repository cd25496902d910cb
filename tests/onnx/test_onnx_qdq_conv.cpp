// A QDQ model's Conv (ONNX Runtime's quantize_static: DequantizeLinear of a uint8 or int8
// activation and of a constant int8 weight, per tensor or per output channel) runs on the
// 8-bit convolution (conv2d_nchwc_u8s8) whatever the precision, against a float64 reference
// of the dequantized values; a weight with a zero point other than 0 keeps the float
// convolution, and computes the same.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "onnx_model.hpp"
#include "weft/weft.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

constexpr int64_t kC = 16, kO = 32, kH = 9, kW = 11;

// The 3x3 convolution with padding 1 of a [kC, kH, kW] input `x(c, y, x)` by weights
// `w(o, c, kh, kw)`, each output starting from `init(o)`: [kO, kH, kW], in T.
template <class T, class X, class W, class Init>
std::vector<T> conv3x3_padded(X x, W w, Init init) {
    std::vector<T> y(size_t(kO * kH * kW));
    for (int64_t o = 0; o < kO; ++o)
        for (int64_t oy = 0; oy < kH; ++oy)
            for (int64_t ox = 0; ox < kW; ++ox) {
                T acc = init(o);
                for (int64_t c = 0; c < kC; ++c)
                    for (int64_t kh = 0; kh < 3; ++kh)
                        for (int64_t kw = 0; kw < 3; ++kw) {
                            const int64_t iy = oy + kh - 1, ix = ox + kw - 1;
                            if (iy >= 0 && iy < kH && ix >= 0 && ix < kW) acc += x(c, iy, ix) * w(o, c, kh, kw);
                        }
                y[size_t((o * kH + oy) * kW + ox)] = acc;
            }
    return y;
}

struct QdqConv {
    bool signed_input = false;  // int8 activations (zero point -5) or uint8 (100)
    bool per_channel = true;    // the weight's scales
    int weight_zero_point = 0;  // not 0: not the 8-bit kernel's form
    bool scaled_after = false;  // a per-channel Mul after the Conv, which fold_scale_axis folds into its weight

    float sx = 0.03f;
    int zx() const { return signed_input ? -5 : 100; }
    std::vector<int> w = [] {
        std::mt19937 rng(5);
        std::vector<int> v(size_t(kO * kC * 9));
        for (int& x : v) x = int(rng() % 255) - 127;
        return v;
    }();
    std::vector<float> sw() const {
        std::vector<float> s(per_channel ? size_t(kO) : 1);
        for (size_t o = 0; o < s.size(); ++o) s[o] = 0.002f * float(o + 1);
        return s;
    }
    std::vector<float> bias = std::vector<float>(size_t(kO), 0.25f);
    std::vector<float> channel_scales() const {
        std::vector<float> s(static_cast<size_t>(kO));
        for (size_t o = 0; o < s.size(); ++o) s[o] = 1.37f + 0.01f * float(o);
        return s;
    }

    std::vector<int64_t> input_dims{1, kC, kH, kW};  // (-1: the symbol "S")

    Model model() const {
        Model m(13);
        m.input("x", input_dims, pb::TensorProto::FLOAT, "S");
        const int xe = signed_input ? pb::TensorProto::INT8 : pb::TensorProto::UINT8;
        m.initializer("sx", {}, {sx});
        m.initializer_8bit("zx", {}, xe, {zx()});
        m.initializer_8bit("w", {kO, kC, 3, 3}, pb::TensorProto::INT8, w);
        const std::vector<float> scales = sw();
        const std::vector<int64_t> dims = per_channel ? std::vector<int64_t>{kO} : std::vector<int64_t>{};
        m.initializer("sw", dims, scales);
        m.initializer_8bit("zw", dims, pb::TensorProto::INT8, std::vector<int>(scales.size(), weight_zero_point));
        m.initializer("b", {kO}, bias);
        m.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
        m.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
        set_int(m.node("DequantizeLinear", {"w", "sw", "zw"}, {"wd"}), "axis", 0);
        set_ints(m.node("Conv", {"xd", "wd", "b"}, {scaled_after ? "conv" : "y"}), "pads", {1, 1, 1, 1});
        if (scaled_after) {
            m.initializer("s", {1, kO, 1, 1}, channel_scales());
            m.node("Mul", {"conv", "s"}, {"y"});
        }
        m.output("y");
        return m;
    }

    // The convolution of the dequantized values in float64, padded with 0.0.
    std::vector<double> reference(const Buffer<float>& x) const {
        const int lo = signed_input ? -128 : 0, hi = signed_input ? 127 : 255;
        std::vector<double> xd(size_t(x.size()));
        for (size_t i = 0; i < xd.size(); ++i)
            xd[i] = (std::clamp(double(std::nearbyint(x.data()[i] / sx)) + zx(), double(lo), double(hi)) - zx()) * double(sx);
        const std::vector<float> scales = sw();
        std::vector<double> y = conv3x3_padded<double>(
            [&](int64_t c, int64_t iy, int64_t ix) { return xd[size_t((c * kH + iy) * kW + ix)]; },
            [&](int64_t o, int64_t c, int64_t kh, int64_t kw) {
                return double(w[size_t(((o * kC + c) * 3 + kh) * 3 + kw)] - weight_zero_point) *
                       double(scales[per_channel ? size_t(o) : 0]);
            },
            [&](int64_t o) { return double(bias[size_t(o)]); });
        if (scaled_after)
            for (size_t i = 0; i < y.size(); ++i) y[i] *= double(channel_scales()[i / size_t(kH * kW)]);
        return y;
    }

    void check(bool expect_8bit, const weft::onnx::LoadOptions& load = {},
               graph::Precision precision = graph::Precision::f32) const {
        graph::Module m = graph::build(model().load(load), Target::host(), {.precision = precision});
        int eight_bit = 0;
        for (const graph::Node& n : m.graph().nodes()) eight_bit += n.op == "conv2d_nchwc_u8s8";
        CHECK(eight_bit == (expect_8bit ? 1 : 0));
        auto x = Buffer<float>::random({1, kC, kH, kW}, -4.f, 4.f, 9);  // (past the range too: saturated)
        m.set_input("x", x);
        m.run();
        Buffer<float> y(m.get_output(0));
        const std::vector<double> want = reference(x);
        REQUIRE(y.size() == int64_t(want.size()));
        int64_t wrong = 0;
        // The 8-bit kernel sums integers exactly; the float convolution rounds its sums of
        // products (up to about 50 in magnitude) in float32.
        const double tolerance = expect_8bit ? 1e-5 : 1e-4;
        for (size_t i = 0; i < want.size(); ++i)
            wrong += std::abs(y.data()[i] - want[i]) > tolerance * std::max(1.0, std::abs(want[i]));
        CHECK(wrong == 0);
    }
};

}  // namespace

TEST_CASE("onnx Conv of DequantizeLinear outputs (a QDQ model) runs on the 8-bit convolution") {
    for (bool signed_input : {false, true})
        for (bool per_channel : {true, false}) {
            CAPTURE(signed_input);
            CAPTURE(per_channel);
            QdqConv q;
            q.signed_input = signed_input;
            q.per_channel = per_channel;
            q.check(true);
        }
}

TEST_CASE("onnx QDQ Conv stays 8-bit in a bf16 build") {
    QdqConv q;
    q.check(true, {}, graph::Precision::bf16);
}

TEST_CASE("onnx Conv of a weight with a zero point keeps the float convolution") {
    QdqConv q;
    q.weight_zero_point = 3;
    q.check(false);
}

TEST_CASE("onnx QDQ Conv whose weight fold_scale_axis scales keeps it on its grid, exactly") {
    // fold_scale_axis multiplies the dequantized weight by the Mul's scales, and the weight's
    // quantization steps with them.
    QdqConv q;
    q.scaled_after = true;
    q.check(true);
}

TEST_CASE("onnx QLinearConv that fits the 8-bit convolution runs on it, within a step of the exact result") {
    // x uint8 [1, 16, 9, 11] (zero point 100), w int8 [32, 16, 3, 3] per output channel, an
    // int32 bias, y uint8 (zero point 90): against the int64 sums requantized in double. The
    // float32 scaling moves a value lying within about 1e-7 of a rounding boundary by a step.
    QdqConv q;  // (its weight and scales)
    const std::vector<float> sw = q.sw();
    std::mt19937 rng(11);
    std::vector<int> x(static_cast<size_t>(kC * kH * kW)), bias(static_cast<size_t>(kO));
    for (int& v : x) v = int(rng() % 256);
    for (int& v : bias) v = int(rng() % 2001) - 1000;
    const float sx = 0.03f, sy = 0.5f;
    const int zx = 100, zy = 90;
    Model m(13);
    m.input("x", {1, kC, kH, kW}, pb::TensorProto::UINT8);
    m.initializer("sx", {}, {sx});
    m.initializer_8bit("zx", {}, pb::TensorProto::UINT8, {zx});
    m.initializer_8bit("w", {kO, kC, 3, 3}, pb::TensorProto::INT8, q.w);
    m.initializer("sw", {kO}, sw);
    m.initializer_8bit("zw", {kO}, pb::TensorProto::INT8, std::vector<int>(size_t(kO), 0));
    m.initializer("sy", {}, {sy});
    m.initializer_8bit("zy", {}, pb::TensorProto::UINT8, {zy});
    auto* b = m.g->add_initializer();
    b->set_name("b");
    b->set_data_type(pb::TensorProto::INT32);
    b->add_dims(kO);
    for (int v : bias) b->add_int32_data(v);
    set_ints(m.node("QLinearConv", {"x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "b"}, {"y"}), "pads", {1, 1, 1, 1});
    m.output("y", pb::TensorProto::UINT8);
    graph::Module mod = graph::build(m.load());
    int eight_bit = 0;
    for (const graph::Node& n : mod.graph().nodes()) eight_bit += n.op == "conv2d_nchwc_u8s8";
    CHECK(eight_bit == 1);
    BufferRef xv = BufferRef::allocate(DataType::uint(8), {1, kC, kH, kW});
    for (size_t i = 0; i < x.size(); ++i) static_cast<uint8_t*>(xv.data())[i] = uint8_t(x[i]);
    mod.set_input("x", xv);
    mod.run();
    const BufferRef& y = mod.get_output(0);
    REQUIRE(y.shape() == std::vector<int64_t>{1, kO, kH, kW});
    const std::vector<int64_t> acc = conv3x3_padded<int64_t>(
        [&](int64_t c, int64_t iy, int64_t ix) { return int64_t(x[size_t((c * kH + iy) * kW + ix)] - zx); },
        [&](int64_t o, int64_t c, int64_t kh, int64_t kw) { return int64_t(q.w[size_t(((o * kC + c) * 3 + kh) * 3 + kw)]); },
        [&](int64_t o) { return int64_t(bias[size_t(o)]); });
    int64_t exact = 0, far = 0;
    for (size_t i = 0; i < acc.size(); ++i) {
        const size_t o = i / size_t(kH * kW);
        const double want = std::clamp(std::nearbyint(double(acc[i]) * (double(sx) * double(sw[o]) / double(sy))) + zy, 0.0, 255.0);
        const double got = static_cast<const uint8_t*>(y.data())[i];
        exact += got == want;
        far += std::abs(got - want) > 1;
    }
    CHECK(far == 0);
    CHECK(exact >= kO * kH * kW * 99 / 100);
}

TEST_CASE("onnx QDQ Conv over a symbolic batch or image height computes the same") {
    // Both on the 8-bit kernel: a batch per sample, a height (the kernel's extents are
    // constants) compiled at the size the run sets.
    for (int symbolic_axis : {0, 2}) {
        CAPTURE(symbolic_axis);
        QdqConv q;
        q.input_dims[size_t(symbolic_axis)] = -1;
        q.check(true, {.symbols = {{"S", symbolic_axis == 0 ? 4 : 16}}});
    }
}

TEST_CASE("onnx QDQ Conv whose input scale is negative keeps the float convolution, and computes it") {
    // (A scale the 8-bit kernel's requantization cannot take: not annotated, not refused.)
    QdqConv q;
    q.sx = -0.03f;
    q.check(false);
}
