// The implementation of the ONNX importer (weft::onnx, frontend/onnx/onnx.hpp). Compiled
// once in src/weft_onnx.cpp, with Debian's ONNX protobuf classes (ONNX_ML=1,
// ONNX_NAMESPACE=onnx); nothing else includes it.
#pragma once
#include "weft/frontend/onnx/impl/load.hpp"
#include "weft/frontend/onnx/impl/compile.hpp"
