// topi: x86 tensor intrinsics and the int8 and bfloat16 operators built on them. AVX-512
// VNNI's vpdpbusd multiplies 4 unsigned bytes by 4 signed bytes and adds the 4 products into
// an int32 lane, 16 lanes at once; AVX512_BF16's vdpbf16ps does the same for 2 bfloat16 pairs
// into a float32 lane. The matmul and conv2d here are scheduled so that their innermost
// loops are exactly that instruction (Stage::tensorize), with the weights in the layout it
// reads: 16 output channels x 4 (int8) or 2 (bfloat16) reduction elements contiguous (64 bytes).
#pragma once
#include "weft/te/compute.hpp"
#include "weft/te/tensor_intrin.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/topi/conv.hpp"

namespace weft::topi {

// c[16] (int32) += sum over k < 4 of int32(a[k]) * int32(b[j, k]), a u8[4], b s8[16, 4]:
// one vpdpbusd. Registered as "x86.vnni_dot_16x4".
TensorIntrin vnni_dot_16x4();

// Whether this CPU executes AVX-512 VNNI (the kernels below need it at run time).
bool host_has_vnni();

// c[16] (float32) += sum over k < 2 of float(a[k]) * float(b[j, k]), a bf16[2], b bf16[16, 2]:
// one vdpbf16ps (AVX512_BF16). Registered as "x86.bf16_dot_16x2".
TensorIntrin bf16_dot_16x2();

// Whether this CPU executes AVX512_BF16 (the bfloat16 kernels below need it at run time).
bool host_has_avx512_bf16();

// B s8[K, N] -> s8[N/16, K/4, 16, 4] (K a multiple of 4, N of 16): weights in the layout
// vpdpbusd reads. Run once at build time for constant weights.
Tensor pack_vnni_weight(const Tensor& b, std::string name = "b_vnni");

// C s32[M, N] = A u8[M, K] x B, with B given packed by pack_vnni_weight.
Tensor matmul_u8s8(const Tensor& a, const Tensor& b_packed, std::string name = "matmul_u8s8");
// 6 x 64 register tile of int32 accumulators, K innermost as vpdpbusd, column panels in parallel.
void schedule_matmul_u8s8(Schedule& s, const Tensor& op);
// The same inside a fused group whose output `out` is op followed by element-wise operators
// (zero-point corrections, a cast and scale to float32), for `target`: vpdpbusd where it has
// AVX-512 VNNI (avx512vnni in Target::features), else the same tile of int32 multiply-adds
// (correct on any CPU).
void schedule_matmul_u8s8(Schedule& s, const Tensor& op, const Tensor& out, const Target& target);

// B bf16[K, N] -> bf16[N/16, K/2, 16, 2] (K a multiple of 2, N of 16): weights in the layout
// vdpbf16ps reads (16 columns x 2 reduction elements, 64 bytes).
Tensor pack_bf16_weight(const Tensor& b, std::string name = "b_bf16");

// C f32[M, N] = A bf16[M, K] x B, with B given packed by pack_bf16_weight; products and sums
// in float32 (vdpbf16ps rounds each pair's sum once, and flushes subnormals).
Tensor matmul_bf16(const Tensor& a, const Tensor& b_packed, std::string name = "matmul_bf16");
// The register tile of schedule_matmul_u8s8 (6 rows x up to 64 float32 columns), K innermost
// in steps of 2 as vdpbf16ps.
void schedule_matmul_bf16(Schedule& s, const Tensor& op);
// The same inside a fused group whose output `out` is op followed by element-wise operators
// (a bias, an activation) computed from each register tile, for `target`: vdpbf16ps where it
// has AVX512_BF16 (avx512bf16 in Target::features), else the same tile of float32 FMAs, each
// bfloat16 widened (correct on any CPU; what BuildOptions::precision = bf16 runs there).
void schedule_matmul_bf16(Schedule& s, const Tensor& op, const Tensor& out, const Target& target);

// Intel AMX (amx-tile with amx-bf16 / amx-int8 in Target::features): C f32[16, 16] +=
// A bf16[16, K] x B packed by pack_bf16_weight, one panel [K/2, 16, 2] (K a multiple of 32),
// or C s32[16, 16] += A u8[16, K] x B packed by pack_vnni_weight, one panel [K/4, 16, 4] (K a
// multiple of 64); K fixed per intrinsic ("x86.amx_bf16_16x16xK", "x86.amx_u8s8_16x16xK").
// The lowering is one weft.amx_tdpbf16ps / weft.amx_tdpbusd: C kept in a tile register over
// the K steps of 64 bytes (a tdpbf16ps / tdpbusd each, A's and B's tiles loaded per step).
// A and C are read and written through their rows (the whole tensors' row strides), so the
// tensorized stage must be the output itself, not a local cache. Building such a kernel for
// a target without the features is a weft::Error.
// With `rows` x `cols` (1 or 2 each) tiles: C [16 rows, 16 cols] from A [16 rows, K] and
// `cols` neighbouring panels of B, each A and B tile loaded once per step for all the C tiles
// it meets ("x86.amx_bf16_32x32xK"); with `blocks` > 1, that many such blocks side by side
// (C [16 rows, 16 cols blocks], B's next cols panels each), one tile configuration for all.
TensorIntrin amx_bf16_tile(int64_t k, int64_t rows = 1, int64_t cols = 1, int64_t blocks = 1);
TensorIntrin amx_u8s8_tile(int64_t k, int64_t rows = 1, int64_t cols = 1, int64_t blocks = 1);
// Whether `target` has AMX's bfloat16 / int8 tiles (amx-tile and amx-bf16 / amx-int8).
bool has_amx_bf16(const Target& target);
bool has_amx_int8(const Target& target);
// matmul_bf16 / matmul_u8s8 on AMX tiles: C in blocks of 2 x 2 tiles (32 x 32; fewer where
// M or N is no multiple of 32), each row of blocks one tensorized amx_bf16_tile /
// amx_u8s8_tile over the whole K, the rows in parallel. M and N multiples of
// 16, K of 32 / 64 (a weft::Error names what is not); the kernel runs on a CPU with AMX (a
// Linux that refuses the process its AMX state: a weft::Error when it runs).
void schedule_matmul_bf16_amx(Schedule& s, const Tensor& op);
void schedule_matmul_u8s8_amx(Schedule& s, const Tensor& op);

// bfloat16 conv2d in conv2d_nchwc's blocked layout: data bf16 [N, C/ib, H, W, ib] (ib even:
// each pair of neighbouring channels is one vdpbf16ps operand), weights packed from
// conv2d_nchwc's float32 blocks [O/ob, C/wib, KH, KW, wib, ob] (wib a multiple of ib) to bf16
// [O/ob, C/ib, KH, KW, ib/2, ob, 2] (ob a multiple of 16), rounded to nearest even.
Tensor pack_conv2d_nchwc_bf16_weight(const Tensor& weight_nchwc, int64_t ib, std::string name = "weight_bf16");
// out f32 [N, O/ob, OH, OW, ob]: the products of bfloat16 pairs summed in float32; stride
// and zero padding from `p` (dilation 1, groups 1); taps in the padding left out of the sum
// (rows wider than 16 read in place), or read from a zero-padded copy of the input (narrower
// rows, and any where `padded_copy`: what AMX tiles need).
Tensor conv2d_nchwc_bf16(const Tensor& data, const Tensor& weight_packed, const Conv2dParams& p,
                         std::string name = "conv2d_bf16", bool padded_copy = false);
// On AMX tiles where `target` has amx-bf16 and the convolution fits them (ib a multiple of
// 16: steps of 64 bytes of channels, or 32 where ib is no multiple of 32; no taps left out of
// the sum: no padding, or a padded copy): per output block, tiles of
// up to 16 pixels of a row (a divisor of the width) x 16 channels, two rows and two
// 16-channel columns a block where they divide, summed over the whole reduction in the tile
// registers; `out`'s epilogue after it, element-wise. Otherwise a register tile of output
// columns x 16-channel vectors (at most 24 accumulators), the channel pairs and kw unrolled;
// vdpbf16ps where `target` has AVX512_BF16, float32 FMAs elsewhere, `out` (op or op followed
// by element-wise operators: bias, activation, a residual add) computed from each tile.
void schedule_conv2d_nchwc_bf16(Schedule& s, const Tensor& op, const Tensor& out, const Target& target);

// int8 conv2d in conv2d_nchwc's blocked layout (what BuildOptions::precision = int8 runs):
// data u8 [N, C/ib, H, W, ib] (ib a multiple of 4: each 4 neighbouring channels are one
// vpdpbusd operand); weights int8 in conv2d_nchwc's blocks [O/ob, C/wib, KH, KW, wib, ob]
// re-blocked to [O/ob, C/ib, KH, KW, ib/4, ob, 4] (wib a multiple of ib, ob of 16).
Tensor pack_conv2d_nchwc_u8s8_weight(const Tensor& weight_nchwc, int64_t ib, std::string name = "weight_u8s8");
// out s32 [N, O/ob, OH, OW, ob]: the products summed in int32; stride and padding from `p`
// (dilation 1, groups 1), the padding holding `zero_point` (the data's: a quantized 0.0).
// `padded_copy` as conv2d_nchwc_bf16's (a zero point that is not 0 is always a copy).
Tensor conv2d_nchwc_u8s8(const Tensor& data, const Tensor& weight_packed, const Conv2dParams& p, int64_t zero_point = 0,
                         std::string name = "conv2d_u8s8", bool padded_copy = false);
// On AMX tiles where `target` has amx-int8 and the convolution fits them (as
// schedule_conv2d_nchwc_bf16's, ib a multiple of 32); otherwise a register tile of output
// columns x 16-channel vectors (at most 24 accumulators), the channel quads and the tile
// unrolled; vpdpbusd where `target` has AVX-512 VNNI, int32 multiply-adds elsewhere. `out` is op or op followed by element-wise operators (the zero
// point's correction, the scales, a bias, an activation), computed from each tile.
void schedule_conv2d_nchwc_u8s8(Schedule& s, const Tensor& op, const Tensor& out, const Target& target);

// Blocked int8 layouts for conv2d: data u8 NCHW -> [N, C/4, H, W, 4]; weight s8 OIHW ->
// [O/16, I/4, KH, KW, 16, 4] (C a multiple of 4, O of 16).
Tensor layout_nchw_to_nchw4c(const Tensor& data, std::string name = "data_nchw4c");
Tensor pack_conv2d_vnni_weight(const Tensor& weight, std::string name = "weight_vnni");

// out s32[N, O/16, OH, OW, 16] = conv2d of blocked data (u8) and packed weights (s8),
// zero padding `pad` on every side, stride `stride`.
Tensor conv2d_nchwc_u8s8(const Tensor& data, const Tensor& weight_packed, int64_t stride, int64_t pad,
                         std::string name = "conv2d_u8s8");
void schedule_conv2d_nchwc_u8s8(Schedule& s, const Tensor& op);

}  // namespace weft::topi
