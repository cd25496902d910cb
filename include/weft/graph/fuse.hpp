// Operator fusion by op pattern, as the TVM paper describes it (and TVM's GraphPartitioner
// implements it): a post-dominator tree over the operator nodes decides which nodes can
// join the group of the node that post-dominates them, so that every group has a single
// output and is compiled into ONE kernel:
//   - an out-element-wise-fusable node (conv2d, dense, pooling) takes the element-wise
//     chain that follows it (bias_add, batch_norm, relu, add of a residual, ...) when every
//     path to its immediate post-dominator is element-wise or broadcast (first phase, so
//     convolutions finish fusing before injective ops are considered);
//   - an element-wise or broadcast node joins its post-dominator when every path there is
//     injective and the post-dominator is injective or a reduction;
//   - an injective node joins its post-dominator when every path there is injective.
// Opaque nodes (softmax, layer_norm) stay alone; graph inputs and constants are not
// computed and belong to no group.
#pragma once
#include <string>
#include <vector>

#include "weft/graph/graph.hpp"
#include "weft/graph/op_registry.hpp"

namespace weft::graph {

struct FusedGroup {
    std::vector<int> nodes;  // operator nodes in topological order; the last is the root
    int master = -1;         // the node whose schedule the group takes (conv2d, a reduction, ...); -1: injective
    OpPattern pattern = OpPattern::ElemWise;  // the most complex pattern in the group

    int root() const { return nodes.back(); }
};

// The largest expression one fused group may inline into its kernel by default: operator
// applications in the tree its root's computation becomes once every other node of the
// group is substituted (a node read twice counts twice). A longer chain or a wider tree is
// cut into several groups, so that a hostile model (50,000 element-wise nodes, x + x
// doubling a hundred times) neither builds a giant expression nor recurses without bound.
inline constexpr int64_t kMaxFusedExpression = 512;

// The fused groups of g's operator nodes, in an order where every group follows the groups
// it reads from. `order` is a topological order of g (Graph::check() returns one). Without
// `enable`, every operator node is a group of its own. No group's inlined expression is
// larger than `max_expression` (see kMaxFusedExpression).
std::vector<FusedGroup> fuse_ops(const Graph& g, const std::vector<int>& order, bool enable = true,
                                 int64_t max_expression = kMaxFusedExpression);

// "conv2d_bias_add_relu" — a group's name from its nodes' operators.
std::string group_name(const Graph& g, const FusedGroup& group);

}  // namespace weft::graph
