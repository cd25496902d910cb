// Each computation the issue names, scheduled, JIT-compiled and checked against a naive
// C++ reference on random data.
#include "reference.hpp"

using namespace weft;
using namespace weft_test;

TEST_CASE("matmul with tile, reorder, vectorize and parallel matches the reference") {
    const int64_t M = 67, N = 96, K = 35;  // tails in every split
    Tensor A = placeholder({M, K}, f32, "A");
    Tensor B = placeholder({K, N}, f32, "B");
    IterVar k = reduce_axis(0, K, "k");
    Tensor C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule(C);
    auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 8, 16);
    s[C].reorder({io, jo, k, ii, ji});
    s[C].vectorize(ji);
    s[C].parallel(io);
    Kernel mm = build(s, {A, B, C});
    auto a = Buffer<float>::random({M, K}, -1, 1, 1), b = Buffer<float>::random({K, N}, -1, 1, 2);
    Buffer<float> c({M, N});
    mm(a, b, c);
    CHECK(max_rel_error(c, ref_matmul(a, b, M, N, K)) < 1e-5);
}

TEST_CASE("direct conv2d NCHW with padding matches the reference") {
    const int64_t N = 1, CI = 3, H = 11, W = 9, CO = 5, KH = 3, KW = 3;
    Tensor X = placeholder({N, CI, H, W}, f32, "X");
    Tensor Wt = placeholder({CO, CI, KH, KW}, f32, "W");
    IterVar rc = reduce_axis(0, CI, "rc"), ry = reduce_axis(0, KH, "ry"), rx = reduce_axis(0, KW, "rx");
    // Zero padding of 1: reads outside the image give 0 (if_then_else never loads them).
    Tensor P = compute({N, CI, H + 2, W + 2}, [&](Expr n, Expr c, Expr y, Expr x) {
        return if_then_else(y >= 1 && y < H + 1 && x >= 1 && x < W + 1, X(n, c, y - 1, x - 1), 0.0f);
    }, "pad");
    Tensor Y = compute({N, CO, H, W}, [&](Expr n, Expr co, Expr y, Expr x) {
        return sum(P(n, rc, y + ry, x + rx) * Wt(co, rc, ry, rx), {rc, ry, rx});
    }, "conv");
    Schedule s = create_schedule(Y);
    s[P].compute_inline();
    auto [xo, xi] = s[Y].split(Y.axis(3), 4);
    s[Y].reorder({Y.axis(0), Y.axis(1), Y.axis(2), xo, rc, ry, rx, xi});
    s[Y].vectorize(xi);
    Kernel conv = build(s, {X, Wt, Y});
    auto x = Buffer<float>::random({N, CI, H, W}, -1, 1, 3), w = Buffer<float>::random({CO, CI, KH, KW}, -1, 1, 4);
    Buffer<float> y({N, CO, H, W});
    conv(x, w, y);
    auto ref = ref_conv2d_nchw(x, w, 1);
    CHECK(max_rel_error(y, ref) < 1e-5);
}

TEST_CASE("softmax (max, exp, sum, divide) matches the reference") {
    const int64_t R = 13, L = 37;
    Tensor X = placeholder({R, L}, f32, "X");
    IterVar k1 = reduce_axis(0, L, "k1"), k2 = reduce_axis(0, L, "k2");
    Tensor mx = compute({R}, [&](Expr i) { return te::max(X(i, k1), std::vector<IterVar>{k1}); }, "rowmax");
    Tensor e = compute({R, L}, [&](Expr i, Expr j) { return exp(X(i, j) - mx(i)); }, "exp");
    Tensor den = compute({R}, [&](Expr i) { return sum(e(i, k2), {k2}); }, "rowsum");
    Tensor Y = compute({R, L}, [&](Expr i, Expr j) { return e(i, j) / den(i); }, "softmax");
    Schedule s = create_schedule(Y);
    auto [jo, ji] = s[Y].split(Y.axis(1), 16);
    s[Y].vectorize(ji);
    s[mx].compute_at(s[Y], Y.axis(0));
    s[e].compute_at(s[Y], Y.axis(0));
    s[den].compute_at(s[Y], Y.axis(0));
    Kernel k = build(s, {X, Y});
    auto x = Buffer<float>::random({R, L}, -4, 4, 5);
    Buffer<float> y({R, L});
    k(x, y);
    auto ref = ref_softmax(x);
    CHECK(max_rel_error(y, ref) < 1e-5);
}

