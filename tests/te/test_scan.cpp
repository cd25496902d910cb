// te::scan: recurrences over the first axis, against naive loops; the body stages that read
// the state run inside the steps; the schedules and reads it refuses.
#include <doctest/doctest.h>

#include <cmath>

#include "weft/weft.hpp"

using namespace weft;

namespace {

Buffer<float> random_buffer(std::vector<int64_t> shape, uint64_t seed, float lo = -1.f, float hi = 1.f) {
    return Buffer<float>::random(std::move(shape), lo, hi, seed);
}

}  // namespace

TEST_CASE("scan: a running sum over time, the other axis vectorized and parallel") {
    const int64_t T = 37, N = 45;
    Tensor X = placeholder({T, N}, f32, "X");
    Tensor state = placeholder({T, N}, f32, "state");
    Tensor init = compute({1, N}, [&](Expr, Expr j) { return X(0, j); }, "init");
    Tensor update = compute({T, N}, [&](Expr t, Expr j) { return state(t - 1, j) + X(t, j); }, "update");
    Tensor S = scan(init, update, state, "running_sum");
    CHECK(S.shape().size() == 2);
    for (int variant = 0; variant < 2; ++variant) {
        CAPTURE(variant);
        Schedule s = create_schedule(S);
        if (variant == 1) {
            auto [jo, ji] = s[S].split(S.axis(1), 16);
            s[S].vectorize(ji);
            s[S].unroll(jo);
        }
        Kernel k = build(s, {X, S});
        Buffer<float> x = random_buffer({T, N}, 1), y({T, N});
        k(x, y);
        for (int64_t j = 0; j < N; ++j) {
            double acc = 0;
            for (int64_t t = 0; t < T; ++t) {
                acc += x(t, j);
                REQUIRE(std::abs(y(t, j) - acc) <= 1e-4 * (1 + std::abs(acc)));
            }
        }
    }
}

TEST_CASE("scan: an RNN, h_t = tanh(x_t + R h_(t-1)), its matrix-vector product run once per step") {
    const int64_t T = 9, H = 19;
    Tensor X = placeholder({T, H}, f32, "X"), R = placeholder({H, H}, f32, "R"), h0 = placeholder({1, H}, f32, "h0");
    Tensor state = placeholder({T, H}, f32, "state");
    IterVar k = reduce_axis(0, H, "k");
    Tensor pre = compute({T, H}, [&](Expr t, Expr j) { return sum(R(j, k) * state(t - 1, k), {k}); }, "pre");
    Tensor next = compute({T, H}, [&](Expr t, Expr j) { return tanh(X(t, j) + pre(t, j)); }, "next");
    Tensor h = scan(h0, next, state, "h");
    std::vector<Operation> body = scan_body_ops(h.op());
    REQUIRE(body.size() == 1);
    CHECK(body[0].same_as(pre.op()));
    Schedule s = create_schedule(h);
    std::string program = ir::to_string(lower(s, {X, R, h0, h}).body);
    Kernel kernel = build(s, {X, R, h0, h});
    Buffer<float> x = random_buffer({T, H}, 2), r = random_buffer({H, H}, 3, -0.3f, 0.3f), hz = random_buffer({1, H}, 4);
    Buffer<float> y({T, H});
    kernel(x, r, hz, y);
    std::vector<double> prev(hz.data(), hz.data() + H);
    std::vector<double> cur(static_cast<size_t>(H), 0.0);
    for (int64_t j = 0; j < H; ++j) CHECK(y(0, j) == hz(0, j));
    for (int64_t t = 1; t < T; ++t) {
        for (int64_t j = 0; j < H; ++j) {
            double a = x(t, j);
            for (int64_t q = 0; q < H; ++q) a += double(r(j, q)) * prev[size_t(q)];
            cur[size_t(j)] = std::tanh(a);
            REQUIRE(std::abs(y(t, j) - cur[size_t(j)]) <= 1e-5);
        }
        prev = cur;
    }
    CAPTURE(program);
    // The product runs inside the loop over the steps (from step 1), one row at a time.
    CHECK(program.find("for (i, 1, 8) {\n  allocate pre[float32 * 19]") != std::string::npos);
}

