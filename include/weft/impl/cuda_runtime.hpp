// The implementation of weft's CUDA runtime (runtime/cuda/): the driver loaded with dlopen,
// device contexts, device memory, streams, module loading and launch. No CUDA header is
// needed: it compiles (and runs, saying there is no device) on any machine. Compiled once
// in src/weft_cuda_runtime.cpp; core.hpp includes it for builds without CMake.
#pragma once
#include "weft/runtime/cuda/impl/driver_load.hpp"
#include "weft/runtime/cuda/impl/context.hpp"
#include "weft/runtime/cuda/impl/memory.hpp"
#include "weft/runtime/cuda/impl/stream.hpp"
#include "weft/runtime/cuda/impl/launch.hpp"
