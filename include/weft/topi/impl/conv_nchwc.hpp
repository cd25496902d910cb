// conv2d and depthwise conv2d in the blocked layout NCHW[x]c (the TVM paper's CPU layout):
// the output-channel block is the vector axis, the input-channel block the innermost
// reduction, so the inner loop is one weight vector times a broadcast input per output pixel.
#pragma once
#include "weft/topi/impl/conv_checks.hpp"
#include "weft/topi/impl/conv_schedule_util.hpp"

namespace weft::topi {

int64_t conv2d_nchwc_weight_ic_bn(int64_t in_channels, int64_t ic_bn, int64_t out_width, const Pad2d& padding,
                                  int64_t kernel_width) {
    WEFT_CHECK(in_channels >= 1 && ic_bn >= 1 && out_width >= 1 && kernel_width >= 1,
               "conv2d_nchwc_weight_ic_bn: channels, block, width and kernel width must be positive, got ", in_channels,
               ", ", ic_bn, ", ", out_width, ", ", kernel_width);
    // Outputs wider than 14 get the row schedule, whose accumulators stay in registers across
    // the whole reduction: a longer block measured the same there (28x28, 56x56). A 1x1
    // window without padding reads its input in place: copying it to re-block measured no
    // gain (1024->256 @14 -3 to -6%, 512->2048 @7 +1%). A valid 3x3 window gains even with
    // the copy (in one process: 256 @16 +2-4% on one thread, +26% on two; 512 @9 +6-11%,
    // +29%).
    if (out_width > 14 || (padding.none() && kernel_width == 1)) return ic_bn;
    // The input-channel-outer schedule (7x7, 14x14) reloads a row's accumulators per row of
    // taps and input-channel block; up to 512 channels per block: measured on the 7x7 layer
    // (512 channels, one core, one process), 16 -> 64 -> 128 -> 512 channels ran 101 -> 122
    // -> 127 -> 131 GFLOP/s, and the 14x14 layer 10% faster with 256 than with 16.
    const int64_t blocks = (in_channels + ic_bn - 1) / ic_bn;
    return ic_bn * conv_detail::largest_divisor_at_most(blocks, std::max<int64_t>(1, 512 / ic_bn));
}

Conv2dBlocking conv2d_nchwc_blocking(int64_t in_channels, int64_t out_channels, int64_t out_width,
                                     const Pad2d& padding, int64_t kernel_width, const Target& target) {
    WEFT_CHECK(in_channels >= 1 && out_channels >= 1 && out_width >= 1,
               "conv2d_nchwc_blocking: channels and width must be positive, got ", in_channels, ", ", out_channels,
               ", ", out_width);
    const int64_t lanes = conv_detail::target_lanes(target);
    Conv2dBlocking b;
    // Several vectors of output channels per pixel: each input value broadcast feeds one FMA
    // per vector, and broadcast loads are what runs out first. Measured on a 2-core Xeon
    // (AVX-512, two FMA units), a register tile of P pixels x V vectors in L1, in one run,
    // as a fraction of the 6x4 tile's rate: 5x4, 8x3, 9x3 0.97-0.99, 4x4 0.84, 14x2 0.82, 12x2
    // 0.79, 28x1 0.46 (one broadcast per FMA). So four vectors (64 channels, tiles of 6
    // pixels) for rows wider than 14, where a partial last tile is a small part of the row,
    // and two (tiles of up to 14) for the narrow rows (7, 14), where a 6-pixel tile would
    // leave a large tail: both in one
    // process, one thread, 64 against 32 channels per block: 64->64 3x3@56 +16%, 256->64 1x1
    // @56 +6%, 128 3x3@28 +5%; 256 3x3@14 -6%, 512 3x3@7 -15%. (The RGB stem's block of 64
    // reduces over (kw, channel) in one loop: schedule_register_tile.) Before that, 32
    // against 16 channels (one vector): +25-43% on
    // every ResNet-50 layer. With 16 vector registers (AVX2), four vectors would leave room
    // for tiles of 2 pixels.
    const bool wide_rows = target.vector_registers() >= 32 && out_width > 14;
    b.oc_bn = wide_rows && out_channels % (4 * lanes) == 0 ? 4 * lanes
                                                            : conv_detail::two_vector_block(out_channels, lanes);
    b.ic_bn = in_channels >= lanes ? lanes : in_channels;
    b.weight_ic_bn = conv2d_nchwc_weight_ic_bn(in_channels, b.ic_bn, out_width, padding, kernel_width);
    return b;
}

int64_t depthwise_conv2d_nchwc_block(int64_t channels, const Target& target) {
    WEFT_CHECK(channels >= 1, "depthwise_conv2d_nchwc_block: channels must be positive, got ", channels);
    // At most two vectors: a depthwise tile holds an input vector per accumulator
    // (depthwise_row_tile), so more vectors per pixel leave too few pixels.
    return conv_detail::two_vector_block(channels, conv_detail::target_lanes(target));
}

Tensor conv2d_nchwc(const Tensor& data, const Tensor& weight, const Conv2dParams& p, const std::string& name) {
    using namespace conv_detail;
    const std::string op = "conv2d_nchwc '" + name + "'";
    // The batch, height and width may be symbolic (d: their estimates, for the checks and
    // choices below).
    const std::vector<Expr> ds = spatial_shape(op, data, 5, "data [N, C/ic_bn, H, W, ic_bn]");
    const std::vector<int64_t> d = extent_values(ds);
    auto w = const_shape(op, weight, 6, "weight [O/oc_bn, C/weight_ic_bn, KH, KW, weight_ic_bn, oc_bn]");
    check_same_dtype(op, data, weight);
    const int64_t G = p.groups;
    WEFT_CHECK(G >= 1, op, ": groups must be positive, got ", G);
    // Data whose channels all sit in one block filled up with zero channels (NHWC with the
    // channel stride a whole number of vectors) may take weights of fewer input channels:
    // the sum then runs over the real ones only, not over the zeros.
    const bool real_channels = G == 1 && d[1] == 1 && w[1] == 1 && w[4] < d[4];
    WEFT_CHECK(real_channels || w[4] % d[4] == 0, op, ": dimension 4 (weight_ic_bn) of '", weight.name(),
               "' must be a multiple of ", d[4], " (the input channel block of the data) but is ", w[4]);
    // Groups of whole blocks: output blocks [k OB / G, (k + 1) OB / G) read input blocks
    // [k IB / G, (k + 1) IB / G) (a grouped conv whose groups the weights fill up to blocks).
    WEFT_CHECK(G == 1 || (w[4] == d[4] && d[1] % G == 0 && w[0] % G == 0), op, ": ", G, " groups need the data's ",
               d[1], " input blocks and the weight's ", w[0], " output blocks in whole groups, and the weight's "
               "input block (", w[4], ") the data's (", d[4], ")");
    if (!real_channels)
        check_dim(op, weight, G > 1 ? "dimension 1 (C/weight_ic_bn per group)" : "dimension 1 (C/weight_ic_bn)", w[1],
                  d[1] * d[4] / w[4] / G,
                  "the data's " + std::to_string(d[1] * d[4]) + " input channels in blocks of " + std::to_string(w[4]) +
                      (G > 1 ? " in " + std::to_string(G) + " groups" : ""));
    const int64_t KH = w[2], KW = w[3], oc_bn = w[5];
    const Size2d os = conv2d_out_size(d[2], d[3], KH, KW, p, op);
    const Expr OH = out_extent_expr(op, "height", ds[2], KH, p.stride.h, p.dilation.h, p.padding.top, p.padding.bottom);
    const Expr OW = out_extent_expr(op, "width", ds[3], KW, p.stride.w, p.dilation.w, p.padding.left, p.padding.right);
    // Where the weights take the data's channel block and that block is 8 channels or more,
    // the input is read in place, the taps in the padding left out of the sum: a padded copy
    // of the input is a pass over memory before the convolution (and a barrier between the
    // two at 2 threads). In one process against the copy: 64->64 3x3@56 +8-18% (1 thread),
    // +17% (2 threads); 128 3x3@28 +2% / +14%; 64->128 3x3 stride 2 @56 +11%. The RGB stem (a
    // block of 3 channels) runs 14% slower so, and the narrow rows' longer weight blocks
    // (conv2d_nchwc_weight_ic_bn) re-block the input in their copy.
    // Over a symbolic height or width, a padded copy and every tap summed (its zeros too):
    // leaving the padding's taps out splits each row's tiles at symbolic bounds, and a tile
    // that shifts inwards (the last one of a symbolic row) has no fixed border to split at.
    const bool symbolic = !is_constant_extent(ds[2]) || !is_constant_extent(ds[3]);
    const bool in_place = real_channels || (!symbolic && !p.padding.none() && w[4] == d[4] && d[4] >= 8);
    // Otherwise the copy (padded, if there is padding) takes the weights' channel block:
    // where that is larger than the data's, the innermost reduction runs over more channels
    // at a time. `input` is what the sum reads, `top` and `left` its offsets.
    Tensor input = in_place ? data : pad_spatial(data, p.padding, 2, name + ".pad", w[4]);
    const bool padded = !p.padding.none();
    IterVar ico = reduce_axis(0, w[1], "ic.outer"), ici = reduce_axis(0, w[4], "ic.inner");
    IterVar kh = reduce_axis(0, KH, "kh"), kw = reduce_axis(0, KW, "kw");
    // In a padded copy, below 3% of the taps (a 3x3 window over 56x56, the 7x7 stem), the
    // tests and the border code that skipping them takes cost more than the multiply-adds
    // they save. Read in place, they must be skipped.
    const double wasted = 1.0 - (1.0 - padding_tap_fraction(d[2], os.h, KH, p.stride.h, p.dilation.h, p.padding.top)) *
                                    (1.0 - padding_tap_fraction(d[3], os.w, KW, p.stride.w, p.dilation.w, p.padding.left));
    const bool skip_padding = (in_place && padded) || (wasted >= 0.03 && !symbolic);
    const int64_t top = in_place ? p.padding.top : 0, left = in_place ? p.padding.left : 0;
    return compute(
        {plus(ds[0], 0), w[0], OH, OW, oc_bn},
        [&](Expr n, Expr ob, Expr y, Expr x, Expr o) {
            Expr py = y * p.stride.h + kh * p.dilation.h, px = x * p.stride.w + kw * p.dilation.w;
            // Taps that land in the padding are left out of the sum (they would add zeros), as
            // oneDNN's kernels do: a tap row's test moves out to the kh loop (one test per
            // row of taps), and loop partitioning splits the tiles of a row and their kw loops
            // so that only the first and last tiles' pixels skip columns of taps.
            Expr block = G == 1 ? Expr(ico) : ob / make_int(w[0] / G) * make_int(w[1]) + ico;
            return sum(input(n, block, py - top, px - left, ici) * weight(ob, ico, kh, kw, ici, o), {ico, kh, kw, ici},
                       skip_padding ? inside_input(py, px, p.padding, ds[2], ds[3]) : Expr());
        },
        name);
}

Tensor depthwise_conv2d_nchwc(const Tensor& data, const Tensor& weight, const Conv2dParams& p,
                              const std::string& name) {
    using namespace conv_detail;
    const std::string op = "depthwise_conv2d_nchwc '" + name + "'";
    const std::vector<Expr> ds = spatial_shape(op, data, 5, "data [N, C/bn, H, W, bn]");
    const std::vector<int64_t> d = extent_values(ds);
    auto w = const_shape(op, weight, 6, "weight [C/bn, 1, KH, KW, 1, bn]");
    check_same_dtype(op, data, weight);
    WEFT_CHECK(p.groups == 1 || p.groups == d[1] * d[4], op, ": groups is the number of channels (", d[1] * d[4],
               "), got ", p.groups);
    check_dim(op, weight, "dimension 0 (C/bn)", w[0], d[1], "the channel blocks of the data");
    check_dim(op, weight, "dimension 1", w[1], 1, "one input channel per output channel");
    check_dim(op, weight, "dimension 4", w[4], 1, "one input channel per output channel");
    check_dim(op, weight, "dimension 5 (bn)", w[5], d[4], "the channel block of the data");
    const int64_t KH = w[2], KW = w[3];
    conv2d_out_size(d[2], d[3], KH, KW, p, op);  // (checks the window at the estimates)
    const Expr OH = out_extent_expr(op, "height", ds[2], KH, p.stride.h, p.dilation.h, p.padding.top, p.padding.bottom);
    const Expr OW = out_extent_expr(op, "width", ds[3], KW, p.stride.w, p.dilation.w, p.padding.left, p.padding.right);
    IterVar kh = reduce_axis(0, KH, "kh"), kw = reduce_axis(0, KW, "kw");
    return compute(
        {plus(ds[0], 0), d[1], OH, OW, d[4]},
        [&](Expr n, Expr cb, Expr y, Expr x, Expr c) {
            // Taps in the padding are left out of the sum, and the others read the input in
            // place: no padded copy. The row test moves out to the kh loop; the column terms,
            // likely, split a row's tiles into border and interior (docs/topi-conv.md).
            Expr py = y * p.stride.h + kh * p.dilation.h, px = x * p.stride.w + kw * p.dilation.w;
            return sum(data(n, cb, py - p.padding.top, px - p.padding.left, c) * weight(cb, 0, kh, kw, 0, c), {kh, kw},
                       inside_input(py, px, p.padding, ds[2], ds[3]));
        },
        name);
}

Tensor bias_add_nchwc(const Tensor& conv, const Tensor& bias, bool relu, const std::string& name) {
    using namespace conv_detail;
    const std::string op = "bias_add_nchwc '" + name + "'";
    const std::vector<Expr> cs = spatial_shape(op, conv, 5, "the input [N, O/oc_bn, H, W, oc_bn]");
    const std::vector<int64_t> c = extent_values(cs);
    auto b = const_shape(op, bias, 2, "bias [O/oc_bn, oc_bn]");
    check_same_dtype(op, conv, bias);
    check_dim(op, bias, "dimension 0", b[0], c[1], "the output channel blocks");
    check_dim(op, bias, "dimension 1", b[1], c[4], "the output channel block");
    return compute(
        {plus(cs[0], 0), c[1], plus(cs[2], 0), plus(cs[3], 0), c[4]},
        [&](Expr n, Expr ob, Expr y, Expr x, Expr o) {
            Expr v = conv(n, ob, y, x, o) + bias(ob, o);
            return relu ? max(v, ir::make_zero(v.type())) : v;
        },
        name);
}

namespace conv_detail {
// Output pixels per register tile of `channels` channels (a block): as many as the vector
// registers hold as accumulators (pixels x vectors) next to one register per weight vector
// and one for the broadcast input. What limits such a tile is its loads per FMA, (pixels + vectors) /
// (pixels x vectors): a divisor of the row is taken where its ratio is within 10% of the
// largest tile's, else the largest tile with a partial last one (4x4 tiles ran at 0.84 of
// 6x4 ones in the same run, in L1, one thread).
int64_t conv_row_tile(int64_t out_width, int64_t channels, const Target& target) {
    const int64_t lanes = target_lanes(target);
    const int64_t v = std::max<int64_t>(1, (channels + lanes - 1) / lanes);
    const int64_t registers = target.vector_registers();
    const int64_t cap = std::max<int64_t>(1, (registers - v - 1) / v);
    if (out_width <= cap) return out_width;
    const int64_t d = largest_divisor_at_most(out_width, cap);
    // (d + v) / (d v) <= 1.1 (cap + v) / (cap v), in integers.
    return 10 * (d + v) * cap <= 11 * (cap + v) * d ? d : cap;
}

// Output channels per register tile for a block of oc_bn channels: the whole block up to
// four vectors (the blocks of 8 to 64 channels the layout pass makes of most layers); past
// that (one block holding all of a layer's channels, filled up to whole vectors: 72 -> 80),
// the number of vectors dividing the block whose tile loads least per FMA, (pixels +
// vectors) / (pixels x vectors), as conv_row_tile sizes it.
int64_t conv_tile_channels(int64_t oc_bn, int64_t out_width, const Target& target) {
    const int64_t lanes = target_lanes(target);
    if (oc_bn <= 4 * lanes || oc_bn % lanes != 0) return oc_bn;
    const int64_t vectors = oc_bn / lanes;
    int64_t best = 1;
    double best_ratio = 1e9;
    for (int64_t v = 1; v <= vectors; ++v) {
        if (vectors % v) continue;
        const int64_t pixels = conv_row_tile(out_width, v * lanes, target);
        if (pixels * v + v + 1 > target.vector_registers()) continue;
        const double ratio = double(pixels + v) / double(pixels * v);
        if (ratio < best_ratio) best = v, best_ratio = ratio;
    }
    return best * lanes;
}

// Half of a typical L2: the weights a schedule can expect to stay there.
inline constexpr int64_t kHalfL2Bytes = 512 * 1024;

// Output-channel blocks per output row: as many as keep their weights within half of a
// typical L2, so the input rows an output row reads serve all of them from L1.
int64_t oc_blocks_per_row(int64_t oc_blocks, int64_t weight_block_bytes) {
    return largest_divisor_at_most(oc_blocks,
                                   std::max<int64_t>(1, kHalfL2Bytes / std::max<int64_t>(1, weight_block_bytes)));
}

// Output rows per parallel task when a task is a block of output channels: all of them when
// the (batch, block) tasks already share evenly among the threads, else a divisor of the rows
// that makes about four tasks per thread.
int64_t conv_rows_per_task(int64_t tasks, int64_t rows, int64_t threads) {
    threads = std::max<int64_t>(1, threads);
    if (tasks % threads == 0 || tasks >= 4 * threads) return rows;
    return largest_divisor_at_most(rows, std::max<int64_t>(1, tasks * rows / (4 * threads)));
}

// Whether op's reduction has a where-condition (conv2d_nchwc's padding-tap test).
bool has_reduce_condition(const Tensor& op) {
    const auto* red = op.op()->body.at(0).as<ir::Reduce>();
    return red && red->condition.defined() && !ir::is_one(red->condition);
}

// The padded input, copied once for the whole kernel: parallel over its rows, vectorized
// along the channel block. (A copy of the rows each output row reads, per output row, cost
// 7% on the 7x7 stride-2 stem, whose 3-channel rows are copied 3.5 times over, and 3% on
// the 28x28 layer.)
// A copy that re-blocks the channels (a larger block than the data's) reads the data's
// blocks in turn: vectorized along one of them, so that every vector load is contiguous.
void schedule_padded_copy(Schedule& s, const Tensor& pad, int64_t lanes) {
    if (!pad.defined()) return;
    fuse_parallel(s, pad, {pad.axis(0), pad.axis(1), pad.axis(2)}, {false, false, symbolic_dim(pad, 2)});
    int64_t block = 0, data_block = 0;
    ir::as_const_int(pad.shape()[4], &block);
    ir::as_const_int(pad.op().input_tensors().at(0).shape()[4], &data_block);
    if (block > data_block && data_block > 0 && block % data_block == 0) {
        auto [outer, inner] = s[pad].split(pad.axis(4), data_block);
        s[pad].vectorize(inner);
    } else if (block < lanes) {
        // A block narrower than a vector (the RGB stem's 3 channels): a row of pixels is one
        // contiguous run, copied a vector at a time. Loop partitioning leaves the interior
        // vectors a plain copy (it multiplies out the column test x / 3 >= left). The stem's
        // copy, one thread: vectors of 3 channels 69 us, of 16 lanes 21, memcpy 17.
        IterVar run = s[pad].fuse(pad.axis(3), pad.axis(4));
        auto [outer, inner] = s[pad].split(run, lanes);
        s[pad].vectorize(inner);
    } else {
        s[pad].vectorize(pad.axis(4));
    }
}

// The register tile: the loops in `outer` (the input-channel blocks among them), then the
// taps (kh, kw), the input channels of a block, the tile's pixels and its channels. Its
// pixels unrolled, its channels vectorized, and the input channels of a block unrolled too,
// in steps of conv.ic_unroll (8 by default): the loop's counter and address updates otherwise
// share the FMA ports (+2-7% on the ResNet-50 layers with 16-channel blocks, one thread).
// A block of fewer channels than a vector (the RGB stem's 3) is reduced over (kw, channel)
// as one loop, not unrolled: the input a tap row reads is one contiguous run (kw * 3 + c)
// and so are its weights. Unrolled over the 3 channels, LLVM loads all of their weight
// vectors up front and a tile of 64 channels spills; the stem then took its channels 32 at a
// time in two passes over the taps. In one process, 1 thread, against oneDNN with the input
// padded beforehand: 2 x 32 channels x 14 pixels 0.86-0.92, one loop over (kw, channel)
// with 64 channels x 6 pixels 1.05 (x 7 pixels 0.99, unrolled by 3 channels 0.68).
struct RegisterTile {
    int64_t ic_bn = 1;      // input channels per block
    int64_t lanes = 1;      // the target's vector lanes
    int64_t ic_unroll = 1;  // the block's channels unrolled this many at a time (1: a loop)
    bool unroll_kw = false; // the taps of a row unrolled too
};

// conv.ic_unroll and conv.unroll_kw for a block of ic_bn channels (none for a block narrower
// than a vector, reduced over (kw, channel) in one loop). The default unrolls 8 channels at a
// time (a whole vector's worth where a vector is narrower): with 16, LLVM hoisted a wide
// tile's input broadcasts and spilled; 8 was as fast or faster on every layer measured
// (docs/tuning.md, "What the tuner found changed a default").
RegisterTile register_tile_knobs(const Config& config, int64_t ic_bn, int64_t lanes) {
    RegisterTile t{ic_bn, lanes};
    if (ic_bn < lanes) return t;
    t.ic_unroll = config.define("conv.ic_unroll", knob_divisors(ic_bn, ic_bn),
                                largest_divisor_at_most(ic_bn, std::min<int64_t>(lanes, 8)));
    t.unroll_kw = config.define_bool("conv.unroll_kw", false);
    return t;
}

// The channel block of a blocked convolution's output (its last axis).
inline int64_t register_tile_block(const Tensor& out) {
    int64_t block = 0;
    ir::as_const_int(out.shape().back(), &block);
    return block;
}

void schedule_register_tile(Schedule& s, const Tensor& acc, std::vector<IterVar> outer, const IterVar& pixels,
                            const RegisterTile& t) {
    IterVar kh = acc.reduce_axis(1), kw = acc.reduce_axis(2), ici = acc.reduce_axis(3), channels = acc.axis(4);
    if (t.ic_bn < t.lanes) {
        IterVar taps = s[acc].fuse(kw, ici);
        for (IterVar iv : {kh, taps, pixels, channels}) outer.push_back(iv);
        s[acc].reorder(outer);
    } else {
        for (IterVar iv : {kh, kw, ici, pixels, channels}) outer.push_back(iv);
        s[acc].reorder(outer);
        if (t.ic_unroll == t.ic_bn) {
            s[acc].unroll(ici);
        } else if (t.ic_unroll > 1) {
            auto [rest, unrolled] = s[acc].split(ici, t.ic_unroll);
            s[acc].unroll(unrolled);
        }
        if (t.unroll_kw) s[acc].unroll(kw);
    }
    s[acc].unroll(pixels);
    s[acc].vectorize(channels);
}

// The row schedule: parallel over (batch, group of output-channel blocks, output row); for
// each block of the group, tiles of ow pixels x oc_bn channels accumulate in registers over
// (ic block, kh, kw, ic). A row reads its group's whole weights: from memory in the group's
// first row, from L2 in the others.
void schedule_conv2d_nchwc_rows(Schedule& s, const Tensor& out, const Tensor& pad, const Tensor& acc,
                                int64_t blocks_per_row, int64_t tile, int64_t tile_c,
                                const RegisterTile& register_tile) {
    auto [obo, obi] = s[out].split(out.axis(1), blocks_per_row);
    auto [xo, xi] = s[out].split(out.axis(3), tile, symbolic_tail(out, 3));
    if (tile_c < register_tile_block(out)) {
        auto [co, ci] = s[out].split(out.axis(4), tile_c);
        s[out].reorder({out.axis(0), obo, out.axis(2), obi, co, xo, xi, ci});
        s[out].vectorize(ci);
    } else {
        s[out].reorder({out.axis(0), obo, out.axis(2), obi, xo, xi, out.axis(4)});
        s[out].vectorize(out.axis(4));
    }
    fuse_parallel(s, out, {out.axis(0), obo, out.axis(2)}, {false, false, symbolic_dim(out, 2)});

    s[acc].compute_at(s[out], xo);
    schedule_register_tile(s, acc, {acc.reduce_axis(0)}, acc.axis(3), register_tile);
    schedule_padded_copy(s, pad, register_tile.lanes);
}

// The input-channel-outer schedule, for small outputs (a few KiB per block: the 7x7 and
// 14x14 layers, whose weights are the bulk of the data): parallel over (batch, output-channel
// block, chunk of rows); the chunk's accumulators stay in L1 while the loop over input-channel
// blocks runs outermost, so each block's slice of the weights is read from memory once and
// used by every row of the chunk in turn (the row schedule reads all of a block's weights per
// row, and streams them from memory in the first: the 7x7 layer's 9 MiB made its first rows
// wait on memory). With the weights in blocks of up to 512 input channels
// (conv2d_nchwc_weight_ic_bn) there is one such block for these layers.
void schedule_conv2d_nchwc_ic_outer(Schedule& s, const Tensor& out, const Tensor& pad, const Tensor& acc,
                                    int64_t rows_per_task, int64_t tile, int64_t tile_c,
                                    const RegisterTile& register_tile) {
    auto [yo, yi] = s[out].split(out.axis(2), rows_per_task);
    auto [xo, xi] = s[out].split(out.axis(3), tile, symbolic_tail(out, 3));
    IterVar blocks = s[out].fuse(out.axis(0), out.axis(1));
    if (tile_c < register_tile_block(out)) {
        auto [co, ci] = s[out].split(out.axis(4), tile_c);
        s[out].reorder({blocks, co, yo, yi, xo, xi, ci});
        s[out].vectorize(ci);
        blocks = s[out].fuse(blocks, co);
    } else {
        s[out].reorder({blocks, yo, yi, xo, xi, out.axis(4)});
        s[out].vectorize(out.axis(4));
    }
    IterVar tasks = fuse_parallel(s, out, {blocks, yo}, {false, symbolic_dim(out, 2)});
    s[acc].compute_at(s[out], tasks);
    // Over a symbolic width the row's tiles go outside the reduction, so that partitioning the
    // tile loop leaves whole tiles and one guarded tail (inside the reduction it could not):
    // the weights are then read once per tile of the chunk rather than once per chunk.
    auto [axo, axi] = s[acc].split(acc.axis(3), tile);
    const std::vector<IterVar> outer = symbolic_dim(out, 3) ? std::vector<IterVar>{axo, acc.reduce_axis(0), acc.axis(2)}
                                                            : std::vector<IterVar>{acc.reduce_axis(0), acc.axis(2), axo};
    schedule_register_tile(s, acc, outer, axi, register_tile);
    schedule_padded_copy(s, pad, register_tile.lanes);
}
}  // namespace conv_detail

// The knobs (each asked on either loop order, so every point of a space sets them all):
//   conv.tile            output pixels per register tile (1 to 16, or the row)
//   conv.tile_c          output channels per register tile (whole vectors dividing the block)
//   conv.ic_outer        the input-channel-outer order (1) or the row order (0)
//   conv.rows_per_task   output rows per parallel task of the input-channel-outer order
//   conv.blocks_per_row  output-channel blocks per row of the row order
//   conv.ic_unroll       input channels of a block unrolled at a time (1: a loop; default 8)
//   conv.unroll_kw       the taps of a row unrolled too
// Their defaults are the hand choices below.
void schedule_conv2d_nchwc(Schedule& s, const Tensor& op, const Tensor& out, const Target& target,
                           const Config& config) {
    using namespace conv_detail;
    check_epilogue("schedule_conv2d_nchwc", op, out);
    std::vector<int64_t> w = const_shape("schedule_conv2d_nchwc", op.op().input_tensors().at(1), 6, "weight");
    // A symbolic batch, height or width: the choices for their estimates, the loops over
    // them with a guarded tail.
    const std::vector<int64_t> shape = extent_values(spatial_shape("schedule_conv2d_nchwc", op, 5, "the output"));
    const int64_t N = shape[0], OH = shape[2], OW = shape[3];
    const int64_t OB = w[0], ic_bn = w[4], oc_bn = w[5];
    const int64_t weight_block_bytes = w[1] * w[2] * w[3] * ic_bn * oc_bn * op.dtype().bytes();
    const int64_t lanes = target_lanes(target);
    // Blocks of up to four vectors are one tile wide (no knob: the spaces of the layers the
    // layout pass blocks by 8 to 64 channels stay as they were).
    int64_t tile_c = oc_bn;
    if (oc_bn > 4 * lanes && oc_bn % lanes == 0) {
        std::vector<int64_t> channel_steps;
        for (int64_t c = lanes; c <= oc_bn; c += lanes)
            if (oc_bn % c == 0) channel_steps.push_back(c);
        tile_c = config.define("conv.tile_c", channel_steps, conv_tile_channels(oc_bn, OW, target));
    }
    // (Over a symbolic width, a tile for a long row, capped: the estimate's divisor would be
    // a partial tile at any other width.)
    const Expr ow = op.shape()[3];
    const int64_t tile = config.define("conv.tile", up_to(OW, 16),
                                       is_constant_extent(ow) ? conv_row_tile(OW, tile_c, target)
                                                              : symbolic_tile(OW, conv_row_tile(1 << 20, tile_c, target)));
    Tensor pad = pad_stage_of(op);
    Tensor acc = tile_accumulator(s, op, out);
    // The input-channel-outer order pays where it skips padding taps (its rows differ in their
    // taps, not in their weights) and a chunk's accumulators fit in half of L1.
    const int64_t rows_per_task = config.define("conv.rows_per_task", knob_divisors(OH, OH),
                                                symbolic_capped(conv_rows_per_task(N * OB, OH, target.num_threads),
                                                                op.shape()[2]));
    const int64_t blocks_per_row =
        config.define("conv.blocks_per_row", knob_divisors(OB, OB), oc_blocks_per_row(OB, weight_block_bytes));
    const bool ic_outer = config.define_bool(
        "conv.ic_outer", has_reduce_condition(op) && rows_per_task * OW * oc_bn * op.dtype().bytes() <= 16 * 1024);
    const RegisterTile register_tile = register_tile_knobs(config, ic_bn, lanes);
    if (ic_outer)
        schedule_conv2d_nchwc_ic_outer(s, out, pad, acc, rows_per_task, tile, tile_c, register_tile);
    else
        schedule_conv2d_nchwc_rows(s, out, pad, acc, blocks_per_row, tile, tile_c, register_tile);
}

namespace conv_detail {
// Output pixels per depthwise tile. A tap reads the input pixel the next tap of the
// neighbouring output pixel reads too, and LLVM keeps such a loaded vector for its second
// use: a tile of T pixels holds T accumulators and about T input vectors, so T is half the
// vector registers (28 pixels spilled both to the stack on every tap: half the speed).
int64_t depthwise_row_tile(int64_t out_width, int64_t bn, const Target& target) {
    const int64_t lanes = target_lanes(target);
    const int64_t vectors = std::max<int64_t>(1, (bn + lanes - 1) / lanes);
    const int64_t registers = target.vector_registers();
    return tile_extent(out_width, std::max<int64_t>(1, (registers - 2) / (2 * vectors)));
}
}  // namespace conv_detail

// Parallel over (batch, channel block, chunk of output rows); each tile of pixels
// accumulates its taps (unrolled) in registers, reading the input in place. The taps in the
// padding are left out by the reduction's condition: its row test ends up once per kh (the
// hoisting pass), its column terms (likely) make loop partitioning split a row's tiles into
// first, interior and last, so the interior tiles load without a test and the first and last
// skip their outside taps at compile time. (Session 7's inlined, guarded padding split the
// rows too: 15 copies of the tile, 450 ms of JIT for a 112x112 layer against 90 now.)
//
// The knobs (defaults: the hand choices below):
//   dwconv.rows     output rows per parallel task (1 to 16, or the rows)
//   dwconv.tile     output pixels per register tile (1 to 16, or the row)
//   dwconv.tile_c   channels per tile: one or two vectors, or the whole block
//   dwconv.unroll_kh  the rows of taps unrolled too (1), or a loop (0)
void schedule_depthwise_conv2d_nchwc(Schedule& s, const Tensor& op, const Tensor& out, const Target& target,
                                     const Config& config) {
    using namespace conv_detail;
    check_epilogue("schedule_depthwise_conv2d_nchwc", op, out);
    const std::vector<int64_t> shape =
        extent_values(spatial_shape("schedule_depthwise_conv2d_nchwc", op, 5, "the output"));
    const int64_t OH = shape[2], OW = shape[3], bn = shape[4];
    Tensor acc = tile_accumulator(s, op, out);
    // A block of more than two vectors (the one its producer, a wide conv, chose) is done two
    // vectors at a time: each more vector per pixel would halve the tile's pixels.
    const int64_t lanes = target_lanes(target);
    std::vector<int64_t> channel_steps;
    for (int64_t c : {lanes, 2 * lanes, bn})
        if (c <= bn && bn % c == 0) channel_steps.push_back(c);
    const int64_t tile_c = config.define("dwconv.tile_c", channel_steps, two_vector_part(bn, lanes));

    // Where no chunk of 4-8 rows divides the rows, the chunks are as even as they go (19
    // rows: 7, not 8) and the last one is shifted up to overlap the one before
    // (TailStrategy::ShiftInwards; a few rows computed twice, to the same values). With a
    // guarded tail, the row inside the fused parallel loop was a remainder (f % chunks) that
    // loop partitioning cannot cut on, every tile's size was symbolic, and a 32-channel
    // layer of 38x38, 19x19 or 13x13 ran at 0.14-0.17 of the rate of 40x40, 20x20 and 14x14
    // (one process, one thread).
    int64_t default_rows = tile_extent(OH, 8);
    if (OH % default_rows) {
        const int64_t chunks = (OH + 7) / 8;
        default_rows = (OH + chunks - 1) / chunks;
    }
    const int64_t rows = config.define("dwconv.rows", up_to(OH, 16), symbolic_capped(default_rows, op.shape()[2]));
    const int64_t tile =
        config.define("dwconv.tile", up_to(OW, 16),
                      is_constant_extent(op.shape()[3]) ? depthwise_row_tile(OW, tile_c, target)
                                                        : symbolic_tile(OW, depthwise_row_tile(1 << 20, tile_c, target)));
    const bool unroll_kh = config.define_bool("dwconv.unroll_kh", false);
    // (Over a symbolic height, which may be below a chunk, the tail is guarded.)
    const bool shift = OH % rows && is_constant_extent(op.shape()[2]);
    auto [yo, yi] = s[out].split(out.axis(2), rows, shift ? TailStrategy::ShiftInwards : TailStrategy::Guard);
    auto [xo, xi] = s[out].split(out.axis(3), tile, symbolic_tail(out, 3));
    auto [co, ci] = s[out].split(out.axis(4), tile_c);
    s[out].reorder({out.axis(0), out.axis(1), yo, yi, xo, co, xi, ci});
    s[out].vectorize(ci);
    fuse_parallel(s, out, {out.axis(0), out.axis(1), yo}, {false, false, symbolic_dim(out, 2)});

    s[acc].compute_at(s[out], co);
    IterVar kh = acc.reduce_axis(0), kw = acc.reduce_axis(1);
    s[acc].reorder({kh, kw, acc.axis(3), acc.axis(4)});
    if (unroll_kh) s[acc].unroll(kh);
    s[acc].unroll(kw);
    s[acc].unroll(acc.axis(3));
    s[acc].vectorize(acc.axis(4));
}

}  // namespace weft::topi
