// topi: dense, matmul and batch_matmul.
//
// Each operator is a compute (validated shapes and dtypes, weft::Error naming the operator
// and the mismatch) plus a default CPU schedule chosen by shape (see topi/README.md):
//
//   Tensor C = topi::matmul(A, B);          // C[M, N] = A[M, K] * B[K, N]
//   Schedule s = create_schedule(C);
//   topi::schedule_matmul(s, C);
//
// The fast path is the TVM-paper CPU recipe: the right-hand operand is packed into column
// panels P[N / nr][K][nr] (its own stage, computed one panel at a time, so the panel stays
// in L2), a register-tiled micro-kernel (a local accumulator of mr x nr floats, rows
// unrolled, columns vectorized) runs over the whole K for each tile, and the outer loop over
// panels (or over row blocks, when there are too few panels) runs in parallel. Operands too
// small to repay packing (M no larger than one micro-tile) are read in place.
//
// Computes and schedules are templates: they size themselves by `target` only (its vector
// width and registers, its threads; Target::host() by default) and take their tunable
// choices from `config` (Config{}: the hand-picked defaults). Give the compute and the
// schedule the same target and config: the compute's knobs decide the packed layout the
// schedule then reads. The knobs: gemm.pack_rhs (pack B into panels or read it in place),
// gemm.nr (the panel width), gemm.mr (rows of the register tile), gemm.k_unroll,
// gemm.parallel_panels (parallel over panels or over row blocks), gemm.stream_chunk
// (columns per parallel chunk where B is read in place). docs/tuning.md lists a space.
#pragma once
#include <string>

#include "weft/ir/target.hpp"
#include "weft/schedule/config.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"

namespace weft::topi {

// ---- computes -------------------------------------------------------------------------

// C[M, N] = A[M, K] * B[K, N]. Float operands of one dtype.
Tensor matmul(const Tensor& A, const Tensor& B, const std::string& name = "matmul",
              const Target& target = Target::host(), const Config& config = {});

// Y[M, N] = X[M, K] * W[N, K]^T (+ bias[N]): ONNX Gemm with transB, torch.nn.Linear. With a
// bias, the result is an element-wise stage over the reduction (schedule_dense fuses it).
Tensor dense(const Tensor& X, const Tensor& W, const Tensor& bias = Tensor(), const std::string& name = "dense",
             const Target& target = Target::host(), const Config& config = {});

// C[b, M, N] = A[b, M, K] * B[b, K, N]. Either operand may have a batch of 1, broadcast to
// the other's batch.
Tensor batch_matmul(const Tensor& A, const Tensor& B, const std::string& name = "batch_matmul",
                    const Target& target = Target::host(), const Config& config = {});

// ---- pre-packed weights for dense -----------------------------------------------------

// The panel width dense_pack_weight uses by default for N output features.
int64_t dense_pack_width(int64_t N, const Target& target = Target::host());

// W[N, K] -> Wp[ceil(N / width), K, width], Wp(p, k, c) = W(p * width + c, k) (zero past N):
// run once, outside the timed kernel (schedule it with schedule_dense_pack_weight).
// width 0 picks dense_pack_width(N).
Tensor dense_pack_weight(const Tensor& W, int64_t width = 0, const std::string& name = "dense_weight_packed",
                         const Target& target = Target::host());

// Y[M, N] = X[M, K] * W^T (+ bias[N]) from the packed weight of dense_pack_weight; N is the
// unpacked weight's row count.
Tensor dense_packed(const Tensor& X, const Tensor& packed_W, int64_t N, const Tensor& bias = Tensor(),
                    const std::string& name = "dense");

// ---- default CPU schedules ------------------------------------------------------------
// `op` is the tensor the compute above returned, `out` the tensor the kernel writes: op
// itself (undefined `out` means op) or an element-wise epilogue of it (bias, ReLU, ...),
// fused into the micro-kernel's write-back. Stages strictly between op and out must be
// inlined by the caller.

void schedule_matmul(Schedule& s, const Tensor& op, const Tensor& out = Tensor(),
                     const Target& target = Target::host(), const Config& config = {});
// dense and dense_packed
void schedule_dense(Schedule& s, const Tensor& op, const Tensor& out = Tensor(), const Target& target = Target::host(),
                    const Config& config = {});
void schedule_batch_matmul(Schedule& s, const Tensor& op, const Tensor& out = Tensor(),
                           const Target& target = Target::host(), const Config& config = {});
void schedule_dense_pack_weight(Schedule& s, const Tensor& packed_W);

}  // namespace weft::topi
