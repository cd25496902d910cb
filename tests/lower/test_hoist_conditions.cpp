// hoist_loop_invariant_conditions: a guard moves out of the loops it does not depend on (as a
// whole or the terms of a conjunction), through sequences of pieces that share it; guards
// that could fault stay; loops that do nothing vanish, and loops that do something stay.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "lower/lowered_text.hpp"
#include "weft/lower/impl/hoist_conditions.hpp"  // the pass itself, for hand-built programs
#include "weft/weft.hpp"

using namespace weft;
using lowered_text::count;

namespace {

struct HandBuilt {
    Var out{"out", DataType::handle()}, in{"in", DataType::handle()};
    Var i{"i"}, j{"j"}, n{"n"};
    ir::Stmt store(const Expr& index, double value) const {
        return ir::Store::make(out, ir::make_const(f32, value), index);
    }
    ir::Stmt loop(const Var& v, int64_t extent, ir::Stmt body) const {
        return ir::For::make(v, make_int(0), make_int(extent), ir::ForKind::Serial, std::move(body));
    }
};

// The position of the first `what` in `text`, or npos.
size_t at(const std::string& text, const std::string& what) { return text.find(what); }

}  // namespace

TEST_CASE("hoist_conditions: a guard on an outer variable moves out of the inner loops") {
    // for i { for j { if (i >= 2) out[i * 4 + j] = 1 } }  ->  for i { if (i >= 2) { for j { ... } } }
    HandBuilt h;
    ir::Stmt prog = h.loop(h.i, 8, h.loop(h.j, 4, ir::IfThenElse::make(Expr(h.i) >= 2, h.store(h.i * 4 + h.j, 1))));
    std::string text = ir::to_string(lower_passes::hoist_loop_invariant_conditions(prog));
    CHECK(count(text, "if (") == 1);
    REQUIRE(count(text, "for (j") == 1);
    REQUIRE(at(text, "if (i >= 2)") != std::string::npos);
    CHECK(at(text, "for (i") < at(text, "if (i >= 2)"));
    CHECK(at(text, "if (i >= 2)") < at(text, "for (j"));
}

TEST_CASE("hoist_conditions: a conjunction gives up only the terms a loop does not use") {
    // for j { if (i >= 2 && j < 3) S }  ->  if (i >= 2) { for j { if (j < 3) S } }
    HandBuilt h;
    ir::Stmt body = ir::IfThenElse::make(Expr(h.i) >= 2 && Expr(h.j) < 3, h.store(h.i * 4 + h.j, 1));
    std::string text = ir::to_string(lower_passes::hoist_loop_invariant_conditions(h.loop(h.j, 4, body)));
    REQUIRE(at(text, "if (i >= 2)") != std::string::npos);
    REQUIRE(at(text, "if (j < 3)") != std::string::npos);
    CHECK(at(text, "if (i >= 2)") < at(text, "for (j"));
    CHECK(at(text, "for (j") < at(text, "if (j < 3)"));
}

TEST_CASE("hoist_conditions: the shared term of a sequence of guarded pieces moves out") {
    // for j { if (i >= 1 && j == 0) A; if (i >= 1) B }  ->  if (i >= 1) { for j { if (j == 0) A; B } }
    HandBuilt h;
    ir::Stmt body = ir::Seq::make({ir::IfThenElse::make(Expr(h.i) >= 1 && Expr(h.j) == 0, h.store(h.j, 1)),
                                   ir::IfThenElse::make(Expr(h.i) >= 1, h.store(h.j + 4, 2))});
    std::string text = ir::to_string(lower_passes::hoist_loop_invariant_conditions(h.loop(h.j, 4, body)));
    CHECK(count(text, "i >= 1") == 1);
    REQUIRE(count(text, "for (j") == 1);
    CHECK(at(text, "if (i >= 1)") < at(text, "for (j"));
    CHECK(count(text, "if (j == 0)") == 1);
}

