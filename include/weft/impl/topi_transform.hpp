// The implementation of topi's data movement and type operators (reshape, flatten, transpose,
// concat, slice, pad, squeeze, unsqueeze, the gathers, cumsum, where, cast, resize, einsum). Compiled once in
// src/weft_topi_transform.cpp.
#pragma once
#include "weft/topi/transform.hpp"
#include "weft/topi/impl/transform.hpp"
#include "weft/topi/impl/indexing.hpp"
#include "weft/topi/impl/scatter.hpp"
#include "weft/topi/resize.hpp"
#include "weft/topi/impl/resize.hpp"
#include "weft/topi/impl/grid_sample.hpp"
#include "weft/topi/impl/roi_align.hpp"
#include "weft/topi/einsum.hpp"
#include "weft/topi/impl/einsum.hpp"
