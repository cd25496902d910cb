// weft: a tensor compiler as a C++20 embedded DSL.
//
//   Tensor C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); });
//   Schedule s = create_schedule(C);            // how to compute it: split, tile, ...
//   std::cout << lower(s, {A, B, C});           // the loop program
//   Kernel mm = build(s, {A, B, C});            // JIT-compiled for this CPU
//   mm(a, b, c);                                // Buffer<float> a, b, c
//
// This header never includes LLVM: the implementation is compiled once per project
// (CMake's weft::weft does it; see README.md).
#pragma once
#include "weft/ir/equality.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/target.hpp"
#include "weft/te/compute.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/schedule/config.hpp"
#include "weft/lower/lower.hpp"
#include "weft/runtime/buffer.hpp"
#include "weft/runtime/cuda/cuda.hpp"
#include "weft/runtime/device.hpp"
#include "weft/runtime/kernel.hpp"
#include "weft/runtime/kernel_cache.hpp"
#include "weft/runtime/thread_pool.hpp"
#include "weft/codegen/build.hpp"
#include "weft/codegen/cuda/codegen_cuda.hpp"
#include "weft/topi/topi.hpp"
#include "weft/autotune/cost_model.hpp"
#include "weft/autotune/features.hpp"
#include "weft/autotune/model_search.hpp"
#include "weft/autotune/records.hpp"
#include "weft/autotune/runner.hpp"
#include "weft/autotune/sketch.hpp"
#include "weft/graph/artifact.hpp"
#include "weft/graph/graph.hpp"
#include "weft/graph/module.hpp"
#include "weft/graph/op_registry.hpp"
#include "weft/graph/pass.hpp"
#include "weft/graph/tune.hpp"

namespace weft {
using ir::operator<<;
}  // namespace weft
