// ResNet-18 through the graph layer: the network built with the C++ builder (random weights,
// graph/testing/models.hpp shows how), compiled in one call, run, timed with fusion on and
// off, and the memory plan next to one buffer per tensor.
#include <weft/graph/testing/models.hpp>
#include <weft/weft.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

using namespace weft;

// The fastest of `repeats` runs after two warm-up runs: on a shared machine the minimum is
// the figure that repeats (a mean mixes in whatever else ran).
double time_ms(graph::Module& m, int repeats) {
    m.run();
    m.run();
    double best = 1e30;
    for (int r = 0; r < repeats; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        m.run();
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
}

int main() {
    graph::Graph g = graph::testing::resnet18(/*batch=*/1, /*image=*/224, /*classes=*/1000);
    std::printf("ResNet-18: %d nodes\n", g.size());

    for (bool fuse : {true, false}) {
        auto t0 = std::chrono::steady_clock::now();
        graph::Module m = graph::build(g, Target::host(), {.fuse = fuse});
        double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        m.set_input("data", Buffer<float>::random({1, 3, 224, 224}, -1.f, 1.f, 42));
        double ms = time_ms(m, 10);
        const BufferRef& logits = m.get_output("logits");
        const float* p = static_cast<const float*>(logits.data());
        int best = 0;
        for (int i = 1; i < 1000; ++i)
            if (p[i] > p[best]) best = i;
        std::printf("fusion %-3s: %3zu kernels, built in %.1f s, %.1f ms per image (fastest of 10) on %d threads, "
                    "intermediates %.1f MiB planned (%.1f MiB one buffer each), top class %d\n",
                    fuse ? "on" : "off", m.kernels().size(), build_s, ms, num_threads(),
                    double(m.memory_bytes()) / (1 << 20), double(m.memory_naive_bytes()) / (1 << 20), best);
    }
    return 0;
}
