// topi::matmul with its default schedule against a double reference: many shapes (1,
// primes, below one tile, skinny), 1 and 2 threads, and a fused bias + ReLU epilogue.
#include <doctest/doctest.h>

#include "linalg_reference.hpp"
#include "lower/lowered_text.hpp"
#include "weft/topi/linalg.hpp"

using namespace weft;
using linalg_test::Shape;

namespace {

void check_matmul(const Shape& sh) {
    CAPTURE(sh.M);
    CAPTURE(sh.N);
    CAPTURE(sh.K);
    Tensor A = placeholder({sh.M, sh.K}, f32, "A"), B = placeholder({sh.K, sh.N}, f32, "B");
    Tensor C = topi::matmul(A, B);
    Schedule s = create_schedule(C);
    topi::schedule_matmul(s, C);
    Kernel k = build(s, {A, B, C});
    auto a = linalg_test::random_buffer({sh.M, sh.K}, 1), b = linalg_test::random_buffer({sh.K, sh.N}, 2);
    Buffer<float> c({sh.M, sh.N});
    k(a, b, c);
    linalg_test::check_close(
        c, linalg_test::ref_gemm(sh.M, sh.N, sh.K, [&](int64_t i, int64_t x) { return a(i, x); },
                                 [&](int64_t x, int64_t j) { return b(x, j); }),
        sh.K);
}

// The loop program of matmul with its default schedule.
std::string lowered_matmul(const Shape& sh) {
    Tensor A = placeholder({sh.M, sh.K}, f32, "A"), B = placeholder({sh.K, sh.N}, f32, "B");
    Tensor C = topi::matmul(A, B);
    Schedule s = create_schedule(C);
    topi::schedule_matmul(s, C);
    return ir::to_string(lower(s, {A, B, C}).body);
}

}  // namespace

TEST_CASE("matmul matches a double reference over edge-case and random shapes on one thread") {
    linalg_test::with_threads(1, [] {
        for (const Shape& sh : linalg_test::gemm_shapes(12, 150, 7)) check_matmul(sh);
    });
}

TEST_CASE("matmul matches a double reference on two threads (panel- and row-parallel nests)") {
    // Many panels (parallel over panels), one panel and many rows (parallel over row
    // blocks), a few rows (B read in place), and primes.
    linalg_test::with_threads(2, [] {
        for (const Shape& sh : std::vector<Shape>{{130, 300, 17}, {301, 40, 23}, {300, 64, 5}, {3, 700, 29},
                                                  {67, 131, 71}, {1, 5, 3}})
            check_matmul(sh);
    });
}

TEST_CASE("matmul's default schedule packs B into panels and keeps a register tile") {
    std::string program = lowered_matmul({96, 128, 80});
    CHECK(program.find("matmul.B_packed") != std::string::npos);
    CHECK(program.find("in local") != std::string::npos);   // the accumulator tile
    CHECK(program.find("ramp(") != std::string::npos);      // vectorized along columns
    CHECK(program.find("if (") == std::string::npos);       // no guard in a dividing shape
    // The reduction's 4 inner steps are unrolled, not left to LLVM (which kept them a loop,
    // whose counter cost 8-10% of the kernel): no k.inner loop remains.
    CHECK(program.find("for (k.outer") != std::string::npos);
    CHECK(program.find("for (k.inner") == std::string::npos);
}

TEST_CASE("with one panel and two threads the row blocks run in parallel and keep a fixed-size register tile") {
    linalg_test::with_threads(2, [] {
        std::string program = lowered_matmul({301, 64, 40});
        CHECK(program.find("parallel for (i.outer") != std::string::npos);
        // Every accumulator allocation has a constant size (a symbolic one would mean a
        // heap buffer per tile and no unrolled rows).
        CHECK(lowered_text::count(program, "allocate matmul.local[") >= 1);
        CHECK(lowered_text::symbolic_allocations(program, "matmul.local").empty());
    });
}

TEST_CASE("a single-row matmul reads B in place") {
    std::string program = lowered_matmul({1, 1000, 256});
    CHECK(program.find("_packed") == std::string::npos);
    CHECK(program.find("ramp(") != std::string::npos);
}

TEST_CASE("a few rows stream B row by row into column chunks that run in parallel") {
    linalg_test::with_threads(2, [] {
        std::string program = lowered_matmul({3, 1000, 256});
        CAPTURE(program);
        // One parallel loop over two column chunks (not a serial steady chunk and tail).
        CHECK(program.find("parallel for (j.outer, 0, 2)") != std::string::npos);
        // In each chunk the reduction is outermost: every row of B is read once, contiguously.
        size_t k_loop = program.find("for (k.outer"), column_loop = program.find("for (j.c.outer, 0,", k_loop);
        CHECK(k_loop != std::string::npos);
        CHECK(column_loop != std::string::npos);
        for (size_t at = program.find("allocate matmul.local["); at != std::string::npos;
             at = program.find("allocate matmul.local[", at + 1)) {
            std::string line = program.substr(at, program.find('\n', at) - at);
            CAPTURE(line);
            CHECK(line.find("min(") == std::string::npos);  // a constant-size chunk in each branch
        }
        for (const Shape& sh : std::vector<Shape>{{1, 1000, 64}, {6, 333, 40}, {2, 17, 9}, {4, 1000, 1}})
            check_matmul(sh);
    });
}

