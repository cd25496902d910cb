// The implementation of every non-LLVM part of weft. Include it in exactly one translation
// unit (CMake's weft::weft does this for you in src/weft_core.cpp).
#pragma once
#include "weft/ir/impl/op.hpp"
#include "weft/ir/impl/visitor.hpp"
#include "weft/ir/impl/printer.hpp"
#include "weft/ir/impl/equality.hpp"
#include "weft/te/impl/operation.hpp"
#include "weft/runtime/impl/c_runtime.hpp"
#include "weft/runtime/impl/thread_pool.hpp"
#include "weft/runtime/impl/buffer.hpp"
#include "weft/runtime/impl/kernel.hpp"
#include "weft/runtime/impl/kernel_cache.hpp"
#include "weft/schedule/impl/schedule.hpp"
#include "weft/lower/impl/lower.hpp"
