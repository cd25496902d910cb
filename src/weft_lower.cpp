// Compiles weft's schedule and lowering code once (see include/weft/impl/core_lower.hpp).
#include <weft/impl/core_lower.hpp>
