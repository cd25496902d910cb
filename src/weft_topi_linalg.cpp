// Compiles topi's dense, matmul and batch_matmul once (see include/weft/impl/topi_linalg.hpp).
#include <weft/impl/topi_linalg.hpp>
