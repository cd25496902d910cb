// weft's operator inventory (TOPI: tensor operator inventory): for each operator a compute
// definition in the tensor language plus a default CPU schedule chosen by shape. See
// include/weft/topi/README.md for the conventions every operator follows.
#pragma once
#include "weft/topi/linalg.hpp"
#include "weft/topi/conv.hpp"
#include "weft/topi/nn.hpp"
#include "weft/topi/transform.hpp"
#include "weft/topi/resize.hpp"
#include "weft/topi/recurrent.hpp"
#include "weft/topi/einsum.hpp"
#include "weft/topi/x86.hpp"
#include "weft/topi/cuda.hpp"
