// The graph's data movement and type operators (reshape, flatten, transpose, concat, split,
// slice, pad, squeeze, unsqueeze, gather, where, cast, erf) through graph::build and
// graph::Module against naive references, on random data, odd shapes and negative axes,
// fused and unfused.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "op_testing.hpp"
#include "weft/weft.hpp"

using namespace weft;

using namespace op_testing;

TEST_CASE("graph reshape keeps row-major order with -1 and 0 entries") {
    auto xv = random_f32({3, 5, 7}, 1);
    Array x = to_array(xv);
    for (std::vector<int64_t> shape : std::vector<std::vector<int64_t>>{
             {7, -1}, {0, 35}, {105}, {5, 3, 7}, {1, 15, 1, 7, 1}, {-1, 21}, {3, 5, 7}, {0, 0, 7, 1}}) {
        CAPTURE(shape);
        Array want = x;
        want.shape.clear();
        int64_t known = 1;
        for (size_t d = 0; d < shape.size(); ++d)
            if (shape[d] != -1) known *= shape[d] == 0 ? x.shape[d] : shape[d];
        for (size_t d = 0; d < shape.size(); ++d)
            want.shape.push_back(shape[d] == -1 ? x.size() / known : shape[d] == 0 ? x.shape[d] : shape[d]);
        check_unary(xv, [&](graph::Graph& g, graph::Value v) { return g.reshape(v, shape); }, want);
    }
    // Blocks that do not line up: [6, 10] -> [4, 15] -> [2, 5, 6].
    auto yv = random_f32({6, 10}, 2);
    Array y = to_array(yv);
    graph::Graph g;
    graph::Value in = g.input("y", {6, 10});
    g.output(g.reshape(g.reshape(in, {4, 15}), {2, 5, 6}), "out");
    y.shape = {2, 5, 6};
    for (bool fuse : {true, false}) check_equal(run(g, {yv}, fuse)[0], y);
}

TEST_CASE("graph flatten at every axis including negative ones and the rank") {
    auto xv = random_f32({2, 3, 5, 7}, 3);
    Array x = to_array(xv);
    for (int64_t axis : {0, 1, 2, 3, 4, -1, -3}) {
        CAPTURE(axis);
        int64_t a = axis < 0 ? axis + 4 : axis;
        Array want = x;
        int64_t lead = 1;
        for (int64_t d = 0; d < a; ++d) lead *= x.shape[size_t(d)];
        want.shape = {lead, x.size() / lead};
        check_unary(xv, [&](graph::Graph& g, graph::Value v) { return g.flatten(v, axis); }, want);
    }
}

TEST_CASE("graph transpose by default reverses and takes any permutation") {
    auto xv = random_f32({3, 5, 7, 2}, 4);
    Array x = to_array(xv);
    for (std::vector<int64_t> perm : std::vector<std::vector<int64_t>>{
             {}, {0, 2, 1, 3}, {-1, 0, -2, 1}, {0, 2, 3, 1}, {1, 0, 2, 3}, {0, 1, 2, 3}}) {
        CAPTURE(perm);
        std::vector<int64_t> p = perm;
        if (p.empty()) p = {3, 2, 1, 0};
        for (int64_t& a : p)
            if (a < 0) a += 4;
        std::vector<int64_t> shape;
        for (int64_t a : p) shape.push_back(x.shape[size_t(a)]);
        Array want = tabulate(shape, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> idx(4);
            for (size_t d = 0; d < 4; ++d) idx[size_t(p[d])] = o[d];
            return x.at(idx);
        });
        check_unary(xv, [&](graph::Graph& g, graph::Value v) { return g.transpose(v, perm); }, want);
    }
}

TEST_CASE("graph concat of three inputs along the middle and the last axis") {
    for (int64_t axis : {1, -1, 0}) {
        CAPTURE(axis);
        const int64_t a = axis < 0 ? axis + 3 : axis;
        std::vector<std::vector<int64_t>> shapes;
        for (int64_t len : {2, 5, 1}) {
            std::vector<int64_t> s = {3, 4, 7};
            s[size_t(a)] = len;
            shapes.push_back(s);
        }
        std::vector<BufferRef> bufs;
        std::vector<Array> arrays;
        graph::Graph g;
        std::vector<graph::Value> xs;
        for (size_t k = 0; k < 3; ++k) {
            bufs.push_back(random_f32(shapes[k], 10 + k));
            arrays.push_back(to_array(bufs.back()));
            xs.push_back(g.input("x" + std::to_string(k), shapes[k]));
        }
        g.output(g.concat(xs, axis), "y");
        std::vector<int64_t> shape = shapes[0];
        shape[size_t(a)] = 8;
        Array want = tabulate(shape, [&](std::vector<int64_t> o) {
            for (size_t k = 0;; ++k) {
                if (o[size_t(a)] < shapes[k][size_t(a)]) return arrays[k].at(o);
                o[size_t(a)] -= shapes[k][size_t(a)];
            }
        });
        for (bool fuse : {true, false}) check_equal(run(g, bufs, fuse)[0], want);
    }
    // One input: a copy.
    auto xv = random_f32({4, 3}, 13);
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.concat({v}, -2); }, to_array(xv));
}

