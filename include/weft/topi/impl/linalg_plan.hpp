// The shape- and target-driven choices shared by linalg's computes and schedules: the
// register tile (mr rows x nr columns of accumulators) and whether the right-hand operand is
// packed. These are the defaults of the templates' knobs (gemm_knobs below); the computes
// and the schedules must agree (the panel width of a packed operand is the tile's nr), so
// both ask this one place.
#pragma once
#include <algorithm>
#include <cstdint>

#include "weft/ir/op.hpp"
#include "weft/ir/target.hpp"
#include "weft/schedule/config.hpp"

namespace weft::topi::detail {

// The value of a constant extent, or `fallback` for a symbolic one.
inline int64_t const_or(const Expr& e, int64_t fallback) {
    int64_t v = 0;
    return ir::as_const_int(e, &v) ? v : fallback;
}

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// What the target's vector unit holds: float32 lanes per register and how many vector
// registers the accumulators may take (the rest hold a row of B and a broadcast of A).
struct VectorUnit {
    int64_t lanes;
    int64_t accumulators;
};

inline VectorUnit vector_unit(const Target& target) {
    const int64_t lanes = std::max(4, target.natural_lanes(32));
    // Three quarters of the registers (AVX-512: 24 of 32 zmm; AVX2: 12 of 16 ymm); the rest
    // hold the B row and the broadcast of A.
    return VectorUnit{lanes, int64_t(target.vector_registers()) * 3 / 4};
}

struct GemmTile {
    int64_t mr;  // rows of the register tile (unrolled)
    int64_t nr;  // columns (vectorized); also the panel width of a packed operand
};

// Symbolic extents are planned as if they were this large.
inline constexpr int64_t kUnknownExtent = 1024;

// The register tile for C[M, N] (+= over K). nr: four vectors wide when N allows (fewer
// loads of A per FMA), else N rounded to whole vectors; mr fills the accumulator budget.
// `panel` forces nr (an operand already packed with that width).
inline GemmTile choose_gemm_tile(const VectorUnit& v, int64_t M, int64_t N, int64_t panel = 0) {
    int64_t nr = panel > 0 ? panel : N >= 4 * v.lanes ? 4 * v.lanes : N > v.lanes ? round_up(N, v.lanes) : N;
    int64_t vectors = std::max<int64_t>(1, (nr + v.lanes - 1) / v.lanes);
    int64_t mr = std::clamp<int64_t>(v.accumulators / vectors, 1, 12);
    // The last block of rows overlaps the one before when mr does not divide M
    // (TailStrategy::ShiftInwards) and computes mr - M % mr rows twice: where that is over
    // 1% of M, one vector narrower when its taller tile divides M and its width N.
    if (panel == 0 && M > mr && M % mr != 0 && double(mr - M % mr) > 0.01 * double(M) && vectors > 1) {
        const int64_t narrower = vectors - 1, taller = std::clamp<int64_t>(v.accumulators / narrower, 1, 12);
        if (M % taller == 0 && N % (narrower * v.lanes) == 0) return {taller, narrower * v.lanes};
    }
    return {std::min(mr, std::max<int64_t>(M, 1)), nr};
}

// A few rows (at most one register tile) read each element of B once: packing it would
// only add a second pass over memory, so B is read in place, in wider column strips that
// keep enough independent accumulators to hide the FMA latency.
inline bool gemm_packs_rhs(const VectorUnit& v, int64_t M, int64_t N) { return M > choose_gemm_tile(v, M, N).mr; }

// A few rows read B in place, streaming it row by row: each row of B (k) is read once,
// contiguously, and multiplies into all M rows of an accumulator chunk of C that stays in
// L1 (reading B in column strips instead walks it with a page-sized stride, which the
// prefetchers do not follow: 0.7x). The chunk, in whole vectors, holds at most 16 KiB of
// accumulators and there are at least `threads` chunks (they run in parallel).
inline int64_t choose_stream_chunk(const VectorUnit& v, int64_t M, int64_t N, int64_t threads) {
    int64_t vectors = (N + v.lanes - 1) / v.lanes;
    int64_t fit_l1 = std::max<int64_t>(1, 16 * 1024 / (4 * v.lanes * std::max<int64_t>(M, 1)));
    int64_t per_thread = (vectors + threads - 1) / threads;
    return std::min(fit_l1, per_thread) * v.lanes;
}

// ---- the knobs of linalg's templates --------------------------------------------------
// Compute knobs decide the packed operand's layout; schedule knobs the loop nest. Each knob's
// default is the hand choice above, so Config{} reproduces the hand-written schedule.

// "gemm.pack_rhs": pack the right operand into panels (else read it in place, streamed).
inline bool knob_pack_rhs(const Config& config, const VectorUnit& v, int64_t M, int64_t N) {
    return config.define_bool("gemm.pack_rhs", gemm_packs_rhs(v, M, N));
}

// "gemm.nr": the panel width, whole vectors up to four (at most N rounded up to a vector).
inline int64_t knob_panel_width(const Config& config, const VectorUnit& v, int64_t M, int64_t N) {
    std::vector<int64_t> widths;
    for (int64_t w = v.lanes; w <= 4 * v.lanes && w <= round_up(std::max<int64_t>(N, 1), v.lanes); w += v.lanes)
        widths.push_back(w);
    return config.define("gemm.nr", widths, choose_gemm_tile(v, M, N).nr);
}

// "gemm.mr": rows of the register tile, 1 to 12 (at most M; the accumulators of a tall tile
// of wide panels may not fit the registers: the tuner measures that). Its default, the hand
// choice for `panel` columns (0: B read in place).
inline int64_t knob_tile_rows(const Config& config, const VectorUnit& v, int64_t M, int64_t N, int64_t panel) {
    std::vector<int64_t> rows;
    for (int64_t r = 1; r <= std::min<int64_t>(12, std::max<int64_t>(M, 1)); ++r) rows.push_back(r);
    return config.define("gemm.mr", rows, choose_gemm_tile(v, M, N, panel).mr);
}

// "gemm.k_unroll": reduction steps unrolled in the micro-kernel (1: none).
inline int64_t knob_k_unroll(const Config& config, int64_t K) {
    std::vector<int64_t> steps = {1};
    for (int64_t u : {2, 4, 8})
        if (u <= K) steps.push_back(u);
    return config.define("gemm.k_unroll", steps, K >= 8 ? 4 : 1);
}

}  // namespace weft::topi::detail
