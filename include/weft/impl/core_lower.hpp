// The implementation of schedules and lowering. Compiled once in src/weft_lower.cpp (see
// core.hpp); a separate translation unit so the two halves build in parallel.
#pragma once
#include "weft/schedule/impl/schedule.hpp"
#include "weft/schedule/impl/rfactor.hpp"
#include "weft/schedule/impl/serialize.hpp"
#include "weft/schedule/impl/config.hpp"
#include "weft/lower/impl/lower.hpp"
