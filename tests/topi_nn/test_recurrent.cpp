// topi::recurrent (one scan per layer direction) against naive LSTM and GRU steps: peepholes,
// input_forget, clip, linear_before_reset both ways, a batch of 2, a hidden size that fills
// no whole vector.
#include <doctest/doctest.h>

#include <cmath>

#include "weft/weft.hpp"

using namespace weft;

namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double clipped(double x, double clip) { return clip > 0 ? std::min(std::max(x, -clip), clip) : x; }

struct Layer {
    int64_t T, N, H, G;
    Buffer<float> xw, rt, rb, h0, c0, p;
    Layer(int64_t t, int64_t n, int64_t h, int64_t g, uint64_t seed)
        : T(t), N(n), H(h), G(g), xw(Buffer<float>::random({t, n, g * h}, -1.f, 1.f, seed)),
          rt(Buffer<float>::random({h, g * h}, -0.4f, 0.4f, seed + 1)), rb(Buffer<float>::random({g * h}, -0.3f, 0.3f, seed + 2)),
          h0(Buffer<float>::random({n, h}, -1.f, 1.f, seed + 3)), c0(Buffer<float>::random({n, h}, -1.f, 1.f, seed + 4)),
          p(Buffer<float>::random({3 * h}, -0.5f, 0.5f, seed + 5)) {}
    // rec = h R^T (+ rb) for gate g, column j.
    double rec(const std::vector<double>& h, int64_t n, int64_t gate, int64_t j, const std::vector<double>* scale = nullptr) const {
        double a = 0;
        for (int64_t k = 0; k < H; ++k)
            a += double(rt(k, gate * H + j)) * h[size_t(n * H + k)] * (scale ? (*scale)[size_t(n * H + k)] : 1.0);
        return a + rb(gate * H + j);
    }
};

// Runs topi::recurrent and returns its result [T + 1, S, N, H] flat; `lens`: the sequences'
// lengths (none: all T).
std::vector<float> run(const Layer& L, const topi::RecurrentParams& params, const std::vector<int32_t>& lens = {}) {
    const bool lstm = params.kind == "LSTM";
    Tensor xw = placeholder({L.T, L.N, L.G * L.H}, f32, "xw"), rt = placeholder({L.H, L.G * L.H}, f32, "rt");
    Tensor rb = placeholder({L.G * L.H}, f32, "rb"), h0 = placeholder({L.N, L.H}, f32, "h0");
    Tensor c0 = placeholder({L.N, L.H}, f32, "c0"), p = placeholder({3 * L.H}, f32, "p");
    Tensor ln = placeholder({L.N}, i32, "lens");
    Tensor out = topi::recurrent(xw, rt, rb, h0, lstm ? c0 : Tensor(), lstm ? p : Tensor(), lens.empty() ? Tensor() : ln, params);
    Schedule s = create_schedule(out);
    topi::schedule_recurrent(s, out);
    const int64_t S = lstm ? 2 : 1;
    Buffer<float> y({L.T + 1, S, L.N, L.H});
    Buffer<int32_t> lv({L.N});
    for (int64_t n = 0; n < L.N && !lens.empty(); ++n) lv(n) = lens[size_t(n)];
    if (lstm && lens.empty()) build(s, {xw, rt, rb, h0, c0, p, out})(L.xw, L.rt, L.rb, L.h0, L.c0, L.p, y);
    else if (lstm) build(s, {xw, rt, rb, h0, c0, p, ln, out})(L.xw, L.rt, L.rb, L.h0, L.c0, L.p, lv, y);
    else if (lens.empty()) build(s, {xw, rt, rb, h0, out})(L.xw, L.rt, L.rb, L.h0, y);
    else build(s, {xw, rt, rb, h0, ln, out})(L.xw, L.rt, L.rb, L.h0, lv, y);
    return std::vector<float>(y.data(), y.data() + y.size());
}

}  // namespace

