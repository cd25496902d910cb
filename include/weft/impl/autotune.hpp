// The implementation of the auto-tuning layer (autotune/): records, measurement, features, the cost model. Compiled once in
// src/weft_autotune.cpp, part of the weft_graph library (the layer above it).
#pragma once
#include "weft/autotune/impl/cost_model.hpp"
#include "weft/autotune/impl/features.hpp"
#include "weft/autotune/impl/model_search.hpp"
#include "weft/autotune/impl/records.hpp"
#include "weft/autotune/impl/measure.hpp"
#include "weft/autotune/impl/sketch.hpp"
