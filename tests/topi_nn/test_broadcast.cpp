// Broadcasting arithmetic with schedule_injective against naive double references.
#include "nn_test_util.hpp"

using namespace nn_test;

namespace {

using BinaryTensor = Tensor (*)(const Tensor&, const Tensor&);
using BinaryScalarRight = Tensor (*)(const Tensor&, Expr);
using BinaryScalarLeft = Tensor (*)(Expr, const Tensor&);

struct BinaryOp {
    const char* name;
    BinaryTensor tensors;
    BinaryScalarRight scalar_right;
    BinaryScalarLeft scalar_left;
    double (*ref)(double, double);
    float lo, hi;  // input range (positive for pow's base and div's divisor)
};

const std::vector<BinaryOp>& binary_ops() {
    static const std::vector<BinaryOp> ops{
        {"add", topi::add, topi::add, topi::add, [](double a, double b) { return a + b; }, -2, 2},
        {"sub", topi::sub, topi::sub, topi::sub, [](double a, double b) { return a - b; }, -2, 2},
        {"mul", topi::mul, topi::mul, topi::mul, [](double a, double b) { return a * b; }, -2, 2},
        {"div", topi::div, topi::div, topi::div, [](double a, double b) { return a / b; }, 0.5, 2},
        {"pow", topi::pow, topi::pow, topi::pow, [](double a, double b) { return std::pow(a, b); }, 0.5, 2},
        {"maximum", topi::maximum, topi::maximum, topi::maximum, [](double a, double b) { return std::max(a, b); }, -2, 2},
        {"minimum", topi::minimum, topi::minimum, topi::minimum, [](double a, double b) { return std::min(a, b); }, -2, 2},
    };
    return ops;
}

Shape broadcast_ref_shape(const Shape& a, const Shape& b) {
    size_t n = std::max(a.size(), b.size());
    Shape out(n);
    for (size_t k = 0; k < n; ++k) {
        int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1, db = k < b.size() ? b[b.size() - 1 - k] : 1;
        out[n - 1 - k] = da == 1 ? db : da;
    }
    return out;
}

// A shape that broadcasts with `a`: some trailing dimensions of a, some replaced by 1, maybe
// a rank difference either way.
Shape broadcast_partner(std::mt19937& rng, const Shape& a) {
    std::uniform_int_distribution<int> coin(0, 2);
    Shape b;
    size_t keep = std::uniform_int_distribution<size_t>(1, a.size())(rng);
    for (size_t d = a.size() - keep; d < a.size(); ++d) b.push_back(coin(rng) == 0 ? 1 : a[d]);
    if (coin(rng) == 0) b.insert(b.begin(), odd_sizes()[size_t(coin(rng)) + 1]);  // b has a leading dim a lacks
    return b;
}

void check_tensor_tensor(const BinaryOp& op, const Shape& sa, const Shape& sb, unsigned seed) {
    Tensor A = placeholder(exprs(sa), f32, "A"), B = placeholder(exprs(sb), f32, "B");
    Tensor Y = op.tensors(A, B);
    Shape so = broadcast_ref_shape(sa, sb);
    Shape got_shape;
    for (auto& e : Y.shape()) {
        int64_t v = 0;
        REQUIRE(ir::as_const_int(e, &v));
        got_shape.push_back(v);
    }
    REQUIRE(got_shape == so);
    auto a = random_buffer(sa, seed, op.lo, op.hi), b = random_buffer(sb, seed + 1, op.lo, op.hi);
    auto y = run({A, B}, Y, [&](Schedule& s) { topi::schedule_injective(s, Y); }, {a, b}, so);
    std::vector<double> want(size_t(numel(so)));
    for (int64_t i = 0; i < numel(so); ++i) {
        Shape idx = unravel(i, so);
        want[size_t(i)] = op.ref(broadcast_read(a, sa, idx), broadcast_read(b, sb, idx));
    }
    check_close(y, want, std::string(op.name) + " " + str(sa) + " with " + str(sb));
}

}  // namespace

TEST_CASE("topi broadcast_shape follows numpy") {
    auto shape = [](const std::vector<Expr>& s) {
        Shape out;
        for (auto& e : s) {
            int64_t v = 0;
            REQUIRE(ir::as_const_int(e, &v));
            out.push_back(v);
        }
        return out;
    };
    CHECK(shape(topi::broadcast_shape(exprs({3, 1, 5}), exprs({4, 5}))) == Shape{3, 4, 5});
    CHECK(shape(topi::broadcast_shape(exprs({1}), exprs({7, 2}))) == Shape{7, 2});
    CHECK(shape(topi::broadcast_shape(exprs({6, 1}), exprs({1, 9}))) == Shape{6, 9});
    Var n("n");
    auto sym = topi::broadcast_shape({n, make_int(1)}, {make_int(1), make_int(4)});
    CHECK(sym[0].same_as(n));
}

TEST_CASE("topi binary ops broadcast random shapes") {
    std::mt19937 rng(7);
    unsigned seed = 100;
    for (auto& op : binary_ops()) {
        // Same shape, a hand-picked broadcast with a rank difference, and two random ones.
        Shape same = random_shape(rng, 1, 3);
        check_tensor_tensor(op, same, same, seed++);
        check_tensor_tensor(op, {3, 1, 17}, {5, 1}, seed++);
        for (int r = 0; r < 2; ++r) {
            Shape a = random_shape(rng, 1, 4, 4096);
            check_tensor_tensor(op, a, broadcast_partner(rng, a), seed++);
        }
    }
}

TEST_CASE("topi binary ops with a scalar on either side") {
    Var alpha("alpha", f32);
    for (auto& op : binary_ops()) {
        const Shape shape{5, 19};
        Tensor X = placeholder(exprs(shape), f32, "X");
        auto x = random_buffer(shape, 11, op.lo, op.hi);
        std::vector<double> right(size_t(numel(shape))), left(right.size());
        for (size_t i = 0; i < right.size(); ++i) {
            right[i] = op.ref(x.data()[i], 1.75);
            left[i] = op.ref(1.75, x.data()[i]);
        }
        Tensor R = op.scalar_right(X, 1.75f), L = op.scalar_left(1.75f, X);
        check_close(run({X}, R, [&](Schedule& s) { topi::schedule_injective(s, R); }, {x}, shape), right,
                    std::string(op.name) + " (tensor, 1.75)");
        check_close(run({X}, L, [&](Schedule& s) { topi::schedule_injective(s, L); }, {x}, shape), left,
                    std::string(op.name) + " (1.75, tensor)");
        // A scalar Var is a kernel argument.
        Tensor V = op.scalar_right(X, alpha);
        Schedule s = create_schedule(V);
        topi::schedule_injective(s, V);
        Kernel k = build(s, {X, alpha, V});
        Buffer<float> y(shape);
        k(x, 1.75f, y);
        check_close(y, right, std::string(op.name) + " (tensor, Var)");
    }
}

TEST_CASE("topi add with a symbolic shape") {
    Var n("n");
    Tensor A = placeholder({n, make_int(3)}, f32, "A"), B = placeholder({make_int(3)}, f32, "B");
    Tensor Y = topi::add(A, B);
    Schedule s = create_schedule(Y);
    topi::schedule_injective(s, Y);
    Kernel k = build(s, {A, B, Y});
    for (int64_t rows : {1, 37}) {
        auto a = random_buffer({rows, 3}, 3), b = random_buffer({3}, 4);
        Buffer<float> y({rows, 3});
        k(a, b, y);
        std::vector<double> want;
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < 3; ++j) want.push_back(double(a(i, j)) + b(j));
        check_close(y, want, "symbolic add");
    }
}
