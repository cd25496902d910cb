// Reads outside a tensor: refused at build for constant shapes (naming the tensor, the axis,
// the indices read, the valid ones and the compute's line), asserted at the call for
// symbolic ones; reads guarded by if_then_else or a reduction's where-condition count only
// where the guard holds. Before, X(i + 100) on 16 elements built and returned garbage and
// X(i + (1 << 30)) crashed.
#include <doctest/doctest.h>

#include <string>

#include "weft/weft.hpp"

using namespace weft;
using doctest::Contains;

namespace {

Kernel build1(const Tensor& in, const Tensor& out) { return build(create_schedule(out), {in, out}); }

}  // namespace

TEST_CASE("a read past a placeholder's end names the tensor the axis the indices and the line") {
    Tensor X = placeholder({16}, f32, "X");
    const int line = __LINE__ + 1;
    Tensor Y = compute({16}, [&](Expr i) { return X(i + 100); }, "Y");
    CHECK_THROWS_WITH_AS(build1(X, Y), Contains("compute 'Y' (defined at "), Error);
    const std::string where = "test_read_bounds.cpp:" + std::to_string(line);
    CHECK_THROWS_WITH_AS(build1(X, Y), Contains(where.c_str()), Error);
    CHECK_THROWS_WITH_AS(build1(X, Y),
                         Contains("reads tensor 'X' along axis 0 at indices [100, 115], beyond its extent: valid "
                                  "indices are [0, 15]"),
                         Error);
}

TEST_CASE("huge offsets and strides and reads before the start are refused, not crashes") {
    Tensor X = placeholder({16}, f32, "X");
    Tensor far = compute({16}, [&](Expr i) { return X(i + (int64_t(1) << 30)); }, "far");
    Tensor strided = compute({16}, [&](Expr i) { return X(i * (int64_t(1) << 28)); }, "strided");
    Tensor before = compute({16}, [&](Expr i) { return X(i - 1); }, "before");
    CHECK_THROWS_WITH_AS(build1(X, far), Contains("at indices [1073741824, 1073741839]"), Error);
    CHECK_THROWS_WITH_AS(build1(X, strided), Contains("at indices [0, 4026531840]"), Error);
    CHECK_THROWS_WITH_AS(build1(X, before), Contains("at indices [-1, 14]"), Error);
    Tensor M = placeholder({4, 8}, f32, "M");
    Tensor T = compute({8, 4}, [&](Expr i, Expr j) { return M(i, j); }, "T");  // transposed wrongly
    CHECK_THROWS_WITH_AS(build1(M, T), Contains("reads tensor 'M' along axis 0 at indices [0, 7]"), Error);
}

TEST_CASE("a read of an intermediate past its domain is refused too") {
    Tensor X = placeholder({16}, f32, "X");
    Tensor half = compute({8}, [&](Expr i) { return X(i) * 2.0f; }, "half");
    Tensor Y = compute({16}, [&](Expr i) { return half(i); }, "Y");
    CHECK_THROWS_WITH_AS(build1(X, Y), Contains("reads tensor 'half' along axis 0 at indices [0, 15]"), Error);
}

TEST_CASE("guarded reads count only where their guard holds, and compute the right numbers") {
    Tensor X = placeholder({16}, f32, "X");
    // if_then_else on the index itself, and on a loop variable.
    Tensor shifted = compute({16}, [&](Expr i) { return if_then_else(i - 1 >= 0, X(i - 1), 0.0f); }, "shifted");
    Tensor window = compute({16}, [&](Expr i) { return if_then_else(i < 15, X(i + 1), X(i)); }, "window");
    // A reduction whose where-condition leaves out the taps outside the input (a padded 1-D convolution).
    IterVar k = reduce_axis(0, 3, "k");
    Tensor conv = compute({16}, [&](Expr i) { return sum(X(i + k - 1), {k}, i + k >= 1 && i + k - 1 < 16); }, "conv");
    auto x = Buffer<float>::random({16}, -1.f, 1.f, 5);
    const float* p = static_cast<const float*>(x.data());
    for (const Tensor* t : {&shifted, &window, &conv}) {
        CAPTURE(t->name());
        Kernel kern = build1(X, *t);
        Buffer<float> y({16});
        kern(x, y);
        for (int i = 0; i < 16; ++i) {
            float want = t == &shifted ? (i >= 1 ? p[i - 1] : 0.f)
                         : t == &window ? (i < 15 ? p[i + 1] : p[i])
                                        : (i >= 1 ? p[i - 1] : 0.f) + p[i] + (i < 15 ? p[i + 1] : 0.f);
            CHECK(y(i) == doctest::Approx(want));
        }
    }
    // A select evaluates both sides: its guard does not make an out-of-range read safe.
    Tensor sel = compute({16}, [&](Expr i) { return select(i >= 1, X(i - 1), 0.0f); }, "sel");
    CHECK_THROWS_WITH_AS(build1(X, sel), Contains("at indices [-1, 14]"), Error);
}

TEST_CASE("with symbolic shapes the read's bound is checked when the kernel is called") {
    Var n("n"), m("m");
    Tensor X = placeholder({m}, f32, "X");
    Tensor Y = compute({n}, [&](Expr i) { return X(i + 1); }, "Y");
    Kernel k = build(create_schedule(Y), {X, Y});
    Buffer<float> x({9}), y({8}), y_long({9});
    CHECK_NOTHROW(k(x, y));  // reads X[1..8] of 9
    CHECK_THROWS_WITH_AS(k(x, y_long), Contains("reads tensor 'X' along axis 0"), Error);
    // Provably inside whatever the shapes: no check left for the call.
    Tensor Z = compute({m}, [&](Expr i) { return X(i); }, "Z");
    CHECK(ir::to_string(lower(create_schedule(Z), {X, Z}).body).find("reads tensor") == std::string::npos);
}