TEST_CASE("scan: two initial rows and a step reading two back (Fibonacci), inside a larger computation") {
    const int64_t T = 30;
    Tensor first = placeholder({2, 1}, f64, "first");
    Tensor state = placeholder({T, 1}, f64, "state");
    Tensor update = compute({T, 1}, [&](Expr t, Expr j) { return state(t - 1, j) + state(t - 2, j); }, "update");
    Tensor fib = scan(first, update, state, "fib");
    Tensor twice = compute({T, 1}, [&](Expr t, Expr j) { return fib(t, j) * 2.0; }, "twice");  // the scan not an output
    Kernel k = build(create_schedule(twice), {first, twice});
    Buffer<double> f({2, 1}), y({T, 1});
    f(0, 0) = 0, f(1, 0) = 1;
    k(f, y);
    std::vector<double> want = {0, 1};
    while (int64_t(want.size()) < T) want.push_back(want[want.size() - 1] + want[want.size() - 2]);
    for (int64_t t = 0; t < T; ++t) CHECK(y(t, 0) == 2 * want[size_t(t)]);
}

TEST_CASE("scan: what it refuses, and why") {
    const int64_t T = 8, N = 4;
    Tensor X = placeholder({T, N}, f32, "X");
    Tensor state = placeholder({T, N}, f32, "state");
    Tensor init = compute({1, N}, [&](Expr, Expr j) { return X(0, j); }, "init");
    // Reading the row being computed (or a later one).
    Tensor same_row = compute({T, N}, [&](Expr t, Expr j) { return state(t, j) + 1.0f; }, "same_row");
    CHECK_THROWS_WITH_AS(scan(init, same_row, state, "bad"), doctest::Contains("may read only earlier rows"), Error);
    // Shapes that disagree, an init as long as the state, a non-placeholder state.
    Tensor update = compute({T, N}, [&](Expr t, Expr j) { return state(t - 1, j) * 0.5f + X(t, j); }, "update");
    Tensor wide = compute({1, N + 1}, [&](Expr, Expr j) { return cast(f32, j); }, "wide");
    CHECK_THROWS_WITH_AS(scan(wide, update, state, "bad"), doctest::Contains("must agree"), Error);
    CHECK_THROWS_WITH_AS(scan(X, update, state, "bad"), doctest::Contains("fewer than all"), Error);
    Tensor computed = compute({T, N}, [&](Expr t, Expr j) { return X(t, j) * 2.0f; }, "computed");
    CHECK_THROWS_WITH_AS(scan(init, update, computed, "bad"), doctest::Contains("must be a placeholder"), Error);

    Tensor S = scan(init, update, state, "S");
    // The time loop must stay outermost and serial.
    {
        Schedule s = create_schedule(S);
        s[S].parallel(S.axis(0));
        CHECK_THROWS_WITH_AS(build(s, {X, S}), doctest::Contains("must run serially"), Error);
    }
    {
        Schedule s = create_schedule(S);
        s[S].reorder({S.axis(1), S.axis(0)});
        CHECK_THROWS_WITH_AS(build(s, {X, S}), doctest::Contains("must stay its outermost loop"), Error);
    }
    // A stage reading the state computed before the steps.
    IterVar k = reduce_axis(0, N, "k");
    Tensor total = compute({T, N}, [&](Expr t, Expr) { return sum(state(t - 1, k), {k}); }, "total");
    Tensor next = compute({T, N}, [&](Expr t, Expr j) { return total(t, j) * 0.1f + X(t, j); }, "next");
    Tensor S2 = scan(init, next, state, "S2");
    Schedule s = create_schedule(S2);
    s[total].compute_root();
    CHECK_THROWS_WITH_AS(build(s, {X, S2}), doctest::Contains("must be computed inside the scan's steps"), Error);
}
