// Compiles topi's element-wise and broadcasting arithmetic, activations, softmax, log_softmax, layer_norm and reductions once (see include/weft/impl/topi_nn.hpp).
#include <weft/impl/topi_nn.hpp>
