// The graph's rounding, trigonometric, sign and float-test operators, its comparisons, logic
// and mod, through graph::build and graph::Module against the C library on random data with
// the edge values each one has (halfway cases, NaN, infinities, -0, negative divisors and
// zero divisors), broadcast, fused and unfused.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "op_testing.hpp"
#include "weft/weft.hpp"

using namespace weft;
using namespace op_testing;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Random float32 values in [lo, hi], the first ones replaced by `edges`.
Buffer<float> values(std::vector<int64_t> shape, double lo, double hi, uint64_t seed, std::vector<double> edges = {}) {
    Buffer<float> b = Buffer<float>::random(shape, float(lo), float(hi), seed);
    for (size_t k = 0; k < edges.size() && int64_t(k) < b.size(); ++k) b.data()[k] = float(edges[k]);
    return b;
}

Array map(const Array& in, double (*f)(double)) {
    Array a = in;
    for (double& v : a.v) v = f(v);
    return a;
}

void check_op(const BufferRef& xv, const char* op, double (*f)(double), double tol, graph::Attrs attrs = {}) {
    CAPTURE(op);
    check_unary(xv, [&](graph::Graph& g, graph::Value v) { return g.add_node(op, {v}, attrs); }, map(to_array(xv), f),
                tol);
}

// A two-input graph a (op) b, broadcast, against want(a, b) element by element.
void check_binary(const BufferRef& av, const BufferRef& bv, const char* op, double (*want)(double, double),
                  graph::Attrs attrs = {}) {
    CAPTURE(op);
    graph::Graph g;
    graph::Value a = g.input("a", av.shape(), av.dtype()), b = g.input("b", bv.shape(), bv.dtype());
    g.output(g.add_node(op, {a, b}, attrs), "y");
    Array x = to_array(av), y = to_array(bv);
    const std::vector<int64_t> out = {x.shape[0], y.shape[1]};  // [n, 1] (op) [1, m]
    Array expect = tabulate(out, [&](const std::vector<int64_t>& i) { return want(x.at({i[0], 0}), y.at({0, i[1]})); });
    for (bool fuse : {true, false}) {
        CAPTURE(fuse);
        check_equal(run(g, {av, bv}, fuse)[0], expect);
    }
}

}  // namespace

TEST_CASE("graph floor, ceil and round (halfway cases to even) match the C library") {
    // Halfway cases both ways, negative ones, -0 and the values past 2^23 (all integers).
    Buffer<float> x = values({7, 9}, -40, 40, 1, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.0, 8388609.0, -3.5, 4.5});
    check_op(x, "floor", [](double v) { return std::floor(v); }, 0);
    check_op(x, "ceil", [](double v) { return std::ceil(v); }, 0);
    check_op(x, "round", [](double v) { return std::nearbyint(v); }, 0);  // the default mode: to even
}

TEST_CASE("graph trigonometric and hyperbolic functions match the C library on vectors and tails") {
    // 67 elements: whole vectors and a scalar tail, both paths of the libm lowering.
    Buffer<float> x = values({67}, -0.95, 0.95, 2, {0.0, -0.0, 0.5, -0.75});
    for (auto [op, f] : std::vector<std::pair<const char*, double (*)(double)>>{
             {"sin", [](double v) { return std::sin(v); }},     {"cos", [](double v) { return std::cos(v); }},
             {"tan", [](double v) { return std::tan(v); }},     {"asin", [](double v) { return std::asin(v); }},
             {"acos", [](double v) { return std::acos(v); }},   {"atan", [](double v) { return std::atan(v); }},
             {"sinh", [](double v) { return std::sinh(v); }},   {"cosh", [](double v) { return std::cosh(v); }},
             {"asinh", [](double v) { return std::asinh(v); }}, {"atanh", [](double v) { return std::atanh(v); }}})
        check_op(x, op, f, 1e-5);
    Buffer<float> big = values({3, 5}, 1, 30, 3, {1.0});
    check_op(big, "acosh", [](double v) { return std::acosh(v); }, 1e-5);
    check_op(big, "sin", [](double v) { return std::sin(v); }, 1e-5);
    // Outside the domain: NaN, as in C.
    check_op(values({4}, -3, -2, 4), "acos", [](double v) { return std::acos(v); }, 0);
}

