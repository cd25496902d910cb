// BuildOptions::precision = int8: linear layers quantized after training (the activations'
// ranges from calibration inputs, the weights per column), run on the 8-bit kernels. Against
// the same quantization simulated in C++, against float32, without VNNI, and its errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "host_without.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

constexpr int64_t kM = 8, kK = 64, kN = 32;

struct Layer {
    Buffer<float> w = Buffer<float>::random({kK, kN}, -0.5f, 0.5f, 11);
    graph::Graph graph() const {
        graph::Graph g;
        g.output(g.matmul(g.input("x", {kM, kK}), g.constant("w", w)), "y");
        return g;
    }
};

std::vector<std::map<std::string, BufferRef>> calibration(int count, float lo, float hi) {
    std::vector<std::map<std::string, BufferRef>> c;
    for (int i = 0; i < count; ++i) c.push_back({{"x", Buffer<float>::random({kM, kK}, lo, hi, 100 + uint64_t(i))}});
    return c;
}

// The pass's arithmetic in C++: x to uint8 over the calibrated range, W to int8 per column,
// the int32 products corrected for the zero point, scaled in float32.
std::vector<float> simulated(const Layer& l, const std::vector<std::map<std::string, BufferRef>>& calib,
                             const Buffer<float>& x) {
    float lo = 0, hi = 0;
    for (auto& s : calib) {
        const Buffer<float> c(s.at("x"));
        for (float v : c) lo = std::min(lo, v), hi = std::max(hi, v);
    }
    const float scale = (hi - lo) / 255.0f, zp = std::clamp(std::nearbyint(-lo / scale), 0.0f, 255.0f);
    std::vector<float> cs(kN, 0.0f);
    for (int64_t i = 0; i < kK * kN; ++i) cs[size_t(i % kN)] = std::max(cs[size_t(i % kN)], std::abs(l.w.data()[i]));
    for (float& s : cs) s /= 127.0f;
    std::vector<float> y(size_t(kM * kN));
    for (int64_t m = 0; m < kM; ++m)
        for (int64_t n = 0; n < kN; ++n) {
            int32_t acc = 0, colsum = 0;
            for (int64_t k = 0; k < kK; ++k) {
                const int32_t q = int32_t(std::clamp(std::nearbyint(x.data()[m * kK + k] / scale) + zp, 0.0f, 255.0f));
                const int32_t wq = int32_t(std::clamp(std::nearbyint(l.w.data()[k * kN + n] / cs[size_t(n)]), -127.0f, 127.0f));
                acc += q * wq;
                colsum += wq;
            }
            y[size_t(m * kN + n)] = float(acc - int32_t(zp) * colsum) * (scale * cs[size_t(n)]);
        }
    return y;
}

Buffer<float> run(const graph::Graph& g, const graph::BuildOptions& o, const Buffer<float>& x,
                  const Target& target = Target::host()) {
    graph::Module m = graph::build(g, target, o);
    m.set_input("x", x);
    m.run();
    return Buffer<float>(m.get_output(0).copy_to(Device::cpu()));
}

}  // namespace

TEST_CASE("precision int8: a linear layer computes what its quantization says, with and without VNNI") {
    Layer l;
    const auto calib = calibration(3, -1.0f, 2.0f);
    graph::BuildOptions o{.precision = graph::Precision::int8, .calibration = calib};
    graph::Module m = graph::build(l.graph(), Target::host(), o);
    int eight_bit = 0;
    for (const graph::KernelInfo& k : m.kernels()) eight_bit += k.name.find("matmul_u8s8") != std::string::npos;
    CHECK(eight_bit == 1);
    int calibrations = 0;  // (timed as a phase of its own: weftc --time-phases)
    for (const graph::BuildPhase& p : m.build_phases()) calibrations += p.name == "calibrate int8";
    CHECK(calibrations == 1);
    // Inputs inside and outside the calibrated range (saturated there).
    for (auto [lo, hi, seed] : {std::tuple{-1.0f, 2.0f, 7}, std::tuple{-3.0f, 3.0f, 8}}) {
        auto x = Buffer<float>::random({kM, kK}, lo, hi, uint64_t(seed));
        const std::vector<float> want = simulated(l, calib, x);
        const Buffer<float> got = run(l.graph(), o, x), plain = run(l.graph(), o, x, weft::test::host_without("avx512vnni"));
        for (size_t i = 0; i < want.size(); ++i) {
            REQUIRE(got.data()[i] == doctest::Approx(want[i]).epsilon(1e-5).scale(1e-4));
            REQUIRE(plain.data()[i] == got.data()[i]);
        }
    }
}

