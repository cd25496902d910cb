// topi: conv2d (NCHW and blocked NCHW[x]c), depthwise conv2d, pooling and layout transforms.
#pragma once
#include "weft/te/compute.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft::topi {}  // namespace weft::topi