TEST_CASE("graph sign, isnan and isinf on floats with NaN, infinities and -0, and sign on integers") {
    Buffer<float> x = values({5, 7}, -3, 3, 5, {kNaN, kInf, -kInf, 0.0, -0.0, -kNaN, 1e-40, -1e-40});
    check_op(x, "sign", [](double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : v; }, 0);
    check_op(x, "isnan", [](double v) { return std::isnan(v) ? 1.0 : 0.0; }, 0);
    check_op(x, "isinf", [](double v) { return std::isinf(v) ? 1.0 : 0.0; }, 0);
    check_op(x, "isinf", [](double v) { return v == kInf ? 1.0 : 0.0; }, 0, {{"negative", int64_t(0)}});
    check_op(x, "isinf", [](double v) { return v == -kInf ? 1.0 : 0.0; }, 0, {{"positive", int64_t(0)}});
    Buffer<double> d = Buffer<double>::random({9}, -2, 2, 6);
    d.data()[0] = kNaN;
    d.data()[1] = -kInf;
    check_op(d, "isnan", [](double v) { return std::isnan(v) ? 1.0 : 0.0; }, 0);
    check_op(d, "isinf", [](double v) { return std::isinf(v) ? 1.0 : 0.0; }, 0);
    Buffer<int32_t> i = Buffer<int32_t>::random({11}, -5, 5, 7);
    check_op(i, "sign", [](double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; }, 0);
}

TEST_CASE("graph comparisons broadcast and give bool, NaN unequal to everything") {
    Buffer<float> a = values({6, 1}, -2, 2, 8, {kNaN, 1.0, -0.0}), b = values({1, 5}, -2, 2, 9, {1.0, kNaN, 0.0});
    check_binary(a, b, "equal", [](double x, double y) { return x == y ? 1.0 : 0.0; });
    check_binary(a, b, "not_equal", [](double x, double y) { return x != y ? 1.0 : 0.0; });
    check_binary(a, b, "greater", [](double x, double y) { return x > y ? 1.0 : 0.0; });
    check_binary(a, b, "greater_equal", [](double x, double y) { return x >= y ? 1.0 : 0.0; });
    check_binary(a, b, "less", [](double x, double y) { return x < y ? 1.0 : 0.0; });
    check_binary(a, b, "less_equal", [](double x, double y) { return x <= y ? 1.0 : 0.0; });
    Buffer<int32_t> ia = Buffer<int32_t>::random({7, 1}, -3, 3, 10), ib = Buffer<int32_t>::random({1, 4}, -3, 3, 11);
    check_binary(ia, ib, "equal", [](double x, double y) { return x == y ? 1.0 : 0.0; });
    check_binary(ia, ib, "greater_equal", [](double x, double y) { return x >= y ? 1.0 : 0.0; });
    graph::Graph g;
    graph::Value x = g.input("a", {6, 1}), y = g.input("b", {1, 5});
    CHECK(g.type(g.add_node("less", {x, y})).dtype == DataType::bool_());
    CHECK(g.type(g.add_node("less", {x, y})).shape == std::vector<int64_t>{6, 5});
}

TEST_CASE("graph logic on bool tensors, broadcast") {
    Buffer<bool> a = Buffer<bool>::random({5, 1}, false, true, 12), b = Buffer<bool>::random({1, 4}, false, true, 13);
    check_binary(a, b, "logical_and", [](double x, double y) { return x != 0 && y != 0 ? 1.0 : 0.0; });
    check_binary(a, b, "logical_or", [](double x, double y) { return x != 0 || y != 0 ? 1.0 : 0.0; });
    check_binary(a, b, "logical_xor", [](double x, double y) { return (x != 0) != (y != 0) ? 1.0 : 0.0; });
    check_op(a, "logical_not", [](double v) { return v != 0 ? 0.0 : 1.0; }, 0);
}

TEST_CASE("graph mod: the divisor's sign, C's fmod, integer zero divisors give 0") {
    Buffer<int32_t> a = Buffer<int32_t>::random({9, 1}, -20, 20, 14), b = Buffer<int32_t>::random({1, 6}, -7, 7, 15);
    a.data()[0] = -7;
    a.data()[1] = 7;
    b.data()[0] = 0;
    b.data()[1] = -3;
    b.data()[2] = 3;
    check_binary(a, b, "mod", [](double x, double y) { return y == 0 ? 0.0 : x - std::floor(x / y) * y; });
    check_binary(a, b, "mod", [](double x, double y) { return y == 0 ? 0.0 : std::fmod(x, y); }, {{"fmod", int64_t(1)}});
    Buffer<int64_t> la = Buffer<int64_t>::random({4, 1}, -100, 100, 16), lb = Buffer<int64_t>::random({1, 3}, 1, 9, 17);
    check_binary(la, lb, "mod", [](double x, double y) { return x - std::floor(x / y) * y; });
    Buffer<float> fa = values({8, 1}, -10, 10, 18, {-7.5, 7.5, 0.0, kInf, -3.0, 2.0}),
                  fb = values({1, 6}, -4, 4, 19, {2.0, -2.0, kInf, -kInf, 0.0});
    check_binary(fa, fb, "mod", [](double x, double y) { return std::fmod(x, y); }, {{"fmod", int64_t(1)}});
    // fmod 0 on floats (ONNX Mod from opset 28): Python's %, infinities and zeros as Python has them.
    check_binary(fa, fb, "mod", [](double x, double y) {
        if (y == 0 || std::isinf(x) || std::isnan(x) || std::isnan(y)) return kNaN;
        double r = std::fmod(x, y);
        if (r != 0 && ((r < 0) != (y < 0))) r += y;
        return r == 0 ? std::copysign(0.0, y) : r;
    });
}

