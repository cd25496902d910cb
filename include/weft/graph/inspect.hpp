// Looking inside a compiled graph: the profiler's per-kernel time table, the debug run that
// checks every fused kernel against its nodes compiled one by one, and a Graphviz picture
// of the graph with its fused groups. graph::Module has a method for each (graph/module.hpp):
//
//   graph::Module m = graph::build(g);
//   m.set_input("x", x);
//   std::cout << m.profile(20).str();        // kernel, nodes, mean time, share of the total
//   m.run_debug({.rtol = 1e-4});             // throws naming the first kernel that differs
//   std::ofstream("net.dot") << m.to_dot();  // dot -Tsvg net.dot -o net.svg
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "weft/graph/fuse.hpp"
#include "weft/graph/graph.hpp"

namespace weft::graph {

// ---- profiling --------------------------------------------------------------------------

struct KernelTiming {
    int index = -1;          // position in Module::kernels() (execution order)
    std::string name;        // "conv2d_bias_add_relu"
    std::vector<int> nodes;  // the graph nodes it computes
    double mean_ms = 0, min_ms = 0;
    double share = 0;  // mean_ms / the sum of every kernel's mean_ms
    int runs = 0;      // of the repeats, how many ran it (fewer: its branch was not taken: KernelInfo::condition)
};

struct ProfileReport {
    int repeats = 0;
    std::vector<KernelTiming> kernels;  // in execution order
    double kernels_ms = 0;              // the sum of the kernels' mean times
    double run_ms = 0;                  // the mean of one whole run(), timed on its own
    // The table, slowest kernel first:
    //   #  kernel                 nodes  mean ms   min ms  share
    //   0  conv2d_bias_add_relu       3    0.512    0.498  61.3%
    std::string str() const;
};

// ---- the debug run ----------------------------------------------------------------------

struct DebugOptions {
    // An element differs when |fused - reference| > atol + rtol * |reference| (or exactly
    // one of them is NaN).
    double rtol = 1e-4, atol = 1e-5;
    bool throw_on_mismatch = true;  // false: return the report instead
};

struct DebugReport {
    bool ok = true;
    int kernels_checked = 0;
    // The first kernel (in execution order) whose output differs; -1 when ok.
    int kernel = -1;
    std::string kernel_name;
    std::vector<int> nodes;               // the graph nodes it computes, the last its output
    std::vector<std::string> node_names;  // and their names
    int64_t mismatches = 0;         // elements that differ
    int64_t elements = 0;           // of the output's
    int64_t index = -1;             // the worst element (row-major)
    std::vector<int64_t> position;  // and its coordinates
    double fused = 0, reference = 0, max_abs_error = 0;
    // "ok: 4 kernels match their nodes run one by one" or "kernel 2 'conv2d_bias_add_relu'
    // (nodes conv, conv.bias, relu) differs from its nodes run one by one: 12 of 448 elements
    // differ, the worst at [0, 3, 1, 2]: fused 0.51, reference 0.49 (|error| 0.02)".
    std::string str() const;
};

// ---- Graphviz -----------------------------------------------------------------------------

struct DotOptions {
    bool constants = true;  // draw constants (small and grey); off: leave them out
    std::string title;      // a caption under the picture
};

// The graph in Graphviz's dot language: operator nodes labelled with their operator and
// output shape, inputs as ellipses, constants small and grey, outputs as plain labels, and
// each fused group a cluster titled with its kernel's index and name (the group's master,
// whose schedule the kernel takes, drawn bold). `groups` may be empty: no clusters.
std::string to_dot(const Graph& g, const std::vector<FusedGroup>& groups, const DotOptions& options = {});

}  // namespace weft::graph
