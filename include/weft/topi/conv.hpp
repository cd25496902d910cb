// topi: conv2d (NCHW and blocked NCHW[x]c), depthwise conv2d, pooling and layout transforms.
//
// Shapes must be constant. Every compute checks ranks, shapes, dtypes and attributes and
// throws weft::Error naming the operator and the mismatch. Each schedule follows the topi
// convention schedule_<op>(s, op, out = op): `out` may be an element-wise epilogue of `op`
// (bias_add_*, relu, ...) whose intermediate stages the caller has inlined; it is computed
// in the operator's tile loop nest.
#pragma once
#include <string>

#include "weft/ir/target.hpp"
#include "weft/schedule/config.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"

namespace weft::topi {

// Zero padding of the two spatial dimensions, in elements.
struct Pad2d {
    int64_t top = 0, left = 0, bottom = 0, right = 0;
    static Pad2d all(int64_t p) { return {p, p, p, p}; }
    static Pad2d symmetric(int64_t ph, int64_t pw) { return {ph, pw, ph, pw}; }
    bool none() const { return top == 0 && left == 0 && bottom == 0 && right == 0; }
};

// (height, width) pairs.
struct Size2d {
    int64_t h = 1, w = 1;
};

struct Conv2dParams {
    Size2d stride{1, 1};
    Pad2d padding{};
    Size2d dilation{1, 1};
    int64_t groups = 1;
};

// ---- conv2d, NCHW ----

// out[n, o, y, x] = sum over c < C/groups, kh, kw of
//   data[n, g * C/groups + c, y*sh + kh*dh - top, x*sw + kw*dw - left] * weight[o, c, kh, kw]
// with g = o / (O/groups) and zeros outside the input. data [N, C, H, W], weight
// [O, C/groups, KH, KW]; out [N, O, OH, OW], OH = (H + top + bottom - dh*(KH-1) - 1)/sh + 1.
Tensor conv2d_nchw(const Tensor& data, const Tensor& weight, const Conv2dParams& params = {},
                   const std::string& name = "conv2d_nchw");
// The output height and width (OH, OW above) of a convolution over an H x W input with a
// KH x KW kernel, or the weft::Error (naming `op`) of every conv2d compute for a stride,
// dilation or padding it refuses or a window that does not fit. The graph layer's shape
// inference calls it, so that what it accepts the computes build.
Size2d conv2d_out_size(int64_t H, int64_t W, int64_t KH, int64_t KW, const Conv2dParams& params,
                       const std::string& op = "conv2d");
// Depthwise: weight [C * multiplier, 1, KH, KW], i.e. conv2d_nchw with groups = C.
Tensor depthwise_conv2d_nchw(const Tensor& data, const Tensor& weight, Conv2dParams params = {},
                             const std::string& name = "depthwise_conv2d_nchw");
// ONNX DeformConv's sampling (a deformable convolution is this, then a matmul with the
// weights): x [N, C, H, W] (floats) read at every tap (ky, kx) of a kernel_h x kernel_w window
// (params' strides, padding, dilation) moved by offset [N, G * 2 * kh * kw, OH, OW] ((dy, dx)
// per tap; G = offset_group groups of C / G channels), bilinearly with zeros outside, times
// mask [N, G * kh * kw, OH, OW] where `mask` is defined: [N, C * kh * kw, OH * OW], row
// (c * kh + ky) * kw + kx, column y * OW + x.
Tensor deformable_im2col(const Tensor& x, const Tensor& offset, const Tensor& mask, const Conv2dParams& params,
                         int64_t kernel_h, int64_t kernel_w, int64_t offset_group = 1,
                         const std::string& name = "deformable_im2col");
// The usual conv epilogue: out[n, o, y, x] = conv[n, o, y, x] + bias[o] (bias [O]), then
// max(., 0) if `relu`.
Tensor bias_add_nchw(const Tensor& conv, const Tensor& bias, bool relu = false, const std::string& name = "bias_add");

// The schedules size themselves by `target` only (Target::host() by default); `config` is for
// the tunable choices (none of the convolutions' is a knob yet: docs/tuning.md).
void schedule_conv2d_nchw(Schedule& s, const Tensor& op, const Tensor& out, const Target& target = Target::host(),
                          const Config& config = {});
inline void schedule_conv2d_nchw(Schedule& s, const Tensor& op) { schedule_conv2d_nchw(s, op, op); }
void schedule_depthwise_conv2d_nchw(Schedule& s, const Tensor& op, const Tensor& out,
                                    const Target& target = Target::host(), const Config& config = {});
inline void schedule_depthwise_conv2d_nchw(Schedule& s, const Tensor& op) { schedule_depthwise_conv2d_nchw(s, op, op); }

// ---- the blocked layout NCHW[x]c of the TVM paper ----

// Channel block sizes for a conv2d with C input and O output channels, chosen by shape for
// the target's vector width: oc_bn is the vector axis (of the weights and the output; four
// vectors, 64 float32 channels with AVX-512, for outputs wider than 14, two for the others,
// where O is a multiple of that), ic_bn
// the data's input channel block, weight_ic_bn the weights' (a multiple of ic_bn: the length
// of the kernel's innermost reduction; see conv2d_nchwc_weight_ic_bn).
struct Conv2dBlocking {
    int64_t ic_bn = 1, oc_bn = 1, weight_ic_bn = 1;
};
Conv2dBlocking conv2d_nchwc_blocking(int64_t in_channels, int64_t out_channels, int64_t out_width,
                                     const Pad2d& padding = {}, int64_t kernel_width = 1,
                                     const Target& target = Target::host());
// The input channel block for conv2d_nchwc's weights over data blocked by ic_bn: up to 512
// channels (a multiple of ic_bn that divides the padded channel count) where the output is
// at most 14 wide (the schedule that gains from a longer innermost reduction: 7x7 +27%,
// 14x14 +10%) and the window is wider than 1 or the input padded (conv2d_nchwc then copies
// the input, padded and re-blocked); ic_bn otherwise (a 1x1 window measured no gain).
int64_t conv2d_nchwc_weight_ic_bn(int64_t in_channels, int64_t ic_bn, int64_t out_width, const Pad2d& padding,
                                  int64_t kernel_width = 1);
// The channel block for depthwise_conv2d_nchwc over `channels` channels (data, weights and
// output share it): two vectors where the channels allow, one, or all the channels.
int64_t depthwise_conv2d_nchwc_block(int64_t channels, const Target& target = Target::host());

// NCHW [N, C, H, W] -> NCHW[bn]c [N, ceil(C/bn), H, W, bn]; channels past C are zeros.
Tensor layout_transform_nchw_to_nchwc(const Tensor& data, int64_t bn, const std::string& name = "to_nchwc");
// NCHW[bn]c [N, C/bn, H, W, bn] -> NCHW [N, channels, H, W] (channels <= C/bn * bn; the
// padding channels are dropped).
Tensor layout_transform_nchwc_to_nchw(const Tensor& data, int64_t channels, const std::string& name = "to_nchw");
// OIHW [O, I, KH, KW] -> OIHW[ic_bn]i[oc_bn]o [ceil(O/oc_bn), ceil(I/ic_bn), KH, KW, ic_bn, oc_bn];
// channels past O and I are zeros.
Tensor pack_conv2d_weight_nchwc(const Tensor& weight, int64_t ic_bn, int64_t oc_bn,
                                const std::string& name = "weight_nchwc");
// Depthwise OIHW [C, 1, KH, KW] -> [ceil(C/bn), 1, KH, KW, 1, bn] (channels past C are zeros).
Tensor pack_depthwise_weight_nchwc(const Tensor& weight, int64_t bn, const std::string& name = "weight_nchwc");
// Vectorized, parallel schedule of any layout transform or weight packing above.
void schedule_layout_transform(Schedule& s, const Tensor& op, const Target& target = Target::host());

// data [N, C/ic_bn, H, W, ic_bn], weight [O/oc_bn, C/wb, KH, KW, wb, oc_bn] with wb a
// multiple of ic_bn (Conv2dBlocking::weight_ic_bn; where wb > ic_bn the kernel copies the
// input, padded or not, into blocks of wb channels) -> out [N, O/oc_bn, OH, OW, oc_bn].
// Data holding all its C channels in one block filled up with zeros ([N, 1, H, W, ic_bn],
// ic_bn > C) takes weights [O/oc_bn, 1, KH, KW, C, oc_bn]: the sum skips the zeros.
// groups (params.groups) are groups of whole blocks: output blocks [k OB/G, (k+1) OB/G)
// read input blocks [k IB/G, (k+1) IB/G) with weight [O/oc_bn, IB/G, KH, KW, ic_bn, oc_bn]
// (a grouped conv whose weights are filled up to blocks with zeros; depthwise has its own
// op). Where
// the taps in the padding are 3% of the work or more, the reduction leaves them out (a
// where-condition; docs/topi-conv.md#padding-taps-are-left-out).
Tensor conv2d_nchwc(const Tensor& data, const Tensor& weight, const Conv2dParams& params = {},
                    const std::string& name = "conv2d_nchwc");
// data [N, C/bn, H, W, bn], weight [C/bn, 1, KH, KW, 1, bn] -> out [N, C/bn, OH, OW, bn].
Tensor depthwise_conv2d_nchwc(const Tensor& data, const Tensor& weight, const Conv2dParams& params = {},
                              const std::string& name = "depthwise_conv2d_nchwc");
// out[n, oc, y, x, ob] = conv[n, oc, y, x, ob] + bias[oc, ob] (bias [O/oc_bn, oc_bn]), then
// max(., 0) if `relu`.
Tensor bias_add_nchwc(const Tensor& conv, const Tensor& bias, bool relu = false, const std::string& name = "bias_add");

void schedule_conv2d_nchwc(Schedule& s, const Tensor& op, const Tensor& out, const Target& target = Target::host(),
                           const Config& config = {});
inline void schedule_conv2d_nchwc(Schedule& s, const Tensor& op) { schedule_conv2d_nchwc(s, op, op); }
void schedule_depthwise_conv2d_nchwc(Schedule& s, const Tensor& op, const Tensor& out,
                                     const Target& target = Target::host(), const Config& config = {});
inline void schedule_depthwise_conv2d_nchwc(Schedule& s, const Tensor& op) {
    schedule_depthwise_conv2d_nchwc(s, op, op);
}

// ---- pooling, NCHW and NCHW[x]c ----
// data [N, C, H, W], or [N, C/x, H, W, x] in the blocked layout (the block carried along,
// vectorized by the schedules).

// The widest default register tile (pixels, rows) a convolution schedule takes over a
// symbolic extent (an image size): the kernel is specialized on a row holding a tile (its
// TailStrategy::ShiftInwardsOrGuard split), so the smaller the tile, the smaller the images
// whose tiles are all whole.
inline constexpr int64_t kSymbolicTileCap = 8;

struct Pool2dParams {
    Size2d kernel{1, 1};
    Size2d stride{1, 1};
    Pad2d padding{};
    // avg_pool2d: divide by the whole window (true) or by its part inside the input (false).
    bool count_include_pad = false;
    // Taps `dilation` apart: a window of k taps spans dilation * (k - 1) + 1 positions.
    Size2d dilation{1, 1};
    // The output extents rounded up (ONNX's and PyTorch's ceil_mode): a last window that runs
    // past the padded input where it starts inside the input or its leading padding; the taps
    // past the end count for nothing (an average divides by the window's part within the
    // padded input, or within the input without count_include_pad).
    bool ceil_mode = false;
};
// The output height and width of max_pool2d / avg_pool2d over an H x W input, or their
// weft::Error (naming `op`) for a kernel, stride or padding they refuse (padding must be
// smaller than the window's span: every window holds an input element) or a window that does
// not fit.
Size2d pool2d_out_size(int64_t H, int64_t W, const Pool2dParams& params, const std::string& op = "pool2d");
// Padding never wins a max: the window is only its part inside the input.
Tensor max_pool2d(const Tensor& data, const Pool2dParams& params, const std::string& name = "max_pool2d");
Tensor avg_pool2d(const Tensor& data, const Pool2dParams& params, const std::string& name = "avg_pool2d");
// [N, C, H, W] -> [N, C, 1, 1] ([N, C/x, H, W, x] -> [N, C/x, 1, 1, x]), the mean over H x W.
Tensor global_avg_pool2d(const Tensor& data, const std::string& name = "global_avg_pool2d");
// ONNX MaxPool's Indices over NCHW data [N, C, H, W]: where each maximum of
// `pooled` = max_pool2d(data, params) lies, as an int64 position in the whole input:
// ((n * C + c) * H + y) * W + x, or with `column_major` ((n * C + c) * W + x) * H + y. A
// window's first maximum in row-major order wins (ONNX Runtime's choice).
Tensor max_pool2d_indices(const Tensor& data, const Tensor& pooled, const Pool2dParams& params,
                          bool column_major = false, const std::string& name = "max_pool2d_indices");
// ONNX MaxUnpool where `indices` are max_pool2d_indices (row-major) of a max_pool2d with
// `window` over [N, C, H, W]: values, indices [N, C, OH, OW] -> [N, C, H, W], zeros but
// values[i] at position indices[i] (the last i in row-major order where several name one).
// Each output element looks only at the windows that cover it (window.dilation must be 1),
// so an index outside its window is never found: indices of another kind go through
// scatter_elements of the flattened tensors instead.
Tensor max_unpool2d(const Tensor& values, const Tensor& indices, const Pool2dParams& window, int64_t H, int64_t W,
                    const std::string& name = "max_unpool2d");

void schedule_pool2d(Schedule& s, const Tensor& op, const Tensor& out);
inline void schedule_pool2d(Schedule& s, const Tensor& op) { schedule_pool2d(s, op, op); }
void schedule_global_pool2d(Schedule& s, const Tensor& op, const Tensor& out);
inline void schedule_global_pool2d(Schedule& s, const Tensor& op) { schedule_global_pool2d(s, op, op); }

}  // namespace weft::topi
