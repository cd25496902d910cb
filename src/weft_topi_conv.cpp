// Compiles topi's conv2d (NCHW and blocked NCHW[x]c), depthwise conv2d, pooling and layout transforms once (see include/weft/impl/topi_conv.hpp).
#include <weft/impl/topi_conv.hpp>
