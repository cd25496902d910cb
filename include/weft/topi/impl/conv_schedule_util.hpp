// Helpers shared by the conv and pooling schedules.
#pragma once
#include <algorithm>

#include "weft/ir/target.hpp"
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

// 1, 2, ..., min(n, cap): the candidates of a tile knob.
inline std::vector<int64_t> up_to(int64_t n, int64_t cap) {
    std::vector<int64_t> v;
    for (int64_t t = 1; t <= std::min(n, cap); ++t) v.push_back(t);
    return v;
}

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
