// One fused group → one kernel: the nodes' computes chained in the tensor language (the
// group's external inputs become placeholders), every stage but the master and the root
// inlined, the master's default schedule (or the injective one) applied, then build(). For
// a CUDA target the schedules are the GPU ones (OpDef::gpu_schedule, topi::cuda), and the
// kernel is CUDA C compiled by NVRTC: no device is needed.
#pragma once
#include <chrono>
#include <atomic>
#include <limits>
#include <map>
#include <optional>

#include "weft/autotune/sketch.hpp"
#include "weft/codegen/build.hpp"
#include "weft/graph/fuse.hpp"
#include "weft/graph/impl/symbolic.hpp"
#include "weft/graph/op_registry.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/topi/cuda.hpp"
#include "weft/topi/injective.hpp"

namespace weft::graph::detail {

// How a kernel runs on the samples of a symbol (the first dimension of its tensors, a batch
// or a sequence), or `symbol` -1: once, whole. With `per_call` > 0 it is compiled for that
// many samples and called on each run of them in turn (a convolution per image); else it is
// called once on all of them, its extents saying max(symbol, at_least) (a GEMM whose tiles
// the lowering proves full), and fewer than `at_least` samples run padded to that many: the
// samples past the real ones lie inside every tensor's storage (planned at the symbol's max)
// and are computed from and into bytes nothing else holds at that step, the samples being
// independent.
struct SampleRun {
    int symbol = -1;
    int64_t per_call = 0;
    int64_t at_least = 0;
};

struct CompiledGroup {
    Kernel kernel;
    std::vector<int> args;  // the node ids whose buffers the kernel takes, in order (the root last)
    // With symbolic dimensions: how it runs on a symbol's samples (symbols passed as scalars
    // have ids -1 - s in args).
    SampleRun samples;
    // A GEMM-like group over symbolic extents that are not samples (attention's rows and
    // columns of the sequence): `large`, with `large_args`, is the group compiled for every
    // symbol it uses at least kAssumedExtent, run where they are.
    Kernel large;
    std::vector<int> large_args;
    // With symbolic dimensions: compiled per size (its group reads or writes a node of
    // SymbolicShapes::per_size, or its operators need constant extents and it cannot run per
    // sample). `kernel` is the one at the symbols' max, with constant extents; the module
    // compiles the others when it first runs at a size (graph/impl/size_kernels.hpp).
    bool per_size = false;
};

// The kernels compiled per size (CompiledGroup::per_size) at one set of the symbols' values,
// or, `specialized`, every kernel whose tensors follow the symbols compiled for those values
// (graph/impl/size_kernels.hpp); and what the module's views need there.
struct SizeKernels {
    std::vector<int64_t> values;
    bool specialized = false;
    std::vector<Kernel> kernels;               // per kernel of the module: undefined where its own runs
    std::vector<std::vector<int>> args;        // per kernel compiled here: its argument node ids
    std::vector<std::vector<int64_t>> shapes;  // per node: a per-size node's shape here (else empty)
    std::vector<BufferRef> constants;          // per node: a per-size constant's data here (else undefined)
};

// What compiling a module's kernels at other values takes, fixed once build() is done: the
// module and its background compiles share it (read only). Its steps are defined in
// graph/impl/size_kernels.hpp.
struct SizeCompiler {
    Graph source;    // the graph build() was given
    Graph compiled;  // the module's graph (Module::State::graph)
    SymbolicShapes symbolic;
    std::vector<FusedGroup> groups;
    std::vector<std::vector<int>> arg_ids;  // per kernel, the module's argument node ids
    std::vector<std::string> names;         // per kernel, its name (for errors)
    std::vector<bool> per_size;             // per kernel (empty: none is compiled per size)
    Target target;
    BuildOptions options;  // without callbacks; a tiered build's second tier

    // The graph `source` at the symbols' `values`, after build()'s passes.
    Graph graph_at(const std::vector<int64_t>& values) const;