TEST_CASE("a fused element-wise chain matches the reference") {
    const int64_t n = 1000;
    Tensor X = placeholder({n}, f32, "x");
    Var a("a", f32), b("b", f32);
    Tensor T1 = compute({n}, [&](Expr i) { return X(i) * a + b; }, "axpb");
    Tensor T2 = compute({n}, [&](Expr i) { return max(T1(i), 0.0f); }, "relu");
    Tensor Y = compute({n}, [&](Expr i) { return sigmoid(T2(i)) + tanh(T2(i)); }, "y");
    Schedule s = create_schedule(Y);
    s[T1].compute_inline();
    s[T2].compute_inline();
    auto [o, in] = s[Y].split(Y.axis(0), 16);
    s[Y].vectorize(in);
    s[Y].parallel(o);
    Kernel k = build(s, {X, a, b, Y});
    auto x = Buffer<float>::random({n}, -3, 3, 6);
    Buffer<float> y({n});
    k(x, 1.5f, -0.25f, y);
    std::vector<float> ref(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        double t = std::max(0.0, double(x(i)) * 1.5 - 0.25);
        ref[size_t(i)] = float(1 / (1 + std::exp(-t)) + std::tanh(t));
    }
    CHECK(max_rel_error(y, ref) < 1e-5);
}

TEST_CASE("producer computed at a consumer loop only computes what that iteration needs") {
    const int64_t n = 50;
    Tensor X = placeholder({n + 2}, f32, "x");
    Tensor P = compute({n + 2}, [&](Expr i) { return X(i) * 2.0f; }, "prod");
    Tensor C = compute({n}, [&](Expr i) { return P(i) + P(i + 1) + P(i + 2); }, "cons");
    Schedule s = create_schedule(C);
    auto [o, in] = s[C].split(C.axis(0), 8);
    s[P].compute_at(s[C], o);
    std::string program = ir::to_string(lower(s, {X, C}).body);
    CHECK(program.find("allocate prod[float32 * 10]") != std::string::npos);  // 8 + 2 per iteration
    Kernel k = build(s, {X, C});
    auto x = Buffer<float>::random({n + 2}, -1, 1, 7);
    Buffer<float> c({n});
    k(x, c);
    std::vector<float> ref(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ref[size_t(i)] = 2 * (x(i) + x(i + 1) + x(i + 2));
    CHECK(max_rel_error(c, ref) < 1e-6);
}

TEST_CASE("a reduction with a split that does not divide its extent") {
    const int64_t R = 9, L = 100;
    Tensor X = placeholder({R, L}, f32, "X");
    IterVar k = reduce_axis(0, L, "k");
    Tensor S = compute({R}, [&](Expr i) { return sum(X(i, k), {k}); }, "S");
    Schedule s = create_schedule(S);
    auto [ko, ki] = s[S].split(k, 7);
    s[S].unroll(ki);
    Kernel kern = build(s, {X, S});
    auto x = Buffer<float>::random({R, L}, -1, 1, 8);
    Buffer<float> out({R});
    kern(x, out);
    std::vector<float> ref(static_cast<size_t>(R));
    for (int64_t i = 0; i < R; ++i) {
        double acc = 0;
        for (int64_t j = 0; j < L; ++j) acc += x(i, j);
        ref[size_t(i)] = float(acc);
    }
    CHECK(max_rel_error(out, ref) < 1e-5);
}

TEST_CASE("argmax with a user-declared commutative reducer over (index, value) pairs") {
    const int64_t R = 7, L = 33;
    Tensor X = placeholder({R, L}, f32, "X");
    IterVar k = reduce_axis(0, L, "k");
    Reducer argmax = comm_reducer(
        [](const std::vector<Expr>& x, const std::vector<Expr>& y) {
            Expr take_y = y[1] > x[1] || (y[1] == x[1] && y[0] < x[0]);  // ties: smallest index
            return std::vector<Expr>{select(take_y, y[0], x[0]), select(take_y, y[1], x[1])};
        },
        [](const std::vector<DataType>& t) { return std::vector<Expr>{make_int(-1, t[0]), ir::min_value(t[1])}; },
        "argmax");
    auto outs = compute_multi({R}, [&](Expr i) { return argmax({Expr(k), X(i, k)}, {k}); }, "argmax");
    Schedule s = create_schedule(outs);
    Kernel kern = build(s, {X, outs[0], outs[1]});
    auto x = Buffer<float>::random({R, L}, -1, 1, 9);
    Buffer<int64_t> idx({R});
    Buffer<float> val({R});
    kern(x, idx, val);
    for (int64_t i = 0; i < R; ++i) {
        int64_t best = 0;
        for (int64_t j = 1; j < L; ++j)
            if (x(i, j) > x(i, best)) best = j;
        CHECK(idx(i) == best);
        CHECK(val(i) == x(i, best));
    }
}

TEST_CASE("symbolic shapes are bound from the buffers at call time") {
    Var n("n");
    Tensor X = placeholder({n}, f32, "x");
    Tensor Y = compute({n}, [&](Expr i) { return X(i) * X(i); }, "sq");
    Schedule s = create_schedule(Y);
    auto [o, in] = s[Y].split(Y.axis(0), 8);
    s[Y].unroll(in);
    Kernel k = build(s, {X, Y});
    for (int64_t len : {1, 7, 8, 29}) {
        auto x = Buffer<float>::random({len}, -2, 2, uint64_t(len));
        Buffer<float> y({len});
        k(x, y);
        for (int64_t i = 0; i < len; ++i) CHECK(y(i) == x(i) * x(i));
    }
}