TEST_CASE("matmul with a bias and ReLU epilogue fused into the tile loop") {
    for (const Shape& sh : std::vector<Shape>{{50, 70, 33}, {7, 3, 11}, {1, 129, 20}, {64, 64, 64}}) {
        CAPTURE(sh.M);
        CAPTURE(sh.N);
        CAPTURE(sh.K);
        Tensor A = placeholder({sh.M, sh.K}, f32, "A"), B = placeholder({sh.K, sh.N}, f32, "B");
        Tensor bias = placeholder({sh.N}, f32, "bias");
        Tensor C = topi::matmul(A, B);
        Tensor Y = compute({sh.M, sh.N}, [&](Expr i, Expr j) { return max(C(i, j) + bias(j), 0.0f); }, "Y");
        Schedule s = create_schedule(Y);
        topi::schedule_matmul(s, C, Y);
        std::string program = ir::to_string(lower(s, {A, B, bias, Y}).body);
        // C lives only in register tiles: each of its allocations (one per tail piece) is local.
        int allocations = 0;
        for (size_t at = program.find("allocate matmul["); at != std::string::npos;
             at = program.find("allocate matmul[", at + 1), ++allocations)
            CHECK(program.substr(at, program.find('\n', at) - at).ends_with("in local"));
        CHECK(allocations >= 1);
        Kernel k = build(s, {A, B, bias, Y});
        auto a = linalg_test::random_buffer({sh.M, sh.K}, 3), b = linalg_test::random_buffer({sh.K, sh.N}, 4);
        auto bi = linalg_test::random_buffer({sh.N}, 5);
        Buffer<float> y({sh.M, sh.N});
        k(a, b, bi, y);
        auto want = linalg_test::ref_gemm(sh.M, sh.N, sh.K, [&](int64_t i, int64_t x) { return a(i, x); },
                                          [&](int64_t x, int64_t j) { return b(x, j); });
        for (int64_t i = 0; i < sh.M; ++i)
            for (int64_t j = 0; j < sh.N; ++j)
                want[size_t(i * sh.N + j)] = std::max(0.0, want[size_t(i * sh.N + j)] + bi(j));
        linalg_test::check_close(y, want, sh.K);
    }
}

TEST_CASE("rows no multiple of the register tile take a taller, narrower tile that divides them when the overlap would waste over 1%") {
    // 128 rows: tiles of 6 x 4 vectors would compute 4 rows twice (3%); 8 x 3 vectors
    // divide 128 (and 96 columns) and need no shifted block.
    const int64_t lanes = Target::host().natural_lanes(32);
    std::string program = lowered_matmul({128, 96, 32});
    if (lanes == 16) {
        CHECK(program.find("allocate matmul.local[float32 * 384]") != std::string::npos);  // 8 x 48
        CHECK(program.find("for (i.outer, 0, 16)") != std::string::npos);
        CHECK(program.find("min(i.outer") == std::string::npos);
        // 1000 rows waste 2 of 1000 with the 6-row tile: it stays.
        CHECK(lowered_matmul({1000, 128, 64}).find("min(i.outer * 6, 994)") != std::string::npos);
    } else {
        MESSAGE("host vectors of " << lanes << " floats: the tile sizes checked are AVX-512's");
    }
    linalg_test::with_threads(1, [] { check_matmul({128, 96, 32}); });
    linalg_test::with_threads(2, [] { check_matmul({128, 3072, 24}); });
}

TEST_CASE("a last partial row block reruns the full register tile shifted inwards instead of a second kernel") {
    // 1000 rows = 166 blocks of 6 + 4: with TailStrategy::ShiftInwards the last block starts
    // at row 994 and the program holds one micro-kernel (one accumulator allocation).
    std::string program = lowered_matmul({1000, 128, 64});
    size_t kernels = 0;
    for (size_t at = program.find("allocate matmul.local["); at != std::string::npos;
         at = program.find("allocate matmul.local[", at + 1))
        ++kernels;
    CHECK(kernels == 1);
    CHECK(program.find("min(i.outer * 6, 994)") != std::string::npos);
    CHECK(program.find("if (") == std::string::npos);
    linalg_test::with_threads(1, [] { check_matmul({1000, 128, 64}); });
    linalg_test::with_threads(2, [] { check_matmul({1000, 64, 64}); });  // one panel: row blocks in parallel
}
