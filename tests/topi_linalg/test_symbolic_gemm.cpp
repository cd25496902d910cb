// GEMMs over symbolic extents: the steady loop of a split over a size n keeps whole register
// tiles (constant size, unrolled) because the lowering knows sizes are never negative
// (a tensor's dimension, or a scalar declared in LowerOptions::sizes); over a symbolic
// column count the reduction covers whole panels and a crop stores N; the results match a
// double reference at sizes on both sides of the tiles; a dimension that is an expression of
// scalars listed after its tensor is checked once they are bound.
#include <doctest/doctest.h>

#include "linalg_reference.hpp"
#include "lower/lowered_text.hpp"
#include "weft/topi/linalg.hpp"

using namespace weft;

namespace {

const Target T = Target::x86_avx512(1);

// The allocations of `buffer` in `program` that have a constant size.
size_t constant_allocations(const std::string& program, const std::string& buffer) {
    return lowered_text::count(program, "allocate " + buffer + "[") -
           lowered_text::symbolic_allocations(program, buffer).size();
}

}  // namespace

TEST_CASE("a matmul over a symbolic row count keeps a constant register tile in its steady loop") {
    Var M("M");
    Tensor A = placeholder({Expr(M), make_int(256)}, f32, "A"), B = placeholder({256, 512}, f32, "B");
    Tensor C = topi::matmul(A, B, "matmul", T);
    Schedule s = create_schedule(C);
    topi::schedule_matmul(s, C, C, T);
    LowerOptions options;
    options.target = T;
    const std::string program = ir::to_string(lower(s, {A, B, C}, options).body);
    CAPTURE(program);
    // The steady loop ends at M / rows (not min(max(M / rows, 0), ...)), its tile constant;
    // the last, partial row block's tile (M * 64 - i * 384 floats) takes its constant bound,
    // on the stack rather than a heap allocation per call.
    CHECK(constant_allocations(program, "matmul.local") == 2);
    CHECK(lowered_text::symbolic_allocations(program, "matmul.local").empty());
    CHECK(program.find("attr unrolled") != std::string::npos);

    Kernel k = build(s, {A, B, C}, T);
    auto b = linalg_test::random_buffer({256, 512}, 3);
    for (int64_t rows : {1, 5, 6, 7, 12, 30, 61}) {
        CAPTURE(rows);
        auto a = linalg_test::random_buffer({rows, 256}, unsigned(rows));
        Buffer<float> c({rows, 512});
        k(a, b, c);
        linalg_test::check_close(c, linalg_test::ref_gemm(rows, 512, 256, [&](int64_t i, int64_t x) { return a(i, x); },
                                                          [&](int64_t x, int64_t j) { return b(x, j); }),
                                 256);
    }
}

TEST_CASE("attention's batch_matmul over symbolic sizes passed as scalars after the tensors") {
    // Q K^T with the batch b * 4 and the sequence S symbolic, b and S scalar arguments listed
    // after the tensors whose dimensions they give (the entry bound them after checking
    // `b * 4`: an internal error), declared sizes.
    Var b("b"), S("S");
    Tensor Q = placeholder({b * 4, Expr(S), make_int(64)}, f32, "Q");
    Tensor K = placeholder({b * 4, make_int(64), Expr(S)}, f32, "K");
    Tensor C = topi::batch_matmul(Q, K, "scores", T);
    Schedule s = create_schedule(C);
    topi::schedule_batch_matmul(s, C, C, T);
    LowerOptions options;
    options.target = T;
    options.sizes = {b, S};
    const std::string program = ir::to_string(lower(s, {Q, K, C, b, S}, options).body);
    CAPTURE(program);
    // The reduction runs over the panels' whole width (crop_columns): in the full panels
    // and in the last, partial one, the steady rows' tile is constant (6 x 64 here), and the
    // last row block's takes its constant bound (hoist_allocations: 5 rows of 64). (Over S
    // columns the partial panel's tile had S - 64 * p columns, a scalar loop, far slower
    // than a build for the size below 64.)
    CHECK(constant_allocations(program, "scores.panels") == 4);
    CHECK(lowered_text::symbolic_allocations(program, "scores.panels").empty());
    CHECK(lowered_text::count(program, "B_packed[float32 * 4096]") == 2);  // a whole panel in both

    Kernel k = build(s, {Q, K, C, b, S}, T, options);
    for (auto [batch, seq] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 7}, {2, 30}, {1, 64}, {2, 70}}) {
        CAPTURE(batch);
        CAPTURE(seq);
        const int64_t heads = batch * 4;
        auto q = linalg_test::random_buffer({heads, seq, 64}, 11), kt = linalg_test::random_buffer({heads, 64, seq}, 12);
        Buffer<float> c({heads, seq, seq});
        k(q, kt, c, batch, seq);
        std::vector<double> want;
        for (int64_t h = 0; h < heads; ++h)
            for (double v : linalg_test::ref_gemm(seq, seq, 64, [&](int64_t i, int64_t x) { return q(h, i, x); },
                                                  [&](int64_t x, int64_t j) { return kt(h, x, j); }))
                want.push_back(v);
        linalg_test::check_close(c, want, 64);
    }
    // The dimensions must agree with the scalars, and a size must not be negative.
    auto q = linalg_test::random_buffer({4, 8, 64}, 1), kt = linalg_test::random_buffer({4, 64, 8}, 2);
    Buffer<float> c({4, 8, 8});
    CHECK_THROWS_WITH_AS(k(q, kt, c, int64_t(2), int64_t(8)), doctest::Contains("must be b * 4"), Error);
    CHECK_THROWS_WITH_AS(k(q, kt, c, int64_t(-1), int64_t(8)), doctest::Contains("must not be negative"), Error);
}
