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
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "weft/graph/graph.hpp"
#include "weft/ir/target.hpp"
#include "weft/runtime/kernel.hpp"
#include "weft/schedule/config.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"

namespace weft::graph {

enum class OpPattern { ElemWise = 0, Broadcast = 1, Injective = 2, CommReduce = 3, OutEWiseFusable = 4, Opaque = 8 };

const char* pattern_name(OpPattern p);

// What an operator's compute and schedule may depend on besides its inputs and attributes:
// the target its group is built for and the group's tuning config (Config{}: the templates'
// defaults). Computes and schedules read these, never the host.
struct OpContext {
    Target target;
    Config config;
};

// A function of (Args..., const OpContext&), made from one that takes the context or from
// one that does not need it (the context is then ignored): operators written before the
// context existed register unchanged.
template <class R, class... Args>
class WithContext {
public:
    WithContext() = default;
    template <class F>
        requires std::is_invocable_r_v<R, F&, Args..., const OpContext&>
    WithContext(F f) : fn_(std::move(f)) {}
    template <class F>
        requires(!std::is_invocable_r_v<R, F&, Args..., const OpContext&> && std::is_invocable_r_v<R, F&, Args...>)
    WithContext(F f) : fn_([f = std::move(f)](Args... args, const OpContext&) mutable -> R {
        return f(std::forward<Args>(args)...);
    }) {}
    R operator()(Args... args, const OpContext& context) const { return fn_(std::forward<Args>(args)..., context); }
    explicit operator bool() const { return bool(fn_); }

private:
    std::function<R(Args..., const OpContext&)> fn_;
};

struct OpDef {
    std::string name;
    OpPattern pattern = OpPattern::Opaque;
    int min_inputs = 1, max_inputs = 1;
    // The output type from the inputs' types and the attributes; throws weft::Error saying
    // what does not fit (the caller adds which node).
    std::function<TensorType(const std::vector<TensorType>&, const Attrs&)> infer;
    // The output in the tensor language from the inputs': (inputs, attrs) or
    // (inputs, attrs, const OpContext&) for a compute that depends on the target or config.
    WithContext<Tensor, const std::vector<Tensor>&, const Attrs&> compute;
    // The output computed to `shape`, whose extents may be expressions of a graph's symbols
    // (graph/graph.hpp, Symbol), with `symbolic` the integer attributes that change with the
    // symbols (entry by entry; the others are in attrs). build() uses it where the output's
    // shape depends on the symbols: an operator whose compute needs constant extents (reshape,
    // flatten) or whose attributes change with the symbols (a slice's ends) needs one.
    using SymbolicAttrs = std::map<std::string, std::vector<Expr>>;
    std::function<Tensor(const std::vector<Tensor>&, const Attrs&, const std::vector<Expr>& shape,
                         const SymbolicAttrs& symbolic)>
        compute_to_shape;
    // The schedule of a fused group anchored by this operator: `op` is the tensor `compute`
    // returned, `out` the group's output (op or an element-wise epilogue of it; the stages
    // between are inlined already). Empty: on a CPU, a reduction gets the template-free
    // sketch (auto_schedule_op below: its knobs are a tuning task), anything else the
    // injective schedule.
    // `inputs` are the operator's input tensors, `attrs` its attributes; a schedule may take
    // a last `const OpContext&` (the same the compute got).
    using GroupSchedule = WithContext<void, Schedule&, const Tensor&, const Tensor&, const std::vector<Tensor>&, const Attrs&>;
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
    // The output computed on the host from constant inputs, without compiling a kernel:
    // fold_constants uses it for operators that only move data (a weight packing, a
    // transpose, a reshape), which must give exactly what `compute` gives. Its arguments: the
    // inputs (compact host buffers), the attributes and the inferred output type. Empty: the
    // constant is folded by a compiled kernel.
    std::function<BufferRef(const std::vector<BufferRef>&, const Attrs&, const TensorType&)> evaluate;
    // An operator that is not a computation in the tensor language (a loop that runs a graph:
    // Graph::loop) makes its node's kernel itself: the node alone is its group, and the
    // kernel takes the node's inputs in order, then its output. `fast_compile`: the build's
    // fast tier (BuildOptions::tier). Such an operator's `compute` is never called.
    std::function<Kernel(const Graph& g, int node, const Target& target, bool fast_compile)> make_kernel;
};

// The operator called `name`; weft::Error "unknown operator" when there is none.
const OpDef& op_def(const std::string& name);
const OpDef* find_op(const std::string& name);
// Every registered operator's name, sorted.
std::vector<std::string> registered_ops();
// Adds (or replaces) an operator: extension point for users' own operators.
void register_op(OpDef def);

// A CPU schedule for an operator nobody wrote one for: autotune::auto_schedule's sketch of
// the group's computation (the epilogue fused), its knobs (auto.*) searched by graph::tune.
// A reduction registered without a schedule gets it anyway; name it to have it for another
// operator (one whose element-wise computation is worth tiling).
//   register_op({.name = "my_op", ..., .compute = my_compute, .schedule = graph::auto_schedule_op});
void auto_schedule_op(Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>& inputs,
                      const Attrs& attrs, const OpContext& context);

}  // namespace weft::graph