TEST_CASE("graph split makes one slice node per piece") {
    auto xv = random_f32({5, 9}, 14);
    Array x = to_array(xv);
    graph::Graph g;
    graph::Value in = g.input("x", {5, 9});
    std::vector<graph::Value> parts = g.split(in, -1, {2, 3, 4}, "part");
    REQUIRE(parts.size() == 3);
    for (size_t k = 0; k < 3; ++k) {
        CHECK(g.node(parts[k]).op == "slice");
        CHECK(g.node(parts[k]).name == "part_" + std::to_string(k));
        g.output(parts[k]);
    }
    std::vector<graph::Value> rows = g.split(in, 0, {1, 4});
    g.output(g.relu(rows[1]), "rows");
    for (bool fuse : {true, false}) {
        CAPTURE(fuse);
        std::vector<BufferRef> out = run(g, {xv}, fuse);
        int64_t start = 0;
        for (size_t k = 0; k < 3; ++k) {
            int64_t len = int64_t(k) + 2;
            check_equal(out[k], tabulate({5, len}, [&](const std::vector<int64_t>& o) { return x.at({o[0], start + o[1]}); }));
            start += len;
        }
        check_equal(out[3], tabulate({4, 9}, [&](const std::vector<int64_t>& o) {
                        return std::max(0.0, x.at({o[0] + 1, o[1]}));
                    }));
    }
}

TEST_CASE("graph slice follows ONNX with negative and clamped indices and steps") {
    auto xv = random_f32({7, 9, 11}, 15);
    Array x = to_array(xv);
    const int64_t big = std::numeric_limits<int64_t>::max(), small = std::numeric_limits<int64_t>::min();
    struct Case {
        std::vector<int64_t> starts, ends, axes, steps;
        std::vector<int64_t> start, step, shape;  // the expected per-dimension read
    };
    std::vector<Case> cases = {
        {{1, 2}, {5, -1}, {}, {}, {1, 2, 0}, {1, 1, 1}, {4, 6, 11}},
        {{-1, 1}, {small, 100}, {0, 2}, {-2, 3}, {6, 0, 1}, {-2, 1, 3}, {4, 9, 4}},
        {{-100}, {big}, {-2}, {}, {0, 0, 0}, {1, 1, 1}, {7, 9, 11}},
        {{big, 3}, {-big, 0}, {-1, 1}, {-4, -1}, {0, 3, 10}, {1, -1, -4}, {7, 3, 3}},
        {{2}, {3}, {0}, {5}, {2, 0, 0}, {1, 1, 1}, {1, 9, 11}},
    };
    for (const Case& c : cases) {
        CAPTURE(c.starts);
        CAPTURE(c.ends);
        CAPTURE(c.axes);
        CAPTURE(c.steps);
        Array want = tabulate(c.shape, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> idx(3);
            for (size_t d = 0; d < 3; ++d) idx[d] = c.start[d] + c.step[d] * o[d];
            return x.at(idx);
        });
        check_unary(xv, [&](graph::Graph& g, graph::Value v) { return g.slice(v, c.starts, c.ends, c.axes, c.steps); },
                    want);
    }
}

TEST_CASE("graph pad fills with a constant and crops with negative pads") {
    auto xv = random_f32({3, 5, 4}, 16);
    Array x = to_array(xv);
    for (std::vector<int64_t> pads : std::vector<std::vector<int64_t>>{
             {1, 0, 2, 0, 3, 1}, {0, 0, 0, 2, 2, 2}, {-1, 2, 0, 0, -2, 3}, {0, 0, 0, 0, 0, 0}}) {
        CAPTURE(pads);
        std::vector<int64_t> shape;
        for (size_t d = 0; d < 3; ++d) shape.push_back(x.shape[d] + pads[d] + pads[d + 3]);
        Array want = tabulate(shape, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> idx(3);
            for (size_t d = 0; d < 3; ++d) {
                idx[d] = o[d] - pads[d];
                if (idx[d] < 0 || idx[d] >= x.shape[d]) return 1.5;
            }
            return x.at(idx);
        });
        check_unary(xv, [&](graph::Graph& g, graph::Value v) { return g.pad(v, pads, 1.5); }, want);
    }
}

TEST_CASE("graph squeeze and unsqueeze with negative axes") {
    auto xv = random_f32({1, 5, 1, 3}, 17);
    Array x = to_array(xv);
    auto reshaped = [&](std::vector<int64_t> shape) {
        Array a = x;
        a.shape = shape;
        return a;
    };
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.squeeze(v); }, reshaped({5, 3}));
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.squeeze(v, {-2}); }, reshaped({1, 5, 3}));
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.squeeze(v, {0, 2}); }, reshaped({5, 3}));
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.unsqueeze(v, {0, -1}); },
                reshaped({1, 1, 5, 1, 3, 1}));
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.unsqueeze(v, {2, 3}); },
                reshaped({1, 5, 1, 1, 1, 3}));
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.unsqueeze(g.squeeze(v), {1}); },
                reshaped({5, 1, 3}));
}

