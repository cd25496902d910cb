// topi: the default CPU schedule of element-wise, broadcasting and other injective chains.
#pragma once
#include "weft/ir/target.hpp"
#include "weft/schedule/config.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft::topi {

// Inlines every injective stage that `out` reads up to the first reduction or input, then
// runs `out` as one vectorized, parallel loop nest: its axes fused (all of them when every
// read is element-for-element, else all but the last, which is then the vector axis), split
// into vectors of the host's width, chunks of vectors in parallel when there is enough work.
// Sized by `target`'s vector width (Target::host() by default); no knobs yet.
void schedule_injective(Schedule& s, const Tensor& out, const Target& target = Target::host(),
                        const Config& config = {});

}  // namespace weft::topi
