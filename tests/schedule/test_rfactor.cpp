// rfactor: a reduction factored over one of its (split) reduce loops computes the same
// numbers, lets the partial results be vectorized, and records/replays like any primitive.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "weft/weft.hpp"

using namespace weft;

namespace {

// Checks out(i) against the row sums of a (M, K) matrix, summed in double precision.
void check_row_sums(const Buffer<float>& out, const Buffer<float>& a, int64_t M, int64_t K) {
    for (int64_t i = 0; i < M; ++i) {
        double want = 0;
        for (int64_t k = 0; k < K; ++k) want += a(i, k);
        CHECK(std::abs(out(i) - want) < 1e-4 * (1 + std::abs(want)));
    }
}

// S(i) = sum over k of A(i, k), for an (M, K) matrix A.
struct RowSum {
    Tensor A;
    IterVar k;
    Tensor S;
    RowSum(int64_t M, int64_t K)
        : A(placeholder({M, K}, f32, "A")), k(reduce_axis(0, K, "k")),
          S(compute({M}, [&](Expr i) { return sum(A(i, k), {k}); }, "S")) {}
};

}  // namespace

TEST_CASE("rfactor of a split row sum vectorizes the partial sums and matches the reference") {
    for (int64_t K : {1, 7, 16, 61, 256}) {  // a non-dividing tail, a single lane, exact fits
        const int64_t M = 13;
        auto [A, k, S] = RowSum(M, K);
        Schedule s = create_schedule(S);
        auto [ko, ki] = s[S].split(k, 16);
        Tensor RF = s.rfactor(S, ki);
        CHECK(RF.ndim() == 2);
        s[RF].reorder({RF.axis(0), RF.reduce_axis(0), RF.axis(1)});
        s[RF].vectorize(RF.axis(1));
        s[RF].compute_at(s[S], S.axis(0));
        Kernel f = build(s, {A, S});
        auto a = Buffer<float>::random({M, K}, -1, 1, unsigned(K));
        Buffer<float> out({M});
        f(a, out);
        check_row_sums(out, a, M, K);
    }
}

TEST_CASE("rfactor over an original reduce axis with another axis left to reduce") {
    const int64_t M = 5, R = 9, C = 12;
    Tensor X = placeholder({M, R, C}, f32, "X");
    IterVar r = reduce_axis(0, R, "r"), c = reduce_axis(0, C, "c");
    Tensor Mx = compute({M}, [&](Expr i) { return max(X(i, r, c), {r, c}); }, "Mx");
    Schedule s = create_schedule(Mx);
    Tensor RF = s.rfactor(Mx, c, 0);  // RF(c, i) = max over r
    CHECK(ir::to_string(RF.shape()[0]) == "12");
    s[RF].parallel(RF.axis(0));
    Kernel f = build(s, {X, Mx});
    auto x = Buffer<float>::random({M, R, C}, -3, 3, 5);
    Buffer<float> out({M});
    f(x, out);
    for (int64_t i = 0; i < M; ++i) {
        float want = -INFINITY;
        for (int64_t a = 0; a < R; ++a)
            for (int64_t b = 0; b < C; ++b) want = std::max(want, x(i, a, b));
        CHECK(out(i) == want);
    }
}

TEST_CASE("rfactor of a matmul reduction over the outer loop of a split") {
    const int64_t M = 6, N = 10, K = 37;
    Tensor A = placeholder({M, K}, f32, "A"), B = placeholder({K, N}, f32, "B");
    IterVar k = reduce_axis(0, K, "k");
    Tensor Cm = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule(Cm);
    auto [ko, ki] = s[Cm].split(k, 8);
    Tensor RF = s.rfactor(Cm, ko, 1);  // RF(i, ko, j) = partial products over ki
    s[RF].parallel(RF.axis(1));
    s[Cm].vectorize(Cm.axis(1));
    Kernel f = build(s, {A, B, Cm});
    auto a = Buffer<float>::random({M, K}, -1, 1, 1), b = Buffer<float>::random({K, N}, -1, 1, 2);
    Buffer<float> c({M, N});
    f(a, b, c);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double want = 0;
            for (int64_t x = 0; x < K; ++x) want += double(a(i, x)) * b(x, j);
            CHECK(std::abs(c(i, j) - want) < 1e-4);
        }
}

TEST_CASE("rfactor twice on one reduction gives the partial stages distinct names") {
    const int64_t M = 3, K = 256;
    auto [A, k, S] = RowSum(M, K);
    Schedule s = create_schedule(S);
    auto [ko, ki] = s[S].split(k, 16);
    Tensor RF = s.rfactor(S, ki);
    auto [vo, vi] = s[S].split(s[S].leaf_iter_vars().back(), 4);  // S now reduces RF over ki
    Tensor RF2 = s.rfactor(S, vi);
    CHECK(RF.name() == "S.rf");
    CHECK(RF2.name() == "S.rf2");
    Kernel f = build(s, {A, S});
    auto a = Buffer<float>::random({M, K}, -1, 1, 9);
    Buffer<float> out({M});
    f(a, out);
    check_row_sums(out, a, M, K);
}

TEST_CASE("rfactor records in the trace and replays from JSON") {
    const int64_t M = 8, K = 40;
    auto [A, k, S] = RowSum(M, K);
    Schedule s = create_schedule(S);
    auto [ko, ki] = s[S].split(k, 8);
    Tensor RF = s.rfactor(S, ki);
    s[RF].vectorize(RF.axis(1));
    Schedule replayed = Schedule::from_json(s.to_json(), {S});
    CHECK(replayed == s);
    CHECK(ir::to_string(lower(replayed, {A, S}).body) == ir::to_string(lower(s, {A, S}).body));
}

TEST_CASE("rfactor refuses what it cannot factor") {
    const int64_t M = 8, K = 40;
    Tensor A = placeholder({M, K}, f32, "A");
    IterVar k = reduce_axis(0, K, "k");
    Tensor S = compute({M}, [&](Expr i) { return sum(A(i, k), {k}); }, "S");
    Tensor E = compute({M}, [&](Expr i) { return S(i) * 2.0f; }, "E");
    {
        Schedule s = create_schedule(E);
        CHECK_THROWS_WITH_AS(s.rfactor(E, E.axis(0)), doctest::Contains("is not a reduction"), Error);
        CHECK_THROWS_WITH_AS(s.rfactor(S, S.axis(0)), doctest::Contains("is not a reduce loop"), Error);
        CHECK_THROWS_WITH_AS(s.rfactor(S, k), doctest::Contains("only reduce loop"), Error);
        auto [ko, ki] = s[S].split(k, 8);
        CHECK_THROWS_WITH_AS(s.rfactor(S, k), doctest::Contains("is not a reduce loop"), Error);
        CHECK_THROWS_WITH_AS(s.rfactor(S, ki, 5), doctest::Contains("factor_axis 5 is out of range"), Error);
        s[S].unroll(ki);
        CHECK_THROWS_WITH_AS(s.rfactor(S, ki), doctest::Contains("must come before vectorize"), Error);
    }
}
