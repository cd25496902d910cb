// topi: element-wise and broadcasting arithmetic, activations, softmax, log_softmax, layer_norm and reductions.
#pragma once
#include "weft/te/compute.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft::topi {}  // namespace weft::topi