    // Whether kernel k is compiled per size, or (`specialize`) takes a tensor or a scalar
    // that follows the symbols.
    bool compiles(size_t k, bool specialize) const {
        if (!per_size.empty() && per_size[k]) return true;
        if (!specialize) return false;
        for (int id : arg_ids[k])
            if (id < 0 || symbolic.is_symbolic(id) || symbolic.is_per_size(id)) return true;
        return false;
    }

    // The kernels at `values`: those compiled per size, and with `specialize` every kernel
    // whose tensors follow the symbols; `compile_threads` (> 0) in place of the build's.
    // Throws where the graph made there is not the compiled one (other nodes, or a shape
    // build() fitted otherwise). Stops early, the result then incomplete, once `cancel` is set.
    SizeKernels compile(const std::vector<int64_t>& values, bool specialize, const std::atomic<bool>* cancel = nullptr,
                        int compile_threads = 0) const;
};

// Where a GEMM's rows and columns are symbolic, tiles the lowering proves full need the
// extents to hold the largest register tile: 12 rows and 4 vectors of 16 lanes.
inline constexpr int64_t kAssumedExtent = 64;

// A GEMM-like group with a symbolic first dimension: over a symbolic row count the lowering
// cannot prove a register tile full (a guarded tail), which costs a GEMM about half its
// speed (docs/graph.md, "Symbolic dimensions"). So it also has a kernel that assumes at least
// kAssumedSamples samples, the most rows a register tile has (topi's choose_gemm_tile), where
// the tiles shift inwards (TailStrategy::ShiftInwards) and are proven full; fewer samples
// run padded to that many (SampleRun).
inline constexpr int64_t kAssumedSamples = 12;

// The shapes a kernel's tensor arguments were compiled for: its symbols' expressions as its
// SampleRun says.
inline SymbolicShapes kernel_shapes(const SymbolicShapes& sym, const SampleRun& run) {
    if (run.symbol < 0) return sym;
    if (run.per_call > 0) return sym.at_samples(size_t(run.symbol), run.per_call);
    return sym.at_least(size_t(run.symbol), run.at_least);
}

// The shapes a large-size variant was compiled for: each symbol it takes at least
// kAssumedExtent where its bounds reach that far; none where no bound does (no variant).
inline std::optional<SymbolicShapes> large_variant_shapes(const SymbolicShapes& sym, const std::vector<int>& arg_ids) {
    std::optional<SymbolicShapes> large;
    for (int id : arg_ids)
        if (SymbolicShapes::is_base_id(id) && sym.symbols[size_t(-1 - id)].max >= kAssumedExtent)
            large = (large ? *large : sym).at_least(size_t(-1 - id), kAssumedExtent);
    return large;
}

// A group's computation and schedule, before lowering.
struct ScheduledGroup {
    Schedule schedule;
    std::vector<Argument> args;  // the kernel's arguments
    std::vector<int> arg_ids;    // the node each argument is (the root last)
};

// A group's GPU schedule: its master's OpDef::gpu_schedule with the element-wise epilogue
// `out` fused (the stages between are inlined already), or topi::cuda::schedule_injective
// for a group without a master (or whose master has no schedule at all, as on the CPU). A
// master with a CPU schedule but no GPU one is a weft::Error naming the operator: its CPU
// schedule would leave loops unbound, which cannot run on a GPU.
inline void schedule_group_for_gpu(const Graph& g, const FusedGroup& group, Schedule& s,
                                   std::map<int, Tensor>& tensors, std::map<int, std::vector<Tensor>>& inputs_of,
                                   const Tensor& out, const OpContext& context) {
    if (group.master < 0) return topi::cuda::schedule_injective(s, out);
    const Node& m = g.node(group.master);
    const OpDef& def = op_def(m.op);
    if (def.gpu_schedule) {
        try {
            def.gpu_schedule(s, tensors[group.master], out, inputs_of[group.master], m.attrs, context);
        } catch (const Error& e) {
            ::weft::detail::rethrow_with_context(e, "graph::build for CUDA: " + describe(m));
        }
        return;
    }
    WEFT_CHECK(!def.schedule, "graph::build for CUDA: operator '", m.op, "' (", describe(m),
               ") has a CPU schedule but no GPU schedule: give its OpDef a gpu_schedule (topi::cuda::schedule(s, op, "
               "out) picks one by the computation's structure) and register it again with graph::register_op, or "
               "build the graph for the CPU (Target::host())");
    topi::cuda::schedule_injective(s, out);
}

// A kernel's scratch buffers (a padded copy of an input, a stage computed inside a loop) obey
// the graph's limit on one tensor's bytes, as its nodes do. They can be far larger than any
// node: a conv over a 4-wide input with a dilation of 2^33 and SAME padding wants a padded
// copy of 2.7 TB for 160 outputs, which the kernel would otherwise allocate when it runs.
inline void check_scratch_buffers(const Graph& g, const FusedGroup& group, const ir::PrimFunc& f) {
    const int64_t limit = g.limits().max_tensor_bytes;
    ir::post_order_visit(f.body, [&](const ir::Object* o) {
        if (o->kind != ir::NodeKind::Allocate) return;
        const auto* a = static_cast<const ir::Allocate*>(o);
        int64_t bytes = a->type.bytes();
        for (const Expr& e : a->extents) {
            int64_t extent = 0;
            if (!ir::as_const_int(e, &extent)) return;  // a size known only when it runs
            if (__builtin_mul_overflow(bytes, extent, &bytes)) bytes = std::numeric_limits<int64_t>::max();
        }
        WEFT_CHECK(bytes <= limit, describe(g.node(group.root())), ": its kernel needs a scratch buffer '",
                   a->buffer.name(), "' of ", bytes, " bytes, over the limit ", limit,
                   " (graph::Limits::max_tensor_bytes)");
    });
}

// The group's schedule lowered, its scratch buffers checked (`fast_compile`: for a short
// compile, LowerOptions::fast_compile).
inline ir::PrimFunc lower_group(const Graph& g, const FusedGroup& group, const Schedule& s,
                                const std::vector<Argument>& args, const Target& target, bool fast_compile = false) {
    LowerOptions options;
    options.target = target;
    options.fast_compile = fast_compile;
    for (const Argument& a : args)  // (a graph kernel's scalars are its symbols, sizes >= 1)
        if (const Var* v = std::get_if<Var>(&a.value)) options.sizes.push_back(*v);
    ir::PrimFunc f = lower(s, args, options);
    check_scratch_buffers(g, group, f);
    return f;
}

// Where compile_group's time goes, summed over the threads that compile (build()'s phases:
// Module::build_phases).
struct CompileClock {
    std::atomic<int64_t> schedule_ns{0}, lower_ns{0}, llvm_ns{0};
};

// Adds the time from its construction to its end to *into (nothing without one).
class ClockSpan {
public:
    explicit ClockSpan(std::atomic<int64_t>* into) : into_(into), start_(std::chrono::steady_clock::now()) {}
    ~ClockSpan() {
        if (into_)
            into_->fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_)
                                 .count());
    }
    ClockSpan(const ClockSpan&) = delete;
    ClockSpan& operator=(const ClockSpan&) = delete;

