// hoist_allocations: an allocation of symbolic size leaves the serial loops its size does not
// depend on (its size clamped at 0, as the loop may run no iterations), but not a parallel
// loop, a branch, or a loop whose variable or lets its size reads; constant sizes stay; a
// symbolic size with a constant bound over the loops around it takes the bound.
#include <doctest/doctest.h>

#include <string>

#include "weft/lower/impl/hoist_allocations.hpp"  // the pass itself, for hand-built programs
#include "weft/weft.hpp"

using namespace weft;

namespace {

struct HandBuilt {
    Var buf{"buf", DataType::handle()};
    Var i{"i"}, j{"j"}, n{"n"};
    ir::Stmt use() const { return ir::Store::make(buf, ir::make_const(f32, 1.0), Expr(j)); }
    ir::Stmt alloc(const Expr& size, ir::Stmt body) const {
        return ir::Allocate::make(buf, f32, {size}, "global", std::move(body));
    }
    ir::Stmt loop(const Var& v, ir::Stmt body, ir::ForKind kind = ir::ForKind::Serial) const {
        return ir::For::make(v, make_int(0), Expr(n), kind, std::move(body));
    }
    std::string hoisted(const ir::Stmt& s) const {
        return ir::to_string(lower_passes::hoist_allocations(s, {{n, ir::arith::Interval(make_int(0), Expr())}}));
    }
};

}  // namespace

TEST_CASE("hoist_allocations: a symbolic size leaves the serial loops it does not read") {
    HandBuilt h;
    // for i { for j { allocate buf[n - 1] { buf[j] = 1 } } }  ->  allocate buf[max(n - 1, 0)] { for i { for j {..} } }
    const std::string out = h.hoisted(h.loop(h.i, h.loop(h.j, h.alloc(Expr(h.n) - 1, h.use()))));
    CAPTURE(out);
    CHECK(out.rfind("allocate buf[float32 * max(n - 1, 0)]", 0) == 0);
    CHECK(out.find("allocate", 1) == std::string::npos);
    // A size that is a size needs no clamp.
    CHECK(h.hoisted(h.loop(h.i, h.alloc(Expr(h.n), h.use()))).rfind("allocate buf[float32 * n]", 0) == 0);
}

TEST_CASE("hoist_allocations: it stops at loops it reads, parallel loops and branches; constants stay") {
    HandBuilt h;
    // Reads i: leaves j, not i.
    const std::string reads_i = h.hoisted(h.loop(h.i, h.loop(h.j, h.alloc(Expr(h.i) + 1, h.use()))));
    CAPTURE(reads_i);
    REQUIRE(reads_i.find("allocate buf[float32 * max(i + 1, 0)]") != std::string::npos);
    CHECK(reads_i.find("for (i") < reads_i.find("allocate buf[float32 * max(i + 1, 0)]"));
    CHECK(reads_i.find("allocate") < reads_i.find("for (j"));
    // Inside a parallel loop: leaves the serial loop inside, not the parallel one.
    const std::string parallel =
        h.hoisted(h.loop(h.i, h.loop(h.j, h.alloc(Expr(h.n), h.use())), ir::ForKind::Parallel));
    CAPTURE(parallel);
    CHECK(parallel.find("parallel for (i") < parallel.find("allocate"));
    CHECK(parallel.find("allocate") < parallel.find("for (j"));
    // Under a branch: the size may be valid only where the branch runs.
    const ir::Stmt guarded = h.loop(h.i, ir::IfThenElse::make(Expr(h.n) > 3, h.alloc(Expr(h.n) - 4, h.use())));
    CHECK(h.hoisted(guarded) == ir::to_string(guarded));
    // A size read from memory stays: the loop may write what it reads.
    Var sizes("sizes", DataType::handle());
    const ir::Stmt loaded = h.loop(h.i, h.alloc(ir::Load::make(DataType::int_(64), sizes, make_int(0)), h.use()));
    CHECK(h.hoisted(loaded) == ir::to_string(loaded));
    // A constant size stays where it is (codegen puts a small one on the stack).
    const ir::Stmt constant = h.loop(h.i, h.alloc(make_int(16), h.use()));
    CHECK(h.hoisted(constant) == ir::to_string(constant));
}

TEST_CASE("hoist_allocations: a row of symbolic length computed per row is allocated once and computes the same") {
    // y[r, c] = x[r, c] * 2 through a stage computed at each row: its buffer has n floats.
    Var rows("rows"), n("n");
    Tensor X = placeholder({Expr(rows), Expr(n)}, f32, "x");
    Tensor T = compute({Expr(rows), Expr(n)}, [&](Expr r, Expr c) { return X(r, c) * 2.0f; }, "t");
    Tensor Y = compute({Expr(rows), Expr(n)}, [&](Expr r, Expr c) { return T(r, c) + 1.0f; }, "y");
    Schedule s = create_schedule(Y);
    s[T].compute_at(s[Y], Y.axis(0));
    const std::string body = ir::to_string(lower(s, {X, Y}).body);
    CAPTURE(body);
    CHECK(body.find("allocate t[") < body.find("for (r"));
    Kernel k = build(s, {X, Y});
    for (auto [r, c] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 17}, {5, 64}}) {
        auto x = Buffer<float>::random({r, c}, -1, 1);
        Buffer<float> y({r, c});
        k(x, y);
        bool same = true;
        for (int64_t a = 0; a < r; ++a)
            for (int64_t b = 0; b < c; ++b) same &= y(a, b) == x(a, b) * 2.0f + 1.0f;
        CHECK(same);
    }
}

TEST_CASE("hoist_allocations: a symbolic size bounded over its loops takes the constant bound") {
    HandBuilt h;
    // The last, partial block of a split by 6 over n rows: i in [n / 6, (n + 5) / 6), its tile
    // n * 64 - i * 384 floats, at most 5 rows of 64.
    const Expr n = h.n;
    const ir::Stmt tail = ir::For::make(h.i, n / 6, (n + 5) / 6 - n / 6, ir::ForKind::Serial,
                                        h.alloc(n * 64 - Expr(h.i) * 384, h.use()));
    const std::string out = h.hoisted(tail);
    CAPTURE(out);
    CHECK(out.find("allocate buf[float32 * 320]") != std::string::npos);
    // Unbounded (the steady loop's whole rows of n): stays symbolic.
    const ir::Stmt rows = h.loop(h.i, h.alloc(n * 64, h.use()));
    CHECK(h.hoisted(rows).find("allocate buf[float32 * n * 64]") != std::string::npos);
}