TEST_CASE("recurrent: LSTM with peepholes, input_forget and clip against its steps") {
    for (bool forget : {false, true})
        for (double clip : {0.0, 0.6}) {
            CAPTURE(forget);
            CAPTURE(clip);
            Layer L(6, 2, 19, 4, 10);
            topi::RecurrentParams params{.kind = "LSTM", .activations = {"Sigmoid", "Tanh", "Tanh"}, .clip = clip,
                                         .input_forget = forget};
            std::vector<float> got = run(L, params);
            std::vector<double> h(L.h0.data(), L.h0.data() + L.N * L.H), c(L.c0.data(), L.c0.data() + L.N * L.H);
            for (int64_t t = 0; t < L.T; ++t) {
                std::vector<double> hn(h.size()), cn(c.size());
                for (int64_t n = 0; n < L.N; ++n)
                    for (int64_t j = 0; j < L.H; ++j) {
                        auto pre = [&](int64_t g) { return double(L.xw(t, n, g * L.H + j)) + L.rec(h, n, g, j); };
                        const size_t at = size_t(n * L.H + j);
                        const double i = sigmoid(clipped(pre(0) + L.p(j) * c[at], clip));
                        const double f = forget ? 1 - i : sigmoid(clipped(pre(2) + L.p(2 * L.H + j) * c[at], clip));
                        cn[at] = f * c[at] + i * std::tanh(clipped(pre(3), clip));
                        const double o = sigmoid(clipped(pre(1) + L.p(L.H + j) * cn[at], clip));
                        hn[at] = o * std::tanh(cn[at]);
                        const size_t row = size_t(t * 2 * L.N * L.H);  // row t: after reading input t
                        REQUIRE(std::abs(got[row + at] - hn[at]) <= 1e-5);
                        REQUIRE(std::abs(got[row + size_t(L.N * L.H) + at] - cn[at]) <= 1e-5);
                    }
                h = hn, c = cn;
            }
        }
}

TEST_CASE("recurrent: GRU, linear_before_reset off and on, against its steps") {
    for (bool lbr : {false, true}) {
        CAPTURE(lbr);
        Layer L(5, 2, 21, 3, 20);
        topi::RecurrentParams params{.kind = "GRU", .activations = {"Sigmoid", "Tanh"}, .linear_before_reset = lbr};
        std::vector<float> got = run(L, params);
        std::vector<double> h(L.h0.data(), L.h0.data() + L.N * L.H);
        for (int64_t t = 0; t < L.T; ++t) {
            std::vector<double> r(h.size()), hn(h.size());
            for (int64_t n = 0; n < L.N; ++n)
                for (int64_t j = 0; j < L.H; ++j)
                    r[size_t(n * L.H + j)] = sigmoid(double(L.xw(t, n, L.H + j)) + L.rec(h, n, 1, j));
            for (int64_t n = 0; n < L.N; ++n)
                for (int64_t j = 0; j < L.H; ++j) {
                    const size_t at = size_t(n * L.H + j);
                    const double z = sigmoid(double(L.xw(t, n, j)) + L.rec(h, n, 0, j));
                    const double hh = std::tanh(double(L.xw(t, n, 2 * L.H + j)) +
                                                (lbr ? r[at] * L.rec(h, n, 2, j) : L.rec(h, n, 2, j, &r)));
                    hn[at] = (1 - z) * hh + z * h[at];
                    REQUIRE(std::abs(got[size_t(t * L.N * L.H) + at] - hn[at]) <= 1e-5);
                }
            h = hn;
        }
    }
    // An activation it does not know, and shapes that do not fit, name themselves.
    Tensor xw = placeholder({3, 1, 6}, f32, "xw"), rt = placeholder({2, 6}, f32, "rt"), rb = placeholder({6}, f32, "rb");
    Tensor h0 = placeholder({1, 2}, f32, "h0");
    CHECK_THROWS_WITH_AS(topi::recurrent(xw, rt, rb, h0, Tensor(), Tensor(), Tensor(), {.kind = "GRU", .activations = {"Sigmoid", "Gelu"}}),
                         doctest::Contains("the activation 'Gelu'"), Error);
    CHECK_THROWS_WITH_AS(topi::recurrent(xw, rt, rb, h0, Tensor(), Tensor(), Tensor(), {.kind = "LSTM", .activations = {"Sigmoid", "Tanh", "Tanh"}}),
                         doctest::Contains("LSTM with hidden size 2"), Error);
}