TEST_CASE("graph gather with int64 and int32 indices negative and out of range") {
    auto dv = random_f32({5, 7, 3}, 18);
    Array data = to_array(dv);
    auto expect = [&](const Array& ind, int64_t axis) {
        const int64_t a = axis < 0 ? axis + 3 : axis, n = data.shape[size_t(a)];
        std::vector<int64_t> shape(data.shape.begin(), data.shape.begin() + a);
        shape.insert(shape.end(), ind.shape.begin(), ind.shape.end());
        shape.insert(shape.end(), data.shape.begin() + a + 1, data.shape.end());
        return tabulate(shape, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> j(o.begin() + a, o.begin() + a + int64_t(ind.shape.size()));
            // Negative counts from the end; still outside [0, n): clamped (weft's guard for
            // indices ONNX leaves undefined). In doubles: the indices include INT64_MIN/MAX.
            double kd = ind.at(j);
            if (kd < 0) kd += double(n);
            const int64_t k = kd < 0 ? 0 : kd > double(n - 1) ? n - 1 : int64_t(kd);
            std::vector<int64_t> idx(o.begin(), o.begin() + a);
            idx.push_back(k);
            idx.insert(idx.end(), o.begin() + a + int64_t(ind.shape.size()), o.end());
            return data.at(idx);
        });
    };
    Buffer<int64_t> i64v = Buffer<int64_t>::random({2, 4}, -7, 6, 19);
    i64v(0, 0) = -1;
    i64v(0, 1) = 100;   // past the end: clamped to the last row
    i64v(1, 0) = -100;  // before the front: clamped to the first
    i64v(1, 1) = std::numeric_limits<int64_t>::max();
    i64v(1, 2) = std::numeric_limits<int64_t>::min();
    Buffer<int32_t> i32v = Buffer<int32_t>::random({5}, -3, 2, 20);
    i32v(3) = std::numeric_limits<int32_t>::max();
    i32v(4) = std::numeric_limits<int32_t>::min();
    struct Case {
        BufferRef indices;
        int64_t axis;
    };
    for (const Case& c : {Case{i64v, 1}, Case{i64v, -3}, Case{i32v, -1}, Case{i32v, 0}}) {
        CAPTURE(c.axis);
        CAPTURE(c.indices.dtype().str());
        graph::Graph g;
        graph::Value d = g.input("data", {5, 7, 3});
        graph::Value i = g.input("indices", c.indices.shape(), c.indices.dtype());
        g.output(g.gather(d, i, c.axis), "y");
        Array want = expect(to_array(c.indices), c.axis);
        for (bool fuse : {true, false}) check_equal(run(g, {dv, c.indices}, fuse)[0], want);
    }
    // Constant indices feeding an element-wise consumer.
    graph::Graph g;
    graph::Value d = g.input("data", {5, 7, 3});
    g.output(g.relu(g.gather(d, g.constant("idx", i32v), 1)), "y");
    Array want = expect(to_array(i32v), 1);
    for (double& v : want.v) v = std::max(v, 0.0);
    for (bool fuse : {true, false}) check_equal(run(g, {dv}, fuse)[0], want);
}

TEST_CASE("graph where broadcasts the condition and both values") {
    Buffer<bool> cv = Buffer<bool>::random({4, 1, 6}, false, true, 21);
    auto av = random_f32({5, 1}, 22), bv = random_f32({6}, 23);
    Array c = to_array(cv), a = to_array(av), b = to_array(bv);
    graph::Graph g;
    graph::Value cond = g.input("cond", {4, 1, 6}, DataType::bool_());
    graph::Value x = g.input("a", {5, 1}), y = g.input("b", {6});
    g.output(g.where(cond, x, y), "w");
    Array want = tabulate({4, 5, 6}, [&](const std::vector<int64_t>& o) {
        return c.at({o[0], 0, o[2]}) != 0 ? a.at({o[1], 0}) : b.at({o[2]});
    });
    for (bool fuse : {true, false}) check_equal(run(g, {cv, av, bv}, fuse)[0], want);
}

TEST_CASE("graph cast between floats ints and bool") {
    Buffer<float> xv = random_f32({3, 7}, 24);
    xv(0, 0) = 0.f;  // bool(0) is false
    xv(0, 1) = -1.75f;
    Array x = to_array(xv);
    auto mapped = [&](const Array& in, double (*f)(double)) {
        Array a = in;
        for (double& v : a.v) v = f(v);
        return a;
    };
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.cast(v, i32); },
                mapped(x, [](double v) { return std::trunc(v); }));
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.cast(v, DataType::bool_()); },
                mapped(x, [](double v) { return v != 0 ? 1.0 : 0.0; }));
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.cast(v, f64); }, x);
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.cast(v, f32); }, x);
    Buffer<bool> bv = Buffer<bool>::random({11}, false, true, 25);
    check_unary(bv, [](graph::Graph& g, graph::Value v) { return g.cast(v, f32); }, to_array(bv));
    Buffer<int32_t> iv = Buffer<int32_t>::random({2, 9}, -1000, 1000, 26);
    check_unary(iv, [](graph::Graph& g, graph::Value v) { return g.cast(g.cast(v, f32), i64); }, to_array(iv));
    // A round trip through int keeps the graph's type inference and the kernel's dtypes in step.
    graph::Graph g;
    graph::Value in = g.input("x", {3, 7});
    graph::Value c = g.cast(in, i32);
    CHECK(g.type(c).dtype == i32);
    CHECK(g.type(c).shape == std::vector<int64_t>{3, 7});
}

