// The implementation of the graph layer: the Graph, its operators, fusion, memory planning
// and the executor. Compiled once in src/weft_graph.cpp.
#pragma once
#include "weft/graph/graph.hpp"
#include "weft/graph/impl/artifact.hpp"
#include "weft/graph/impl/builder.hpp"
#include "weft/graph/impl/fuse.hpp"
#include "weft/graph/impl/graph.hpp"
#include "weft/graph/impl/memory_plan.hpp"
#include "weft/graph/impl/module.hpp"
#include "weft/graph/impl/debug_check.hpp"
#include "weft/graph/impl/dot.hpp"
#include "weft/graph/impl/profile.hpp"
#include "weft/graph/impl/op_registry.hpp"
#include "weft/graph/impl/passes_fold_constants.hpp"
#include "weft/graph/impl/passes_fold_scale_axis.hpp"
#include "weft/graph/impl/passes_layout.hpp"
#include "weft/graph/impl/passes_pipeline.hpp"
#include "weft/graph/impl/passes_simplify.hpp"
