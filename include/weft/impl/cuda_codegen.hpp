// The CUDA backend's compiler half: CUDA C generation and NVRTC (through dlopen). Include it
// in exactly one translation unit (CMake's weft::weft does this in src/weft_cuda_codegen.cpp).
// It needs no CUDA header: the toolkit's include directory is only passed to NVRTC.
#pragma once
#include "weft/codegen/cuda/impl/compile.hpp"
