// Helpers shared by the conv and pooling schedules.
#pragma once
#include <algorithm>

#include "weft/ir/op.hpp"
#include "weft/ir/target.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/topi/conv.hpp"

namespace weft::topi::conv_detail {

// float32 lanes of one of the target's vector registers.
inline int64_t target_lanes(const Target& target) { return std::max(1, target.natural_lanes(32)); }

// A channel block of at most two vectors: two where the channels are a multiple of that,
// one where there are that many, else all the channels.
inline int64_t two_vector_block(int64_t channels, int64_t lanes) {
    return channels % (2 * lanes) == 0 ? 2 * lanes : channels >= lanes ? lanes : channels;
}

// The part of a channel block a register tile takes at a time when it holds at most two
// vectors per pixel: two vectors of a block that is a multiple of two vectors, else one of a
// block of whole vectors wider than two (a depthwise tile of all 5 vectors of 80 channels holds
// too few pixels: docs/performance.md, "Odd channel counts"), else the block.
inline int64_t two_vector_part(int64_t block, int64_t lanes) {
    const int64_t two = 2 * lanes;
    if (block <= two) return block;
    return block % two == 0 ? two : block % lanes == 0 ? lanes : block;
}

// A tile knob's default `tile` over `extent`: capped where the extent is symbolic.
inline int64_t symbolic_capped(int64_t tile, const Expr& extent) {
    int64_t v = 0;
    return ir::as_const_int(extent, &v) ? tile : std::min(tile, kSymbolicTileCap);
}

// Fuses `axes` (consecutive loops, outermost first) into one parallel loop, the symbolic
// ones (`symbolic[i]`: an image's rows) moved outermost first: a fused index finds each axis
// by dividing by the extents inside it, and with the symbolic extents outside, every divisor
// is a constant. (Divided by a symbolic extent, the bounds of the axes it decomposes into
// defeat the proofs that keep tiles whole: a batch of "1 - f / height / 7" rows made every
// tile symbolic.) Returns the parallel loop.
inline IterVar fuse_parallel(Schedule& s, const Tensor& t, const std::vector<IterVar>& axes,
                             const std::vector<bool>& symbolic) {
    std::vector<IterVar> order;
    for (size_t i = 0; i < axes.size(); ++i)
        if (symbolic[i]) order.push_back(axes[i]);
    for (size_t i = 0; i < axes.size(); ++i)
        if (!symbolic[i]) order.push_back(axes[i]);
    if (std::find(symbolic.begin(), symbolic.end(), true) != symbolic.end()) s[t].reorder(order);
    IterVar fused = order[0];
    for (size_t i = 1; i < order.size(); ++i) fused = s[t].fuse(fused, order[i]);
    s[t].parallel(fused);
    return fused;
}

// Whether t's dimension i is symbolic.
inline bool symbolic_dim(const Tensor& t, int i) {
    int64_t v = 0;
    return !ir::as_const_int(t.shape()[size_t(i)], &v);
}

// The tail of a split of t's dimension i: over a symbolic extent, the last tile shifted
// inwards (whole wherever the extent holds one: the kernel is specialized on it), else the
// guarded tail a constant extent's loop partitioning peels. (A stage that recomputes
// elements never writes over its inputs in place: lower's argument access says so.)
inline TailStrategy symbolic_tail(const Tensor& t, int i) {
    return symbolic_dim(t, i) ? TailStrategy::ShiftInwardsOrGuard : TailStrategy::Guard;
}

// A register tile over a symbolic extent whose estimate is `estimate`: at most `cap` and
// kSymbolicTileCap, at least half of that, the one that computes fewest elements past the
// estimate in its last (shifted) tile; the larger of equals.
inline int64_t symbolic_tile(int64_t estimate, int64_t cap) {
    const int64_t top = std::max<int64_t>(1, std::min(cap, kSymbolicTileCap));
    int64_t best = top, best_waste = INT64_MAX;
    for (int64_t t = top; t >= std::max<int64_t>(1, top / 2); --t) {
        const int64_t waste = (estimate + t - 1) / t * t - estimate;
        if (waste < best_waste) best = t, best_waste = waste;
    }
    return best;
}

// 1, 2, ..., min(n, cap): the candidates of a tile knob.
inline std::vector<int64_t> up_to(int64_t n, int64_t cap) {
    std::vector<int64_t> v;
    for (int64_t t = 1; t <= std::min(n, cap); ++t) v.push_back(t);
    return v;
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The largest divisor of n that is at most cap (1 if none larger).
inline int64_t largest_divisor_at_most(int64_t n, int64_t cap) {
    for (int64_t d = std::min(n, cap); d > 1; --d)
        if (n % d == 0) return d;
    return 1;
}

// A register-tile extent for a loop of n iterations, at most cap: a divisor of n when one at
// least half as large exists (no tail), else cap itself (a tail that loop partitioning peels).
inline int64_t tile_extent(int64_t n, int64_t cap) {
    if (n <= cap) return n;
    int64_t d = largest_divisor_at_most(n, cap);
    return 2 * d >= cap ? d : cap;
}

// The stage that accumulates op's tile. When out is op, a local cache of op (cache_write);
// when out is an epilogue, op itself, which compute_at at out's tile loop then shrinks to
// the tile. The caller attaches the returned tensor's stage.
inline Tensor tile_accumulator(Schedule& s, const Tensor& op, const Tensor& out) {
    if (out.same_as(op)) return s.cache_write(op, "local");
    s[op].set_scope("local");
    return op;
}

// The padding stage conv_detail::pad_spatial made for op's first input, if any.
inline Tensor pad_stage_of(const Tensor& op) {
    std::vector<Tensor> inputs = op.op().input_tensors();
    if (!inputs.empty() && inputs[0].op()->is_compute()) return inputs[0];
    return Tensor();
}

// out must be op or an element-wise epilogue of op with op's shape.
inline void check_epilogue(const std::string& sched, const Tensor& op, const Tensor& out) {
    WEFT_CHECK(out.ndim() == op.ndim() && out.op()->is_compute(), sched, ": out '", out.name(),
               "' must be the operator's output '", op.name(), "' or an element-wise epilogue of the same shape");
    if (out.same_as(op)) return;
    for (int i = 0; i < op.ndim(); ++i) {
        int64_t a = 0, b = 0;
        ir::as_const_int(op.shape()[size_t(i)], &a);
        ir::as_const_int(out.shape()[size_t(i)], &b);
        WEFT_CHECK(a == b, sched, ": the epilogue '", out.name(), "' must have the shape of '", op.name(),
                   "' (dimension ", i, " is ", b, ", not ", a, ")");
    }
}

}  // namespace weft::topi::conv_detail
