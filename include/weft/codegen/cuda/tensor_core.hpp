// Tensor-core instructions in the loop program: the calls a tensor intrinsic's lowering
// emits (topi/cuda.hpp: mma_m16n8k16) and the CUDA backend prints as inline PTX
// (codegen/cuda/impl/tensor_core.hpp).
#pragma once

namespace weft::codegen::tensor_core {

// Evaluate(Call(i32, mma_m16n8k16_f16 or _bf16, {c0, c1, c2, c3, a0..a7, b0..b3},
// Intrinsic)): one lane's part of the warp-wide mma.sync.aligned.m16n8k16.row.col.f32.
// <f16|bf16>.<f16|bf16>.f32. c0..c3 are loads of the lane's float32 accumulators (read and
// written: they must be loads of a buffer element), a0..a7 its 8 elements of the 16x16 A
// fragment, b0..b3 its 4 of the 16x8 B fragment, in the PTX ISA's order ("Matrix fragments
// for mma.m16n8k16"). Every lane of the warp must execute it, converged.
inline constexpr const char* mma_m16n8k16_f16 = "weft.cuda.mma_m16n8k16_f16";
inline constexpr const char* mma_m16n8k16_bf16 = "weft.cuda.mma_m16n8k16_bf16";

}  // namespace weft::codegen::tensor_core
