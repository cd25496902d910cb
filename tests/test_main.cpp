#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

int main(int argc, char** argv) {
    // Tests count compiles and cache misses: a kernel cache directory inherited from the
    // environment would serve kernels from disk instead (the disk cache's own tests set one).
    unsetenv("WEFT_KERNEL_CACHE_DIR");
    unsetenv("WEFT_MODEL_CACHE_DIR");  // likewise compiled modules (onnx::compile)
    return doctest::Context(argc, argv).run();
}
