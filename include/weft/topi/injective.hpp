// topi: the default CPU schedule of element-wise, broadcasting and other injective chains.
#pragma once
#include "weft/schedule/schedule.hpp"

namespace weft::topi {

// Inlines every injective stage that `out` reads up to the first reduction or input, then
// runs `out` as one vectorized, parallel loop nest: its axes fused (all of them when every
// read is element-for-element, else all but the last, which is then the vector axis), split
// into vectors of the host's width, chunks of vectors in parallel when there is enough work.
void schedule_injective(Schedule& s, const Tensor& out);

}  // namespace weft::topi