TEST_CASE("precision int8: an MLP stays within a percent of float32") {
    graph::Graph g;
    graph::Value x = g.input("x", {kM, kK});
    graph::Value h = g.relu(g.matmul(x, g.constant("w1", Buffer<float>::random({kK, 128}, -0.2f, 0.2f, 1))));
    graph::Value y = g.matmul(h, g.constant("w2", Buffer<float>::random({128, kN}, -0.2f, 0.2f, 2)));
    g.output(y, "y");
    const auto calib = calibration(8, -1.0f, 1.0f);
    auto in = Buffer<float>::random({kM, kK}, -1.0f, 1.0f, 3);
    const Buffer<float> q = run(g, {.precision = graph::Precision::int8, .calibration = calib}, in);
    const Buffer<float> f = run(g, {}, in);
    float err = 0, scale = 0;
    for (int64_t i = 0; i < f.size(); ++i) {
        err = std::max(err, std::abs(q.data()[i] - f.data()[i]));
        scale = std::max(scale, std::abs(f.data()[i]));
    }
    CHECK(err / scale < 0.02f);
    CHECK(err > 0);  // (quantized: not the float32 result itself)
}

TEST_CASE("precision int8 needs calibration inputs that name every input") {
    Layer l;
    CHECK_THROWS_WITH_AS(graph::build(l.graph(), Target::host(), {.precision = graph::Precision::int8}),
                         doctest::Contains("precision int8 needs calibration inputs"), Error);
    std::vector<std::map<std::string, BufferRef>> wrong{{{"z", Buffer<float>::random({kM, kK})}}};
    CHECK_THROWS_WITH_AS(graph::build(l.graph(), Target::host(), {.precision = graph::Precision::int8, .calibration = wrong}),
                         doctest::Contains("has no value for 'x'"), Error);
    // Calibration inputs of another shape than the graph's: refused, naming the shapes.
    std::vector<std::map<std::string, BufferRef>> other{{{"x", Buffer<float>::random({kM + 1, kK})}}};
    CHECK_THROWS_WITH_AS(graph::build(l.graph(), Target::host(), {.precision = graph::Precision::int8, .calibration = other}),
                         doctest::Contains("the calibration input 'x' is [9, 64] but the graph takes [8, 64]"), Error);
    CHECK(graph::precision("int8") == graph::Precision::int8);
    CHECK_THROWS_WITH_AS(graph::precision("int4"), doctest::Contains("expected f32, bf16 or int8"), Error);
}

TEST_CASE("precision int8: calibration reads its values by name beside the graph's run-time checks") {
    // A run-time check is a graph output a module does not list: calibration's extra outputs
    // must not be found by position.
    Layer l;
    graph::Graph g = l.graph();
    graph::Value x = g.find("x").value();
    Buffer<float> huge({1});
    huge.data()[0] = 1e30f;
    g.check_at_run(g.add_node("greater", {g.reshape(g.max(x), {1}), g.constant("huge", huge)}), "x is huge");
    const auto calib = calibration(3, -1.0f, 2.0f);
    auto in = Buffer<float>::random({kM, kK}, -1.0f, 2.0f, 7);
    const std::vector<float> want = simulated(l, calib, in);
    const Buffer<float> got = run(g, {.precision = graph::Precision::int8, .calibration = calib}, in);
    for (size_t i = 0; i < want.size(); ++i) REQUIRE(got.data()[i] == doctest::Approx(want[i]).epsilon(1e-5).scale(1e-4));
}

