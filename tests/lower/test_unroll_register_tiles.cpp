// unroll_register_tile_loops: the serial loops that index a small "local" buffer (a register
// tile) are unrolled, so LLVM can keep the tile in registers; longer nests, larger buffers and
// other scopes keep their loops, and the kernels compute what they did.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "lower/lowered_text.hpp"
#include "weft/weft.hpp"

using namespace weft;
using lowered_text::count;

namespace {

// C = A x B with a rows x 16 accumulator tile computed per row block of C, written without a
// single unroll call: the tile's row loop, the copy-out's row loop and the epilogue's are the
// pass's to unroll. `scope` is the tile's.
struct TiledMatmul {
    int64_t M, N, K, rows;
    std::string scope = "local";
    bool epilogue = false;  // Y = max(C + bias, 0), computed from the tile directly
    Tensor A, B, bias, C, Y, tile;
    Schedule s;

    TiledMatmul(int64_t M_, int64_t N_, int64_t K_, int64_t rows_, std::string scope_ = "local", bool epilogue_ = false)
        : M(M_), N(N_), K(K_), rows(rows_), scope(std::move(scope_)), epilogue(epilogue_) {
        A = placeholder({M, K}, f32, "A");
        B = placeholder({K, N}, f32, "B");
        bias = placeholder({N}, f32, "bias");
        IterVar k = reduce_axis(0, K, "k");
        C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
        Y = epilogue ? compute({M, N}, [&](Expr i, Expr j) { return max(C(i, j) + bias(j), 0.0f); }, "Y") : C;
        s = create_schedule(Y);
        if (epilogue) {
            tile = C;
            s[C].set_scope(scope);
        } else {
            tile = s.cache_write(C, scope);
        }
        auto [io, ii] = s[Y].split(Y.axis(0), rows);
        auto [jo, ji] = s[Y].split(Y.axis(1), 16);
        s[Y].reorder({io, jo, ii, ji});
        s[Y].vectorize(ji);
        s[tile].compute_at(s[Y], jo);
        s[tile].reorder({k, tile.axis(0), tile.axis(1)});
        s[tile].vectorize(tile.axis(1));
    }
    std::vector<Argument> args() const {
        if (epilogue) return {A, B, bias, Y};
        return {A, B, Y};
    }
    std::string lowered(const LowerOptions& options = {}) const { return ir::to_string(lower(s, args(), options).body); }

    // Runs the kernel on random data and returns the largest error against a double loop.
    double max_error(const LowerOptions& options = {}) const {
        Kernel kernel = build(s, args(), Target::host(), options);
        auto a = Buffer<float>::random({M, K}, -1, 1, 11), b = Buffer<float>::random({K, N}, -1, 1, 12);
        auto bi = Buffer<float>::random({N}, -1, 1, 13);
        Buffer<float> y({M, N});
        if (epilogue) kernel(a, b, bi, y);
        else kernel(a, b, y);
        double worst = 0;
        for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
                double ref = 0;
                for (int64_t x = 0; x < K; ++x) ref += double(a(i, x)) * b(x, j);
                if (epilogue) ref = std::max(ref + bi(j), 0.0);
                worst = std::max(worst, std::abs(y(i, j) - ref));
            }
        return worst;
    }
};

}  // namespace

TEST_CASE("register tiles: the loops over a local accumulator tile are unrolled without an unroll call") {
    TiledMatmul mm(24, 32, 20, 6);
    std::string text = mm.lowered();
    // Six rows of one vector each: the tile's init, its update in the k loop and the copy-out
    // are six copies each, every access at a constant position.
    CHECK(count(text, "for (i.c") == 0);
    CHECK(count(text, "for (i.inner") == 0);
    CHECK(count(text, "// attr unrolled = 6") == 3);
    CHECK(count(text, "for (k") == 1);
    CHECK(count(text, "C.local[ramp(80, 1, 16)]") == 4);  // row 5: init, read, write, copy-out
    CHECK(mm.max_error() < 1e-4);
}

TEST_CASE("register tiles: an epilogue computed from the tile walks it unrolled") {
    TiledMatmul mm(18, 48, 37, 6, "local", true);
    std::string text = mm.lowered();
    CHECK(count(text, "for (i.inner") == 0);
    CHECK(count(text, "for (i.c") == 0);
    CHECK(text.find("max(C[ramp(80, 1, 16)]") != std::string::npos);  // the epilogue reads row 5 in place
    CHECK(mm.max_error() < 1e-4);
}

