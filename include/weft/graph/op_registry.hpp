// The graph layer's operators: for each, its fusion pattern, type inference, a compute in
// the tensor language (usually a topi function) and, for the operators that anchor a fused
// group, the default CPU and GPU schedules of that group.
//
// Patterns are the TVM paper's, ordered from most to least fusable; fusion (graph/fuse.hpp)
// decides on them alone:
//   ElemWise        out[i] = f(in[i])                          relu, add of equal shapes
//   Broadcast       out[i] = f(in[broadcast(i)])               add with a bias, batch_norm
//   Injective       each output element from some input ones   reshape, transpose, pad
//   CommReduce      a commutative reduction                    sum, mean
//   OutEWiseFusable a complex op that can take element-wise    conv2d, dense, pooling
//                   stages into its output loop
//   Opaque          fuses with nothing                         softmax, layer_norm
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "weft/graph/graph.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"

namespace weft::graph {

enum class OpPattern { ElemWise = 0, Broadcast = 1, Injective = 2, CommReduce = 3, OutEWiseFusable = 4, Opaque = 8 };

const char* pattern_name(OpPattern p);

struct OpDef {
    std::string name;
    OpPattern pattern = OpPattern::Opaque;
    int min_inputs = 1, max_inputs = 1;
    // The output type from the inputs' types and the attributes; throws weft::Error saying
    // what does not fit (the caller adds which node).
    std::function<TensorType(const std::vector<TensorType>&, const Attrs&)> infer;
    // The output in the tensor language from the inputs'.
    std::function<Tensor(const std::vector<Tensor>&, const Attrs&)> compute;
    // The schedule of a fused group anchored by this operator: `op` is the tensor `compute`
    // returned, `out` the group's output (op or an element-wise epilogue of it; the stages
    // between are inlined already). Empty: the group is scheduled as injective.
    // `inputs` are the operator's input tensors, `attrs` its attributes.
    using GroupSchedule = std::function<void(Schedule&, const Tensor& op, const Tensor& out,
                                             const std::vector<Tensor>& inputs, const Attrs& attrs)>;
    GroupSchedule schedule;
    // The same for a GPU target (Target::cuda()), usually a topi::cuda schedule (threads
    // bound, shared memory). An operator with a CPU `schedule` but no `gpu_schedule` cannot
    // be built for CUDA (graph::build says so, naming it): topi::cuda::schedule(s, op, out)
    // picks a GPU schedule by the computation's structure and is a good first one. Neither:
    // the group is scheduled as injective (topi::cuda::schedule_injective).
    GroupSchedule gpu_schedule;
    // Made only by the graph passes (the blocked layout's operators), never by a user's
    // graph or an importer: a failure inside one is reported as a bug in a rewrite.
    bool made_by_passes = false;
};

// The operator called `name`; weft::Error "unknown operator" when there is none.
const OpDef& op_def(const std::string& name);
const OpDef* find_op(const std::string& name);
// Every registered operator's name, sorted.
std::vector<std::string> registered_ops();
// Adds (or replaces) an operator: extension point for users' own operators.
void register_op(OpDef def);

}  // namespace weft::graph
