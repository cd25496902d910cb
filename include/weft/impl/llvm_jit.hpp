// The LLVM optimizer, the ORC JIT and Target::host(). Include it in exactly one
// translation unit (CMake's weft::weft does this in src/weft_llvm_jit.cpp).
#pragma once
#include "weft/codegen/llvm/impl/compile.hpp"
#include "weft/codegen/llvm/impl/disk_cache.hpp"
#include "weft/codegen/llvm/impl/host_target.hpp"
#include "weft/codegen/impl/build.hpp"
