// BuildOptions::precision = int8 on convolutions: each conv2d_nchwc of constant weights runs
// on conv2d_nchwc_u8s8, the input quantized over its calibrated range (its padding the zero
// point), the weights per output channel. Against the same quantization simulated in C++
// (with and without VNNI, a zero point of 0 and not), and a small CNN against float32.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "graph_check.hpp"
#include "host_without.hpp"
#include "weft/weft.hpp"

using namespace weft;
using graph_check::count_kernels_named;

namespace {

struct ConvCase {
    int64_t C, O, H, W, K, pad;
    float lo, hi;  // the calibration inputs' range
};

// The pass's arithmetic in C++: x to uint8 over [min(lo, 0), max(hi, 0)], W to int8 per
// output channel, the padding the zero point, the int32 sums corrected for it, scaled.
std::vector<float> simulated(const ConvCase& c, const Buffer<float>& w, const Buffer<float>& x, float lo, float hi) {
    lo = std::min(lo, 0.0f), hi = std::max(hi, 0.0f);
    const float scale = (hi - lo) / 255.0f, zp = std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
    const int64_t OH = c.H + 2 * c.pad - c.K + 1, OW = c.W + 2 * c.pad - c.K + 1, taps = c.C * c.K * c.K;
    std::vector<float> y(size_t(c.O * OH * OW));
    for (int64_t o = 0; o < c.O; ++o) {
        float ws = 0;
        for (int64_t i = 0; i < taps; ++i) ws = std::max(ws, std::abs(w.data()[o * taps + i]));
        ws /= 127.0f;
        std::vector<int32_t> wq(static_cast<size_t>(taps));
        int32_t sum = 0;
        for (int64_t i = 0; i < taps; ++i) {
            wq[size_t(i)] = int32_t(std::clamp(std::nearbyint(w.data()[o * taps + i] / ws), -127.0f, 127.0f));
            sum += wq[size_t(i)];
        }
        for (int64_t oy = 0; oy < OH; ++oy)
            for (int64_t ox = 0; ox < OW; ++ox) {
                int32_t acc = 0;
                for (int64_t ch = 0; ch < c.C; ++ch)
                    for (int64_t kh = 0; kh < c.K; ++kh)
                        for (int64_t kw = 0; kw < c.K; ++kw) {
                            const int64_t iy = oy + kh - c.pad, ix = ox + kw - c.pad;
                            int32_t q = int32_t(zp);
                            if (iy >= 0 && iy < c.H && ix >= 0 && ix < c.W)
                                q = int32_t(std::clamp(std::nearbyint(x.data()[(ch * c.H + iy) * c.W + ix] / scale) + zp,
                                                       0.0f, 255.0f));
                            acc += q * wq[size_t((ch * c.K + kh) * c.K + kw)];
                        }
                y[size_t((o * OH + oy) * OW + ox)] = float(acc - int32_t(zp) * sum) * (scale * ws);
            }
    }
    return y;
}

}  // namespace

TEST_CASE("precision int8: a convolution computes what its quantization says, with and without VNNI") {
    // A 3x3 padded over an input with negative values (a zero point inside the range: the
    // padding is a copy holding it), the same over an input >= 0 on a row wide enough to be
    // read in place (zero point 0), a 1x1 over a negative input (no padding).
    for (const ConvCase& c : {ConvCase{16, 32, 9, 9, 3, 1, -1.0f, 2.0f}, ConvCase{16, 32, 6, 20, 3, 1, 0.0f, 1.5f},
                              ConvCase{32, 16, 7, 5, 1, 0, -2.0f, 1.0f}}) {
        CAPTURE(c.K);
        CAPTURE(c.W);
        auto w = Buffer<float>::random({c.O, c.C, c.K, c.K}, -0.3f, 0.3f, 21);
        graph::Graph g;
        g.output(g.conv2d(g.input("x", {1, c.C, c.H, c.W}), g.constant("w", w), {.pad = c.pad}, "conv"), "y");
        // Calibration inputs that reach both ends of the range exactly.
        std::vector<std::map<std::string, BufferRef>> calib;
        for (int i = 0; i < 3; ++i) {
            auto s = Buffer<float>::random({1, c.C, c.H, c.W}, c.lo, c.hi, 30 + uint64_t(i));
            s.data()[0] = c.lo, s.data()[1] = c.hi;
            calib.push_back({{"x", s}});
        }
        // Inputs inside the calibrated range and past it (saturated).
        for (auto [lo, hi, seed] : {std::tuple{c.lo, c.hi, 7}, std::tuple{c.lo - 1.0f, c.hi + 1.0f, 8}}) {
            auto x = Buffer<float>::random({1, c.C, c.H, c.W}, lo, hi, uint64_t(seed));
            const std::vector<float> want = simulated(c, w, x, c.lo, c.hi);
            std::vector<float> first;
            for (const Target& target : {Target::host(), weft::test::host_without("avx512vnni")}) {
                CAPTURE(target.has_feature("avx512vnni"));
                graph::Module m =
                    graph::build(g, target, {.precision = graph::Precision::int8, .calibration = calib});
                CHECK(count_kernels_named(m, "u8s8") == 1);
                m.set_input("x", x);
                m.run();
                Buffer<float> y(m.get_output("y"));
                REQUIRE(y.size() == int64_t(want.size()));
                int64_t wrong = 0;
                for (size_t i = 0; i < want.size(); ++i)
                    wrong += std::abs(y.data()[i] - want[i]) > 1e-5f * std::max(1.0f, std::abs(want[i]));
                CHECK(wrong == 0);
                if (first.empty()) first.assign(y.data(), y.data() + y.size());
                else CHECK(std::equal(first.begin(), first.end(), y.data()));  // VNNI or not: the same integers
            }
        }
    }
}

