// What the graph pass tests share: a graph's operators as a list, and the check that a
// pass changes no output (the module built with it against the module built without).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "weft/weft.hpp"

namespace pass_testing {

using namespace weft;
using Ops = std::vector<std::string>;

// Every pass switched off.
inline graph::BuildOptions no_passes() {
    return {.eliminate_dead_code = false, .eliminate_common_subexpressions = false, .fold_constants = false,
            .fold_scale_axis = false, .simplify_operators = false, .convert_layout = false};
}

// The operators of g's operator nodes, in stored order ("input" and "constant" left out).
inline std::vector<std::string> ops_of(const graph::Graph& g) {
    std::vector<std::string> ops;
    for (const graph::Node& n : g.nodes())
        if (n.is_op()) ops.push_back(n.op);
    return ops;
}

inline int count_of(const graph::Graph& g, const std::string& op) {
    return int(std::count_if(g.nodes().begin(), g.nodes().end(), [&](const graph::Node& n) { return n.op == op; }));
}

// The relative difference between the outputs of two modules built from g (with and
// without a pass) on the same random inputs; checks that they have the same outputs.
inline double max_output_difference(const graph::Graph& g, const graph::BuildOptions& with,
                                    const graph::BuildOptions& without, uint64_t seed = 7) {
    graph::Module a = graph::build(g, Target::host(), with), b = graph::build(g, Target::host(), without);
    REQUIRE(a.num_inputs() == b.num_inputs());
    REQUIRE(a.output_names() == b.output_names());
    for (int i = 0; i < a.num_inputs(); ++i) {
        const BufferRef& in = a.input(i);
        Buffer<float> data = Buffer<float>::random(in.shape(), -1.f, 1.f, seed + uint64_t(i));
        a.set_input(i, data);
        b.set_input(i, data);
    }
    a.run();
    b.run();
    double worst = 0;
    for (int k = 0; k < a.num_outputs(); ++k) {
        const BufferRef &x = a.get_output(k), &y = b.get_output(k);
        REQUIRE(x.shape() == y.shape());
        const float *p = static_cast<const float*>(x.data()), *q = static_cast<const float*>(y.data());
        for (int64_t i = 0; i < x.size(); ++i)
            worst = std::max(worst, double(std::abs(p[i] - q[i])) / std::max(1.0, double(std::abs(q[i]))));
    }
    return worst;
}

}  // namespace pass_testing
