// A vectorized reduce axis (Halide's VectorReduce): `acc = acc op f(k)` over the lanes of k
// becomes one vector f and a vector_reduce_op of its lanes, which the CPU backend combines as
// a tree of halves. The results must be those of the serial loop (exactly for min, max and
// integers; within rounding for float sums and products), for any lane count, and a loop the
// pattern does not fit must stay serial and correct.
#include <doctest/doctest.h>

#include "lowered_text.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "weft/weft.hpp"

using namespace weft;

namespace {

enum class Op { Sum, Prod, Min, Max };

Expr reduce(Op op, Expr e, const IterVar& k) {
    switch (op) {
        case Op::Sum: return sum(e, {k});
        case Op::Prod: return prod(e, {k});
        case Op::Min: return min(e, {k});
        default: return max(e, {k});
    }
}

double combine(Op op, double a, double b) {
    switch (op) {
        case Op::Sum: return a + b;
        case Op::Prod: return a * b;
        case Op::Min: return std::min(a, b);
        default: return std::max(a, b);
    }
}

const char* name_of(Op op) {
    switch (op) {
        case Op::Sum: return "vector_reduce_add";
        case Op::Prod: return "vector_reduce_mul";
        case Op::Min: return "vector_reduce_min";
        default: return "vector_reduce_max";
    }
}

// S[i] = op over k < lanes of A[i, k], with k vectorized; checks the lowered program and
// the values against a double-precision serial reduction.
template <class T>
void check_rows(Op op, int64_t lanes) {
    const int64_t rows = 5;
    DataType t = dtype_of<T>::value;
    Tensor A = placeholder({rows, lanes}, t, "A");
    IterVar k = reduce_axis(0, lanes, "k");
    Tensor S = compute({rows}, [&](Expr i) { return reduce(op, A(i, k), k); }, "S");
    Schedule s = create_schedule(S);
    s[S].vectorize(k);
    std::string body = ir::to_string(lower(s, {A, S}).body);
    CAPTURE(body);
    CHECK(body.find(name_of(op)) != std::string::npos);
    CHECK(body.find("for (k") == std::string::npos);  // no serial loop over the lanes

    Kernel kernel = build(s, {A, S});
    // Products stay near 1 and sums exercise cancellation; integers stay small.
    // Integer products stay within int32: |A| <= 2 over at most 16 lanes, else |A| <= 1.
    const T int_bound = op == Op::Prod ? (lanes <= 16 ? 2 : 1) : 9;
    // (The float bounds are converted only where T is a float type.)
    auto a = t.is_float() ? Buffer<T>::random({rows, lanes}, static_cast<T>(op == Op::Prod ? 0.5 : -4.0),
                                              static_cast<T>(op == Op::Prod ? 1.5 : 4.0), 11)
                          : Buffer<T>::random({rows, lanes}, T(-int_bound), int_bound, 11);
    Buffer<T> out({rows});
    kernel(a, out);
    for (int64_t i = 0; i < rows; ++i) {
        double want = double(a(i, 0));
        for (int64_t j = 1; j < lanes; ++j) want = combine(op, want, double(a(i, j)));
        if (t.is_float() && (op == Op::Sum || op == Op::Prod))
            CHECK(std::abs(double(out(i)) - want) <= 1e-5 * (1 + std::abs(want)));
        else
            CHECK(double(out(i)) == want);
    }
}

}  // namespace

TEST_CASE("a vectorized reduce axis combines its lanes with vector_reduce, any lane count") {
    for (Op op : {Op::Sum, Op::Prod, Op::Min, Op::Max})
        for (int64_t lanes : {2, 3, 4, 5, 7, 8, 12, 16, 33}) {
            std::string reduction = name_of(op);
            CAPTURE(reduction);
            CAPTURE(lanes);
            check_rows<float>(op, lanes);
            check_rows<int32_t>(op, lanes);
        }
}

