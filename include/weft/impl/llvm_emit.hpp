// LLVM IR emission: a lowered PrimFunc → an (unoptimized) LLVM module. Include it in exactly
// one translation unit (CMake's weft::weft does this in src/weft_llvm_emit.cpp).
#pragma once
#include "weft/codegen/llvm/impl/codegen.hpp"
#include "weft/codegen/llvm/impl/emit_amx.hpp"
#include "weft/codegen/llvm/impl/emit_args.hpp"
#include "weft/codegen/llvm/impl/emit_expr.hpp"
#include "weft/codegen/llvm/impl/emit_memory.hpp"
#include "weft/codegen/llvm/impl/emit_parallel.hpp"
#include "weft/codegen/llvm/impl/emit_stmt.hpp"