private:
    std::atomic<int64_t>* into_;
    std::chrono::steady_clock::time_point start_;
};

// The group's schedule lowered and compiled.
inline Kernel lower_and_build(const Graph& g, const FusedGroup& group, const Schedule& s,
                              const std::vector<Argument>& args, const Target& target, CompileClock* clock = nullptr,
                              bool fast_compile = false) {
    ir::PrimFunc f;
    {
        ClockSpan span(clock ? &clock->lower_ns : nullptr);
        f = lower_group(g, group, s, args, target, fast_compile);
    }
    ClockSpan span(clock ? &clock->llvm_ns : nullptr);
    return build(f, target);
}

// The workload key of a group's tuning task: its master's operator, input types and
// attributes, "dense(float32[64, 512], float32[1000, 512]){}"; "" without a master or for
// an operator that makes its own kernel (a loop: nothing to tune).
inline std::string group_workload(const Graph& g, const FusedGroup& group) {
    if (group.master < 0) return "";
    const Node& m = g.node(group.master);
    if (op_def(m.op).make_kernel) return "";
    std::string key = m.op + "(";
    for (size_t i = 0; i < m.inputs.size(); ++i) key += (i ? ", " : "") + g.type(m.inputs[i]).str();
    return key + ")" + m.attrs.str();
}

