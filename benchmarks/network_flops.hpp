// A network's work for the benchmarks' rates: its conv2d and dense multiply-adds x 2, so
// rates of one network compare as its latencies do (graph_bench.cpp, cuda_bench.cpp).
#pragma once
#include <weft/graph/graph.hpp>

namespace bench {

inline double network_flops(const weft::graph::Graph& g) {
    double flops = 0;
    for (const auto& n : g.nodes()) {
        if (n.op == "conv2d") {
            const auto& w = g.type(n.inputs[1]).shape;
            flops += 2.0 * double(n.type.size()) * double(w[1] * w[2] * w[3]);
        } else if (n.op == "dense") {
            flops += 2.0 * double(n.type.size()) * double(g.type(n.inputs[1]).shape[1]);
        }
    }
    return flops;
}

}  // namespace bench