TEST_CASE("precision int8: percentile calibration leaves a rare outlier out of an activation's range") {
    // The calibration inputs lie in [-1, 1] but one value of one of them is 1000: min-max
    // stretches the steps to 1001 / 255 and rounds every typical input to a few of them; at
    // 99.9 percent the range is the bulk's, the outlier saturated.
    Layer l;
    auto calib = calibration(4, -1.0f, 1.0f);
    Buffer<float> spiked = Buffer<float>::random({kM, kK}, -1.0f, 1.0f, 77);
    spiked.data()[5] = 1000.0f;
    calib.push_back({{"x", spiked}});
    auto x = Buffer<float>::random({kM, kK}, -1.0f, 1.0f, 7);
    const Buffer<float> exact = run(l.graph(), {}, x);
    auto error = [&](const Buffer<float>& y) {
        float err = 0, scale = 0;
        for (int64_t i = 0; i < exact.size(); ++i) {
            err = std::max(err, std::abs(y.data()[i] - exact.data()[i]));
            scale = std::max(scale, std::abs(exact.data()[i]));
        }
        return err / scale;
    };
    graph::BuildOptions o{.precision = graph::Precision::int8, .calibration = calib};
    const Buffer<float> min_max = run(l.graph(), o, x);
    o.calibration_percentile = 99.9;
    const Buffer<float> percentile = run(l.graph(), o, x);
    CHECK(error(percentile) < 0.02f);
    CHECK(error(percentile) * 10 < error(min_max));
    // Values that are not finite in a calibration input are left out of the ranges.
    Buffer<float> odd = Buffer<float>::random({kM, kK}, -1.0f, 1.0f, 78);
    odd.data()[3] = std::numeric_limits<float>::infinity();
    odd.data()[4] = std::numeric_limits<float>::quiet_NaN();
    for (double p : {100.0, 99.9}) {
        auto with_odd = calibration(4, -1.0f, 1.0f);
        with_odd.push_back({{"x", odd}});
        graph::BuildOptions oo{.precision = graph::Precision::int8, .calibration = with_odd, .calibration_percentile = p};
        CHECK(error(run(l.graph(), oo, x)) < 0.02f);
    }
    // 100 is min-max, the default.
    o.calibration_percentile = 100;
    const Buffer<float> hundred = run(l.graph(), o, x);
    CHECK(std::equal(hundred.data(), hundred.data() + hundred.size(), min_max.data()));
    o.calibration_percentile = 40;
    CHECK_THROWS_WITH_AS(graph::build(l.graph(), Target::host(), o), doctest::Contains("from 50 to 100, got 40"), Error);
}

TEST_CASE("precision int8: a graph with symbolic rows is calibrated once, at the calibration inputs' own sizes") {
    // Rows symbolic up to 16; calibration inputs of 8 and of 12 rows: the ranges are measured
    // on the graph made at each size and hold for every size the module runs at (8 here, and
    // 5, which it compiles when it first runs there if it must).
    Layer l;
    graph::Graph g;
    graph::Value x = g.input("x", {kM, kK});
    g.set_symbolic(x, 0, {"rows", 16});
    g.output(g.matmul(x, g.constant("w", l.w)), "y");
    auto calib = calibration(2, -1.0f, 2.0f);
    calib.push_back({{"x", Buffer<float>::random({12, kK}, -0.5f, 1.5f, 90)}});
    graph::BuildOptions o{.precision = graph::Precision::int8, .calibration = calib};
    graph::Module m = graph::build(g, Target::host(), o);
    auto in = Buffer<float>::random({kM, kK}, -1.0f, 2.0f, 7);
    m.set_input("x", in);
    m.run();
    const Buffer<float> got(m.get_output(0).copy_to(Device::cpu()));
    const std::vector<float> want = simulated(l, calib, in);  // (the range over every calibration value)
    REQUIRE(got.size() == int64_t(want.size()));
    for (size_t i = 0; i < want.size(); ++i) REQUIRE(got.data()[i] == doctest::Approx(want[i]).epsilon(1e-5).scale(1e-4));
    auto five = Buffer<float>::random({5, kK}, -1.0f, 2.0f, 8);
    m.set_input("x", five);
    m.run();
    CHECK(m.get_output(0).shape() == std::vector<int64_t>{5, kN});
    // The ranges calibrate_int8 measured, kept: a build without calibration inputs computes the same.
    const graph::ActivationRanges ranges = graph::calibrate_int8(g, o);
    REQUIRE(ranges.size() == 1);
    graph::Module again = graph::build(g, Target::host(), {.precision = graph::Precision::int8, .activation_ranges = ranges});
    again.set_input("x", in);
    again.run();
    const Buffer<float> kept(again.get_output(0).copy_to(Device::cpu()));
    CHECK(std::equal(kept.data(), kept.data() + kept.size(), got.data()));
}
