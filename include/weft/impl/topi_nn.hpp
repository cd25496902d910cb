// The implementation of topi's element-wise and broadcasting arithmetic, activations, softmax, log_softmax, layer_norm, reductions and recurrent layers. Compiled once in src/weft_topi_nn.cpp.
#pragma once
#include "weft/topi/nn.hpp"
#include "weft/topi/impl/nn_broadcast.hpp"
#include "weft/topi/impl/nn_elementwise.hpp"
#include "weft/topi/impl/nn_injective.hpp"
#include "weft/topi/impl/nn_reduction.hpp"
#include "weft/topi/impl/nn_softmax.hpp"
#include "weft/topi/impl/nn_normalization.hpp"
#include "weft/topi/impl/recurrent.hpp"
