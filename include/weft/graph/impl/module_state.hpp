// A module's parts (Module::State): its graph, kernels, argument lists, storage and, with
// symbolic dimensions, the views at the symbols' current values and the kernels kept per
// size; and ModuleAccess, through which build() (graph/impl/build.hpp) and the artifact
// loader (graph/impl/artifact.hpp) assemble a module. The executor is graph/impl/module.hpp.
#pragma once
#include <chrono>
#include <functional>
#include <list>
#include <map>
#include <set>

#include "weft/graph/impl/background_compile.hpp"
#include "weft/graph/impl/compile_group.hpp"
#include "weft/graph/impl/guards.hpp"
#include "weft/graph/memory_plan.hpp"
#include "weft/graph/module.hpp"
#include "weft/graph/pass.hpp"

namespace weft::graph {

struct Module::State {
    Graph graph;
    std::vector<FusedGroup> groups;
    std::vector<KernelInfo> infos;
    std::vector<Kernel> kernels;
    std::vector<std::vector<KernelArgValue>> args;  // per kernel, pointing into `values`
    std::vector<std::vector<int>> arg_ids;          // per kernel, the node ids of its arguments
    std::vector<BufferRef> values;                  // per node: its storage (undefined: none)
    BufferRef arena;                                // the planned intermediates
    std::vector<int> input_ids, output_ids;
    std::vector<std::string> input_names, output_names;
    // The graph's run-time checks (Graph::check_at_run): flags read after each run.
    std::vector<int> check_ids;
    std::vector<std::string> check_messages;
    int64_t naive_bytes = 0;
    int64_t arena_bytes = 0;  // as planned (also when nothing is allocated)
    Target target;  // what the kernels were compiled for (run_debug compiles its references for it)
    Device device;  // where the storage lives and the kernels run
    bool allocated = true;   // BuildOptions::allocate: the storage exists and the module can run
    cuda::Stream stream;     // a CUDA module's: every kernel is launched on it
    // A graph with symbolic dimensions (graph/impl/symbolic.hpp; empty: every shape is
    // constant): storage[] holds each node's storage at the symbols' max, values[] views of
    // it at symbol_values, the values the argument lists were made for.
    detail::SymbolicShapes symbolic;
    std::vector<BufferRef> storage;
    std::vector<int64_t> symbol_values;
    // Per kernel: how it runs on a symbol's samples (graph/impl/compile_group.hpp,
    // SampleRun), and its calls at the current values where it runs per sample.
    struct Call {
        const Kernel* kernel;
        std::vector<BufferRef> views;
        std::vector<KernelArgValue> args;
    };
    std::vector<detail::SampleRun> samples;
    // Per kernel: the group compiled for its symbols at least kAssumedExtent (undefined: none),
    // run instead where they are (graph/impl/compile_group.hpp, CompiledGroup::large).
    std::vector<Kernel> large;
    std::vector<std::vector<int>> large_args;
    std::vector<std::vector<Call>> calls;  // per kernel, at the current values
    // Per kernel: compiled per size (CompiledGroup::per_size; empty: none is). kernels[k] is
    // the one at the symbols' max; `sizes` holds the kernels compiled for other values (per
    // size, or every symbolic kernel specialized for a size), the most recently used first (at
    // most kMaxKeptSizes), made by `size_compiler` (graph/impl/size_kernels.hpp; null for a
    // module loaded from an artifact, which has no graph to make at other values).
    std::vector<bool> per_size;
    std::list<detail::SizeKernels> sizes;
    std::shared_ptr<const detail::SizeCompiler> size_compiler;
    const detail::SizeKernels* bound_sizes = nullptr;  // at symbol_values (null: none kept there)
    bool stale_bindings = false;                       // `sizes` changed under the bound views
    // Specializing the sizes that run often (BuildOptions::specialize_after_runs; 0: never):
    // runs counted per set of values without a specialization, the one compiling in the
    // background and its values, and the values whose graph cannot be specialized.
    int specialize_after_runs = 0;
    std::map<std::vector<int64_t>, int> size_runs;
    std::unique_ptr<detail::BackgroundCompile<detail::SizeKernels>> specializing;
    std::vector<int64_t> specializing_values;
    std::set<std::vector<int64_t>> unspecializable;
    // Per kernel (a CPU module's; empty: every kernel runs): the condition under which its
    // output is needed (graph/impl/guards.hpp), read before it runs.
    std::vector<detail::KernelGuard> guards;
    std::vector<BuildPhase> phases;  // build()'s steps and their times (Module::build_phases)
    // run()'s reading of the symbols: (input index, axis, symbol index) per symbolic axis, and
    // the values read (kept, so that a run allocates nothing).
    struct SymbolSource {
        int input;
        int64_t axis;
        int symbol;
    };
    std::vector<SymbolSource> symbol_sources;
    std::vector<int64_t> requested_values;

