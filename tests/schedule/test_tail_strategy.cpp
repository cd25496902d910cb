// Stage::split with TailStrategy::ShiftInwards: the last tile of a split that does not divide
// its extent starts at extent - factor and recomputes what it overlaps. Every element must be
// right (and nothing outside the output written) for any extent and factor, vectorized,
// parallel, for a reduction with its own per-tile init, and through a compute_at'd cache.
#include <doctest/doctest.h>

#include "random_floats.hpp"

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <weft/weft.hpp>

using namespace weft;
using weft::test::random_floats;

namespace {

std::string lowered(const Schedule& s, const std::vector<Argument>& args) { return ir::to_string(lower(s, args).body); }

}  // namespace

TEST_CASE("ShiftInwards computes every element once the tiles overlap, at any extent and factor") {
    for (int64_t n : {1, 3, 4, 5, 10, 17, 64, 67, 1000}) {
        for (int64_t factor : {1, 4, 6, 16}) {
            for (bool parallel : {false, true}) {
                Tensor X = placeholder({n}, f32, "x");
                Tensor Y = compute({n}, [&](Expr i) { return X(i) * 3.0f + 1.0f; }, "y");
                Schedule s = create_schedule(Y);
                auto [o, i] = s[Y].split(Y.axis(0), factor, TailStrategy::ShiftInwards);
                if (factor > 1) s[Y].vectorize(i);
                if (parallel) s[Y].parallel(o);
                std::string program = lowered(s, {X, Y});
                INFO("n = " << n << ", factor = " << factor << "\n" << program);
                // Shifted (no guard) where the extent holds a whole tile and does not divide.
                if (n >= factor && n % factor != 0) {
                    CHECK(program.find("min(") != std::string::npos);
                    CHECK(program.find("if (") == std::string::npos);
                }
                Kernel k = build(s, {X, Y});
                std::vector<float> x = random_floats(size_t(n), unsigned(n * 100 + factor));
                std::vector<float> storage(size_t(n) + 8, -5.f);
                Buffer<float> in(x.data(), {n}), out(storage.data(), {n});
                k(in, out);
                int64_t wrong = 0;
                // (weft may fuse the multiply-add: a tolerance of an ulp or two)
                for (int64_t e = 0; e < n; ++e) wrong += std::abs(storage[size_t(e)] - (x[size_t(e)] * 3.0f + 1.0f)) > 1e-6f;
                for (int64_t e = n; e < n + 8; ++e) wrong += storage[size_t(e)] != -5.f;  // nothing past the end
                CHECK(wrong == 0);
            }
        }
    }
}

TEST_CASE("ShiftInwards on the rows of a matmul whose accumulator tile is computed at the row block") {
    const int64_t M = 29, N = 20, K = 13;
    Tensor A = placeholder({M, K}, f32, "A"), B = placeholder({K, N}, f32, "B");
    IterVar k = reduce_axis(0, K, "k");
    Tensor C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule(C);
    Tensor CL = s.cache_write(C, "local");
    auto [io, ii] = s[C].split(C.axis(0), 6, TailStrategy::ShiftInwards);
    s[CL].compute_at(s[C], io);
    s[CL].reorder({CL.reduce_axis(0), CL.axis(0), CL.axis(1)});
    s[CL].unroll(CL.axis(0));
    std::string program = lowered(s, {A, B, C});
    INFO(program);
    CHECK(program.find("allocate C.local[float32 * 120]") != std::string::npos);  // a constant 6 x 20 tile
    CHECK(program.find("if (") == std::string::npos);
    Kernel kern = build(s, {A, B, C});
    std::vector<float> a = random_floats(size_t(M * K), 1), b = random_floats(size_t(K * N), 2);
    Buffer<float> ab(a.data(), {M, K}), bb(b.data(), {K, N}), cb({M, N});
    kern(ab, bb, cb);
    double worst = 0;
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double want = 0;
            for (int64_t x = 0; x < K; ++x) want += double(a[size_t(i * K + x)]) * b[size_t(x * N + j)];
            worst = std::max(worst, std::abs(want - cb.data()[i * N + j]));
        }
    CHECK(worst < 1e-5);
}

TEST_CASE("ShiftInwards on a data axis of a reduction whose outer loop encloses the reduce loop") {
    const int64_t M = 11, K = 7;
    Tensor A = placeholder({M, K}, f32, "A");
    IterVar k = reduce_axis(0, K, "k");
    Tensor S = compute({M}, [&](Expr i) { return sum(A(i, k), {k}); }, "rowsum");
    Schedule s = create_schedule(S);
    s[S].split(S.axis(0), 4, TailStrategy::ShiftInwards);  // loops: i.outer, i.inner, k
    Kernel kern = build(s, {A, S});
    std::vector<float> a = random_floats(size_t(M * K), 3);
    Buffer<float> ab(a.data(), {M, K}), sb({M});
    kern(ab, sb);
    double worst = 0;
    for (int64_t i = 0; i < M; ++i) {
        double want = 0;
        for (int64_t x = 0; x < K; ++x) want += a[size_t(i * K + x)];
        worst = std::max(worst, std::abs(want - sb.data()[i]));
    }
    CHECK(worst < 1e-5);
}

TEST_CASE("the tail strategy is part of the trace, the JSON and the printed schedule") {
    Tensor X = placeholder({10}, f32, "x");
    Tensor Y = compute({10}, [&](Expr i) { return X(i) + 1.0f; }, "y");
    Schedule s = create_schedule(Y);
    s[Y].split(Y.axis(0), 4, TailStrategy::ShiftInwards);
    Schedule back = Schedule::from_json(s.to_json(), {Y});
    CHECK(back == s);
    CHECK(lowered(back, {X, Y}) == lowered(s, {X, Y}));
    std::ostringstream printed;
    printed << s;
    CHECK(printed.str().find("factor 4 shift_inwards") != std::string::npos);
    // A guarded split keeps the one-integer form older JSON files have.
    Schedule g = create_schedule(Y);
    g[Y].split(Y.axis(0), 4);
    CHECK(g.to_json().find("\"ints\":[4]") != std::string::npos);
    CHECK(Schedule::from_json(g.to_json(), {Y}) == g);
}
