// topi: dense, matmul and batch_matmul.
#pragma once
#include "weft/te/compute.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft::topi {}  // namespace weft::topi
