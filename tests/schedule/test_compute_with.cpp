// Stage::compute_with: a stage's loops fused with another's down to a loop of that one. The
// fused program must run one loop where there were two, compute every element right (against
// plain loops in the test), keep a reduction's init before the fused loops, and replay from
// the schedule's JSON.
#include <doctest/doctest.h>

#include "random_floats.hpp"

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <weft/weft.hpp>

using namespace weft;
using weft::test::random_floats;

namespace {

std::string lowered(const Schedule& s, const std::vector<Argument>& args) { return ir::to_string(lower(s, args).body); }

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// Row statistics of x (rows x cols): a = x * x + 1 (kept), s = sum over the row of a, and
// out = a / s. The program computes a and s per row, fused or not.
struct RowSum {
    int64_t rows, cols;
    Tensor X, A, S, O;
    RowSum(int64_t r, int64_t c) : rows(r), cols(c) {
        X = placeholder({rows, cols}, f32, "x");
        A = compute({rows, cols}, [&](Expr i, Expr j) { return X(i, j) * X(i, j) + 1.0f; }, "a");
        IterVar k = reduce_axis(0, cols, "k");
        S = compute({rows}, [&](Expr i) { return sum(A(i, k.var()), {k}); }, "s");
        O = compute({rows, cols}, [&](Expr i, Expr j) { return A(i, j) / S(i); }, "out");
    }
    // Runs the kernel on random data; the largest relative error against plain loops.
    double max_error(const Schedule& sch) const {
        Kernel k = build(sch, {X, O});
        std::vector<float> x = random_floats(size_t(rows * cols), unsigned(rows * 7 + cols)), y(size_t(rows * cols));
        Buffer<float> in(x.data(), {rows, cols}), out(y.data(), {rows, cols});
        k(in, out);
        double worst = 0;
        for (int64_t i = 0; i < rows; ++i) {
            double total = 0;
            for (int64_t j = 0; j < cols; ++j) total += double(x[size_t(i * cols + j)]) * x[size_t(i * cols + j)] + 1.0;
            for (int64_t j = 0; j < cols; ++j) {
                double a = double(x[size_t(i * cols + j)]) * x[size_t(i * cols + j)] + 1.0;
                worst = std::max(worst, std::abs(y[size_t(i * cols + j)] - a / total) / (a / total));
            }
        }
        return worst;
    }
};

}  // namespace

TEST_CASE("compute_with fuses a row sum into the loop that computes the row") {
    for (int64_t cols : {1, 7, 64, 100}) {
        RowSum p(5, cols);
        Schedule s = create_schedule(p.O);
        IterVar i = p.O.axis(0);
        s[p.A].compute_at(s[p.O], i);
        s[p.S].compute_at(s[p.O], i);
        std::string before = lowered(s, {p.X, p.O});
        // A's row loop and S's reduce loop, then O's: a fourth 'for' (the row loop) encloses them.
        if (cols > 1) CHECK(count(before, "for (") == 4);
        s[p.S].compute_with(s[p.A], p.A.axis(1));
        std::string after = lowered(s, {p.X, p.O});
        INFO("cols = " << cols << "\n" << after);
        if (cols > 1) CHECK(count(after, "for (") == 3);
        // The sum's init comes before the fused loop, its update after a's store in it.
        size_t init = after.find("s[0] = 0.0f"), store_a = after.find("a[j] ="), update = after.find("s[0] = x0 + y0");
        if (cols > 1) {
            REQUIRE(init != std::string::npos);
            REQUIRE(store_a != std::string::npos);
            REQUIRE(update != std::string::npos);
            CHECK(init < store_a);
            CHECK(store_a < update);
        }
        CHECK(p.max_error(s) < 2e-6);
    }
}

