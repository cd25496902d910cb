// STFT and MelWeightMatrix against naive references, and an audio front end built from them
// (a log-mel spectrogram: STFT, power, mel filter bank, log) as models export it.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

// The naive STFT of x [B, L, c] (c = 1 real, 2 complex): [B, frames, bins, 2].
std::vector<double> stft_ref(const Buffer<float>& x, int64_t step, int64_t n, const std::vector<float>& window,
                             bool onesided) {
    const int64_t B = x.shape()[0], L = x.shape()[1], c = x.shape()[2];
    const int64_t frames = 1 + (L - n) / step, bins = onesided ? n / 2 + 1 : n;
    std::vector<double> out;
    for (int64_t b = 0; b < B; ++b)
        for (int64_t f = 0; f < frames; ++f)
            for (int64_t k = 0; k < bins; ++k) {
                double re = 0, im = 0;
                for (int64_t j = 0; j < n; ++j) {
                    const double w = window.empty() ? 1.0 : window[size_t(j)];
                    const double xr = w * x(b, f * step + j, 0), xi = c == 2 ? w * x(b, f * step + j, 1) : 0.0;
                    const double a = -2 * M_PI * double(j * k) / double(n);
                    re += xr * std::cos(a) - xi * std::sin(a);
                    im += xr * std::sin(a) + xi * std::cos(a);
                }
                out.push_back(re);
                out.push_back(im);
            }
    return out;
}

// The mel filter bank as ONNX's reference defines it: edges evenly spaced on the mel scale
// (num_mel_bins + 2 steps between the edges' mels), floored to DFT bins, triangles between.
std::vector<double> mel_ref(int64_t mels, int64_t dft, int64_t rate, double low, double high) {
    auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    auto hz = [](double m) { return 700.0 * (std::pow(10.0, m / 2595.0) - 1.0); };
    const int64_t spectrum = dft / 2 + 1;
    std::vector<int64_t> edges;
    for (int64_t i = 0; i < mels + 2; ++i)
        edges.push_back(int64_t(std::floor(double(dft + 1) * hz(mel(low) + double(i) * (mel(high) - mel(low)) / double(mels + 2)) /
                                           double(rate))));
    std::vector<double> m(size_t(spectrum * mels), 0.0);
    for (int64_t i = 0; i < mels; ++i) {
        const int64_t l = edges[size_t(i)], c = edges[size_t(i + 1)], r = edges[size_t(i + 2)];
        for (int64_t j = l; j <= c; ++j) m[size_t(j * mels + i)] = c == l ? 1.0 : double(j - l) / double(c - l);
        for (int64_t j = c; j < r; ++j) m[size_t(j * mels + i)] = double(r - j) / double(r - c);
    }
    return m;
}

void check_close(const std::vector<float>& got, const std::vector<double>& want, double tol) {
    REQUIRE(got.size() == want.size());
    double scale = 1e-30;
    for (double w : want) scale = std::max(scale, std::abs(w));
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(double(got[i]) - want[i]) <= tol * scale);
}

}  // namespace

TEST_CASE("onnx: STFT of real and complex signals, with and without a window, one- and two-sided") {
    const int64_t B = 2, L = 100, n = 24, step = 7;
    for (int64_t channels : {1, 2})
        for (bool with_window : {false, true})
            for (bool onesided : {true, false}) {
                if (channels == 2 && onesided) continue;  // (a complex signal's spectrum has no half)
                CAPTURE(channels);
                CAPTURE(with_window);
                CAPTURE(onesided);
                Model m(17);
                m.input("x", {B, L, channels});
                m.initializer_i64("step", {}, {step});
                std::vector<float> window;
                for (int64_t j = 0; j < n; ++j) window.push_back(float(0.5 - 0.5 * std::cos(2 * M_PI * double(j) / double(n))));
                std::vector<std::string> ins = {"x", "step"};
                if (with_window) {
                    m.initializer("window", {n}, window);
                    ins.push_back("window");
                } else {
                    m.initializer_i64("length", {}, {n});
                    ins.push_back("");
                    ins.push_back("length");
                }
                auto& node = m.node("STFT", ins, {"y"});
                set_int(node, "onesided", onesided);
                m.output("y");
                graph::Module mod = graph::build(m.load());
                Buffer<float> x = Buffer<float>::random({B, L, channels}, -1.f, 1.f, 51);
                run_on(mod, {x});
                const int64_t frames = 1 + (L - n) / step;
                CHECK(mod.get_output(0).shape() == std::vector<int64_t>{B, frames, onesided ? n / 2 + 1 : n, 2});
                check_close(values_of<float>(mod.get_output(0)),
                            stft_ref(x, step, n, with_window ? window : std::vector<float>{}, onesided), 1e-5);
            }
}

TEST_CASE("onnx: a log-mel spectrogram: STFT, power, MelWeightMatrix, log") {
    const int64_t L = 400, n = 64, step = 32, mels = 10, rate = 16000;
    Model m(18);
    m.input("audio", {1, L, 1});
    m.initializer_i64("step", {}, {step});
    m.initializer_i64("length", {}, {n});
    m.initializer_i64("mels", {}, {mels});
    m.initializer_i64("dft", {}, {n});
    m.initializer_i64("rate", {}, {rate});
    m.initializer("low", {}, {20.f});
    m.initializer("high", {}, {7600.f});
    m.node("STFT", {"audio", "step", "", "length"}, {"spectrum"});                      // [1, F, 33, 2]
    auto& power = m.node("ReduceSumSquare", {"spectrum", "last"}, {"power"});             // [1, F, 33]
    set_int(power, "keepdims", 0);
    m.initializer_i64("last", {1}, {-1});
    m.node("MelWeightMatrix", {"mels", "dft", "rate", "low", "high"}, {"bank"});          // [33, 10]
    m.node("MatMul", {"power", "bank"}, {"mel"});                                        // [1, F, 10]
    m.initializer("floor", {}, {1e-6f});
    m.node("Add", {"mel", "floor"}, {"mel_floored"});
    m.node("Log", {"mel_floored"}, {"y"});
    m.output("y");
    graph::Module mod = graph::build(m.load());
    Buffer<float> x = Buffer<float>::random({1, L, 1}, -1.f, 1.f, 52);
    run_on(mod, {x});
    const std::vector<double> spec = stft_ref(x, step, n, {}, true), bank = mel_ref(mels, n, rate, 20.0, 7600.0);
    const int64_t frames = 1 + (L - n) / step, bins = n / 2 + 1;
    std::vector<double> want;
    for (int64_t f = 0; f < frames; ++f)
        for (int64_t i = 0; i < mels; ++i) {
            double s = 0;
            for (int64_t k = 0; k < bins; ++k) {
                const double re = spec[size_t((f * bins + k) * 2)], im = spec[size_t((f * bins + k) * 2 + 1)];
                s += (re * re + im * im) * bank[size_t(k * mels + i)];
            }
            want.push_back(std::log(s + 1e-6));
        }
    CHECK(mod.get_output(0).shape() == std::vector<int64_t>{1, frames, mels});
    const std::vector<float> got = values_of<float>(mod.get_output(0));
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(double(got[i]) - want[i]) <= 1e-4 * (1 + std::abs(want[i])));
}