TEST_CASE("graph data movement on int32 and bool tensors") {
    Buffer<int32_t> iv = Buffer<int32_t>::random({3, 4}, -1000, 1000, 34);
    Buffer<bool> bv = Buffer<bool>::random({3, 2}, false, true, 35);
    Array i = to_array(iv), b = to_array(bv);
    graph::Graph g;
    graph::Value x = g.input("i", {3, 4}, i32), c = g.input("b", {3, 2}, DataType::bool_());
    g.output(g.pad(g.transpose(x), {1, 0, 0, 2}, 7), "ints");   // [4, 3] -> [5, 5]
    g.output(g.concat({c, g.slice(c, {1}, {2}, {1})}, -1), "bools");  // [3, 3]
    g.output(g.gather(x, g.constant("k", Buffer<int64_t>::random({2}, -4, 3, 36)), -1), "picked");
    for (bool fuse : {true, false}) {
        CAPTURE(fuse);
        std::vector<BufferRef> out = run(g, {iv, bv}, fuse);
        check_equal(out[0], tabulate({5, 5}, [&](const std::vector<int64_t>& o) {
                        return o[0] < 1 || o[1] >= 3 ? 7.0 : i.at({o[1], o[0] - 1});
                    }));
        check_equal(out[1], tabulate({3, 3}, [&](const std::vector<int64_t>& o) { return b.at({o[0], o[1] < 2 ? o[1] : 1}); }));
        CHECK(out[2].dtype() == i32);
        CHECK(out[2].shape() == std::vector<int64_t>{3, 2});
    }
}

TEST_CASE("graph erf matches std erf") {
    auto xv = random_f32({5, 13}, 27);
    Array want = to_array(xv);
    for (double& v : want.v) v = std::erf(v);
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.erf(v); }, want, 1e-5);
}

TEST_CASE("graph add then transpose fuses into one kernel that matches the unfused graph") {
    auto av = random_f32({3, 5, 7}, 28), bv = random_f32({7}, 29);
    Array a = to_array(av), b = to_array(bv);
    graph::Graph g;
    graph::Value x = g.input("a", {3, 5, 7}), y = g.input("b", {7});
    graph::Value t = g.transpose(g.add(x, y), {2, 0, 1});
    g.output(g.reshape(g.pad(t, {0, 1, 1, 0, 0, 2}), {7, -1}), "out");  // [7, 4, 8] -> [7, 32]
    Array want = tabulate({7, 4 * 8}, [&](const std::vector<int64_t>& o) {
        int64_t i = o[1] / 8, j = o[1] % 8;
        if (i < 1 || j < 1 || j > 5) return 0.0;
        return a.at({i - 1, j - 1, o[0]}) + b.at({o[0]});
    });
    graph::Module fused = graph::build(g);
    CHECK(fused.kernels().size() == 1u);
    CHECK(graph::build(g, Target::host(), {.fuse = false}).kernels().size() == 4u);
    for (bool fuse : {true, false}) check_equal(run(g, {av, bv}, fuse)[0], want, 1e-6);
}

TEST_CASE("graph conv relu reshape transpose concat chain fused and unfused agree") {
    auto xv = random_f32({1, 3, 9, 11}, 30), wv = random_f32({4, 3, 3, 3}, 31), bv = random_f32({4}, 32);
    auto sv = random_f32({4, 9 * 11}, 33);
    graph::Graph g;
    graph::Value x = g.input("x", {1, 3, 9, 11});
    graph::Value s = g.input("skip", {4, 9 * 11});
    graph::Value c = g.relu(g.conv2d(x, g.constant("w", wv), g.constant("b", bv), {.pad = 1}));  // [1, 4, 9, 11]
    graph::Value r = g.squeeze(g.reshape(c, {1, 4, -1}), {0});                                      // [4, 99]
    graph::Value cat = g.concat({r, g.sigmoid(s)}, 0);                                              // [8, 99]
    graph::Value out = g.transpose(g.slice(cat, {1}, {-1}, {1}, {2}), {});                         // [49, 8]
    g.output(out, "out");
    g.output(g.cast(g.unsqueeze(g.flatten(c, 2), {-1}), f64), "flat");  // [4, 99, 1]... of [1, 4, 9, 11]
    std::vector<BufferRef> fused = run(g, {xv, sv}, true), unfused = run(g, {xv, sv}, false);
    REQUIRE(fused.size() == 2);
    CHECK(fused[0].shape() == std::vector<int64_t>{49, 8});
    CHECK(fused[1].shape() == std::vector<int64_t>{4, 99, 1});
    CHECK(fused[1].dtype() == f64);
    for (size_t k = 0; k < 2; ++k) check_equal(fused[k], to_array(unfused[k]), 1e-6);
    // And the chain against a direct read of the conv output.
    Array flat = to_array(fused[1]);
    Array sa = to_array(sv);
    Array want = tabulate({49, 8}, [&](const std::vector<int64_t>& o) {
        int64_t row = o[1], col = 1 + 2 * o[0];
        if (row < 4) return flat.at({row, col, 0});
        return 1.0 / (1.0 + std::exp(-sa.at({row - 4, col})));
    });
    check_equal(fused[0], want, 1e-5);
}

