// The implementation of every non-LLVM part of weft, in three parts that CMake's weft::weft
// compiles in separate translation units (src/weft_core.cpp, src/weft_lower.cpp,
// src/weft_cuda_runtime.cpp). Without CMake, include this file in exactly one translation
// unit of your program, together with weft/impl/llvm_emit.hpp and weft/impl/llvm_jit.hpp
// (and link with -ldl).
#pragma once
#include "weft/impl/core_ir.hpp"
#include "weft/impl/core_lower.hpp"
#include "weft/impl/cuda_runtime.hpp"
