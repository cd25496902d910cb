// GPU schedules of conv2d NCHW and pooling (topi/cuda.hpp).
//
// conv2d, direct: a block computes FB output channels x YB rows x XB columns of one image;
// its threads are (FB/FT) x YB x XB (threadIdx.z, .y, .x), each FT channels of one pixel in
// registers. The reduction over input channels runs in steps of RC: at each step the input
// patch the block's pixels read (RC channels, padding applied as it is fetched) and the
// FB x RC x KH x KW weights are fetched into shared memory by all threads together,
// double-buffered. Strides, dilation and groups (depthwise too) only change which input
// patch that is; bound inference works it out.
#pragma once
#include "weft/topi/impl/conv_schedule_util.hpp"
#include "weft/topi/impl/cuda_injective.hpp"

namespace weft::topi::cuda {
namespace detail {

// The largest divisor of n that is at most cap.
inline int64_t divisor_at_most(int64_t n, int64_t cap) { return conv_detail::largest_divisor_at_most(n, cap); }

// One thread per output element, the reduction straight from global memory: for the
// grouped convolutions whose blocks' input channels are not a fixed-size tile.
inline void schedule_conv_untiled(Schedule& s, const Tensor& op, const Tensor& out, const Tensor& pad) {
    if (pad.defined()) s[pad].compute_inline();
    auto [bx, tx] = bind_flat(s, out, kBlockThreads, 1, !out.same_as(op));
    if (!out.same_as(op)) {
        s[op].set_scope("local");
        s[op].compute_at(s[out], tx);
    }
}

inline void schedule_conv_direct(Schedule& s, const Tensor& op, const Tensor& out, const char* who) {
    conv_detail::check_epilogue(who, op, out);
    WEFT_CHECK(op.op()->is_reduction() && op.op()->reduce_axis.size() == 3, who, ": '", op.name(),
               "' is not a conv2d_nchw output");
    nn_detail::inline_epilogue(s, op, out);
    Tensor pad = conv_detail::pad_stage_of(op);
    std::vector<Tensor> inputs = op.op().input_tensors();
    const int64_t F = const_or(out.shape()[1], 1), OH = const_or(out.shape()[2], 1), OW = const_or(out.shape()[3], 1);
    const int64_t RC = const_or(op.op()->reduce_axis[0].dom().extent, 1);
    const int64_t C = const_or(inputs.at(0).shape()[1], 1);
    const int64_t groups = RC > 0 ? C / RC : 1, per_group = F / std::max<int64_t>(groups, 1);
    // Every tile divides its extent (no tails: shared and local tiles need constant sizes).
    const int64_t ft = divisor_at_most(F, 4);                        // channels per thread
    const int64_t tz = divisor_at_most(F / ft, 4);                   // channel groups of threads
    const int64_t tx = OW <= 32 ? OW : divisor_at_most(OW, 32);      // columns
    const int64_t ty = divisor_at_most(OH, std::max<int64_t>(1, 256 / (tx * tz)));  // rows
    const int64_t rc = divisor_at_most(RC, 8);
    // A block's output channels must read a fixed set of input channels: all of one group
    // (depthwise: one channel each), or whole groups.
    const int64_t fb = ft * tz;
    const bool fixed_channels = groups == 1 || per_group == 1 || fb % per_group == 0;
    if (!fixed_channels || tx * ty * tz < 8) return schedule_conv_untiled(s, op, out, pad);

    Tensor acc = conv_detail::tile_accumulator(s, op, out);
    Tensor data_s = s.cache_read(inputs.at(0), "shared", {acc});
    Tensor weight_s = s.cache_read(inputs.at(1), "shared", {acc});
    if (pad.defined()) s[pad].compute_inline();

    Stage o = s[out];
    IterVar n = out.axis(0), f = out.axis(1), y = out.axis(2), x = out.axis(3);
    auto [fo, fi] = o.split(f, fb);
    auto [fz, ff] = o.split(fi, ft);
    auto [yo, yi] = o.split(y, ty);
    auto [xo, xi] = o.split(x, tx);
    o.reorder({n, fo, yo, xo, fz, yi, xi, ff});
    IterVar nf = o.fuse(n, fo);
    o.bind(nf, block_z());
    o.bind(yo, block_y());
    o.bind(xo, block_x());
    o.bind(fz, thread_z());
    o.bind(yi, thread_y());
    o.bind(xi, thread_x());
    o.unroll(ff);

    s[acc].compute_at(o, xi);
    Stage a = s[acc];
    std::vector<IterVar> leaves = a.leaf_iter_vars();  // n, f, y, x, rc, rh, rw
    IterVar af = leaves[1], arc = leaves[4], arh = leaves[5], arw = leaves[6];
    auto [rco, rci] = a.split(arc, rc);
    a.reorder({leaves[0], rco, arh, arw, rci, af, leaves[2], leaves[3]});
    a.unroll(af);
    s[data_s].compute_at(a, rco);
    s[weight_s].compute_at(a, rco);
    cooperative_fetch(s, data_s, tx, ty, tz);
    cooperative_fetch(s, weight_s, tx, ty, tz);
    if (RC > rc) {
        s[data_s].double_buffer();
        s[weight_s].double_buffer();
    }
}

}  // namespace detail

void schedule_conv2d_nchw(Schedule& s, const Tensor& op, const Tensor& out) {
    detail::schedule_conv_direct(s, op, out, "cuda::schedule_conv2d_nchw");
}
void schedule_depthwise_conv2d_nchw(Schedule& s, const Tensor& op, const Tensor& out) {
    detail::schedule_conv_direct(s, op, out, "cuda::schedule_depthwise_conv2d_nchw");
}

void schedule_pool2d(Schedule& s, const Tensor& op, const Tensor& out) {
    Tensor red = detail::reduction_of(op);
    WEFT_CHECK(red.defined(), "cuda::schedule_pool2d: '", op.name(), "' is not a pooling output");
    // One thread per output element: a window is a few elements.
    nn_detail::inline_epilogue(s, red, out);
    if (!op.same_as(red) && !op.same_as(out)) s[op].compute_inline();
    auto [bx, tx] = detail::bind_flat(s, out, kBlockThreads, 1, !red.same_as(out));
    if (!red.same_as(out)) {
        s[red].set_scope("local");
        s[red].compute_at(s[out], tx);
    }
}

void schedule_global_pool2d(Schedule& s, const Tensor& op, const Tensor& out) { schedule_reduce(s, op, out); }

}  // namespace weft::topi::cuda