    // Whether kernel k's guard lets it run now (its branch is taken).
    bool needed(size_t k) const {
        if (guards.empty() || guards[k].flag < 0) return true;
        return *static_cast<const bool*>(values[size_t(guards[k].flag)].data()) == guards[k].when;
    }

    // Runs kernel k (once, or once per sample) unless its branch is not taken.
    void run_kernel(size_t k) const {
        if (!needed(k)) return;
        if (!calls.empty() && !calls[k].empty()) {
            for (const Call& c : calls[k]) c.kernel->call(std::span<const KernelArgValue>(c.args.data(), c.args.size()));
            return;
        }
        kernels[k].call(std::span<const KernelArgValue>(args[k].data(), args[k].size()));
    }

    // Throws the message of the first run-time check whose flag is set (Graph::check_at_run).
    void enforce_checks() const {
        for (size_t c = 0; c < check_ids.size(); ++c) {
            const BufferRef& flag = values[size_t(check_ids[c])];
            bool set = false;
            if (device.is_cpu()) set = *static_cast<const bool*>(flag.data());
            else set = *static_cast<const bool*>(flag.copy_to(Device::cpu()).data());  // waits for the stream
            WEFT_CHECK(!set, "graph::Module::run: ", check_messages[c]);
        }
    }

    // A tiered build (BuildOptions::tier): the tier of the kernels in use, the optimized ones
    // while they compile, and why they did not (Module::wait_optimized rethrows it).
    CompileTier tier = CompileTier::optimized;
    std::unique_ptr<detail::BackgroundCompile<std::vector<detail::CompiledGroup>>> tier_up;
    std::exception_ptr tier_up_error;

    // The optimized kernels in place of the fast ones once they are compiled (`wait`: until
    // they are). Between runs, on the thread that runs the module: the argument lists and the
    // per-sample calls point at the same slots, which now hold the optimized kernels.
    void adopt_optimized(bool wait) {
        if (!tier_up || (!wait && !tier_up->ready())) return;
        const auto second = std::move(tier_up);
        std::vector<detail::CompiledGroup> groups;
        try {
            groups = second->take();
        } catch (...) {
            tier_up_error = std::current_exception();  // the fast kernels stay
            return;
        }
        // Each takes what the fast kernel it replaces takes.
        WEFT_ICHECK(groups.size() == arg_ids.size(), "tiered build: ", groups.size(), " optimized kernels for ",
                    arg_ids.size());
        for (size_t k = 0; k < groups.size(); ++k)
            WEFT_ICHECK(groups[k].args == arg_ids[k] && groups[k].large_args == large_args[k], "tiered build: kernel #",
                        k, "'s optimized tier takes other arguments");
        for (size_t k = 0; k < groups.size(); ++k) {
            kernels[k] = std::move(groups[k].kernel);
            large[k] = std::move(groups[k].large);
            infos[k].compile_ms = kernels[k].compile_ms();
        }
        tier = CompileTier::optimized;
    }