TEST_CASE("precision int8: a small CNN stays within a few percent of float32") {
    // x [1, 16, 14, 14] -> conv 3x3 (32) + bias -> relu -> conv 3x3 (32) + bias -> relu ->
    // conv 1x1 (16) + bias: three quantized layers (the later two over inputs >= 0).
    auto w1 = Buffer<float>::random({32, 16, 3, 3}, -0.2f, 0.2f, 1), b1 = Buffer<float>::random({32}, -0.1f, 0.1f, 2);
    auto w2 = Buffer<float>::random({32, 32, 3, 3}, -0.1f, 0.1f, 3), b2 = Buffer<float>::random({32}, -0.1f, 0.1f, 4);
    auto w3 = Buffer<float>::random({16, 32, 1, 1}, -0.3f, 0.3f, 5), b3 = Buffer<float>::random({16}, -0.1f, 0.1f, 6);
    graph::Graph g;
    graph::Value x = g.input("x", {1, 16, 14, 14});
    graph::Value a = g.relu(g.conv2d(x, g.constant("w1", w1), g.constant("b1", b1), {.pad = 1}, "conv1"));
    graph::Value b = g.relu(g.conv2d(a, g.constant("w2", w2), g.constant("b2", b2), {.pad = 1}, "conv2"));
    g.output(g.conv2d(b, g.constant("w3", w3), g.constant("b3", b3), {}, "conv3"), "y");
    std::vector<std::map<std::string, BufferRef>> calib;
    for (int i = 0; i < 4; ++i) calib.push_back({{"x", Buffer<float>::random({1, 16, 14, 14}, -1.f, 1.f, 40 + uint64_t(i))}});
    graph::Module q = graph::build(g, Target::host(), {.precision = graph::Precision::int8, .calibration = calib});
    CHECK(count_kernels_named(q, "u8s8") == 3);
    graph::Module f = graph::build(g, Target::host(), {});
    auto in = Buffer<float>::random({1, 16, 14, 14}, -1.f, 1.f, 9);
    q.set_input("x", in);
    f.set_input("x", in);
    q.run();
    f.run();
    Buffer<float> yq(q.get_output("y")), yf(f.get_output("y"));
    float err = 0, scale = 0;
    for (int64_t i = 0; i < yf.size(); ++i) {
        err = std::max(err, std::abs(yq.data()[i] - yf.data()[i]));
        scale = std::max(scale, std::abs(yf.data()[i]));
    }
    CHECK(err / scale < 0.03f);
    CHECK(err > 0);  // (quantized: not the float32 result itself)
    // On AMX tiles where the host has them (conv2 and conv3 read blocks of 32 channels: steps
    // of 32 bytes): the same integers as without them.
    Target plain = Target::host();
    plain.features += ",-amx-int8";
    graph::Module p = graph::build(g, plain, {.precision = graph::Precision::int8, .calibration = calib});
    int tiled = 0;
    for (const Kernel& k : q.compiled_kernels()) tiled += k.assembly().find("tdpbusd") != std::string::npos;
    CHECK(tiled == (topi::has_amx_int8(Target::host()) ? 2 : 0));
    p.set_input("x", in);
    p.run();
    Buffer<float> yp(p.get_output("y"));
    CHECK(std::equal(yp.data(), yp.data() + yp.size(), yq.data()));
}

TEST_CASE("a conv2d that carries its quantization runs on the 8-bit kernel at any precision, without calibration") {
    // What the ONNX importer writes for a QDQ model's Conv: the input's scale and zero point,
    // the weight's steps. A weight off those steps (here: random) is quantized over each
    // channel's range instead, as calibrated layers are.
    const ConvCase c{16, 32, 9, 9, 3, 1, -1.0f, 2.0f};
    const float scale = (c.hi - c.lo) / 255.0f, zero_point = std::nearbyint(-c.lo / scale);
    auto w = Buffer<float>::random({c.O, c.C, c.K, c.K}, -0.3f, 0.3f, 21);
    graph::Graph g;
    graph::Attrs a{{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                   {"quantized_input_scale", double(scale)},
                   {"quantized_input_zero_point", int64_t(zero_point)},
                   {"quantized_weight_scales", std::vector<double>{0.01}}};
    g.output(g.add_node("conv2d", {g.input("x", {1, c.C, c.H, c.W}), g.constant("w", w)}, a, "conv"), "y");
    graph::Module m = graph::build(g);
    CHECK(count_kernels_named(m, "u8s8") == 1);
    auto x = Buffer<float>::random({1, c.C, c.H, c.W}, c.lo, c.hi, 7);
    m.set_input("x", x);
    m.run();
    Buffer<float> y(m.get_output("y"));
    const std::vector<float> want = simulated(c, w, x, c.lo, c.hi);
    int64_t wrong = 0;
    for (size_t i = 0; i < want.size(); ++i) wrong += std::abs(y.data()[i] - want[i]) > 1e-5f * std::max(1.0f, std::abs(want[i]));
    CHECK(wrong == 0);
    // A zero point past uint8's range is refused, naming the layer.
    a.set("quantized_input_zero_point", int64_t(300));
    graph::Graph bad;
    bad.output(bad.add_node("conv2d", {bad.input("x", {1, c.C, c.H, c.W}), bad.constant("w", w)}, a, "conv"), "y");
    CHECK_THROWS_WITH_AS(graph::build(bad), doctest::Contains("zero point in [0, 255]"), Error);
}
