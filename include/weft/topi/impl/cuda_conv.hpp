// GPU schedules of conv2d NCHW and pooling (topi/cuda.hpp).
//
// conv2d, direct: a block computes FB output channels x YB rows x XB columns of one image;
// its threads are (FB/FT) x (YB/PY) x (XB/PX) (threadIdx.z, .y, .x), each FT channels of
// PY x PX pixels in registers. The reduction over input channels runs in steps of RC: at each step the input
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

// The steps of the convolution window in the input: input row = y * stride_h + rh * dilation_h
// (likewise columns), read off the compute's load of its data (or of its padding stage).
struct WindowSteps {
    int64_t stride_h = 1, dilation_h = 1, stride_w = 1, dilation_w = 1;
};
inline WindowSteps window_steps(const Tensor& op) {
    const Tensor data = op.op().input_tensors().at(0);
    const ir::ProducerLoad* load = nullptr;
    ir::post_order_visit(op.op()->body[0], [&](const ir::Object* node) {
        if (node->kind != ir::NodeKind::ProducerLoad) return;
        auto* l = static_cast<const ir::ProducerLoad*>(node);
        if (l->producer.get() == data.op().get() && l->indices.size() == 4) load = l;
    });
    WindowSteps w;
    if (!load) return w;
    // The coefficient of `v` in `index`: index with v = 1 minus index with v = 0 (every other
    // loop variable 0); 1 when that is not a constant.
    std::vector<Var> vars;  // the loop variables: n, f, y, x, then rc, rh, rw
    for (auto& iv : op.op()->axis) vars.push_back(iv.var());
    for (auto& iv : op.op()->reduce_axis) vars.push_back(iv.var());
    auto coefficient = [&](const Expr& index, const Var& v) {
        std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq> at0, at1;
        for (const Var& u : vars) {
            at0[u] = make_int(0);
            at1[u] = make_int(u.same_as(v) ? 1 : 0);
        }
        int64_t c = 1;
        if (!ir::as_const_int(ir::arith::simplify(ir::substitute(index, at1) - ir::substitute(index, at0)), &c) || c < 1)
            return int64_t(1);
        return c;
    };
    w.stride_h = coefficient(load->indices[2], vars[2]);
    w.stride_w = coefficient(load->indices[3], vars[3]);
    w.dilation_h = coefficient(load->indices[2], vars[5]);
    w.dilation_w = coefficient(load->indices[3], vars[6]);
    return w;
}

// The register and block tiles of the direct convolution, chosen by sweeps of ResNet-50's
// layers at batch 8 and 1 on an H100 (RESULTS.md, GPU). A thread computes ft output channels
// of py x px pixels; a block, tz such channel groups over yb x xb pixels, ~224 threads. The
// candidates, tried in order until the grid has kMinConvBlocks blocks (fewer leave
// multiprocessors idle):
//  - 8 channels of several pixels, 4 groups: 4 rows per thread for windows over 28+ rows
//    (consecutive rows share window rows, loaded once), else 2 columns on rows 14+ wide.
//    At batch 8: 1.1-2.4x the 4 channels of one pixel per thread used before.
//  - for smaller grids (batch 1), fewer channels per thread (4, then 2) in more groups, with
//    2 rows (windows) or 2 columns (1x1) per thread, then one pixel: at batch 1, 1.2-2x the
//    large tiles' time when those leave the grid short of blocks.
// Steps of up to 16 input channels, as many as the double-buffered tiles' 48 KiB of shared
// memory allow.
inline constexpr int64_t kMinConvBlocks = 112;  // ~ an H100's 132 multiprocessors

struct ConvTiles {
    int64_t ft = 1, tz = 1, px = 1, py = 1, xb = 1, yb = 1, rc = 1;
    int64_t threads() const { return (xb / px) * (yb / py) * tz; }
};