// Node `id`'s output in the tensor language from its inputs': its operator's compute, or,
// where its shape depends on the symbols and the operator only rearranges data, its
// compute_to_shape. An operator whose attributes change with the symbols must have one.
inline Tensor compute_node(const Graph& g, int id, const std::vector<Tensor>& in, const OpContext& context,
                           const SymbolicShapes* symbolic) {
    const Node& n = g.node(id);
    const OpDef& def = op_def(n.op);
    if (!symbolic || !symbolic->touches(g, id)) return def.compute(in, n.attrs, context);
    if (def.compute_to_shape) return def.compute_to_shape(in, n.attrs, symbolic->shape_expr(g, id), symbolic->attr_exprs(id));
    WEFT_CHECK(!symbolic->attrs_vary[size_t(id)], "graph::build: symbolic dimensions: ", describe(n),
               ": its attributes change with the symbols (", n.attrs.str(), " at their max), and operator '", n.op,
               "' has no compute_to_shape to follow them; give the symbols fixed values instead");
    return def.compute(in, n.attrs, context);
}

// The symbols a kernel's tensors use go first in its arguments, as scalars (arg id -1):
// a size such as batch * seq cannot be read from a buffer's shape alone.
inline void prepend_symbol_args(const SymbolicShapes& symbolic, std::vector<Argument>& args, std::vector<int>& ids) {
    std::vector<Argument> scalars;
    std::vector<int> scalar_ids;
    for (size_t s = 0; s < symbolic.vars.size(); ++s) {
        bool used = false;
        for (int id : ids)
            for (const SymbolicDim& d : symbolic.dims[size_t(id)]) used |= d.uses(s);
        if (!used) continue;
        scalars.emplace_back(symbolic.vars[s]);
        scalar_ids.push_back(-1 - int(s));
    }
    for (size_t j = 0; j < symbolic.derived.size(); ++j) {
        bool used = false;
        for (int id : ids)
            for (const SymbolicDim& d : symbolic.dims[size_t(id)])
                for (const FloorTerm& f : d.floors) used |= symbolic.derived_of(f) == int(j);
        if (!used) continue;
        scalars.emplace_back(symbolic.derived_vars[j]);
        scalar_ids.push_back(SymbolicShapes::derived_id(j));
    }
    args.insert(args.begin(), scalars.begin(), scalars.end());
    ids.insert(ids.begin(), scalar_ids.begin(), scalar_ids.end());
}

