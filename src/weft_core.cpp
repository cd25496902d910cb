// Compiles weft's non-LLVM implementation once (see include/weft/impl/core.hpp).
#include <weft/impl/core.hpp>
