// GPU schedules of injective chains and of reductions (topi/cuda.hpp).
#pragma once
#include "weft/topi/impl/cuda_common.hpp"

namespace weft::topi::cuda {

void schedule_injective(Schedule& s, const Tensor& out) {
    nn_detail::check_defined(out, "cuda::schedule_injective", "output");
    WEFT_CHECK(out.op()->is_compute() && !out.op()->is_reduction(), "cuda::schedule_injective: '", out.name(), "' is ",
               out.op()->is_compute() ? "a reduction (use cuda::schedule_reduce)" : "a placeholder (nothing to schedule)");
    std::vector<Tensor> chain = nn_detail::inline_injective_inputs(s, out);
    // 4-wide loads and stores (16 bytes of float32) when every read is at the output's own
    // index, so that a vector of the output is a vector of each input, and no tail.
    const int64_t size = detail::const_size(out.shape());
    const int64_t vector = nn_detail::reads_element_for_element(chain) && size > 0 && size % 4 == 0 &&
                                   out.dtype().bits <= 32 && size >= 4 * 32
                               ? 4
                               : 1;
    detail::bind_flat(s, out, kBlockThreads, vector);
}

namespace detail {

// `red` split across `threads` threads of one block along its contiguous reduce axis: each
// thread's partial result goes to a shared buffer (rfactor, returned), which red then
// combines. Call before any other primitive on red's stage; attach both with attach_rows.
inline IterVar split_axis(const Tensor& red) {
    IterVar k = innermost_reduce_axis(red);
    return k.defined() ? k : red.op()->reduce_axis.back();
}
// Threads per block for rows of `len` elements.
inline int64_t row_threads(int64_t len) { return len < 0 ? kBlockThreads : pow2_at_least(std::max<int64_t>(len, 32), kBlockThreads); }
// The block's threads for reducing `red` across them: about twice the square root of its
// split axis (32 to 256), which balances each thread's strided part against the combine of
// the partial results (a loop over them in every thread). Softmax on an H100: 64 threads for
// rows of 1024 and 128 for rows of 4096 were the fastest of 32 to 1024 (1.1-1.5x the square
// root's 32 and 64; 256 and more lose to the combine loop).
inline int64_t reduce_threads(const Tensor& red) {
    const int64_t len = const_or(split_axis(red).dom().extent, -1);
    if (len < 0) return kBlockThreads;
    int64_t root = 1;
    while (root * root < len) ++root;
    return row_threads(2 * root);
}

inline Tensor split_across_threads(Schedule& s, const Tensor& red, int64_t threads) {
    auto [ko, ki] = s[red].split(split_axis(red), threads);
    Tensor rf = s.rfactor(red, ki);
    // Each thread accumulates in a register and stores its partial result once (a shared
    // buffer read and written in the loop would need a barrier per iteration).
    Tensor partial = s.cache_write(rf, "local");
    s[rf].set_scope("shared");
    IterVar lane = rf.axis(rf.ndim() - 1);
    s[rf].bind(lane, thread_x());
    s[partial].compute_at(s[rf], lane);
    return rf;
}

// The partial results `rf` and their combine `red` computed at loop `at` of `consumer` (its
// one-row-per-block loop). `red` in registers, combined by every thread, when other stages
// of the block read it; red may also be `consumer` itself (one thread stores it).
inline void attach_rows(Schedule& s, const Tensor& rf, const Tensor& red, const Tensor& consumer, const IterVar& at) {
    if (!red.same_as(consumer)) {
        s[red].set_scope("local");
        s[red].compute_at(s[consumer], at);
    }
    s[rf].compute_at(s[consumer], at);
}

}  // namespace detail

void schedule_reduce(Schedule& s, const Tensor& op, const Tensor& out) {
    const char* who = "cuda::schedule_reduce";
    nn_detail::check_defined(op, who, "op");
    nn_detail::check_defined(out, who, "output");
    Tensor red = detail::reduction_of(op);
    WEFT_CHECK(red.defined(), who, ": '", op.name(), "' is not a reduction and reads none");
    nn_detail::inline_epilogue(s, red, out);
    if (!op.same_as(red) && !op.same_as(out)) s[op].compute_inline();
    nn_detail::inline_injective_inputs(s, red);  // element-wise producers (a cast, abs, ...)
    int64_t len = 1;
    for (auto& k : red.op()->reduce_axis) len *= std::max<int64_t>(detail::const_or(k.dom().extent, 1 << 20), 1);
    const int64_t outputs = detail::const_size(out.shape());
    const bool contiguous = detail::innermost_reduce_axis(red).defined();
    // Short rows, or many outputs read along an outer axis: one thread per output element.
    if (out.ndim() > 0 && (!contiguous || len < 64 || (outputs > 0 && outputs >= 4096 && len < 256))) {
        auto [bx, tx] = detail::bind_flat(s, out, kBlockThreads, 1, !red.same_as(out));
        if (!red.same_as(out)) {
            s[red].set_scope("local");
            s[red].compute_at(s[out], tx);
        }
        return;
    }
    // One block per output element.
    Tensor rf = detail::split_across_threads(s, red, detail::reduce_threads(red));
    Stage st = s[out];
    std::vector<IterVar> axes;
    for (int d = 0; d < out.ndim(); ++d) axes.push_back(out.axis(d));
    IterVar row = axes.empty() ? IterVar() : detail::fuse_all(st, axes);
    if (row.defined()) st.bind(row, block_x());
    if (outputs == 1 || !row.defined()) {
        // One value: the partial results at the top level of the one-block kernel (attached
        // to a loop of one iteration their region would not simplify to a constant size).
        std::vector<IterVar> order{rf.axis(rf.ndim() - 1)};
        for (int d = 0; d + 1 < rf.ndim(); ++d) order.push_back(rf.axis(d));
        s[rf].reorder(order);
        if (!red.same_as(out)) {
            s[red].set_scope("local");
            if (row.defined()) s[red].compute_at(st, row);
        }
        return;
    }
    detail::attach_rows(s, rf, red, out, row);
}

}  // namespace weft::topi::cuda