// The group's computation (each node's compute) and its schedule for `target` and `config`:
// its master's, or injective. A recording config collects the group's ConfigSpace.
// With `symbolic` (a graph with symbolic dimensions), the placeholders' extents and the
// outputs of shape-only operators are the symbols' expressions, and the symbols a kernel's
// tensors use are its first arguments (scalars).
inline ScheduledGroup schedule_group(const Graph& g, const FusedGroup& group, const Target& target,
                                     const Config& config = {}, const SymbolicShapes* symbolic = nullptr) {
    std::map<int, Tensor> tensors;  // node id -> its tensor in this kernel
    std::vector<Argument> args;
    ScheduledGroup result;
    const OpContext context{target, config};
    auto tensor_of = [&](Value v) -> Tensor {
        auto it = tensors.find(v.id);
        if (it != tensors.end()) return it->second;
        const Node& n = g.node(v);  // an external input of the group: a placeholder
        std::vector<Expr> shape;
        if (symbolic) shape = symbolic->shape_expr(g, v.id);
        else
            for (int64_t d : n.type.shape) shape.push_back(make_int(d));
        // Named by position, not by node: identical groups (a loop's unrolled iterations, a
        // network's repeated blocks) lower to the same function, which the kernel cache
        // compiles once. KernelInfo keeps the nodes' names.
        Tensor p = placeholder(shape, n.type.dtype, "in" + std::to_string(args.size()));
        tensors[v.id] = p;
        args.emplace_back(p);
        result.arg_ids.push_back(v.id);
        return p;
    };
    std::map<int, std::vector<Tensor>> inputs_of;
    for (int id : group.nodes) {
        const Node& n = g.node(id);
        std::vector<Tensor> in;
        for (Value v : n.inputs) in.push_back(tensor_of(v));
        try {
            tensors[id] = compute_node(g, id, in, context, symbolic);
        } catch (const Error& e) {
            // A tuning config that does not fit the template is the config's fault.
            if (!config.empty()) ::weft::detail::rethrow_with_context(e, describe(n) + " with the config " + config.str());
            // With symbolic dimensions, an operator whose computation needs constant extents.
            if (symbolic && symbolic->touches(g, id))
                ::weft::detail::rethrow_with_context(e, "graph::build: symbolic dimensions: " + describe(n) +
                                                            " cannot yet be computed with a symbolic shape (give the "
                                                            "symbols fixed values instead)");
            // The node's shape inference accepted these inputs (Graph::check), so its
            // computation refusing them is a bug, often in a pass's rewrite; not the user's.
            std::string types;
            for (Value v : n.inputs) types += (types.empty() ? "" : ", ") + g.type(v).str();
            ::weft::detail::throw_internal_error(
                describe(n) + ": its shape inference accepted inputs " + types + " but its computation refused them: " +
                ::weft::detail::unprefixed(e.what()) +
                (op_def(n.op).made_by_passes ? " (the graph passes made this node; BuildOptions::convert_layout = "
                                               "false avoids the blocked layout's nodes)"
                                             : ""));
        }
        inputs_of[id] = std::move(in);
    }
    Tensor out = tensors[group.root()];
    args.emplace_back(out);
    result.arg_ids.push_back(group.root());
    if (symbolic) prepend_symbol_args(*symbolic, args, result.arg_ids);

    Schedule s = create_schedule(out);
    for (int id : group.nodes)
        if (id != group.master && id != group.root()) s[tensors[id]].compute_inline();
    if (target.is_cuda()) {
        schedule_group_for_gpu(g, group, s, tensors, inputs_of, out, context);
    } else if (group.master >= 0) {
        const Node& m = g.node(group.master);
        const OpDef& def = op_def(m.op);
        if (def.schedule) def.schedule(s, tensors[group.master], out, inputs_of[group.master], m.attrs, context);
        else if (tensors[group.master].op()->is_reduction()) autotune::auto_schedule(s, out, target, config);
        else topi::schedule_injective(s, out, target);
    } else {
        topi::schedule_injective(s, out, target);
    }
    result.schedule = std::move(s);
    result.args = std::move(args);
    return result;
}

// A group of one node whose operator makes its own kernel (OpDef::make_kernel: a loop),
// or nullopt.
inline std::optional<CompiledGroup> compile_own_kernel(const Graph& g, const FusedGroup& group, const Target& target,
                                                       const SymbolicShapes* symbolic, bool fast_compile) {
    const Node& n = g.node(group.root());
    const OpDef& def = op_def(n.op);
    if (!def.make_kernel) return std::nullopt;
    WEFT_ICHECK(group.nodes.size() == 1, describe(n), " makes its own kernel but was fused with other nodes");
    CompiledGroup result;
    for (Value v : n.inputs) result.args.push_back(v.id);
    result.args.push_back(group.root());
    if (symbolic)
        for (int id : result.args)
            WEFT_CHECK(!symbolic->is_symbolic(id), "graph::build: symbolic dimensions: ", describe(n), " reads or writes '",
                       g.node(id).name, "', whose shape depends on the symbols; give the symbols fixed values");
    result.kernel = def.make_kernel(g, group.root(), target, fast_compile);
    return result;
}

