// Statement simplification.
#include <doctest/doctest.h>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"

using namespace weft;
using namespace weft::ir;
using arith::simplify;

namespace {
Var buffer("A", DataType::handle());
Stmt store(const Expr& index, const Expr& value = make_const(f32, 1.0)) { return Store::make(buffer, value, index); }
}  // namespace

TEST_CASE("a loop's variable ranges over its extent inside the body") {
    Var i("i"), io("io");
    Stmt s = For::make(io, 0, 4, ForKind::Serial,
                       For::make(i, 0, 8, ForKind::Serial,
                                 IfThenElse::make(i < 8, store((io * 8 + i) / 8 + (io * 8 + i) % 8))));
    CHECK(to_string(simplify(s)) == to_string(For::make(io, 0, 4, ForKind::Serial,
                                                        For::make(i, 0, 8, ForKind::Serial, store(io + i)))));
}

TEST_CASE("dead branches go; a branch with a no-op then-case is inverted") {
    Var i("i"), n("n");
    Stmt s = For::make(i, 0, n, ForKind::Serial, IfThenElse::make(i >= n, store(i), store(i + 1)));
    CHECK(to_string(simplify(s)) == to_string(For::make(i, 0, n, ForKind::Serial, store(i + 1))));
    Stmt only_else = IfThenElse::make(i < 3, Evaluate::make(make_int(0)), store(i));
    CHECK(to_string(simplify(only_else)) == to_string(IfThenElse::make(i >= 3, store(i))));
    Stmt never = IfThenElse::make(i < i, store(i));
    CHECK(to_string(simplify(never)) == to_string(Evaluate::make(make_int(0, i32))));
}

TEST_CASE("inside if (v < e) the variable's range is narrowed on each side") {
    Var i("i");
    // For i in [0, 10): below 6, min(i * 2, 11) is i * 2; from 6 on, max(i, 5) is i.
    Stmt s = For::make(i, 0, 10, ForKind::Parallel,
                       IfThenElse::make(i < 6, store(min(i * 2, 11)), store(max(i, 5))));
    CHECK(to_string(simplify(s)) == to_string(For::make(i, 0, 10, ForKind::Parallel,
                                                        IfThenElse::make(i < 6, store(i * 2), store(i)))));
    // The narrowing is scoped: after the branch the loop's full range is back.
    Stmt after = For::make(i, 0, 10, ForKind::Serial,
                           Seq::make({IfThenElse::make(i < 6, store(min(i, 7))), store(min(i, 7))}));
    CHECK(to_string(simplify(after)) ==
          to_string(For::make(i, 0, 10, ForKind::Serial, Seq::make({IfThenElse::make(i < 6, store(i)), store(min(i, 7))}))));
}

TEST_CASE("loops that never run vanish; single-iteration loops become their body") {
    Var i("i"), j("j"), n("n");
    CHECK(to_string(simplify(For::make(i, 0, 0, ForKind::Serial, store(i)))) == to_string(Evaluate::make(make_int(0, i32))));
    CHECK(to_string(simplify(For::make(i, 0, n - n - 3, ForKind::Serial, store(i)))) ==
          to_string(Evaluate::make(make_int(0, i32))));
    CHECK(to_string(simplify(For::make(i, 5, 1, ForKind::Serial, store(i * 2)))) == to_string(store(10)));
    CHECK(to_string(simplify(For::make(i, n, 1, ForKind::Parallel, store(i * 2)))) == to_string(store(n * 2)));
    // A thread-bound loop names a GPU index: it stays, with its variable known.
    Stmt bound = For::make(i, 0, 1, ForKind::ThreadBound, store(i + 0 * j), "threadIdx.x");
    CHECK(to_string(simplify(bound)) == to_string(For::make(i, 0, 1, ForKind::ThreadBound, store(i), "threadIdx.x")));
    // A loop whose body does nothing is removed.
    CHECK(to_string(simplify(For::make(i, 0, n, ForKind::Serial, IfThenElse::make(i > n, store(i))))) ==
          to_string(Evaluate::make(make_int(0, i32))));
}

TEST_CASE("lets: constants substituted, other values known in the body") {
    Var t("t"), x("x"), i("i");
    CHECK(to_string(simplify(LetStmt::make(t, make_int(4), store(t * x)))) == to_string(store(x * 4)));
    Stmt s = For::make(i, 0, 8, ForKind::Serial,
                       LetStmt::make(t, i * 2, IfThenElse::make(t < 16, store(t))));
    CHECK(to_string(simplify(s)) ==
          to_string(For::make(i, 0, 8, ForKind::Serial, LetStmt::make(t, i * 2, store(t)))));
    CHECK(to_string(simplify(LetStmt::make(t, x * x, store(x)))) == to_string(store(x)));
}

TEST_CASE("asserts that hold are dropped; sequences of no-ops collapse") {
    Var i("i");
    Stmt s = AssertStmt::make(i + 1 > i, "never fails", store(i));
    CHECK(to_string(simplify(s)) == to_string(store(i)));
    Stmt kept = AssertStmt::make(i > 0, "may fail", store(i));
    CHECK(to_string(simplify(kept)) == to_string(kept));
    Stmt seq = Seq::make({IfThenElse::make(i < i, store(i)), store(i), Evaluate::make(make_int(0))});
    CHECK(to_string(simplify(seq)) == to_string(store(i)));
}

TEST_CASE("the ranges passed in are used") {
    Var i("i"), n("n");
    arith::VarRanges r{{i, arith::Interval(make_int(0), n - 1)}};
    CHECK(to_string(simplify(IfThenElse::make(i < n, store(i)), r)) == to_string(store(i)));
}

TEST_CASE("an unrolled marker around copies that all proved dead goes and other attributes stay") {
    Var i("i");
    // The guarded slots of a register tile past the end of a row: if (4 < 2) ... twice.
    Stmt dead = AttrStmt::make(attr::unrolled, make_int(2),
                               Seq::make({IfThenElse::make(make_int(4) < 2, store(4)),
                                          IfThenElse::make(make_int(5) < 2, store(5))}));
    CHECK(to_string(simplify(dead)) == to_string(Evaluate::make(make_int(0, i32))));
    Stmt live = AttrStmt::make(attr::unrolled, make_int(2),
                               Seq::make({IfThenElse::make(make_int(0) < 2, store(0)),
                                          IfThenElse::make(make_int(3) < 2, store(3))}));
    CHECK(to_string(simplify(live)) == to_string(AttrStmt::make(attr::unrolled, make_int(2), store(0))));
    Stmt other = AttrStmt::make("thread_extent", make_int(32), Evaluate::make(make_int(0, i32)));
    CHECK(to_string(simplify(other)) == to_string(other));
}
