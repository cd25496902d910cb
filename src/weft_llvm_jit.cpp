// Compiles the optimizer and ORC JIT set-up once (see include/weft/impl/llvm_jit.hpp).
#include <weft/impl/llvm_jit.hpp>
