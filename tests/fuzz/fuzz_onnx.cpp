// libFuzzer target for the ONNX importer: bytes -> onnx::load_from_memory, and when the graph
// is small, graph::build and one run on inputs made of the same bytes. The contract is
// fuzz_contract.hpp's: it works or throws a (user) weft::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <weft/frontend/onnx/onnx.hpp>

#include "fuzz_contract.hpp"

namespace {

using namespace weft;

// Smaller than the defaults so that what loads also builds and runs within libFuzzer's
// -timeout: a tensor of up to 2^20 elements (8 MiB) loads. Past them the importer must
// refuse the model with an error naming the limit, which is part of what is tested.
onnx::LoadOptions fuzz_load_options() {
    onnx::LoadOptions o;
    o.limits.max_tensor_elements = int64_t(1) << 20;
    o.limits.max_tensor_bytes = int64_t(1) << 23;
    o.limits.max_nodes = 2000;
    o.limits.max_node_inputs = 256;
    o.max_loop_iterations = 16;  // (loops the data decides import, as loops or unrolled)
    return o;
}

// Only graphs this small are compiled and run. A kernel's work is bounded by its output's
// elements times what one element reads (at most an input's elements): 2^16 elements keeps a
// convolution or pooling with a huge window to ~2^32 operations, about a second, and 64 nodes
// keep graph::build (one JIT compile per fused group, slower with the sanitizers) to seconds.
constexpr int kMaxNodesToBuild = 64;
constexpr int64_t kMaxElementsToBuild = int64_t(1) << 16;

bool small_enough_to_build(const graph::Graph& g) {
    if (g.size() > kMaxNodesToBuild) return false;
    for (const graph::Node& n : g.nodes())
        if (n.type.size() > kMaxElementsToBuild) return false;
    return true;
}

// The process-wide kernel cache keeps compiled kernels (and their JIT memory) up to its byte
// budget (256 MiB by default); a long run compiles thousands. Forgetting them every 256
// keeps the fuzzer's memory well under libFuzzer's -rss_limit_mb, next to ASan's own.
constexpr size_t kMaxCachedKernels = 256;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    weft_fuzz::works_or_refuses([&] {
        graph::Graph g = onnx::load_from_memory(data, size, fuzz_load_options());
        if (!small_enough_to_build(g)) return;
        graph::Module m = graph::build(g);
        weft_fuzz::run_with_bytes(m, bytes);
    });
    if (KernelCache::global().size() > kMaxCachedKernels) KernelCache::global().clear();
    return 0;
}
