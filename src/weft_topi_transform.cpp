// Compiles topi's data movement and type operators (reshape, transpose, concat, slice, pad, gather, where, cast, ...) once (see include/weft/impl/topi_transform.hpp).
#include <weft/impl/topi_transform.hpp>
