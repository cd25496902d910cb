// The implementation of topi's element-wise and broadcasting arithmetic, activations, softmax, log_softmax, layer_norm and reductions. Compiled once in src/weft_topi_nn.cpp.
#pragma once
#include "weft/topi/nn.hpp"
