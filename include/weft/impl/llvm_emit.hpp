// LLVM IR emission: written by the codegen work.
