// topi: element-wise and broadcasting arithmetic, activations, softmax, log_softmax, layer_norm and reductions.
// Each job has its own header; this one gathers them.
#pragma once
#include "weft/topi/broadcast.hpp"
#include "weft/topi/elementwise.hpp"
#include "weft/topi/injective.hpp"
#include "weft/topi/normalization.hpp"
#include "weft/topi/reduction.hpp"
#include "weft/topi/softmax.hpp"
