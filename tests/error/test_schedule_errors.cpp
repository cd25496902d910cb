// Illegal schedules: each primitive refuses with a weft::Error naming the stage and axis.
#include <doctest/doctest.h>

#include "weft/weft.hpp"

using namespace weft;

namespace {

// x -> prod (element-wise) -> cons (3-point stencil of prod); also other = x + 1.
struct Pipeline {
    Tensor X = placeholder({34}, f32, "x");
    Tensor P = compute({34}, [&](Expr i) { return X(i) * 2.0f; }, "prod");
    Tensor C = compute({32}, [&](Expr i) { return P(i) + P(i + 1) + P(i + 2); }, "cons");
    Tensor O = compute({34}, [&](Expr i) { return X(i) + 1.0f; }, "other");
};

}  // namespace

TEST_CASE("splitting an axis that was already split names the axis") {
    Pipeline p;
    Schedule s = create_schedule(p.C);
    IterVar i = p.C.axis(0);
    s[p.C].split(i, 4);
    CHECK_THROWS_WITH_AS(s[p.C].split(i, 2), doctest::Contains("axis 'i' is no longer a loop of this stage"), weft::Error);
    CHECK_THROWS_WITH_AS(s[p.C].vectorize(i), doctest::Contains("axis 'i' is no longer a loop"), weft::Error);
    CHECK_THROWS_WITH_AS(s[p.C].split(s[p.C].leaf_iter_vars()[0], 0), doctest::Contains("factor must be positive"),
                         weft::Error);
}

TEST_CASE("compute_at into a stage that does not consume the tensor names both stages") {
    Pipeline p;
    Schedule s = create_schedule({p.C, p.O});
    CHECK_THROWS_WITH_AS(s[p.P].compute_at(s[p.O], p.O.axis(0)), doctest::Contains("stage 'other' does not read 'prod'"),
                         weft::Error);
    // The loop must belong to the parent stage.
    CHECK_THROWS_WITH_AS(s[p.P].compute_at(s[p.C], p.O.axis(0)), doctest::Contains("belongs to stage 'other'"),
                         weft::Error);
    // Outputs and inputs are not computed inside other stages.
    CHECK_THROWS_WITH_AS(s[p.O].compute_at(s[p.C], p.C.axis(0)), doctest::Contains("'other' is an output"), weft::Error);
    CHECK_THROWS_WITH_AS(s[p.X].compute_at(s[p.C], p.C.axis(0)), doctest::Contains("'x' is a placeholder"), weft::Error);
}