TEST_CASE("hoist_conditions: a loop whose pieces never run vanishes, one with a running piece stays") {
    HandBuilt h;
    const Expr never = ir::make_const(boolean, 0);
    // Every statement under a false guard: nothing is left of the loop.
    ir::Stmt dead = h.loop(h.j, 4, ir::IfThenElse::make(Expr(h.i) >= 1 && never, h.store(h.j, 1)));
    CHECK(count(ir::to_string(lower_passes::hoist_loop_invariant_conditions(dead)), "out[") == 0);
    // A false piece beside an unguarded loop (what partitioning leaves of a peeled first
    // iteration): the loop and its store must stay.
    ir::Stmt live = h.loop(h.j, 4,
                           ir::Seq::make({ir::IfThenElse::make(never, h.store(h.j, 1)),
                                          h.loop(h.i, 2, h.store(h.j * 2 + h.i, 2))}));
    std::string text = ir::to_string(lower_passes::hoist_loop_invariant_conditions(live));
    CHECK(count(text, "for (j") == 1);
    CHECK(count(text, "for (i") == 1);
    CHECK(count(text, "out[") >= 1);
}

TEST_CASE("hoist_conditions: guards that could fault or trap stay inside their loop") {
    HandBuilt h;
    // A load (the loop may run no iterations: the read would be new) and a division by a
    // variable (possibly zero) are evaluated only where the program evaluated them.
    Expr load = ir::Load::make(f32, h.in, make_int(0)) > ir::make_const(f32, 0.0);
    Expr divide = Expr(h.i) / Expr(h.n) >= 1;
    for (const Expr& cond : {load, divide}) {
        ir::Stmt prog = h.loop(h.j, 4, ir::IfThenElse::make(cond, h.store(h.j, 1)));
        std::string text = ir::to_string(lower_passes::hoist_loop_invariant_conditions(prog));
        REQUIRE(count(text, "if (") == 1);
        CHECK(at(text, "for (j") < at(text, "if ("));
    }
    // A division by a constant is safe.
    ir::Stmt prog = h.loop(h.j, 4, ir::IfThenElse::make(Expr(h.i) / 2 >= 1, h.store(h.j, 1)));
    std::string text = ir::to_string(lower_passes::hoist_loop_invariant_conditions(prog));
    REQUIRE(count(text, "for (j") == 1);
    CHECK(at(text, "if (") < at(text, "for (j"));
}

TEST_CASE("hoist_conditions: a where-condition on an outer axis is tested outside the inner loops") {
    // C[i, j] = sum over k < 16 of A[i, k] * B[k, j] where i + k >= 5, with j innermost and
    // vectorized: the test depends on i and k only, so it sits outside the j loop, which stays
    // one vector statement per k.
    const int64_t M = 7, N = 16, K = 16;
    Tensor A = placeholder({M, K}, f32, "A"), B = placeholder({K, N}, f32, "B");
    IterVar k = reduce_axis(0, K, "k");
    Tensor C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}, i + k >= 5); }, "C");
    Schedule s = create_schedule(C);
    s[C].reorder({C.axis(0), k, C.axis(1)});
    s[C].vectorize(C.axis(1));
    std::string text = ir::to_string(lower(s, {A, B, C}).body);
    REQUIRE(at(text, "if (") != std::string::npos);
    CHECK(at(text, "for (k") < at(text, "if ("));
    CHECK(count(text, "ramp(") >= 1);  // the j loop became vector code under the guard

    auto a = Buffer<float>::random({M, K}, -1.f, 1.f, 1), b = Buffer<float>::random({K, N}, -1.f, 1.f, 2);
    Buffer<float> c({M, N});
    build(s, {A, B, C})(a, b, c);
    double worst = 0;
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double want = 0;
            for (int64_t r = 0; r < K; ++r)
                if (i + r >= 5) want += double(a(i, r)) * double(b(r, j));
            worst = std::max(worst, std::abs(want - double(c(i, j))));
        }
    CHECK(worst < 1e-5);
}