TEST_CASE("graph cast and erf fuse into conv2d and dense epilogues") {
    auto xv = random_f32({1, 3, 9, 11}, 38), wv = random_f32({8, 3, 3, 3}, 39), dv = random_f32({16, 27}, 40);
    for (int variant = 0; variant < 3; ++variant) {
        CAPTURE(variant);
        graph::Graph g;
        graph::Value x = g.input("x", {1, 3, 9, 11});
        graph::Value y;
        size_t fused_kernels = 1;
        if (variant == 0) y = g.cast(g.relu(g.conv2d(x, g.constant("w", wv), {.pad = 1})), f64);
        if (variant == 1) y = g.erf(g.conv2d(x, g.constant("w", wv), {.pad = 1}));
        if (variant == 2) {  // slice + reshape in one kernel, dense + cast in the other
            y = g.cast(g.dense(g.reshape(g.slice(x, {0}, {1}, {3}), {-1, 27}), g.constant("d", dv)), i32);
            fused_kernels = 2;
        }
        g.output(y, "y");
        CHECK(graph::build(g, Target::host(), {.convert_layout = false}).kernels().size() == fused_kernels);
        check_equal(run(g, {xv}, true)[0], to_array(run(g, {xv}, false)[0]), 1e-6);
    }
}

TEST_CASE("graph reductions over every axis give shape 1 as topi does") {
    auto xv = random_f32({3, 4}, 37);
    Array x = to_array(xv);
    double total = 0, top = -1e30;
    for (double v : x.v) total += v, top = std::max(top, v);
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.sum(v); }, Array{{1}, {total}}, 1e-5);
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.max(v, {0, -1}); }, Array{{1}, {top}});
    check_unary(xv, [](graph::Graph& g, graph::Value v) { return g.mean(v, {}, true); }, Array{{1, 1}, {total / 12}}, 1e-5);
}

TEST_CASE("graph registers every operator of the ONNX subset") {
    std::vector<std::string> ops = graph::registered_ops();
    for (const char* name :
         {"conv2d", "dense", "matmul", "batch_matmul", "add", "sub", "mul", "div", "pow", "maximum", "minimum", "relu",
          "leaky_relu", "clip", "sigmoid", "tanh", "gelu", "hard_swish", "exp", "log", "sqrt", "erf", "batch_norm",
          "layer_norm", "softmax", "max_pool2d", "avg_pool2d", "global_avg_pool2d", "sum", "mean", "max", "reshape",
          "flatten", "transpose", "concat", "slice", "pad", "squeeze", "unsqueeze", "gather", "where", "cast"}) {
        CAPTURE(name);
        CHECK(std::find(ops.begin(), ops.end(), name) != ops.end());
    }
    CHECK(graph::op_def("reshape").pattern == graph::OpPattern::Injective);
    CHECK(graph::op_def("gather").pattern == graph::OpPattern::Injective);
    CHECK(graph::op_def("where").pattern == graph::OpPattern::Broadcast);
    CHECK(graph::op_def("cast").pattern == graph::OpPattern::ElemWise);
    CHECK(graph::op_def("erf").pattern == graph::OpPattern::ElemWise);
}

TEST_CASE("graph gather_elements along each axis with negative and out-of-range indices") {
    auto dv = random_f32({4, 5, 3}, 40);
    Array d = to_array(dv);
    for (int64_t axis : {0, 1, -1}) {
        CAPTURE(axis);
        const int64_t ax = axis < 0 ? axis + 3 : axis, n = d.shape[size_t(ax)];
        std::vector<int64_t> is = {3, 4, 2};  // no larger than the data but along the axis
        is[size_t(ax)] = 6;
        Buffer<int64_t> iv = Buffer<int64_t>::random(is, -n, n - 1, 41 + uint64_t(ax));
        iv.data()[0] = n + 3;  // clamped to the last
        Array idx = to_array(iv);
        graph::Graph g;
        graph::Value x = g.input("x", dv.shape()), k = g.input("k", is, i64);
        g.output(g.add_node("gather_elements", {x, k}, {{"axis", axis}}), "y");
        Array want = tabulate(is, [&](const std::vector<int64_t>& o) {
            int64_t j = int64_t(idx.at(o));
            j = j < 0 ? j + n : j;
            j = std::min(std::max<int64_t>(j, 0), n - 1);
            std::vector<int64_t> at = o;
            at[size_t(ax)] = j;
            return d.at(at);
        });
        for (bool fuse : {true, false}) check_equal(run(g, {dv, iv}, fuse)[0], want);
    }
}

