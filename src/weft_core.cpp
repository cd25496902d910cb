// Compiles weft's IR, arithmetic, tensor-expression and runtime code once (see
// include/weft/impl/core_ir.hpp).
#include <weft/impl/core_ir.hpp>
