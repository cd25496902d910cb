// Compiles weft's CUDA runtime once (see include/weft/impl/cuda_runtime.hpp).
#include <weft/impl/cuda_runtime.hpp>