TEST_CASE("graph cumsum and cumprod along each axis, exclusive and reversed, on floats and ints") {
    auto fv = random_f32({3, 6, 4}, 50);
    Buffer<int32_t> iv = Buffer<int32_t>::random({5, 7}, -3, 3, 51);  // products stay in range
    for (const char* op : {"cumsum", "cumprod"})
    for (const BufferRef& xv : {BufferRef(fv), BufferRef(iv)}) {
        const bool product = std::string(op) == "cumprod";
        Array x = to_array(xv);
        const int64_t rank = int64_t(x.shape.size());
        for (int64_t axis = -1; axis < rank; ++axis)
            for (int64_t exclusive : {0, 1})
                for (int64_t reverse : {0, 1}) {
                    CAPTURE(op); CAPTURE(axis); CAPTURE(exclusive); CAPTURE(reverse);
                    const size_t ax = size_t(axis < 0 ? axis + rank : axis);
                    const int64_t n = x.shape[ax];
                    Array want = tabulate(x.shape, [&](const std::vector<int64_t>& o) {
                        double s = product ? 1 : 0;
                        std::vector<int64_t> at = o;
                        for (int64_t k = 0; k < n; ++k) {
                            const bool in = reverse ? (exclusive ? k > o[ax] : k >= o[ax]) : (exclusive ? k < o[ax] : k <= o[ax]);
                            at[ax] = k;
                            if (in) s = product ? s * x.at(at) : s + x.at(at);
                        }
                        return s;
                    });
                    graph::Graph g;
                    graph::Value in = g.input("x", xv.shape(), xv.dtype());
                    g.output(g.add_node(op, {in}, {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}}),
                             "y");
                    check_equal(run(g, {xv})[0], want, 1e-5);
                }
    }
}

TEST_CASE("graph pad in reflect, edge and wrap modes, pads wider than the input and crops") {
    auto xv = random_f32({3, 4}, 60);
    Array x = to_array(xv);
    // numpy.pad's index rules, one dimension at a time.
    auto source = [](int64_t i, int64_t n, const std::string& mode) -> int64_t {
        if (mode == "edge" || n == 1) return std::min(std::max<int64_t>(i, 0), n - 1);
        if (mode == "wrap") return ((i % n) + n) % n;
        const int64_t p = 2 * (n - 1);
        int64_t j = ((i % p) + p) % p;
        return j < n ? j : p - j;
    };
    for (const std::string mode : {"reflect", "edge", "wrap"})
        for (const std::vector<int64_t>& pads : std::vector<std::vector<int64_t>>{
                 {1, 2, 2, 1}, {0, 7, 5, 0}, {2, -1, 0, 3}}) {
            CAPTURE(mode);
            CAPTURE(pads[1]);
            std::vector<int64_t> shape = {3 + pads[0] + pads[2], 4 + pads[1] + pads[3]};
            Array want = tabulate(shape, [&](const std::vector<int64_t>& o) {
                return x.at({source(o[0] - pads[0], 3, mode), source(o[1] - pads[1], 4, mode)});
            });
            graph::Graph g;
            graph::Value in = g.input("x", {3, 4});
            g.output(g.add_node("pad", {in}, {{"pads", pads}, {"mode", mode}}), "y");
            for (bool fuse : {true, false}) check_equal(run(g, {xv}, fuse)[0], want);
        }
    graph::Graph g;
    graph::Value in = g.input("x", {3, 4});
    CHECK_THROWS_WITH_AS(g.add_node("pad", {in}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"mode", std::string("mirror")}}),
                         doctest::Contains("mirror"), Error);
}

TEST_CASE("graph resize: bilinear half_pixel and nearest asymmetric against direct formulas") {
    auto xv = random_f32({1, 2, 5, 7}, 70);
    Array x = to_array(xv);
    const int64_t H = 5, W = 7, OH = 8, OW = 4;  // up in one dimension, down in the other
    // Bilinear with half-pixel centres (PyTorch's align_corners=False), edges clamped.
    auto bilinear = [&](const std::vector<int64_t>& o) {
        auto coord = [](int64_t i, int64_t in, int64_t out) {
            return std::max((double(i) + 0.5) * double(in) / double(out) - 0.5, 0.0);
        };
        const double cy = coord(o[2], H, OH), cx = coord(o[3], W, OW);
        const int64_t y0 = int64_t(cy), x0 = int64_t(cx), y1 = std::min(y0 + 1, H - 1), x1 = std::min(x0 + 1, W - 1);
        const double ly = cy - double(y0), lx = cx - double(x0);
        auto at = [&](int64_t y, int64_t xx) { return x.at({o[0], o[1], y, xx}); };
        return (1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x1)) + ly * ((1 - lx) * at(y1, x0) + lx * at(y1, x1));
    };
    auto nearest = [&](const std::vector<int64_t>& o) {  // floor(i / scale), scale = out / in
        return x.at({o[0], o[1], std::min(H - 1, o[2] * H / OH), std::min(W - 1, o[3] * W / OW)});
    };
    for (auto [mode, coords, want] : std::vector<std::tuple<std::string, std::string, Array>>{
             {"linear", "half_pixel", tabulate({1, 2, OH, OW}, bilinear)},
             {"nearest", "asymmetric", tabulate({1, 2, OH, OW}, nearest)}}) {
        CAPTURE(mode);
        graph::Graph g;
        graph::Value in = g.input("x", {1, 2, H, W});
        g.output(g.add_node("resize", {in},
                            {{"sizes", std::vector<int64_t>{1, 2, OH, OW}}, {"mode", mode},
                             {"coordinate_transformation_mode", coords}, {"nearest_mode", std::string("floor")}}),
                 "y");
        for (bool fuse : {true, false}) check_equal(run(g, {xv}, fuse)[0], want, 1e-5);
    }
    graph::Graph g;
    graph::Value in = g.input("x", {1, 2, H, W});
    CHECK_THROWS_WITH_AS(g.add_node("resize", {in}, {{"sizes", std::vector<int64_t>{1, 2, 3, 3}}, {"mode", std::string("area")}}),
                         doctest::Contains("area"), Error);
    CHECK_THROWS_WITH_AS(g.add_node("resize", {in}, {{"sizes", std::vector<int64_t>{1, 2, 3}}}), doctest::Contains("rank"),
                         Error);
}