TEST_CASE("compute_with of an rfactor'd vector sum with a vectorized element-wise stage") {
    RowSum p(9, 128);
    Schedule s = create_schedule(p.O);
    IterVar i = p.O.axis(0);
    s[p.O].parallel(i);
    auto [oo, ol] = s[p.O].split(p.O.axis(1), 16);
    s[p.O].vectorize(ol);
    s[p.A].compute_at(s[p.O], i);
    auto [ao, al] = s[p.A].split(p.A.axis(1), 16);
    s[p.A].vectorize(al);
    auto [ko, ki] = s[p.S].split(s[p.S].leaf_iter_vars().back(), 16);
    Tensor rf = s.rfactor(p.S, ki);
    // rf's loops: row, lane, vector; the lanes go innermost, as a's do.
    std::vector<IterVar> rf_loops = s[rf].leaf_iter_vars();
    s[rf].reorder({rf_loops[0], rf_loops[2], rf_loops[1]});
    s[rf].vectorize(rf_loops[1]);
    s[p.S].compute_at(s[p.O], i);
    s[rf].compute_at(s[p.O], i);
    s[rf].compute_with(s[p.A], ao);
    std::string program = lowered(s, {p.X, p.O});
    INFO(program);
    // The row loop; in it one loop over the row's vectors for a and its sum, the sum's lanes, out.
    CHECK(count(program, "for (") == 4);
    CHECK(count(program, "for (j.outer") == 2);
    CHECK(count(program, "ramp(") >= 4);
    CHECK(p.max_error(s) < 2e-6);
}

TEST_CASE("compute_with fuses two outputs that read the same input") {
    const int64_t n = 37;
    Tensor X = placeholder({n}, f32, "x");
    Tensor Y1 = compute({n}, [&](Expr i) { return X(i) + 1.0f; }, "y1");
    Tensor Y2 = compute({n}, [&](Expr i) { return X(i) * 3.0f; }, "y2");
    Schedule s = create_schedule({Y1, Y2});
    // The stage computed first in the schedule's order is the one the other joins.
    bool y1_first = s.stages()[1].op().same_as(Y1.op());
    Tensor first = y1_first ? Y1 : Y2, second = y1_first ? Y2 : Y1;
    s[second].compute_with(s[first], first.axis(0));
    std::string program = lowered(s, {X, Y1, Y2});
    INFO(program);
    CHECK(count(program, "for (") == 1);
    Kernel k = build(s, {X, Y1, Y2});
    std::vector<float> x = random_floats(size_t(n), 3), y1(x.size()), y2(x.size());
    Buffer<float> bx(x.data(), {n}), b1(y1.data(), {n}), b2(y2.data(), {n});
    k(bx, b1, b2);
    int wrong = 0;
    for (int64_t i = 0; i < n; ++i) wrong += y1[size_t(i)] != x[size_t(i)] + 1.0f || y2[size_t(i)] != x[size_t(i)] * 3.0f;
    CHECK(wrong == 0);
}

TEST_CASE("compute_with is recorded, printed and replayed from JSON") {
    RowSum p(4, 24);
    Schedule s = create_schedule(p.O);
    s[p.A].compute_at(s[p.O], p.O.axis(0));
    s[p.S].compute_at(s[p.O], p.O.axis(0));
    s[p.S].compute_with(s[p.A], p.A.axis(1));
    std::ostringstream printed;
    printed << s;
    CHECK(printed.str().find("stage s @out.i with a.j") != std::string::npos);
    Schedule replayed = Schedule::from_json(s.to_json(), {p.O});
    CHECK(replayed == s);
    CHECK(lowered(replayed, {p.X, p.O}) == lowered(s, {p.X, p.O}));
}

TEST_CASE("topi softmax sums each row in the loop of its exponentials") {
    Tensor X = placeholder({6, 256}, f32, "X");
    Tensor Y = topi::softmax(X);
    Schedule s = create_schedule(Y);
    topi::schedule_softmax(s, Y);
    std::string program = lowered(s, {X, Y});
    INFO(program);
    // Rows: the max (two loops: vectors, then lanes), exp and sum fused (in it, the hints that
    // prefetch the rows ahead: a loop over cache lines), out.
    CHECK(count(program, "for (") == 6);
    CHECK(count(program, "for (j.outer") == 2);
    CHECK(program.find("weft.prefetch(X[") != std::string::npos);
    auto print = [&] {
        std::ostringstream os;
        os << s;
        return os.str();
    };
    CHECK(print().find("with softmax.exp.") != std::string::npos);
}