TEST_CASE("recurrent: per-sequence lengths, forward and reverse: steps past a length keep the state, zeros in time") {
    // A plain RNN, h = tanh(x + h R^T + rb), over sequences of lengths 5, 2, 0 and 9 (clamped to 7).
    const std::vector<int32_t> lens = {5, 2, 0, 9};
    for (bool reverse : {false, true}) {
        CAPTURE(reverse);
        Layer L(7, 4, 10, 1, 30);
        topi::RecurrentParams params{.kind = "RNN", .activations = {"Tanh"}, .reverse = reverse};
        std::vector<float> got = run(L, params, lens);
        for (int64_t n = 0; n < L.N; ++n) {
            const int64_t len = std::min<int64_t>(lens[size_t(n)], L.T);
            std::vector<double> h(L.h0.data(), L.h0.data() + L.N * L.H);
            std::vector<std::vector<double>> at_time(size_t(L.T), std::vector<double>(size_t(L.H), 0.0));
            for (int64_t step = 0; step < len; ++step) {
                const int64_t t = reverse ? len - 1 - step : step;
                std::vector<double> hn = h;
                for (int64_t j = 0; j < L.H; ++j)
                    hn[size_t(n * L.H + j)] = std::tanh(double(L.xw(t, n, j)) + L.rec(h, n, 0, j));
                h = hn;
                for (int64_t j = 0; j < L.H; ++j) at_time[size_t(t)][size_t(j)] = h[size_t(n * L.H + j)];
            }
            for (int64_t t = 0; t <= L.T; ++t)
                for (int64_t j = 0; j < L.H; ++j) {
                    const double want = t < L.T ? at_time[size_t(t)][size_t(j)] : h[size_t(n * L.H + j)];
                    CAPTURE(n);
                    CAPTURE(t);
                    REQUIRE(std::abs(got[size_t((t * L.N + n) * L.H + j)] - want) <= 1e-5);
                }
        }
    }
}

TEST_CASE("recurrent: xw as a matmul gives it, [T N, G H], reads as [T, N, G H]") {
    Layer L(4, 3, 17, 3, 40);
    topi::RecurrentParams params{.kind = "GRU", .activations = {"Sigmoid", "Tanh"}, .reverse = true};
    std::vector<float> want = run(L, params);
    Tensor xw = placeholder({L.T * L.N, L.G * L.H}, f32, "xw"), rt = placeholder({L.H, L.G * L.H}, f32, "rt");
    Tensor rb = placeholder({L.G * L.H}, f32, "rb"), h0 = placeholder({L.N, L.H}, f32, "h0");
    Tensor out = topi::recurrent(xw, rt, rb, h0, Tensor(), Tensor(), Tensor(), params);
    Schedule s = create_schedule(out);
    topi::schedule_recurrent(s, out);
    Buffer<float> flat(L.xw.data(), {L.T * L.N, L.G * L.H}), y({L.T + 1, 1, L.N, L.H});
    build(s, {xw, rt, rb, h0, out})(flat, L.rt, L.rb, L.h0, y);
    for (int64_t i = 0; i < y.size(); ++i) REQUIRE(y.data()[i] == want[size_t(i)]);
    Tensor odd = placeholder({L.T * L.N + 1, L.G * L.H}, f32, "odd");
    CHECK_THROWS_WITH_AS(topi::recurrent(odd, rt, rb, h0, Tensor(), Tensor(), Tensor(), params),
                         doctest::Contains("no multiple of the batch"), Error);
}
