// Repeated arguments and buffers that share memory: a tensor listed twice is refused at
// build; at call time an output may share bytes with an input only where the kernel reads
// that input element-wise, and then only as the very same bytes. Anything else would
// compute wrong numbers without a word (a matmul writing over its A).
#include <doctest/doctest.h>

#include <cmath>

#include "weft/weft.hpp"

using namespace weft;
using doctest::Contains;

namespace {

// Y = X * 2 + 1, element-wise, on [8, 16].
struct Affine {
    Tensor X = placeholder({8, 16}, f32, "X");
    Tensor Y = compute({8, 16}, [&](Expr i, Expr j) { return X(i, j) * 2.0f + 1.0f; }, "Y");
};

std::vector<int> may_overwrite_of_last(const Kernel& k) { return k.signature().args.back().may_overwrite; }

}  // namespace

TEST_CASE("a tensor or variable passed twice is refused at build") {
    Affine a;
    Schedule s = create_schedule(a.Y);
    CHECK_THROWS_WITH_AS(build(s, {a.X, a.X, a.Y}), Contains("tensor 'X' is passed twice (arguments #1 and #2)"),
                         Error);
    CHECK_THROWS_WITH_AS(build(s, {a.X, a.Y, a.Y}), Contains("tensor 'Y' is passed twice"), Error);
    Var n("n");
    Tensor P = placeholder({n}, f32, "P");
    Tensor Q = compute({n}, [&](Expr i) { return P(i) + 1.0f; }, "Q");
    CHECK_THROWS_WITH_AS(build(create_schedule(Q), {P, Q, n, n}), Contains("variable 'n' is passed twice"), Error);
}

TEST_CASE("a matmul whose output is also its input A is refused, naming both") {
    Tensor A = placeholder({16, 16}, f32, "A"), B = placeholder({16, 16}, f32, "B");
    Tensor C = topi::matmul(A, B, "C");
    Schedule s = create_schedule(C);
    topi::schedule_matmul(s, C, C);
    Kernel k = build(s, {A, B, C});
    CHECK(k.signature().args[2].is_output);
    CHECK_FALSE(k.signature().args[0].is_output);
    CHECK(may_overwrite_of_last(k).empty());
    auto a = Buffer<float>::random({16, 16}, -1.f, 1.f, 1), b = Buffer<float>::random({16, 16}, -1.f, 1.f, 2);
    CHECK_THROWS_WITH_AS(k(a, b, a), Contains("output 'C' (#3) shares memory with input 'A' (#1)"), Error);
    CHECK_THROWS_WITH_AS(k(a, b, b), Contains("reads that input at other elements than the one it writes"), Error);
    // A view that starts inside A's bytes overlaps them too.
    Buffer<float> big({17, 16});
    BufferRef lower_rows(static_cast<float*>(big.data()) + 16, f32, {16, 16});
    BufferRef upper_rows(big.data(), f32, {16, 16});
    CHECK_THROWS_WITH_AS(k(upper_rows, b, lower_rows), Contains("shares memory with input 'A'"), Error);
    Buffer<float> c({16, 16});
    CHECK_NOTHROW(k(a, b, c));  // separate buffers
}

TEST_CASE("an element-wise kernel may write over its input in place, and computes the right numbers") {
    Affine e;
    Schedule s = create_schedule(e.Y);
    auto [yo, yi] = s[e.Y].split(e.Y.axis(1), 8);
    s[e.Y].vectorize(yi);
    Kernel k = build(s, {e.X, e.Y});
    CHECK(may_overwrite_of_last(k) == std::vector<int>{0});
    auto x = Buffer<float>::random({8, 16}, -1.f, 1.f, 3);
    Buffer<float> want({8, 16});
    for (int64_t i = 0; i < x.size(); ++i) static_cast<float*>(want.data())[i] = static_cast<float*>(x.data())[i] * 2 + 1;
    k(x, x);  // in place
    for (int64_t i = 0; i < x.size(); ++i)
        CHECK(static_cast<float*>(x.data())[i] == doctest::Approx(static_cast<float*>(want.data())[i]));
    // Shifted by one element, even an element-wise kernel would read what it just wrote.
    Buffer<float> big({8 * 16 + 1});
    BufferRef in(big.data(), f32, {8, 16}), out(static_cast<float*>(big.data()) + 1, f32, {8, 16});
    CHECK_THROWS_WITH_AS(k(in, out), Contains("only in place: the very same bytes"), Error);
}

TEST_CASE("a kernel that reads its input elsewhere or computes elements twice may not write over it") {
    // A shifted read: Y[i] = X[i + 1] (and X's last element for the last one).
    Tensor X = placeholder({64}, f32, "X");
    Tensor Y = compute({64}, [&](Expr i) { return X(min(i + 1, 63)); }, "Y");
    Kernel shifted = build(create_schedule(Y), {X, Y});
    CHECK(may_overwrite_of_last(shifted).empty());
    auto x = Buffer<float>::random({64}, -1.f, 1.f, 4);
    CHECK_THROWS_AS(shifted(x, x), Error);

    // Element-wise, but the last tile shifted inwards recomputes elements after they were written.
    // (Z reads X's first 60 elements: not X's shape, so never in place either.)
    Tensor Z = compute({60}, [&](Expr i) { return X(i) + 1.0f; }, "Z");
    Tensor W = placeholder({60}, f32, "W");
    Tensor V = compute({60}, [&](Expr i) { return W(i) + 1.0f; }, "V");
    Schedule s = create_schedule(V);
    s[V].split(V.axis(0), 16, TailStrategy::ShiftInwards);
    Kernel recompute = build(s, {W, V});
    CHECK(may_overwrite_of_last(recompute).empty());
    Kernel z = build(create_schedule(Z), {X, Z});
    CHECK(may_overwrite_of_last(z).empty());

    // Reading the input through an inlined stage at the output's own index still counts as element-wise.
    Tensor T = compute({60}, [&](Expr i) { return W(i) * W(i); }, "T");
    Tensor U = compute({60}, [&](Expr i) { return T(i) + W(i); }, "U");
    Schedule su = create_schedule(U);
    su[T].compute_inline();
    CHECK(may_overwrite_of_last(build(su, {W, U})) == std::vector<int>{0});
    // ... and through one computed at a loop of the output, not.
    Schedule sa = create_schedule(U);
    auto [uo, ui] = sa[U].split(U.axis(0), 4);
    sa[T].compute_at(sa[U], uo);
    CHECK(may_overwrite_of_last(build(sa, {W, U})).empty());
}