    // Throws unless the module has storage (BuildOptions::allocate).
    void check_allocated(const char* what) const {
        WEFT_CHECK(allocated, "graph::Module::", what, ": this module was built without storage (BuildOptions::allocate "
                   "= false, which only compiles its kernels and plans memory): build it again with allocate on to run it");
    }
};

namespace detail {

// One buffer per operator node, each rounded up to the plan's alignment: what no memory
// plan exceeds (Module::memory_operator_bytes; the artifact loader's bound on an arena).
inline int64_t operator_bytes(const Graph& g) {
    int64_t total = 0;
    for (const Node& n : g.nodes())
        if (n.is_op()) total += planned_bytes(n.type.bytes());
    return total;
}

// Milliseconds since t0 (build()'s phases, profile()).
inline double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

inline int index_of(const std::vector<std::string>& names, const std::string& name, const char* what) {
    for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return int(i);
    std::string known;
    for (auto& n : names) known += (known.empty() ? "" : ", ") + n;
    ::weft::detail::throw_user_error(std::string("graph::Module: no ") + what + " named '" + name + "' (" + what + "s: " +
                                     known + ")");
}

// Whether kernel k may write its output (its last argument) over its argument `slot` in
// place: the kernel reads it element-wise (KernelArg::may_overwrite, found by lowering).
inline bool may_write_over(const Kernel& k, int slot) {
    const std::vector<ir::KernelArg>& args = k.signature().args;
    const std::vector<int>& allowed = args.back().may_overwrite;
    return std::find(allowed.begin(), allowed.end(), slot) != allowed.end();
}

// What the memory plan places: one request per kernel's output (its last argument;
// request_of[node], -1 for a node that is not planned), alive from the kernel that writes it
// to the last kernel that reads it, or past the last kernel for a graph output. With
// `in_place`, a kernel's output may take over an input that dies at that kernel when the
// kernel's signature allows it (may_write_over). build() plans these requests;
// graph::load_module checks an artifact's plan against them, so both see the same lifetimes.
struct PlanRequests {
    std::vector<BufferRequest> requests;
    std::vector<int> request_of;
};

inline PlanRequests plan_requests(const Graph& g, const std::vector<Kernel>& kernels,
                                  const std::vector<std::vector<int>>& arg_ids, bool in_place,
                                  const std::vector<KernelGuard>& guards) {
    const int steps = int(arg_ids.size());
    PlanRequests p;
    p.request_of.assign(size_t(g.size()), -1);
    auto request = [&](int node) -> BufferRequest* {
        int r = p.request_of[size_t(node)];
        return r < 0 ? nullptr : &p.requests[size_t(r)];
    };
    for (int k = 0; k < steps; ++k) {
        int output = arg_ids[size_t(k)].back();
        p.request_of[size_t(output)] = int(p.requests.size());
        p.requests.push_back({g.node(output).type.bytes(), k, k, -1});
    }
    for (int k = 0; k < steps; ++k)
        for (int id : arg_ids[size_t(k)])
            if (id >= 0)  // not a symbol's value (graph/impl/symbolic.hpp)
                if (BufferRequest* r = request(id)) r->last = std::max(r->last, k);
    for (int k = 0; k < int(guards.size()); ++k)  // a guard's flag is read before its kernel
        if (guards[size_t(k)].flag >= 0)
            if (BufferRequest* r = request(guards[size_t(k)].flag)) r->last = std::max(r->last, k);
    for (auto& [name, v] : g.outputs())
        if (BufferRequest* r = request(v.id)) r->last = steps;  // read after the run
    if (!in_place) return p;
    for (int k = 0; k < steps; ++k) {
        const std::vector<int>& ids = arg_ids[size_t(k)];
        for (size_t slot = 0; slot + 1 < ids.size(); ++slot) {
            const BufferRequest* r = ids[slot] < 0 ? nullptr : request(ids[slot]);
            if (r && r->last == k && may_write_over(kernels[size_t(k)], int(slot))) {
                request(ids.back())->inplace_of = p.request_of[size_t(ids[slot])];
                break;
            }
        }
    }
    return p;
}

// The friend of Module (graph/module.hpp) through which build() and graph/artifact.hpp's
// loader assemble a module from its parts.
struct ModuleAccess {
    using State = Module::State;
    static State& state(const Module& m) { return m.state(); }
    static Module make(std::shared_ptr<State> s) { return Module(std::move(s)); }
    // values[] of the graph's inputs (storage of their own) and constants (the graph's
    // data); input_ids and input_names in graph order.
    // On a CUDA device (st.device) the inputs are allocated there and the constants are
    // copied there once; without st.allocated only the ids and names are filled in.
    static void store_inputs_and_constants(State& st) {
        const Graph& g = st.graph;
        st.values.resize(size_t(g.size()));
        for (int id = 0; id < g.size(); ++id) {
            const Node& n = g.node(id);
            if (n.is_input()) {
                if (st.allocated) st.values[size_t(id)] = BufferRef::allocate(n.type.dtype, n.type.shape, st.device);
                st.input_ids.push_back(id);
                st.input_names.push_back(n.name);
            } else if (n.is_constant() && st.allocated) {
                st.values[size_t(id)] = st.device.is_cpu() ? n.value : n.value.copy_to(st.device);
            }
        }
    }
    // output_ids and output_names in graph order; the run-time checks (outputs named
    // kRunCheckPrefix + message) apart, in check_ids and check_messages.
    static void store_outputs(State& st) {
        for (auto& [name, v] : st.graph.outputs()) {
            if (name.starts_with(kRunCheckPrefix)) {
                st.check_ids.push_back(v.id);
                st.check_messages.push_back(name.substr(kRunCheckPrefix.size()));
            } else {
                st.output_ids.push_back(v.id);
                st.output_names.push_back(name);
            }
        }
    }
};

}  // namespace detail

}  // namespace weft::graph
