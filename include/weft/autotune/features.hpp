// What a cost model sees of a candidate: numbers read off its lowered loop program (TVM's
// itervar and Ansor's per-store features, condensed to one fixed-length vector) and its
// knobs' values. The program features let a model learn across tasks of one template; the
// knob features let it learn fast within one.
//
//   ir::PrimFunc f = lower(s, args, {.target = target});
//   std::vector<float> x = autotune::program_features(f);      // kProgramFeatures numbers
//   std::vector<float> k = autotune::knob_features(space, c);  // one per knob
#pragma once
#include <string>
#include <vector>

#include "weft/ir/function.hpp"
#include "weft/schedule/config.hpp"

namespace weft::autotune {

// The loops described per level of the hottest store's nest (innermost first; missing levels
// are zeros), and the buffers per level (the stored one, then the loads most often read).
inline constexpr int kFeatureLoops = 8;
inline constexpr int kFeatureBuffers = 4;
inline constexpr int kGlobalFeatures = 17;
inline constexpr int kPerBufferFeatures = 3;  // log2 stride, log2 footprint bytes, log2 reuse
inline constexpr int kPerLoopFeatures = 5 + kFeatureBuffers * kPerBufferFeatures;
inline constexpr int kProgramFeatures = kGlobalFeatures + kFeatureLoops * kPerLoopFeatures;

// The features of a lowered kernel; every count is log2(1 + x) so that sizes compare by ratio:
//   totals: float and integer operations, bytes loaded and stored, vector and scalar accesses,
//     widest vector, loops, deepest nest, parallel extent and loops, stores, scratch bytes,
//     arithmetic intensity (flops per byte moved), the hottest store's executions and its flops;
//   per loop around the hottest store (the store doing the most arithmetic, counted with its
//   loops' trip counts): extent, kind (parallel, vectorized, unrolled, serial) and for each
//   buffer it accesses the stride along the loop, the bytes touched from that loop inward and
//   their reuse (iterations per distinct element).
// A loop of unknown extent counts as 32 iterations.
std::vector<float> program_features(const ir::PrimFunc& f);
// Names of the features above, in order ("flops", "loop0.extent", "loop0.buf1.stride", ...).
const std::vector<std::string>& program_feature_names();

// log2(1 + value) of each knob of `space` as `config` sets it (the defaults for knobs it does not set).
std::vector<float> knob_features(const ConfigSpace& space, const Config& config);

}  // namespace weft::autotune