inline ConvTiles choose_conv_tiles(int64_t N, int64_t F, int64_t OH, int64_t OW, int64_t RC, int64_t KH, int64_t KW,
                                   const WindowSteps& w) {
    enum class Pixels { Many, Two, One };
    auto tiles = [&](int64_t ft_cap, int64_t tz_cap, Pixels pixels) {
        ConvTiles t;
        t.ft = divisor_at_most(F, ft_cap);
        t.tz = divisor_at_most(F / t.ft, tz_cap);
        const int64_t rows = pixels == Pixels::Many ? 4 : 2;
        if (pixels != Pixels::One && KH > 1 && OH % rows == 0 && OH >= 7 * rows) t.py = rows;
        else if (pixels != Pixels::One && OW >= 14 && OW % 2 == 0) t.px = 2;
        const int64_t tx = divisor_at_most(OW / t.px, 32);
        t.xb = tx * t.px;
        const int64_t ty = divisor_at_most(OH / t.py, std::max<int64_t>(1, 256 / (tx * t.tz)));
        t.yb = ty * t.py;
        auto shared_bytes = [&](int64_t rc, int64_t fb) {
            const int64_t patch_rows = (t.yb - 1) * w.stride_h + (KH - 1) * w.dilation_h + 1;
            const int64_t patch_cols = (t.xb - 1) * w.stride_w + (KW - 1) * w.dilation_w + 1;
            return 2 * 4 * (rc * patch_rows * patch_cols + fb * rc * KH * KW);  // double-buffered float32
        };
        t.rc = divisor_at_most(RC, 16);
        while (t.rc > 1 && shared_bytes(t.rc, t.ft * t.tz) > 48 * 1024) t.rc = divisor_at_most(RC, t.rc - 1);
        while (t.tz > 1 && shared_bytes(t.rc, t.ft * t.tz) > 48 * 1024) t.tz = divisor_at_most(F / t.ft, t.tz - 1);
        return t;
    };
    auto blocks = [&](const ConvTiles& t) { return N * (F / (t.ft * t.tz)) * (OH / t.yb) * (OW / t.xb); };
    struct Candidate {
        int64_t ft, tz;
        Pixels pixels;
    };
    const std::vector<Candidate> candidates =
        KH > 1 ? std::vector<Candidate>{{8, 4, Pixels::Many}, {2, 8, Pixels::Two}, {2, 8, Pixels::One},
                                        {2, 4, Pixels::One}, {2, 2, Pixels::One}}
               : std::vector<Candidate>{{8, 4, Pixels::Many}, {4, 4, Pixels::Many}, {2, 8, Pixels::Many},
                                        {2, 8, Pixels::One}, {2, 4, Pixels::One}, {2, 2, Pixels::One}};
    ConvTiles t;
    for (const Candidate& c : candidates) {
        t = tiles(c.ft, c.tz, c.pixels);
        if (blocks(t) >= kMinConvBlocks) break;
    }
    return t;
}

// The knobs over the hand-chosen tiles `t` (cuda.conv.*): each tile among the candidates that
// divide its extent, the default always among them. A point is refused when it is built if
// a register tile does not divide its block's, the block has more than 1024 threads, or its
// double-buffered shared tiles pass 48 KiB; one whose block's channels do not read a fixed
// set of input channels, or that has fewer than 8 threads, is scheduled untiled.
inline ConvTiles tuned_conv_tiles(const ConvTiles& t, int64_t F, int64_t OH, int64_t OW, int64_t RC, int64_t KH,
                                  int64_t KW, const WindowSteps& w, const Config& config, const char* who) {
    auto dividing = [](int64_t n, std::vector<int64_t> options, int64_t chosen) {
        std::vector<int64_t> out;
        for (int64_t o : options)
            if (o <= n && n % o == 0) out.push_back(o);
        if (std::find(out.begin(), out.end(), chosen) == out.end()) out.push_back(chosen);
        std::sort(out.begin(), out.end());
        return out;
    };
    auto divisors_up_to = [](int64_t n, int64_t cap) {
        std::vector<int64_t> out;
        for (int64_t d = 1; d <= std::min(n, cap); ++d)
            if (n % d == 0) out.push_back(d);
        return out;
    };
    ConvTiles u;
    u.ft = config.define("cuda.conv.ft", dividing(F, {1, 2, 4, 8}, t.ft), t.ft);
    u.tz = config.define("cuda.conv.tz", dividing(F, {1, 2, 4, 8, 16}, t.tz), t.tz);
    u.py = config.define("cuda.conv.py", dividing(OH, {1, 2, 4}, t.py), t.py);
    u.px = config.define("cuda.conv.px", dividing(OW, {1, 2, 4}, t.px), t.px);
    u.yb = config.define("cuda.conv.yb", dividing(OH, divisors_up_to(OH, 32), t.yb), t.yb);
    u.xb = config.define("cuda.conv.xb", dividing(OW, divisors_up_to(OW, 64), t.xb), t.xb);
    u.rc = config.define("cuda.conv.rc", dividing(RC, {1, 2, 4, 8, 16, 32}, t.rc), t.rc);
    WEFT_CHECK(F % (u.ft * u.tz) == 0, who, ": ", u.tz, " groups of ", u.ft,
               " output channels (cuda.conv.tz, ft) do not divide the ", F, " channels");
    WEFT_CHECK(u.yb % u.py == 0 && u.xb % u.px == 0, who, ": the register tile of ", u.py, "x", u.px,
               " pixels (cuda.conv.py, px) does not divide the block's ", u.yb, "x", u.xb, " (cuda.conv.yb, xb)");
    WEFT_CHECK(u.threads() <= 1024, who, ": a block of ", u.yb, "x", u.xb, " pixels in tiles of ", u.py, "x", u.px,
               " times ", u.tz, " channel groups (cuda.conv.yb, xb, py, px, tz) is ", u.threads(),
               " threads, over CUDA's 1024 per block");
    const int64_t patch_rows = (u.yb - 1) * w.stride_h + (KH - 1) * w.dilation_h + 1;
    const int64_t patch_cols = (u.xb - 1) * w.stride_w + (KW - 1) * w.dilation_w + 1;
    const int64_t shared = 2 * 4 * (u.rc * patch_rows * patch_cols + u.ft * u.tz * u.rc * KH * KW);
    WEFT_CHECK(shared <= 48 * 1024, who, ": steps of ", u.rc, " input channels (cuda.conv.rc) over a block of ",
               u.yb, "x", u.xb, " pixels and ", u.ft * u.tz, " channels need ", shared,
               " bytes of shared memory, over 48 KiB");
    return u;
}

