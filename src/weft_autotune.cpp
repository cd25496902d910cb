// Compiles the auto-tuning layer once (see include/weft/impl/autotune.hpp).
#include <weft/impl/autotune.hpp>
