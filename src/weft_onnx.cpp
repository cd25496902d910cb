// Compiles the ONNX importer once (see include/weft/frontend/onnx/impl/onnx.hpp).
#include <weft/frontend/onnx/impl/onnx.hpp>