TEST_CASE("reorder with an axis of another stage names the stage that owns it") {
    Pipeline p;
    Schedule s = create_schedule(p.C);
    CHECK_THROWS_WITH_AS(s[p.C].reorder({p.C.axis(0), p.P.axis(0)}), doctest::Contains("belongs to stage 'prod'"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(s[p.C].reorder({p.C.axis(0), p.C.axis(0)}), doctest::Contains("axis 'i' is listed twice"),
                         weft::Error);
}

TEST_CASE("fuse of loops that are not adjacent names both axes") {
    Tensor A = placeholder({3, 4, 5}, f32, "A");
    Tensor B = compute({3, 4, 5}, [&](Expr a, Expr b, Expr c) { return A(a, b, c) + 1.0f; }, "B", {"a", "b", "c"});
    Schedule s = create_schedule(B);
    CHECK_THROWS_WITH_AS(s[B].fuse(B.axis(0), B.axis(2)), doctest::Contains("'a' and 'c' are not adjacent"), weft::Error);
    // Inner before outer is not adjacent in that order either.
    CHECK_THROWS_WITH_AS(s[B].fuse(B.axis(1), B.axis(0)), doctest::Contains("'b' and 'a' are not adjacent"), weft::Error);
}

TEST_CASE("fuse of a data axis with a reduction axis names both") {
    Tensor A = placeholder({6, 7}, f32, "A");
    IterVar k = reduce_axis(0, 7, "k");
    Tensor S = compute({6}, [&](Expr i) { return sum(A(i, k), {k}); }, "S");
    Schedule s = create_schedule(S);
    CHECK_THROWS_WITH_AS(s[S].fuse(S.axis(0), k), doctest::Contains("cannot fuse 'i' and 'k'"), weft::Error);
}

TEST_CASE("parallel of a reduction axis names the axis") {
    Tensor A = placeholder({6, 7}, f32, "A");
    IterVar k = reduce_axis(0, 7, "k");
    Tensor S = compute({6}, [&](Expr i) { return sum(A(i, k), {k}); }, "S");
    Schedule s = create_schedule(S);
    CHECK_THROWS_WITH_AS(s[S].parallel(k), doctest::Contains("axis 'k' is a reduction axis"), weft::Error);
    // Vectorizing it is allowed: the lanes combine as a tree (schedules.md).
    CHECK_NOTHROW(s[S].vectorize(k));
}

TEST_CASE("two kinds on one loop name the axis") {
    Pipeline p;
    Schedule s = create_schedule(p.C);
    s[p.C].vectorize(p.C.axis(0));
    CHECK_THROWS_WITH_AS(s[p.C].parallel(p.C.axis(0)), doctest::Contains("axis 'i' is already vectorized"), weft::Error);
}

TEST_CASE("vectorize of a symbolic extent names the stage and the axis") {
    Var n("n");
    Tensor X = placeholder({n}, f32, "x");
    Tensor Y = compute({n}, [&](Expr i) { return X(i) * X(i); }, "sq");
    Schedule s = create_schedule(Y);
    s[Y].vectorize(Y.axis(0));
    CHECK_THROWS_WITH_AS(lower(s, {X, Y}), doctest::Contains("vectorize on stage 'sq': axis 'i' has a symbolic extent"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(build(s, {X, Y}), doctest::Contains("axis 'i' has a symbolic extent"), weft::Error);
}

TEST_CASE("bind on a CPU target names the stage and the axis") {
    Pipeline p;
    Schedule s = create_schedule(p.C);
    auto [o, in] = s[p.C].split(p.C.axis(0), 8);
    s[p.C].bind(o, block_x());
    s[p.C].bind(in, thread_x());
    CHECK_THROWS_WITH_AS(build(s, {p.X, p.C}, Target::host()),
                         doctest::Contains("stage 'cons': axis 'i.outer' is bound to blockIdx.x"), weft::Error);
}

TEST_CASE("compute_inline of a reduction names the stage") {
    Tensor A = placeholder({6, 7}, f32, "A");
    IterVar k = reduce_axis(0, 7, "k");
    Tensor S = compute({6}, [&](Expr i) { return sum(A(i, k), {k}); }, "rowsum");
    Tensor Y = compute({6}, [&](Expr i) { return S(i) * 2.0f; }, "Y");
    Schedule s = create_schedule(Y);
    CHECK_THROWS_WITH_AS(s[S].compute_inline(), doctest::Contains("'rowsum' is a reduction"), weft::Error);
    CHECK_THROWS_WITH_AS(s[Y].compute_inline(), doctest::Contains("'Y' is an output"), weft::Error);
    CHECK_THROWS_WITH_AS(s[A].compute_inline(), doctest::Contains("'A' is a placeholder"), weft::Error);
}

TEST_CASE("a producer computed inside a loop but also read outside it names the producer and the loop") {
    Tensor X = placeholder({16}, f32, "x");
    Tensor P = compute({16}, [&](Expr i) { return X(i) * 2.0f; }, "prod");
    Tensor Q = compute({16}, [&](Expr i) { return P(i) + 1.0f; }, "q");
    Tensor Y = compute({16}, [&](Expr i) { return P(i) + Q(i); }, "y");
    Schedule s = create_schedule(Y);
    // prod inside q's loop, but y reads prod too, outside q's loop.
    s[P].compute_at(s[Q], Q.axis(0));
    CHECK_THROWS_WITH_AS(lower(s, {X, Y}), doctest::Contains("'prod' is computed inside loop 'i' of 'q'"), weft::Error);
}

TEST_CASE("compute_at a loop that was split away names the loop") {
    Pipeline p;
    Schedule s = create_schedule(p.C);
    s[p.P].compute_at(s[p.C], p.C.axis(0));
    s[p.C].split(p.C.axis(0), 4);
    CHECK_THROWS_WITH_AS(lower(s, {p.X, p.C}), doctest::Contains("attached to loop 'i' of 'cons'"), weft::Error);
}

TEST_CASE("cache_write after another primitive on the stage names the tensor") {
    Tensor A = placeholder({6, 7}, f32, "A");
    IterVar k = reduce_axis(0, 7, "k");
    Tensor S = compute({6}, [&](Expr i) { return sum(A(i, k), {k}); }, "S");
    Schedule s = create_schedule(S);
    s[S].split(S.axis(0), 2);
    CHECK_THROWS_WITH_AS(s.cache_write(S, "local"), doctest::Contains("cache_write on 'S' must come before"), weft::Error);
    CHECK_THROWS_WITH_AS(s.cache_read(A, "local", {S}), doctest::Contains("cache_read on 'S' must come before"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(s[S].set_scope("texture"), doctest::Contains("unknown storage scope 'texture'"), weft::Error);
}

TEST_CASE("cache_read for a reader that does not read the tensor names both") {
    Pipeline p;
    Schedule s = create_schedule({p.C, p.O});
    CHECK_THROWS_WITH_AS(s.cache_read(p.X, "local", {p.C}), doctest::Contains("'cons' does not read 'x'"), weft::Error);
}

TEST_CASE("a stage of a tensor outside the schedule names the tensor") {
    Pipeline p;
    Schedule s = create_schedule(p.C);
    CHECK_THROWS_WITH_AS(s[p.O], doctest::Contains("no stage for 'other'"), weft::Error);
}

TEST_CASE("store_nontemporal on a reduction or an inlined stage says why it cannot apply") {
    Tensor X = placeholder({8, 16}, f32, "x");
    IterVar k = reduce_axis(0, 16, "k");
    Tensor S = compute({8}, [&](Expr i) { return sum(X(i, k), {k}); }, "rowsum");
    Schedule s = create_schedule(S);
    s[S].store_nontemporal();
    CHECK_THROWS_WITH_AS(build(s, {X, S}), doctest::Contains("store_nontemporal: 'rowsum' is a reduction"), weft::Error);

    Tensor P = compute({8, 16}, [&](Expr i, Expr j) { return X(i, j) * 2.f; }, "scaled");
    Tensor Q = compute({8, 16}, [&](Expr i, Expr j) { return P(i, j) + 1.f; }, "shifted");
    Schedule t = create_schedule(Q);
    t[P].compute_inline();
    t[P].store_nontemporal();
    CHECK_THROWS_WITH_AS(build(t, {X, Q}), doctest::Contains("store_nontemporal: 'scaled' is computed inline"),
                         weft::Error);
    // Placeholders store nothing.
    CHECK_THROWS_WITH_AS(t[X].store_nontemporal(), doctest::Contains("'x' is not a compute stage"), weft::Error);
}

TEST_CASE("ShiftInwards where overlapping tiles would count elements twice names the stage and the loop") {
    Tensor A = placeholder({10, 9}, f32, "A");
    IterVar k = reduce_axis(0, 9, "k");
    Tensor S = compute({10}, [&](Expr i) { return sum(A(i, k), {k}); }, "rowsum");
    Schedule s = create_schedule(S);
    CHECK_THROWS_WITH_AS(s[S].split(k, 4, TailStrategy::ShiftInwards),
                         doctest::Contains("split of axis 'k' in stage 'rowsum': TailStrategy::ShiftInwards"),
                         weft::Error);
    // The data axis is fine, but not with its outer loop inside the reduce loop.
    auto [io, ii] = s[S].split(S.axis(0), 4, TailStrategy::ShiftInwards);
    s[S].reorder({k, io, ii});
    CHECK_THROWS_WITH_AS(build(s, {A, S}), doctest::Contains("loop 'i.outer' runs inside a reduce loop"), weft::Error);
    // A JSON step with an unknown tail strategy.
    Schedule t = create_schedule(S);
    t[S].split(S.axis(0), 4, TailStrategy::ShiftInwards);
    std::string json = t.to_json();
    json.replace(json.find("[4,1]"), 5, "[4,7]");
    CHECK_THROWS_WITH_AS(Schedule::from_json(json, {S}), doctest::Contains("optional tail strategy"), weft::Error);
}

TEST_CASE("prefetch that cannot apply names the tensor, the loop and the stage") {
    Tensor A = placeholder({8, 32}, f32, "A"), Other = placeholder({8}, f32, "other");
    Tensor T = compute({8, 32}, [&](Expr i, Expr j) { return A(i, j) + 1.0f; }, "t");
    Tensor B = compute({8, 32}, [&](Expr i, Expr j) { return T(i, j) * 2.0f; }, "b");
    Schedule s = create_schedule(B);
    CHECK_THROWS_WITH_AS(s[B].prefetch(T, B.axis(0), 0), doctest::Contains("an offset of 0"), weft::Error);
    CHECK_THROWS_WITH_AS(s[B].prefetch(Other, B.axis(0), 1), doctest::Contains("it does not read 'other'"), weft::Error);
    CHECK_THROWS_WITH_AS(s[B].prefetch(T, T.axis(0), 1), doctest::Contains("belongs to stage 't'"), weft::Error);
    s[B].vectorize(B.axis(1));
    CHECK_THROWS_WITH_AS(s[B].prefetch(T, B.axis(1), 1), doctest::Contains("the loop is vectorized"), weft::Error);
    // A tensor computed inside a loop of its reader has no whole buffer to prefetch from.
    s[B].prefetch(T, B.axis(0), 1);
    s[T].compute_at(s[B], B.axis(0));
    CHECK_THROWS_WITH_AS(build(s, {A, B}), doctest::Contains("'t' is computed inside a loop of another stage"),
                         weft::Error);
    // The loop was split after the prefetch named it.
    Schedule t = create_schedule(B);
    t[B].prefetch(T, B.axis(0), 1);
    t[B].split(B.axis(0), 2);
    CHECK_THROWS_WITH_AS(build(t, {A, B}), doctest::Contains("loop 'i' is no longer a loop of the stage"), weft::Error);
}

TEST_CASE("compute_with that cannot fuse names both stages and what differs") {
    // a and b read x; c reads a one row ahead; r sums a's rows.
    Tensor X = placeholder({8, 32}, f32, "x");
    Tensor A = compute({8, 32}, [&](Expr i, Expr j) { return X(i, j) * 2.0f; }, "a");
    Tensor B = compute({8, 32}, [&](Expr i, Expr j) { return A(i, j) + X(i, j); }, "b");
    Tensor C = compute({8, 32}, [&](Expr i, Expr j) { return A(i, j) - A(min(i + 1, 7), j); }, "c");
    IterVar k = reduce_axis(0, 32, "k");
    Tensor R = compute({8}, [&](Expr i) { return sum(A(i, k.var()), {k}); }, "r");
    Tensor D = compute({8, 32}, [&](Expr i, Expr j) { return R(i) * 0.5f; }, "d");
    auto lower_b = [&](const Schedule& s) { return lower(s, {X, B}); };

    // Primitive-time checks.
    Schedule s = create_schedule(B);
    CHECK_THROWS_WITH_AS(s[B].compute_with(s[B], B.axis(0)), doctest::Contains("cannot be fused with itself"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(s[A].compute_with(s[B], B.axis(0)), doctest::Contains("'b' reads 'a'"), weft::Error);
    CHECK_THROWS_WITH_AS(s[B].compute_with(s[A], B.axis(0)), doctest::Contains("belongs to stage 'b'"), weft::Error);
    CHECK_THROWS_WITH_AS(s[X].compute_with(s[A], A.axis(0)), doctest::Contains("'x' is a placeholder"), weft::Error);

    // Loops of different ranges.
    s[A].split(A.axis(1), 8);
    s[B].split(B.axis(1), 4);
    s[B].compute_with(s[A], s[A].leaf_iter_vars()[1]);
    CHECK_THROWS_WITH_AS(lower_b(s), doctest::Contains("fused loops must have the same range"), weft::Error);

    // Different places: a at the root, b an output but a computed inside b's loop.
    Schedule p = create_schedule(B);
    p[A].compute_at(p[B], B.axis(0));
    p[B].compute_with(p[A], A.axis(0));
    CHECK_THROWS_WITH_AS(lower_b(p), doctest::Contains("computed at different places"), weft::Error);

    // c reads row i + 1 of a in the iteration where a has written row i only.
    Schedule q = create_schedule(C);
    q[C].compute_with(q[A], A.axis(0));
    CHECK_THROWS_WITH_AS(lower(q, {X, C}), doctest::Contains("of 'a' but 'a' writes [i, i], [0, 31] there"), weft::Error);

    // Fused at a's reduce loop: d would read partial sums.
    Schedule t = create_schedule(D);
    t[D].compute_with(t[R], R.op()->reduce_axis[0]);
    CHECK_THROWS_WITH_AS(lower(t, {X, D}), doctest::Contains("loop 'k' of 'r' is a reduce loop"), weft::Error);

    // A stage computed between the two.
    Tensor E = compute({8, 32}, [&](Expr i, Expr j) { return B(i, j) * 3.0f; }, "e");
    Schedule u = create_schedule(E);
    u[E].compute_with(u[A], A.axis(0));
    CHECK_THROWS_WITH_AS(lower(u, {X, E}), doctest::Contains("another stage is computed between them"), weft::Error);

    // The fused loop was split afterwards; a loop of b compute_at cannot name after fusion.
    Schedule v = create_schedule(B);
    v[B].compute_with(v[A], A.axis(0));
    v[A].split(A.axis(0), 2);
    CHECK_THROWS_WITH_AS(lower_b(v), doctest::Contains("axis 'i' is no longer a loop of 'a'"), weft::Error);
    // Chains are refused.
    Schedule w = create_schedule(E);
    w[B].compute_with(w[A], A.axis(0));
    CHECK_THROWS_WITH_AS(w[E].compute_with(w[B], B.axis(0)), doctest::Contains("is itself fused"), weft::Error);
}