TEST_CASE("graph div on integers rounds toward zero, x / 0 is 0, the minimum / -1 does not trap") {
    Buffer<int32_t> a = Buffer<int32_t>::random({9, 1}, -50, 50, 22), b = Buffer<int32_t>::random({1, 7}, -9, 9, 23);
    a.data()[0] = std::numeric_limits<int32_t>::min();
    a.data()[1] = -7;
    b.data()[0] = 0;
    b.data()[1] = -1;
    b.data()[2] = 2;
    check_binary(a, b, "div", [](double x, double y) {
        if (y == 0) return 0.0;
        if (y == -1) return x == double(std::numeric_limits<int32_t>::min()) ? x : -x;  // wraps
        return std::trunc(x / y);
    });
    Buffer<int64_t> la = Buffer<int64_t>::random({5, 1}, -100, 100, 24), lb = Buffer<int64_t>::random({1, 4}, 1, 9, 25);
    check_binary(la, lb, "div", [](double x, double y) { return std::trunc(x / y); });
}

TEST_CASE("graph min over axes matches a naive minimum, on floats, integers and bools") {
    Buffer<float> x = Buffer<float>::random({3, 4, 5}, -2, 2, 26);
    Buffer<uint8_t> u = Buffer<uint8_t>::random({3, 4, 5}, 0, 255, 27);
    u.data()[0] = 0;  // a -max(-x) would take 0 for the largest
    Buffer<bool> bb({3, 4, 5});
    for (int64_t k = 0; k < bb.size(); ++k) bb.data()[k] = (k % 7) != 0;
    for (const BufferRef& in : {BufferRef(x), BufferRef(u), BufferRef(bb)}) {
        CAPTURE(in.dtype().str());
        Array a = to_array(in);
        graph::Graph g;
        graph::Value v = g.input("x", in.shape(), in.dtype());
        g.output(g.add_node("min", {v}, {{"axes", std::vector<int64_t>{0, 2}}, {"keepdims", int64_t(0)}}), "y");
        Array want = tabulate({4}, [&](const std::vector<int64_t>& o) {
            double m = kInf;
            for (int64_t i = 0; i < 3; ++i)
                for (int64_t k = 0; k < 5; ++k) m = std::min(m, a.at({i, o[0], k}));
            return m;
        });
        for (bool fuse : {true, false}) check_equal(run(g, {in}, fuse)[0], want);
    }
}

TEST_CASE("graph math operators refuse wrong dtypes with an error naming the operator") {
    graph::Graph g;
    graph::Value f = g.input("f", {3}), b = g.input("b", {3}, DataType::bool_()), i = g.input("i", {3}, i32);
    CHECK_THROWS_WITH_AS(g.add_node("sin", {i}), doctest::Contains("sin"), Error);
    CHECK_THROWS_WITH_AS(g.add_node("logical_and", {f, f}), doctest::Contains("bool"), Error);
    CHECK_THROWS_WITH_AS(g.add_node("logical_not", {i}), doctest::Contains("bool"), Error);
    CHECK_THROWS_WITH_AS(g.add_node("mod", {b, b}), doctest::Contains("mod"), Error);
    CHECK_THROWS_WITH_AS(g.add_node("equal", {f, i}), doctest::Contains("dtype"), Error);
    CHECK_THROWS_WITH_AS(g.add_node("isnan", {i}), doctest::Contains("isnan"), Error);
    CHECK_THROWS_WITH_AS(g.add_node("sign", {b}), doctest::Contains("bool"), Error);
}