inline void schedule_conv_direct(Schedule& s, const Tensor& op, const Tensor& out, const char* who,
                                 const Config& config) {
    conv_detail::check_epilogue(who, op, out);
    WEFT_CHECK(op.op()->is_reduction() && op.op()->reduce_axis.size() == 3, who, ": '", op.name(),
               "' is not a conv2d_nchw output");
    nn_detail::inline_epilogue(s, op, out);
    Tensor pad = conv_detail::pad_stage_of(op);
    std::vector<Tensor> inputs = op.op().input_tensors();
    const int64_t F = const_or(out.shape()[1], 1), OH = const_or(out.shape()[2], 1), OW = const_or(out.shape()[3], 1);
    const int64_t RC = const_or(op.op()->reduce_axis[0].dom().extent, 1);
    const int64_t KH = const_or(op.op()->reduce_axis[1].dom().extent, 1), KW = const_or(op.op()->reduce_axis[2].dom().extent, 1);
    const int64_t C = const_or(inputs.at(0).shape()[1], 1);
    const int64_t groups = RC > 0 ? C / RC : 1, per_group = F / std::max<int64_t>(groups, 1);
    // Every tile divides its extent (no tails: shared and local tiles need constant sizes).
    const int64_t N = const_or(out.shape()[0], 1);
    const WindowSteps steps = window_steps(op);
    const ConvTiles t = tuned_conv_tiles(choose_conv_tiles(N, F, OH, OW, RC, KH, KW, steps), F, OH, OW, RC, KH, KW,
                                         steps, config, who);
    // A block's output channels must read a fixed set of input channels: all of one group
    // (depthwise: one channel each), or whole groups.
    const int64_t fb = t.ft * t.tz;
    const bool fixed_channels = groups == 1 || per_group == 1 || fb % per_group == 0;
    if (!fixed_channels || t.threads() < 8) return schedule_conv_untiled(s, op, out, pad);

    Tensor acc = conv_detail::tile_accumulator(s, op, out);
    Tensor data_s = s.cache_read(inputs.at(0), "shared", {acc});
    Tensor weight_s = s.cache_read(inputs.at(1), "shared", {acc});
    if (pad.defined()) s[pad].compute_inline();

    Stage o = s[out];
    IterVar n = out.axis(0), f = out.axis(1), y = out.axis(2), x = out.axis(3);
    auto [fo, fi] = o.split(f, fb);
    auto [fz, ff] = o.split(fi, t.ft);
    auto [yo, yi] = o.split(y, t.yb);
    auto [ty, yv] = o.split(yi, t.py);
    auto [xo, xi] = o.split(x, t.xb);
    auto [tx, xv] = o.split(xi, t.px);
    o.reorder({n, fo, yo, xo, fz, ty, tx, yv, xv, ff});
    IterVar nf = o.fuse(n, fo);
    o.bind(nf, block_z());
    o.bind(yo, block_y());
    o.bind(xo, block_x());
    o.bind(fz, thread_z());
    o.bind(ty, thread_y());
    o.bind(tx, thread_x());
    o.unroll(yv);
    o.unroll(xv);
    o.unroll(ff);

    // Each thread's ft x py x px accumulators, over the input channels in steps of rc.
    s[acc].compute_at(o, tx);
    Stage a = s[acc];
    std::vector<IterVar> leaves = a.leaf_iter_vars();  // n, f, y, x, rc, rh, rw
    auto [rco, rci] = a.split(leaves[4], t.rc);
    a.reorder({leaves[0], rco, leaves[5], leaves[6], rci, leaves[1], leaves[2], leaves[3]});
    a.unroll(leaves[1]);
    a.unroll(leaves[2]);
    a.unroll(leaves[3]);
    s[data_s].compute_at(a, rco);
    s[weight_s].compute_at(a, rco);
    const int64_t threads_x = t.xb / t.px, threads_y = t.yb / t.py;
    cooperative_fetch(s, data_s, threads_x, threads_y, t.tz);
    cooperative_fetch(s, weight_s, threads_x, threads_y, t.tz);
    if (RC > t.rc) {
        s[data_s].double_buffer();
        s[weight_s].double_buffer();
    }
}

}  // namespace detail

void schedule_conv2d_nchw(Schedule& s, const Tensor& op, const Tensor& out, const Config& config) {
    detail::schedule_conv_direct(s, op, out, "cuda::schedule_conv2d_nchw", config);
}
void schedule_depthwise_conv2d_nchw(Schedule& s, const Tensor& op, const Tensor& out, const Config& config) {
    detail::schedule_conv_direct(s, op, out, "cuda::schedule_depthwise_conv2d_nchw", config);
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
