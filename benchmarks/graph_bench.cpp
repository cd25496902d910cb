// Whole networks through the graph layer: ResNet-18 and MobileNetV2 built with the C++ builder
// (graph/testing/models.hpp, random weights, batch 1, 224x224), end-to-end latency with
// operator fusion on ("weft") against the same graph with fusion off ("unfused": one kernel
// per operator) in the same run. The work is the network's multiply-add count x 2 (conv2d
// and dense), so the rates compare as latencies do. Counters: the memory plan's arena
// (planned_MiB) next to one buffer per kernel output (naive_MiB) and one per operator output
// (operator_MiB), and the kernel count.
#include <weft/graph/testing/models.hpp>
#include <weft/weft.hpp>

#include "harness.hpp"
#include "network_flops.hpp"

namespace {

bench::Runner run_network(const weft::graph::Graph& g, bool fuse) {
    auto m = std::make_shared<weft::graph::Module>(weft::graph::build(g, weft::Target::host(), {.fuse = fuse}));
    m->set_input(0, weft::Buffer<float>::random(m->input(0).shape(), -1.f, 1.f, 7));
    bench::report_counter("planned_MiB", double(m->memory_bytes()) / (1 << 20));
    bench::report_counter("naive_MiB", double(m->memory_naive_bytes()) / (1 << 20));
    bench::report_counter("operator_MiB", double(m->memory_operator_bytes()) / (1 << 20));
    bench::report_counter("kernels", double(m->kernels().size()));
    return [m] { m->run(); };
}

struct Network {
    const char* name;
    weft::graph::Graph (*make)();
};

const Network kNetworks[] = {{"resnet18/b1", [] { return weft::graph::testing::resnet18(); }},
                             {"mobilenet_v2/b1", [] { return weft::graph::testing::mobilenet_v2(); }}};

[[maybe_unused]] const bool registered = [] {
    for (const Network& net : kNetworks) {
        auto g = std::make_shared<weft::graph::Graph>(net.make());
        bench::Case c{net.name, bench::Unit::Flops, bench::network_flops(*g)};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [g] { return run_network(*g, true); });
            bench::add(c, "unfused", t, [g] { return run_network(*g, false); });
        }
    }
    return true;
}();

}  // namespace