TEST_CASE("register tiles: a tile whose rows do not divide the image keeps a correct guarded tail") {
    TiledMatmul mm(23, 32, 9, 6);  // 3 full row blocks and a block of 5
    CHECK(count(mm.lowered(), "for (i.c") == 0);
    CHECK(mm.max_error() < 1e-4);
}

TEST_CASE("register tiles: global buffers, larger local buffers and nests past max_unroll keep their loops") {
    // "global" is not a register tile, whatever its size.
    CHECK(count(TiledMatmul(24, 32, 8, 6, "global").lowered(), "for (i.c") == 2);
    // 40 rows of 16 floats: 2560 bytes, more than 32 vector registers.
    TiledMatmul big(40, 16, 8, 40);
    CHECK(count(big.lowered(), "for (i.c") == 2);
    CHECK(big.max_error() < 1e-4);
    // max_unroll bounds the copies: a tile of 6 rows stays a loop under max_unroll = 4.
    LowerOptions few;
    few.max_unroll = 4;
    CHECK(count(TiledMatmul(24, 32, 8, 6).lowered(few), "for (i.c") == 2);
}

TEST_CASE("LowerOptions::fast_compile keeps every loop, the register tiles' too, and computes the same") {
    TiledMatmul mm(23, 32, 9, 6, "local", true);
    LowerOptions fast;
    fast.fast_compile = true;
    const std::string text = mm.lowered(fast);
    CHECK(count(text, "// attr unrolled") == 0);
    CHECK(count(mm.lowered(), "// attr unrolled") > 0);
    CHECK(count(text, "for (") > count(mm.lowered(), "for ("));  // the tile's rows: loops, not copies
    CHECK(lower(mm.s, mm.args(), fast).fast_compile);
    CHECK(!lower(mm.s, mm.args()).fast_compile);
    CHECK(mm.max_error(fast) < 1e-4);
    CHECK(mm.max_error() < 1e-4);
}

namespace {

// C (rows x 32) = A x B with a rows x 16 scalar tile (nothing vectorized), the reduction
// outside the tile's loops unless `reduction_inside`.
std::string scalar_tile_program(int64_t rows, bool reduction_inside) {
    Tensor A = placeholder({16, 4}, f32, "A"), B = placeholder({4, 32}, f32, "B");
    IterVar k = reduce_axis(0, 4, "k");
    Tensor C = compute({16, 32}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule(C);
    Tensor CL = s.cache_write(C, "local");
    auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), rows, 16);
    s[CL].compute_at(s[C], jo);
    if (!reduction_inside) s[CL].reorder({k, CL.axis(0), CL.axis(1)});
    return ir::to_string(lower(s, {A, B, C}).body);
}

}  // namespace

TEST_CASE("register tiles: a nest of tile loops is unrolled whole within max_unroll") {
    // 4 x 16 = 64 copies: every loop of the tile (init, update, copy-out) is unrolled.
    std::string text = scalar_tile_program(4, false);
    CHECK(count(text, "for (j.c") == 0);
    CHECK(count(text, "for (i.c") == 0);
    CHECK(count(text, "for (j.inner") == 0);
    CHECK(count(text, "for (i.inner") == 0);
    CHECK(count(text, "C.local[63]") == 4);
}

TEST_CASE("register tiles: a tile that cannot be unrolled whole keeps all its loops") {
    // 8 x 16 = 128 copies would pass max_unroll = 64: unrolling the inner loops alone would
    // leave the tile in memory, so none of its loops is unrolled.
    std::string text = scalar_tile_program(8, false);
    CHECK(count(text, "for (j.c") == 2);
    CHECK(count(text, "for (i.c") == 2);
    CHECK(count(text, "for (j.inner") == 1);
    CHECK(count(text, "// attr unrolled") == 0);
    // The reduction inside the tile's loops: they are not straight-line code, they stay.
    std::string inside = scalar_tile_program(4, true);
    CHECK(count(inside, "for (j.c") == 1);
    CHECK(count(inside, "for (k") == 1);
    CHECK(count(inside, "// attr unrolled") == 0);
}
