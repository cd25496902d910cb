// sum, mean, max, min, prod over axes (keepdims or not) with schedule_reduce, against
// double references.
#include "nn_test_util.hpp"

using namespace nn_test;

namespace {

using Reduction = Tensor (*)(const Tensor&, const std::vector<int>&, bool);

struct ReduceOp {
    const char* name;
    Reduction make;
    double init;
    double (*combine)(double, double);
    bool average;
};

const std::vector<ReduceOp>& reduce_ops() {
    static const std::vector<ReduceOp> ops{
        {"sum", topi::sum, 0.0, [](double a, double b) { return a + b; }, false},
        {"mean", topi::mean, 0.0, [](double a, double b) { return a + b; }, true},
        {"max", topi::max, -INFINITY, [](double a, double b) { return std::max(a, b); }, false},
        {"min", topi::min, INFINITY, [](double a, double b) { return std::min(a, b); }, false},
        {"prod", topi::prod, 1.0, [](double a, double b) { return a * b; }, false},
    };
    return ops;
}

void check_reduction(const ReduceOp& op, const Shape& shape, std::vector<int> axes, bool keepdims, unsigned seed) {
    const int nd = int(shape.size());
    std::vector<bool> reduced(size_t(nd), axes.empty());
    for (int a : axes) reduced[size_t(a < 0 ? a + nd : a)] = true;
    Shape out_shape;
    for (int d = 0; d < nd; ++d)
        if (!reduced[size_t(d)]) out_shape.push_back(shape[size_t(d)]);
        else if (keepdims) out_shape.push_back(1);
    if (out_shape.empty()) out_shape.push_back(1);

    Tensor X = placeholder(exprs(shape), f32, "X");
    Tensor Y = op.make(X, axes, keepdims);
    // prod of many values near 1 stays near 1; the others see values of both signs.
    bool is_prod = std::string(op.name) == "prod";
    auto x = random_buffer(shape, seed, is_prod ? 0.9f : -2.f, is_prod ? 1.1f : 2.f);
    auto y = run({X}, Y, [&](Schedule& s) { topi::schedule_reduce(s, Y); }, {x}, out_shape);

    std::vector<double> want(size_t(numel(out_shape)), op.init);
    std::vector<int64_t> count(want.size(), 0);
    for (int64_t i = 0; i < x.size(); ++i) {
        Shape idx = unravel(i, shape), o;
        for (int d = 0; d < nd; ++d)
            if (!reduced[size_t(d)]) o.push_back(idx[size_t(d)]);
            else if (keepdims) o.push_back(0);
        if (o.empty()) o.push_back(0);
        size_t at = size_t(ravel(o, out_shape));
        want[at] = op.combine(want[at], x.data()[i]);
        ++count[at];
    }
    if (op.average)
        for (size_t i = 0; i < want.size(); ++i) want[i] /= double(count[i]);
    std::string what = std::string(op.name) + " of " + str(shape) + " over " + std::to_string(axes.size()) +
                       " axes" + (keepdims ? " keepdims" : "");
    // Float32 sums and products of `terms` values, in another order than the reference: the
    // rounding error grows with the number of terms.
    double terms = double(x.size()) / double(want.size());
    check_close(y, want, what, 1e-5 + 2e-7 * terms, 1e-6 * terms);
}

}  // namespace

TEST_CASE("topi reductions over chosen axes") {
    unsigned seed = 1;
    for (auto& op : reduce_ops()) {
        check_reduction(op, {7, 64}, {-1}, false, seed++);     // rows, vectorized by rfactor
        check_reduction(op, {5, 13, 32}, {1, 2}, true, seed++); // trailing axes, keepdims
        check_reduction(op, {31, 17}, {0}, false, seed++);     // across rows: vector along j
        check_reduction(op, {3, 16, 5}, {0, 2}, true, seed++);
        check_reduction(op, {97}, {}, false, seed++);          // everything, to shape {1}
    }
}

TEST_CASE("topi reductions on random shapes and axes") {
    std::mt19937 rng(11);
    unsigned seed = 50;
    for (int rep = 0; rep < 3; ++rep)
        for (auto& op : reduce_ops()) {
            Shape shape = random_shape(rng, 1, 4, 8192);
            const int nd = int(shape.size());
            std::vector<int> axes;
            for (int d = 0; d < nd; ++d)
                if (std::uniform_int_distribution<int>(0, 1)(rng)) axes.push_back(d - (rep == 1 ? nd : 0));
            check_reduction(op, shape, axes, rep == 2, seed++);
        }
}

TEST_CASE("topi schedule_reduce vectorizes a row sum with rfactor") {
    Tensor X = placeholder({64, 256}, f32, "X");
    Tensor Y = topi::sum(X, {1});
    Schedule s = create_schedule(Y);
    topi::schedule_reduce(s, Y);
    // One partial sum per lane (lane l adds columns l, l + 16, ...): whole vectors of X.
    std::string text = stage_text(s, "sum.rf");
    INFO(text);
    CHECK(text.find("(vectorized)") != std::string::npos);
    CHECK(lowered(s, {X, Y}).find("X[ramp(") != std::string::npos);
    // A row of 40 = 5 x 8: 8 partial sums (ymm), not a serial loop.
    Tensor X40 = placeholder({64, 40}, f32, "X");
    Tensor Y40 = topi::sum(X40, {1});
    Schedule s40 = create_schedule(Y40);
    topi::schedule_reduce(s40, Y40);
    CHECK(lowered(s40, {X40, Y40}).find("X[ramp(i * 40 + k1.outer * 8, 1, 8)]") != std::string::npos);
}

TEST_CASE("topi mean and max over a symbolic axis") {
    Var n("n");
    Tensor X = placeholder({make_int(6), n}, f32, "X");
    Tensor M = topi::mean(X, {1}), Mx = topi::max(X, {-1}, true);
    Schedule sm = create_schedule(M), sx = create_schedule(Mx);
    topi::schedule_reduce(sm, M);
    topi::schedule_reduce(sx, Mx);
    Kernel km = build(sm, {X, M}), kx = build(sx, {X, Mx});
    for (int64_t len : {1, 37}) {
        auto x = random_buffer({6, len}, unsigned(len));
        Buffer<float> m({6}), mx({6, 1});
        km(x, m);
        kx(x, mx);
        std::vector<double> want_mean, want_max;
        for (int64_t i = 0; i < 6; ++i) {
            double total = 0, best = -INFINITY;
            for (int64_t j = 0; j < len; ++j) {
                total += x(i, j);
                best = std::max(best, double(x(i, j)));
            }
            want_mean.push_back(total / double(len));
            want_max.push_back(best);
        }
        check_close(m, want_mean, "symbolic mean");
        check_close(mx, want_max, "symbolic max keepdims");
    }
}
