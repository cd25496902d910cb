// The implementation of topi's conv2d (NCHW and blocked NCHW[x]c), depthwise conv2d, pooling and layout transforms. Compiled once in src/weft_topi_conv.cpp.
#pragma once
#include "weft/topi/conv.hpp"
#include "weft/topi/impl/conv_checks.hpp"
#include "weft/topi/impl/conv_layout.hpp"
#include "weft/topi/impl/conv_nchw.hpp"
#include "weft/topi/impl/conv_nchwc.hpp"
#include "weft/topi/impl/conv_pool.hpp"
#include "weft/topi/impl/conv_deform.hpp"