TEST_CASE("graph resize: upsampling by integer factors, nearest (o / factor where ONNX reads it) and linear") {
    // The general coordinate formulas, in double, against the integer fast path's results;
    // the factors 2 and 3, the widths vectorized over whole and partial vectors.
    const int64_t H = 3, W = 21;
    auto xv = random_f32({1, 2, H, W}, 71);
    Array x = to_array(xv);
    struct Mode {
        const char* coords;
        const char* nearest;
    };
    for (int64_t f : {2, 3})
        for (Mode m : {Mode{"asymmetric", "floor"}, Mode{"half_pixel", "round_prefer_floor"},
                       Mode{"pytorch_half_pixel", "round_prefer_ceil"}, Mode{"half_pixel", "floor"},
                       Mode{"asymmetric", "round_prefer_floor"}}) {
            CAPTURE(f);
            CAPTURE(m.coords);
            CAPTURE(m.nearest);
            auto source = [&](int64_t o, int64_t in) {
                const double c = std::string(m.coords) == "asymmetric" ? double(o) / double(f)
                                                                       : (double(o) + 0.5) / double(f) - 0.5;
                const std::string r = m.nearest;
                const double i = r == "floor" ? std::floor(c) : r == "round_prefer_floor" ? std::ceil(c - 0.5) : std::floor(c + 0.5);
                return std::clamp<int64_t>(int64_t(i), 0, in - 1);
            };
            Array want = tabulate({1, 2, H * f, W * f}, [&](const std::vector<int64_t>& o) {
                return x.at({o[0], o[1], source(o[2], H), source(o[3], W)});
            });
            graph::Graph g;
            graph::Value in = g.input("x", {1, 2, H, W});
            g.output(g.add_node("resize", {in},
                                {{"sizes", std::vector<int64_t>{1, 2, H * f, W * f}}, {"mode", std::string("nearest")},
                                 {"coordinate_transformation_mode", std::string(m.coords)},
                                 {"nearest_mode", std::string(m.nearest)}}),
                     "y");
            check_equal(run(g, {xv}, true)[0], want, 0);
        }
    // Linear, half-pixel, by integer factors (the taps from integers): the general formula.
    for (int64_t f : {2, 3, 4, 8, 16})
        for (const char* coords : {"half_pixel", "pytorch_half_pixel"}) {
            CAPTURE(f);
            CAPTURE(coords);
            auto lerp = [&](const std::vector<int64_t>& o) {
                auto axis = [&](int64_t i, int64_t in, int64_t& lo, int64_t& hi) {
                    const double c = (double(i) + 0.5) / double(f) - 0.5, b = std::floor(c);
                    lo = std::clamp<int64_t>(int64_t(b), 0, in - 1);
                    hi = std::clamp<int64_t>(int64_t(b) + 1, 0, in - 1);
                    return c - b;
                };
                int64_t y0, y1, x0, x1;
                const double ly = axis(o[2], H, y0, y1), lx = axis(o[3], W, x0, x1);
                auto at = [&](int64_t y, int64_t xx) { return x.at({o[0], o[1], y, xx}); };
                return (1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x1)) + ly * ((1 - lx) * at(y1, x0) + lx * at(y1, x1));
            };
            Array want = tabulate({1, 2, H * f, W * f}, lerp);
            graph::Graph g;
            graph::Value in = g.input("x", {1, 2, H, W});
            g.output(g.add_node("resize", {in},
                                {{"sizes", std::vector<int64_t>{1, 2, H * f, W * f}}, {"mode", std::string("linear")},
                                 {"coordinate_transformation_mode", std::string(coords)}}),
                     "y");
            check_equal(run(g, {xv}, true)[0], want, 1e-6);
        }
    // From an extent of 1 (a pooled branch upsampled back), every mode reads the one element:
    // the same value everywhere along that axis, exactly.
    auto one = random_f32({1, 2, 1, 1}, 72);
    for (const char* mode : {"linear", "cubic", "nearest"}) {
        CAPTURE(mode);
        graph::Graph g;
        graph::Value in = g.input("x", {1, 2, 1, 1});
        g.output(g.add_node("resize", {in}, {{"sizes", std::vector<int64_t>{1, 2, 5, 7}}, {"mode", std::string(mode)}}),
                 "y");
        Array o = to_array(one);
        check_equal(run(g, {one}, true)[0], tabulate({1, 2, 5, 7}, [&](const std::vector<int64_t>& i) {
                        return o.at({0, i[1], 0, 0});
                    }), 0);
    }
}

