// Template-free schedules (Ansor's idea, for CPUs): a schedule space generated from the
// structure of a computation nobody wrote a template for — a user's own tensor expression
// too — whose knobs (tile sizes, the reduction's steps, unrolling, parallel loops) the tuners
// search like a template's.
//
//   Schedule s = create_schedule(C);
//   autotune::auto_schedule(s, C, target, config);   // config: a point of the space, {} the default
//
// The sketch's rules, in order: element-wise stages are inlined (those the reduction reads,
// a padding, or computed first: auto.inline); the output is tiled in two
// levels (a cache tile of register tiles) over its spatial axes; if the output is a reduction,
// or an element-wise epilogue of exactly one, the reduction accumulates a register tile
// (cache_write, or the reduction computed at the tile), its reduce axes split in two, the
// tile's innermost axis vectorized and its others unrolled — or, for a long reduction along
// its innermost axis, rfactor keeps one partial result per vector lane and the lanes combine
// as a tree (auto.rfactor); the outer tile loops are fused and run in parallel. Other
// reductions (a softmax's) stay whole, their outer loop parallel.
// Knobs: auto.s<i>.inner (the register tile of spatial axis i, among its divisors up to 64),
// auto.s<i>.outer (the cache tile: at most that many register tiles, as many as divide the
// axis), auto.k<j> (the inner step of reduce axis j), auto.inline, auto.rfactor and
// auto.unroll (0/1), auto.parallel (how many outer loops are fused and parallel). Every point
// of the space is a valid schedule.
//
// graph: an operator registered without a schedule whose computation is a reduction gets the
// sketch (or name it: `.schedule = graph::auto_schedule_op`, graph/op_registry.hpp), and
// graph::tune searches its space (docs/tuning.md, "Template-free schedules").
#pragma once
#include "weft/ir/target.hpp"
#include "weft/schedule/config.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft::autotune {

void auto_schedule(Schedule& s, const Tensor& out, const Target& target, const Config& config = {});

}  // namespace weft::autotune
