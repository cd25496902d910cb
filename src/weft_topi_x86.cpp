// Compiles topi's x86 tensor intrinsics and int8 operators once (see include/weft/topi/impl/x86.hpp).
#include <weft/topi/impl/x86.hpp>