TEST_CASE("graph argmax and argmin along each axis, keepdims or not, first or last of ties") {
    // Small integers in float: many ties.
    Buffer<float> x = Buffer<float>::random({4, 5, 3}, 0, 1, 20);
    for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = float(int(x.data()[i] * 4));
    Array a = to_array(x);
    for (const char* op : {"argmax", "argmin"})
        for (int64_t axis : {0, 1, -1})
            for (int64_t keep : {0, 1})
                for (int64_t last : {0, 1}) {
                    CAPTURE(op); CAPTURE(axis); CAPTURE(keep); CAPTURE(last);
                    const int64_t d = axis < 0 ? axis + 3 : axis;
                    std::vector<int64_t> shape;
                    for (int64_t k = 0; k < 3; ++k)
                        if (k != d) shape.push_back(a.shape[size_t(k)]);
                        else if (keep) shape.push_back(1);
                    const bool largest = std::string(op) == "argmax";
                    Array want = tabulate(shape, [&](const std::vector<int64_t>& o) {
                        std::vector<int64_t> at;
                        size_t next = 0;
                        for (int64_t k = 0; k < 3; ++k) at.push_back(k == d ? (keep ? o[next++] * 0 : 0) : o[next++]);
                        int64_t best = -1;
                        for (int64_t j = 0; j < a.shape[size_t(d)]; ++j) {
                            at[size_t(d)] = j;
                            const double v = a.at(at);
                            if (best < 0) {
                                best = j;
                                continue;
                            }
                            at[size_t(d)] = best;
                            const double b = a.at(at);
                            if (largest ? (v > b || (last && v == b)) : (v < b || (last && v == b))) best = j;
                        }
                        return double(best);
                    });
                    graph::Graph g;
                    graph::Value in = g.input("x", x.shape());
                    graph::Value y = g.add_node(op, {in}, {{"axis", axis}, {"keepdims", keep}, {"select_last_index", last}});
                    CHECK(g.type(y).dtype == DataType::int_(64));
                    g.output(y, "y");
                    for (bool fuse : {true, false}) check_equal(run(g, {x}, fuse)[0], want);
                }
}

TEST_CASE("graph prod over axes matches a naive product") {
    Buffer<float> x = Buffer<float>::random({3, 4, 5}, 0.5f, 1.5f, 21);
    Array a = to_array(x);
    graph::Graph g;
    graph::Value in = g.input("x", x.shape());
    g.output(g.add_node("prod", {in}, {{"axes", std::vector<int64_t>{0, 2}}, {"keepdims", int64_t(0)}}), "y");
    Array want = tabulate({4}, [&](const std::vector<int64_t>& o) {
        double p = 1;
        for (int64_t i = 0; i < 3; ++i)
            for (int64_t k = 0; k < 5; ++k) p *= a.at({i, o[0], k});
        return p;
    });
    for (bool fuse : {true, false}) check_equal(run(g, {x}, fuse)[0], want, 1e-5);
}

