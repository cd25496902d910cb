// Stage::prefetch: hints at the top of a loop for the region the stage reads `offset`
// iterations later, one per cache line; x86 prefetcht0 in the assembly; never a change in the
// results, and never a wider region for bound inference.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "random_floats.hpp"
#include <weft/weft.hpp>

using namespace weft;
using weft::test::random_floats;

namespace {

std::string lowered(const Schedule& s, const std::vector<Argument>& args) { return ir::to_string(lower(s, args).body); }

struct RowScale {
    Tensor A = placeholder({64, 100}, f32, "A");
    Tensor B = compute({64, 100}, [&](Expr i, Expr j) { return A(i, j) * 2.0f + 1.0f; }, "B");
    Schedule s = create_schedule(B);
    RowScale(bool parallel, int64_t offset) {
        auto [jo, ji] = s[B].split(B.axis(1), 16);
        s[B].vectorize(ji);
        if (parallel) s[B].parallel(B.axis(0));
        if (offset) s[B].prefetch(A, B.axis(0), offset);
    }
};

}  // namespace

TEST_CASE("prefetch hints every cache line of the row read offset iterations later") {
    RowScale r(false, 2);
    std::string program = lowered(r.s, {r.A, r.B});
    INFO(program);
    // 100 floats from any alignment touch at most 8 lines of 16 floats.
    CHECK(program.find("for (A.prefetch1, 0, 8)") != std::string::npos);
    CHECK(program.find("weft.prefetch(A[i * 100 + A.prefetch1 * 16 + 200])") != std::string::npos);
    Kernel k = build(r.s, {r.A, r.B});
    if (Target::host().is_x86()) CHECK(k.assembly().find("prefetcht0") != std::string::npos);
}

TEST_CASE("prefetch changes no result, serial or parallel, backward or forward") {
    std::vector<float> a = random_floats(6400, 3);
    Buffer<float> in(a.data(), {64, 100});
    RowScale plain(false, 0);
    Buffer<float> want({64, 100});
    build(plain.s, {plain.A, plain.B})(in, want);
    for (bool parallel : {false, true})
        for (int64_t offset : {1, 3, -1, 100}) {  // hints past either end of A are harmless
            RowScale r(parallel, offset);
            Buffer<float> got({64, 100});
            build(r.s, {r.A, r.B})(in, got);
            int64_t wrong = 0;
            for (int64_t e = 0; e < 6400; ++e) wrong += got.data()[e] != want.data()[e];
            INFO("parallel = " << parallel << ", offset = " << offset);
            CHECK(wrong == 0);
        }
}

TEST_CASE("prefetch of a root stage leaves the region bound inference computes for it") {
    Tensor X = placeholder({100}, f32, "x");
    Tensor T = compute({100}, [&](Expr i) { return X(i) + 1.0f; }, "t");
    Tensor Y = compute({50}, [&](Expr i) { return T(i) * 2.0f; }, "y");
    Schedule s = create_schedule(Y);
    std::string before = lowered(s, {X, Y});
    s[Y].prefetch(T, Y.axis(0), 8);
    std::string after = lowered(s, {X, Y});
    INFO(after);
    CHECK(before.find("allocate t[float32 * 50]") != std::string::npos);
    CHECK(after.find("allocate t[float32 * 50]") != std::string::npos);
    CHECK(after.find("weft.prefetch(t[") != std::string::npos);
}

TEST_CASE("prefetch is part of the trace, the JSON and the printed schedule") {
    RowScale r(true, 2);
    Schedule back = Schedule::from_json(r.s.to_json(), {r.B});
    CHECK(back == r.s);
    CHECK(lowered(back, {r.A, r.B}) == lowered(r.s, {r.A, r.B}));
    std::ostringstream printed;
    printed << r.s;
    CHECK(printed.str().find("prefetch(A, i, 2)") != std::string::npos);
}

TEST_CASE("prefetch of the second output of a multi-output stage hints that output and survives JSON") {
    Tensor X = placeholder({16, 40}, f32, "x");
    std::vector<Tensor> pair = compute_multi(
        {16, 40}, [&](Expr i, Expr j) { return std::vector<Expr>{X(i, j) + 1.0f, X(i, j) * 3.0f}; }, "pair");
    Tensor Y = compute({16, 40}, [&](Expr i, Expr j) { return pair[1](i, j) - 2.0f; }, "y");
    Schedule s = create_schedule(Y);
    s[Y].prefetch(pair[1], Y.axis(0), 1);
    std::string program = lowered(s, {X, Y});
    INFO(program);
    CHECK(program.find("weft.prefetch(" + pair[1].name() + "[") != std::string::npos);
    Schedule back = Schedule::from_json(s.to_json(), {Y});
    CHECK(back == s);
    CHECK(lowered(back, {X, Y}) == program);
    std::vector<float> x = random_floats(640, 4);
    Buffer<float> in(x.data(), {16, 40}), out({16, 40});
    build(s, {X, Y})(in, out);
    int64_t wrong = 0;
    for (int64_t e = 0; e < 640; ++e) wrong += std::abs(out.data()[e] - (x[size_t(e)] * 3.0f - 2.0f)) > 1e-6f;
    CHECK(wrong == 0);
}
