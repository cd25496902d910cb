// ORC JIT: written by the codegen work.
