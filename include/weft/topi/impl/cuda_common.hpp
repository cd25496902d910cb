// Helpers shared by topi's GPU schedules (topi/cuda.hpp): the walks over an operator's stages
// and the thread-binding patterns every schedule uses.
#pragma once
#include <algorithm>
#include <initializer_list>

#include "weft/topi/cuda.hpp"
#include "weft/topi/impl/nn_detail.hpp"

namespace weft::topi::cuda::detail {

using nn_detail::compute_inputs;
using nn_detail::const_size;
using nn_detail::find_input_named;
using nn_detail::fuse_all;
using nn_detail::input_named;
using nn_detail::innermost_reduce_axis;  // read at the contiguous dimension of an input

// The smallest power of two >= n (n >= 1), at most cap.
inline int64_t pow2_at_least(int64_t n, int64_t cap) {
    int64_t p = 1;
    while (p < n && p < cap) p *= 2;
    return p;
}

// The first of `options` that divides n and is a multiple of `unit`, or 0.
inline int64_t first_dividing(int64_t n, std::initializer_list<int64_t> options, int64_t unit = 1) {
    for (int64_t o : options)
        if (n % o == 0 && o % unit == 0) return o;
    return 0;
}

inline int64_t const_or(const Expr& e, int64_t fallback) {
    int64_t v;
    return nn_detail::const_extent(e, &v) ? v : fallback;
}

// The reduction `op` is or reads directly (mean's scaling stage reads its sum), or undefined.
inline Tensor reduction_of(const Tensor& op) {
    if (op.op()->is_compute() && op.op()->is_reduction()) return op;
    for (auto& in : compute_inputs(op))
        if (in.op()->is_reduction()) return in;
    return Tensor();
}

// Threads per block for `size` work items with no tail: the largest divisor of size up to
// `cap`, a multiple of a warp when one divides. (A stage computed per thread in "local"
// memory needs a constant size, which a tail iteration's clamped region is not.)
inline int64_t dividing_threads(int64_t size, int64_t cap) {
    if (size <= 0) return cap;
    for (int64_t d = std::min(size, cap); d >= 32; --d)
        if (size % d == 0 && d % 32 == 0) return d;
    for (int64_t d = std::min(size, cap); d > 1; --d)
        if (size % d == 0) return d;
    return 1;
}

// Stage `t` with all its data axes fused into one loop, split into blocks of `threads`,
// bound to blockIdx.x / threadIdx.x. `vector` > 1: an innermost loop of that many elements
// (vectorized) inside each thread. Returns the block loop and the thread loop.
// `exact`: no tail (see dividing_threads).
inline std::pair<IterVar, IterVar> bind_flat(Schedule& s, const Tensor& t, int64_t threads, int64_t vector = 1,
                                             bool exact = false) {
    Stage st = s[t];
    std::vector<IterVar> axes;
    for (int d = 0; d < t.ndim(); ++d) axes.push_back(t.axis(d));
    IterVar all = fuse_all(st, axes);
    if (vector > 1) {
        auto [outer, lane] = st.split(all, vector);
        st.vectorize(lane);
        all = outer;
    }
    const int64_t size = const_size(t.shape());
    if (size > 0) threads = exact ? dividing_threads(size / std::max<int64_t>(vector, 1), threads)
                                  : std::min(threads, pow2_at_least(size / std::max<int64_t>(vector, 1), threads));
    auto [bx, tx] = st.split(all, threads);
    st.bind(bx, block_x());
    st.bind(tx, thread_x());
    return {bx, tx};
}

// A cooperative fetch: the stage `t` (computed at some loop of its consumer, in shared
// memory) has its loops fused and split so that consecutive threads of x (then y, then z)
// take consecutive chunks of `vector` elements, bound to threadIdx.x / .y / .z (extents
// tx, ty, tz: the block's; 1: that axis is not used), the chunks vectorized.
inline void cooperative_fetch(Schedule& s, const Tensor& t, int64_t tx, int64_t ty, int64_t tz = 1, int64_t vector = 1) {
    Stage st = s[t];
    std::vector<IterVar> leaves = st.leaf_iter_vars();  // a copy: fusing changes the stage's list
    if (vector > 1) {
        // The vector is the innermost `vector` elements of a row (contiguous in memory, on
        // both sides), split off before fusing so its index stays a plain ramp.
        auto [outer, lane] = st.split(leaves.back(), vector);
        st.vectorize(lane);
        leaves.back() = outer;
    }
    IterVar rest = fuse_all(st, leaves);
    const std::pair<int64_t, ThreadAxis> axes[] = {{tx, thread_x()}, {ty, thread_y()}, {tz, thread_z()}};
    for (auto& [extent, axis] : axes) {
        if (extent <= 1 && axis.tag != "threadIdx.x") continue;
        auto [outer, inner] = st.split(rest, extent);
        st.bind(inner, axis);
        rest = outer;
    }
}

}  // namespace weft::topi::cuda::detail