TEST_CASE("graph gather_nd: whole indices, partial indices with slices, batch dimensions, negative indices") {
    auto dv = random_f32({2, 3, 4, 5}, 80);
    Array d = to_array(dv);
    struct Case {
        std::vector<int64_t> is;
        int64_t b;
    };
    for (const Case& k : std::vector<Case>{{{6, 4}, 0}, {{2, 3, 2}, 0}, {{2, 7, 2}, 1}, {{2, 3, 1}, 2}}) {
        CAPTURE(k.b);
        CAPTURE(k.is.back());
        const int64_t depth = k.is.back();
        Buffer<int64_t> iv = Buffer<int64_t>::random(k.is, -2, 1, 81 + uint64_t(k.b));
        Array idx = to_array(iv);
        graph::Graph g;
        graph::Value x = g.input("x", dv.shape()), i = g.input("i", k.is, i64);
        graph::Value y = g.add_node("gather_nd", {x, i}, {{"batch_dims", k.b}});
        g.output(y, "y");
        std::vector<int64_t> out(k.is.begin(), k.is.end() - 1);
        for (size_t dd = size_t(k.b + depth); dd < 4; ++dd) out.push_back(d.shape[dd]);
        CHECK(g.type(y).shape == out);
        const size_t q = k.is.size() - 1;
        Array want = tabulate(out, [&](const std::vector<int64_t>& o) {
            std::vector<int64_t> at(o.begin(), o.begin() + k.b);
            std::vector<int64_t> ii(o.begin(), o.begin() + int64_t(q));
            ii.push_back(0);
            for (int64_t j = 0; j < depth; ++j) {
                ii.back() = j;
                const int64_t n = d.shape[size_t(k.b + j)];
                int64_t v = int64_t(idx.at(ii));
                at.push_back(v < 0 ? v + n : v);
            }
            at.insert(at.end(), o.begin() + int64_t(q), o.end());
            return d.at(at);
        });
        for (bool fuse : {true, false}) check_equal(run(g, {dv, iv}, fuse)[0], want);
    }
}

TEST_CASE("graph scatter_elements and scatter_nd against a naive scatter: each reduction, repeated indices") {
    auto data = random_f32({4, 5}, 70);
    Array d = to_array(data);
    // scatter_elements along axis 1: indices [4, 3] into 5 columns, repeats included.
    Buffer<int64_t> idx({4, 3});
    for (int64_t i = 0; i < 12; ++i) idx.data()[i] = (i * 7) % 5 - (i % 4 == 0 ? 5 : 0);  // some negative
    auto upd = random_f32({4, 3}, 71);
    Array u = to_array(upd);
    for (const char* red : {"none", "add", "mul", "max", "min"}) {
        CAPTURE(red);
        const std::string r = red;
        Array want = d;
        for (int64_t i = 0; i < 4; ++i)
            for (int64_t j = 0; j < 3; ++j) {
                int64_t col = idx.data()[i * 3 + j];
                if (col < 0) col += 5;
                double& w = want.v[size_t(i * 5 + col)];
                const double v = u.at({i, j});
                w = r == "none" ? v : r == "add" ? w + v : r == "mul" ? w * v : r == "max" ? std::max(w, v) : std::min(w, v);
            }
        graph::Graph g;
        graph::Value a = g.input("d", {4, 5}), b = g.input("i", {4, 3}, DataType::int_(64)), c = g.input("u", {4, 3});
        g.output(g.add_node("scatter_elements", {a, b, c}, {{"axis", int64_t(1)}, {"reduction", r}}), "y");
        check_equal(run(g, {data, idx, upd})[0], want, 1e-5);
    }
    // scatter_nd: rows of data picked by [3, 1] indices, row 2 twice (the last wins for none).
    Buffer<int64_t> rows({3, 1});
    rows.data()[0] = 2, rows.data()[1] = 0, rows.data()[2] = -2;
    auto slices = random_f32({3, 5}, 72);
    Array s = to_array(slices);
    for (const char* red : {"none", "add"}) {
        CAPTURE(red);
        Array want = d;
        for (int64_t k = 0; k < 3; ++k) {
            const int64_t row = (rows.data()[k] + 4) % 4;
            for (int64_t j = 0; j < 5; ++j) {
                double& w = want.v[size_t(row * 5 + j)];
                w = std::string(red) == "none" ? s.at({k, j}) : w + s.at({k, j});
            }
        }
        graph::Graph g;
        graph::Value a = g.input("d", {4, 5}), b = g.input("i", {3, 1}, DataType::int_(64)), c = g.input("u", {3, 5});
        g.output(g.add_node("scatter_nd", {a, b, c}, {{"reduction", std::string(red)}}), "y");
        check_equal(run(g, {data, rows, slices})[0], want, 1e-5);
    }
    graph::Graph g;
    graph::Value a = g.input("d", {4, 5}), b = g.input("i", {4, 3}, DataType::int_(64)), c = g.input("u", {4, 2});
    CHECK_THROWS_WITH_AS(g.add_node("scatter_elements", {a, b, c}), doctest::Contains("one shape"), Error);
    CHECK_THROWS_WITH_AS(g.add_node("scatter_nd", {a, b, g.input("v", {4, 5})}, {{"reduction", std::string("avg")}}),
                         doctest::Contains("reduction 'avg'"), Error);
}
