// Compiles the CUDA code generator and the NVRTC loader once (see include/weft/impl/cuda_codegen.hpp).
#include <weft/impl/cuda_codegen.hpp>
