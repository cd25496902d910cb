// topi's default GPU schedules (Target::cuda()), TVM's recipes: one function per operator
// family, each picking its tiles from the shapes. They schedule the same computations as the
// CPU schedules (the compute functions are shared); build the schedule with
// build(s, args, Target::cuda()).
//
//   Tensor C = topi::matmul(A, B);
//   Schedule s = create_schedule(C);
//   topi::cuda::schedule_matmul(s, C);
//   auto kernel = build(s, {A, B, C}, Target::cuda());
//
// `op` is the operator's output and `out` the tensor the kernel writes (op, or an element-
// wise epilogue of it), as for the CPU schedules (topi/README.md). `schedule(s, op, out)`
// is the one entry point the graph layer needs: it finds the operator from op's stages.
//
// Tensor cores: mma_m16n8k16 declares the warp's matrix multiply-accumulate (mma.sync) as a
// tensor intrinsic; matmul_tensorcore + schedule_matmul_tensorcore run a float16/bfloat16
// matmul (float32 result) on it.
#pragma once
#include "weft/schedule/config.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/te/tensor_intrin.hpp"

namespace weft::topi::cuda {

// Threads per block of the one-dimensional schedules (injective, rows of a reduction).
inline constexpr int64_t kBlockThreads = 256;

// Element-wise / broadcast / other injective chains: the producers inlined, all axes fused,
// split by the block size and bound to blockIdx.x / threadIdx.x; 4-wide vectors when every
// read is element for element and the size divides.
void schedule_injective(Schedule& s, const Tensor& out);

// sum / mean / max / min / prod over any axes. A reduction along the innermost axis of its
// input: one block per output element, the reduction split across the block's threads
// (rfactor into a shared buffer), a barrier, then one combine. Along outer axes (or short
// reductions): one thread per output element, so neighbouring threads read neighbouring
// addresses.
void schedule_reduce(Schedule& s, const Tensor& op, const Tensor& out);
inline void schedule_reduce(Schedule& s, const Tensor& op) { schedule_reduce(s, op, op); }

// matmul / dense (bias included) / batch_matmul: a block tile of C per thread block, tiles of
// A and B in shared memory fetched cooperatively and double-buffered, a register tile of C
// per thread (vthreads interleave the threads' rows and columns).
// A template (schedule/config.hpp) where a tiling divides the shape; its knobs, defaults the
// hand choice: cuda.gemm.bm / bn (the block's tile of C), tm / tn (a thread's register tile)
// and kt (the reduction's step). A point whose tiles do not fit (a register tile that does
// not divide the block's, more than 1024 threads) is a weft::Error naming the knobs.
void schedule_matmul(Schedule& s, const Tensor& op, const Tensor& out, const Config& config = {});
inline void schedule_matmul(Schedule& s, const Tensor& op) { schedule_matmul(s, op, op); }
void schedule_dense(Schedule& s, const Tensor& op, const Tensor& out, const Config& config = {});
inline void schedule_dense(Schedule& s, const Tensor& op) { schedule_dense(s, op, op); }
void schedule_batch_matmul(Schedule& s, const Tensor& op, const Tensor& out, const Config& config = {});
inline void schedule_batch_matmul(Schedule& s, const Tensor& op) { schedule_batch_matmul(s, op, op); }

// softmax / log_softmax / layer_norm: one block per row; each row statistic is split across
// the block's threads (rfactor into shared memory), combined, then the row is written by all
// threads.
void schedule_softmax(Schedule& s, const Tensor& op, const Tensor& out);
inline void schedule_softmax(Schedule& s, const Tensor& op) { schedule_softmax(s, op, op); }
void schedule_log_softmax(Schedule& s, const Tensor& op, const Tensor& out);
inline void schedule_log_softmax(Schedule& s, const Tensor& op) { schedule_log_softmax(s, op, op); }
void schedule_layer_norm(Schedule& s, const Tensor& op, const Tensor& out);
inline void schedule_layer_norm(Schedule& s, const Tensor& op) { schedule_layer_norm(s, op, op); }

// conv2d NCHW (stride, padding, dilation, groups; depthwise too): a tile of output channels x
// output pixels per block, the padded input tile and the weights in shared memory, a
// register tile per thread. Knobs (config): cuda.conv.ft, tz (a thread's output channels, the
// block's groups of them), py, px (a thread's rows and columns), yb, xb (the block's), rc
// (input channels per shared-memory step).
void schedule_conv2d_nchw(Schedule& s, const Tensor& op, const Tensor& out, const Config& config = {});
inline void schedule_conv2d_nchw(Schedule& s, const Tensor& op) { schedule_conv2d_nchw(s, op, op); }
void schedule_depthwise_conv2d_nchw(Schedule& s, const Tensor& op, const Tensor& out, const Config& config = {});
inline void schedule_depthwise_conv2d_nchw(Schedule& s, const Tensor& op) { schedule_depthwise_conv2d_nchw(s, op, op); }

// max/avg pooling (one thread per output element) and global pooling (a reduction).
void schedule_pool2d(Schedule& s, const Tensor& op, const Tensor& out);
inline void schedule_pool2d(Schedule& s, const Tensor& op) { schedule_pool2d(s, op, op); }
void schedule_global_pool2d(Schedule& s, const Tensor& op, const Tensor& out);
inline void schedule_global_pool2d(Schedule& s, const Tensor& op) { schedule_global_pool2d(s, op, op); }

// The dispatch: the GPU schedule for the operator that computed `op` (recognised by its
// stage names and structure), fusing the epilogue `out`. Throws weft::Error naming `op` when
// it is none of the above.
void schedule(Schedule& s, const Tensor& op, const Tensor& out);
inline void schedule(Schedule& s, const Tensor& op) { schedule(s, op, op); }

// ---- tensor cores ----------------------------------------------------------------------
//
// The warp-wide mma.sync.m16n8k16 (float16 or bfloat16 inputs, float32 accumulators) as a
// tensor intrinsic. Its fragment layouts are documented (PTX ISA, "Matrix fragments for
// mma.m16n8k16"), so what ONE thread (lane) of the warp computes is expressible in the tensor
// language: with g = lane / 4 and t = lane % 4, the lane holds the accumulators
// C[g + 8*i, 2t + j] for i, j in {0, 1}, each summed over the 16 k. The intrinsic's
// description is that per-lane 2 x 2 x 16 block (a read at rows 8*i of the lane's origin);
// its lowering loads the lane's A and B fragment elements around that origin and emits the
// mma.sync, which every lane of the warp executes together.

// "cuda.mma_m16n8k16_f16" / "cuda.mma_m16n8k16_bf16": c[2, 2] (f32) += sum over k < 16 of
// f32(a[8i, k]) * f32(b[k, j]), for one lane (see above). `in` is f16 or bf16.
TensorIntrin mma_m16n8k16(DataType in);

// C f32[M, N] = A[M, K] x B[K, N] with A, B float16 or bfloat16, products summed in float32.
// Computed as a fragment-shaped accumulator [M/16, N/8, 8, 4, 2, 2] (the mma layout: row
// i = 16*mo + 8*rh + rl, column j = 8*no + 2*ch + cl; dimensions mo, no, rl, ch, rh, cl: a
// lane's 2 x 2 accumulators last) and C reading it. M, N, K must be
// multiples of 16, 8 and 16 (pad them).
Tensor matmul_tensorcore(const Tensor& A, const Tensor& B, const std::string& name = "matmul_tc");
// Blocks of (2x2 warps) x (32x16 per warp), A and B tiles in shared memory (32 deep,
// double-buffered), each warp's 16x8x16 steps tensorized onto mma.sync. `C` is what matmul_tensorcore returned.
void schedule_matmul_tensorcore(Schedule& s, const Tensor& C);

}  // namespace weft::topi::cuda