TEST_CASE("a vectorized reduce axis outside a data loop reduces each column's lanes") {
    // S[j] = sum over k of A[k, j], the reduce loop outside j: each lane is a row of A.
    const int64_t n = 8, m = 13;
    Tensor A = placeholder({n, m}, f32, "A");
    IterVar k = reduce_axis(0, n, "k");
    Tensor S = compute({m}, [&](Expr j) { return sum(A(k, j), {k}); }, "S");
    Schedule s = create_schedule(S);
    s[S].reorder({k, S.axis(0)});
    s[S].vectorize(k);
    std::string body = ir::to_string(lower(s, {A, S}).body);
    CAPTURE(body);
    CHECK(body.find("vector_reduce_add") != std::string::npos);
    Kernel kernel = build(s, {A, S});
    auto a = Buffer<float>::random({n, m}, -2, 2, 5);
    Buffer<float> out({m});
    kernel(a, out);
    for (int64_t j = 0; j < m; ++j) {
        double want = 0;
        for (int64_t i = 0; i < n; ++i) want += a(i, j);
        CHECK(std::abs(out(j) - want) < 1e-5);
    }
}

TEST_CASE("a reducer the pattern does not fit keeps its vectorized reduce loop serial") {
    const int64_t rows = 4, n = 16;
    Tensor A = placeholder({rows, n}, f32, "A");
    // log-sum-exp as a reducer: its combine is a call, not one of + * min max.
    Reducer lse = comm_reducer([](const std::vector<Expr>& x,
                                  const std::vector<Expr>& y) { return std::vector<Expr>{log(exp(x[0]) + exp(y[0]))}; },
                               [](const std::vector<DataType>& t) { return std::vector<Expr>{ir::make_const(t[0], -1e30)}; },
                               "lse");
    IterVar k = reduce_axis(0, n, "k");
    Tensor S = compute({rows}, [&](Expr i) { return lse(A(i, k), {k}); }, "S");
    Schedule s = create_schedule(S);
    s[S].vectorize(k);
    std::string body = ir::to_string(lower(s, {A, S}).body);
    CAPTURE(body);
    CHECK(body.find("vector_reduce") == std::string::npos);
    CHECK(body.find("for (k") != std::string::npos);
    Kernel kernel = build(s, {A, S});
    auto a = Buffer<float>::random({rows, n}, -2, 2, 9);
    Buffer<float> out({rows});
    kernel(a, out);
    for (int64_t i = 0; i < rows; ++i) {
        double want = 0;
        for (int64_t j = 0; j < n; ++j) want += std::exp(double(a(i, j)));
        CHECK(std::abs(out(i) - std::log(want)) < 1e-4);
    }
}

TEST_CASE("a vectorized row maximum after rfactor is a shuffle tree in the assembly") {
    if (!Target::host().is_x86()) return;
    const int64_t n = 1024;
    Tensor A = placeholder({64, n}, f32, "A");
    IterVar k = reduce_axis(0, n, "k");
    Tensor S = compute({64}, [&](Expr i) { return max(A(i, k), {k}); }, "S");
    Schedule s = create_schedule(S);
    auto [ko, ki] = s[S].split(k, 16);
    Tensor partial = s.rfactor(S, ki);  // partial[i, lane] over ko, the lane innermost
    IterVar lane = partial.op()->axis.back();
    s[partial].reorder({partial.op()->axis.front(), partial.op()->reduce_axis.front(), lane});
    s[partial].vectorize(lane);
    s[S].vectorize(s[S].leaf_iter_vars().back());
    Kernel kernel = build(s, {A, S});
    // 16 lanes: four halvings, the last of them scalar (one vmaxss after one vmovshdup per
    // row, whatever LLVM's unrolling of the rows); a chain would be 15 scalar maxima per row.
    std::string assembly = kernel.assembly();
    CAPTURE(assembly);
    const size_t scalar_max = lowered_text::count(assembly, "vmaxss"), last_halving = lowered_text::count(assembly, "vmovshdup");
    CHECK(scalar_max >= 1);
    CHECK(scalar_max <= last_halving);
    auto a = Buffer<float>::random({64, n}, -100, 100, 3);
    Buffer<float> out({64});
    kernel(a, out);
    for (int64_t i = 0; i < 64; ++i) {
        float want = a(i, 0);
        for (int64_t j = 1; j < n; ++j) want = std::max(want, a(i, j));
        CHECK(out(i) == want);
    }
}
