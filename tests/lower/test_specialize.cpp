// TailStrategy::ShiftInwardsOrGuard and LowerOptions::specialize_at_least: a kernel over a
// symbolic size branches once on the size holding a tile (the split asks for it; the option
// adds sizes of its own), and there every tile is whole (the last one shifted inwards) and
// unrolled; below, the generic body's guarded tiles run. Each checked against a plain loop at
// sizes on both sides of the branch.
#include <doctest/doctest.h>

#include <string>

#include "lowered_text.hpp"
#include "weft/ir/arith/estimate.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

struct Doubling {
    Var n = Var::sized("n", 64);
    Tensor X = placeholder({Expr(n)}, f32, "x");
    Tensor Y = compute({Expr(n)}, [&](Expr i) { return X(i) * 2.0f + 1.0f; }, "y");

    Kernel build_with(TailStrategy tail, bool specialize, std::string* body = nullptr) {
        Schedule s = create_schedule(Y);
        auto [o, in] = s[Y].split(Y.axis(0), 8, tail);
        s[Y].unroll(in);
        LowerOptions options;
        options.sizes = {n};
        if (specialize) options.specialize_at_least = {{n, 8}};
        ir::PrimFunc f = lower(s, {X, Y, n}, options);
        if (body) *body = ir::to_string(f.body);
        return build(f);
    }
};

void check_runs(Kernel& k) {
    for (int64_t n : {1, 5, 7, 8, 9, 15, 16, 17, 40, 63}) {
        CAPTURE(n);
        auto x = Buffer<float>::random({n}, -1, 1);
        Buffer<float> y({n});
        k(x, y, n);
        for (int64_t i = 0; i < n; ++i) REQUIRE(y.data()[i] == x.data()[i] * 2.0f + 1.0f);
    }
}

}  // namespace

TEST_CASE("specialize_at_least: the large body has whole, shifted tiles and no guard; both bodies compute") {
    Doubling d;
    std::string body;
    Kernel k = d.build_with(TailStrategy::ShiftInwardsOrGuard, true, &body);
    CAPTURE(body);
    const size_t branch = body.find("if (n >= 8) {");
    REQUIRE(branch != std::string::npos);
    const size_t generic = body.find("else {", branch);
    REQUIRE(generic != std::string::npos);
    const std::string fast = body.substr(branch, generic - branch);
    // The large body: the last tile at n - 8, no guard left, the tile unrolled (8 stores).
    CHECK(fast.find("n - 8") != std::string::npos);
    CHECK(fast.find("if (", 1) == std::string::npos);
    CHECK(lowered_text::count(fast, "y[") == 8);
    // The generic body keeps a guard for sizes below a tile.
    CHECK(body.find(" < n", generic) != std::string::npos);
    check_runs(k);
}

TEST_CASE("ShiftInwardsOrGuard alone specializes on the extent holding a tile; ShiftInwards keeps its guard") {
    Doubling a, b;
    std::string or_guard, shift;
    Kernel k1 = a.build_with(TailStrategy::ShiftInwardsOrGuard, false, &or_guard);
    Kernel k2 = b.build_with(TailStrategy::ShiftInwards, false, &shift);
    CHECK(or_guard.find("if (n >= 8)") != std::string::npos);
    // ShiftInwards over a symbolic extent: a plain guard, no shifted start, no branch.
    CHECK(shift.find("n - 8") == std::string::npos);
    CHECK(shift.find("if (n >= 8)") == std::string::npos);
    check_runs(k1);
    check_runs(k2);
}

TEST_CASE("ShiftInwardsOrGuard over an extent of a size asks for the least size whose extent holds a tile") {
    // A row of (n - 1) / 2 + 1 (a stride-2 window's output) split by 6: whole from n = 11.
    Var n = Var::sized("n", 64);
    Tensor X = placeholder({Expr(n)}, f32, "x");
    Tensor Y = compute({(Expr(n) - 1) / 2 + 1}, [&](Expr i) { return X(i * 2) + 1.0f; }, "y");
    Schedule s = create_schedule(Y);
    auto [o, in] = s[Y].split(Y.axis(0), 6, TailStrategy::ShiftInwardsOrGuard);
    s[Y].unroll(in);
    ir::PrimFunc f = lower(s, {X, Y, n}, {.sizes = {n}});
    const std::string body = ir::to_string(f.body);
    CAPTURE(body);
    CHECK(body.find("if (n >= 11)") != std::string::npos);
    Kernel k = build(f);
    for (int64_t len : {1, 2, 10, 11, 12, 13, 30}) {
        CAPTURE(len);
        auto x = Buffer<float>::random({len}, -1, 1);
        Buffer<float> y({(len - 1) / 2 + 1});
        k(x, y, len);
        for (int64_t i = 0; i < y.size(); ++i) REQUIRE(y.data()[i] == x.data()[2 * i] + 1.0f);
    }
}

TEST_CASE("specialize_at_least refuses a negative bound, naming the variable") {
    Doubling d;
    Schedule s = create_schedule(d.Y);
    LowerOptions options;
    options.specialize_at_least = {{d.n, -1}};
    CHECK_THROWS_WITH_AS(lower(s, {d.X, d.Y, d.n}, options), doctest::Contains("specialize_at_least for 'n'"), Error);
}

TEST_CASE("Var::sized estimates: an extent folds at its variables' estimates, none without one") {
    Var h = Var::sized("h", 224), w("w");
    CHECK(ir::arith::estimate((Expr(h) + 1) / 2 + 1) == std::optional<int64_t>(113));
    CHECK(ir::arith::estimate(Expr(h) * 3) == std::optional<int64_t>(672));
    CHECK(ir::arith::estimate(Expr(h) + Expr(w)) == std::nullopt);
    CHECK(ir::arith::value_or_estimate(Expr(w), 7) == 7);
    CHECK(ir::arith::value_or_estimate(make_int(5), 7) == 5);
}

TEST_CASE("a stage whose last tile shifts inwards never writes its output over an input in place") {
    // An element-wise stage may write over its input (may_overwrite); shifted, a recomputed
    // element would read what the first computation wrote (a residual add run in place).
    for (TailStrategy tail : {TailStrategy::Guard, TailStrategy::ShiftInwardsOrGuard}) {
        Doubling d;
        Schedule s = create_schedule(d.Y);
        s[d.Y].split(d.Y.axis(0), 8, tail);
        ir::PrimFunc f = lower(s, {d.X, d.Y, d.n}, {.sizes = {d.n}});
        CAPTURE(int(tail));
        CHECK(f.args[1].may_overwrite.empty() == (tail != TailStrategy::Guard));
    }
}
