// Compiles the LLVM IR emitter once (see include/weft/impl/llvm_emit.hpp).
#include <weft/impl/llvm_emit.hpp>