TEST_CASE("graph einsum: matmul, batched with a broadcast ellipsis, diagonal, transpose, inner product, three operands") {
    auto run_einsum = [](const std::string& eq, const std::vector<BufferRef>& ins) {
        graph::Graph g;
        std::vector<graph::Value> vs;
        for (size_t k = 0; k < ins.size(); ++k)
            vs.push_back(g.input("x" + std::to_string(k), ins[k].shape(), ins[k].dtype()));
        g.output(g.add_node("einsum", vs, {{"equation", eq}}), "y");
        return run(g, ins)[0];
    };
    Buffer<float> a = values({3, 4}, -1, 1, 30), b = values({4, 5}, -1, 1, 31), c = values({5, 2}, -1, 1, 32);
    Array A = to_array(a), B = to_array(b), C = to_array(c);
    Array ab = tabulate({3, 5}, [&](const std::vector<int64_t>& o) {
        double s = 0;
        for (int64_t k = 0; k < 4; ++k) s += A.at({o[0], k}) * B.at({k, o[1]});
        return s;
    });
    check_equal(run_einsum("ij,jk->ik", {a, b}), ab, 1e-5);
    check_equal(run_einsum("ij,jk", {a, b}), ab, 1e-5);  // implicit output: ik
    check_equal(run_einsum("ij->ji", {a}), tabulate({4, 3}, [&](const std::vector<int64_t>& o) { return A.at({o[1], o[0]}); }));
    check_equal(run_einsum("ij,jk,kl->il", {a, b, c}), tabulate({3, 2}, [&](const std::vector<int64_t>& o) {
                    double s = 0;
                    for (int64_t k = 0; k < 5; ++k) s += ab.at({o[0], k}) * C.at({k, o[1]});
                    return s;
                }), 1e-5);
    Buffer<float> sq = values({2, 4, 4}, -1, 1, 33);
    Array S = to_array(sq);
    check_equal(run_einsum("...ii->...i", {sq}),
                tabulate({2, 4}, [&](const std::vector<int64_t>& o) { return S.at({o[0], o[1], o[1]}); }));
    Buffer<float> v = values({6}, -1, 1, 34), w = values({6}, -1, 1, 35);
    Array V = to_array(v), Wv = to_array(w);
    double dot = 0;
    for (int64_t k = 0; k < 6; ++k) dot += V.at({k}) * Wv.at({k});
    check_equal(run_einsum("i,i", {v, w}), Array{{1}, {dot}}, 1e-5);
    // Batch dimensions broadcast through the ellipsis: [2, 1, 3, 4] x [5, 4, 2] -> [2, 5, 3, 2].
    Buffer<float> p = values({2, 1, 3, 4}, -1, 1, 36), q = values({5, 4, 2}, -1, 1, 37);
    Array P = to_array(p), Q = to_array(q);
    check_equal(run_einsum("...ij,...jk->...ik", {p, q}), tabulate({2, 5, 3, 2}, [&](const std::vector<int64_t>& o) {
                    double s = 0;
                    for (int64_t k = 0; k < 4; ++k) s += P.at({o[0], 0, o[2], k}) * Q.at({o[1], k, o[3]});
                    return s;
                }), 1e-5);
    graph::Graph g;
    graph::Value x = g.input("x", {3, 4}), y = g.input("y", {5, 6});
    CHECK_THROWS_WITH_AS(g.add_node("einsum", {x, y}, {{"equation", std::string("ij,jk->ik")}}),
                         doctest::Contains("extent"), Error);
    CHECK_THROWS_WITH_AS(g.add_node("einsum", {x}, {{"equation", std::string("ij,jk->ik")}}), doctest::Contains("operand"),
                         Error);
}

TEST_CASE("graph bitwise and, or, xor, not and shifts match C on random integers, shifts past the width defined") {
    Buffer<int32_t> a = Buffer<int32_t>::random({7, 1}, -1000000, 1000000, 40), b = Buffer<int32_t>::random({1, 6}, -9999, 9999, 41);
    a.data()[0] = std::numeric_limits<int32_t>::min();
    a.data()[1] = -1;
    check_binary(a, b, "bitwise_and", [](double x, double y) { return double(int32_t(x) & int32_t(y)); });
    check_binary(a, b, "bitwise_or", [](double x, double y) { return double(int32_t(x) | int32_t(y)); });
    check_binary(a, b, "bitwise_xor", [](double x, double y) { return double(int32_t(x) ^ int32_t(y)); });
    // Shift amounts from -3 to 40: negative ones and those of 32 or more are outside the width.
    Buffer<int32_t> s = Buffer<int32_t>::random({1, 9}, -3, 40, 42);
    s.data()[0] = 0, s.data()[1] = 31, s.data()[2] = 32, s.data()[3] = -1;
    check_binary(a, s, "shift_left", [](double x, double y) {
        return y < 0 || y >= 32 ? 0.0 : double(int32_t(uint32_t(int32_t(x)) << int(y)));
    });
    check_binary(a, s, "shift_right", [](double x, double y) {
        return y < 0 || y >= 32 ? (x < 0 ? -1.0 : 0.0) : double(int32_t(x) >> int(y));  // arithmetic
    });
    Buffer<uint8_t> u = Buffer<uint8_t>::random({5, 1}, 0, 255, 43), us = Buffer<uint8_t>::random({1, 4}, 0, 12, 44);
    us.data()[0] = 8;
    check_binary(u, us, "shift_right", [](double x, double y) { return y >= 8 ? 0.0 : double(uint8_t(x) >> int(y)); });
    check_binary(u, us, "shift_left", [](double x, double y) { return y >= 8 ? 0.0 : double(uint8_t(uint8_t(x) << int(y))); });
    Array want = map(to_array(a), [](double x) { return double(~int32_t(x)); });
    check_unary(a, [](graph::Graph& g, graph::Value v) { return g.add_node("bitwise_not", {v}); }, want, 0);
    graph::Graph g;
    graph::Value f = g.input("f", {3});
    CHECK_THROWS_WITH_AS(g.add_node("bitwise_and", {f, f}), doctest::Contains("integers"), Error);
    graph::Value bl = g.input("b", {3}, DataType::bool_());
    CHECK_THROWS_WITH_AS(g.add_node("shift_left", {bl, bl}), doctest::Contains("integers"), Error);
}
