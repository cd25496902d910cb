// The implementation of topi's dense, matmul and batch_matmul. Compiled once in src/weft_topi_linalg.cpp.
#pragma once
#include "weft/topi/linalg.hpp"
#include "weft/topi/impl/linalg_compute.hpp"
#include "weft/topi/impl/linalg_schedule.hpp"