inline CompiledGroup compile_group(const Graph& g, const FusedGroup& group, const Target& target,
                                   const Config& config = {}, const SymbolicShapes* symbolic = nullptr,
                                   CompileClock* clock = nullptr, bool fast_compile = false) {
    if (std::optional<CompiledGroup> own = compile_own_kernel(g, group, target, symbolic, fast_compile)) return *own;
    CompiledGroup result;
    auto scheduled = [&](const SymbolicShapes* shapes) {
        ClockSpan span(clock ? &clock->schedule_ns : nullptr);
        return schedule_group(g, group, target, config, shapes);
    };
    auto compiled = [&](const ScheduledGroup& sg) {
        return lower_and_build(g, group, sg.schedule, sg.args, target, clock, fast_compile);
    };
    // Per size: the kernel at the symbols' max (constant extents) now, the others as the
    // module meets their sizes.
    auto per_size = [&] {
        ScheduledGroup at_max = scheduled(nullptr);
        result = CompiledGroup{};
        result.per_size = true;
        result.args = at_max.arg_ids;
        result.kernel = compiled(at_max);
        return result;
    };
    if (symbolic && symbolic->any_per_size(g, group.nodes)) return per_size();
    ScheduledGroup sg;
    try {
        sg = scheduled(symbolic);
    } catch (const Error&) {
        if (!symbolic || !config.empty()) throw;
        // Operators that need constant extents (a convolution's) may still run per sample,
        // else per size.
        const int s = per_sample_symbol(g, *symbolic, group.nodes);
        if (s < 0) return per_size();
        result.samples = {s, 1, 0};
        const SymbolicShapes one = kernel_shapes(*symbolic, result.samples);
        try {
            sg = scheduled(&one);
        } catch (const Error&) {
            return per_size();
        }
        for (int id : sg.arg_ids)  // the group's inputs too: one sample of each, or the whole
            if (symbolic->is_symbolic(id) && per_sample_symbol(g, *symbolic, {id}) != s) return per_size();
        result.args = sg.arg_ids;
        result.kernel = compiled(sg);
        return result;
    }
    // A GEMM-like group over a symbolic row count (samples of a symbol): one kernel that
    // assumes kAssumedSamples rows, fewer padded (SampleRun); over other symbolic extents
    // (attention's), a large-size variant beside the kernel over the symbols.
    const bool gemm_like = symbolic && group.master >= 0 &&
                           op_def(g.node(group.master).op).pattern == OpPattern::OutEWiseFusable;
    const int rows = gemm_like ? per_sample_symbol(g, *symbolic, group.nodes) : -1;
    if (rows >= 0 && symbolic->symbols[size_t(rows)].max >= kAssumedSamples) {
        bool fits = true;
        for (int id : sg.arg_ids)
            fits &= id < 0 || !symbolic->is_symbolic(id) || per_sample_symbol(g, *symbolic, {id}) == rows;
        if (fits) {
            result.samples = {rows, 0, kAssumedSamples};
            const SymbolicShapes many = kernel_shapes(*symbolic, result.samples);
            ScheduledGroup whole = scheduled(&many);
            result.kernel = compiled(whole);
            result.args = std::move(whole.arg_ids);
            return result;
        }
    }
    if (gemm_like)
        if (const std::optional<SymbolicShapes> large = large_variant_shapes(*symbolic, sg.arg_ids)) {
            ScheduledGroup wide = scheduled(&*large);
            result.large = compiled(wide);
            result.large_args = std::move(wide.arg_ids);
        }
    result.args = std::move(sg.arg_ids);
    if (!target.is_cuda()) {
        result.kernel = compiled(sg);
        return result;
    }
    // Lowering and NVRTC errors (a tile over the shared-memory limit, ...) name the kernel.
    try {
        result.kernel = compiled(sg);
    } catch (const Error& e) {
        ::weft::detail::rethrow_with_context(e, "graph::build for " + target.str() + ": kernel '" +
                                                    group_name(g, group) + "'");
    }
    return result;
}

}  // namespace weft::graph::detail
