// Compiles the graph layer once (see include/weft/impl/graph.hpp).
#include <weft/impl/graph.hpp>
