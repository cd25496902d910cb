// Definitions of graph/module.hpp: build() (check, fuse, compile each group, plan and
// allocate memory, pre-build every kernel's argument list) and the executor. A CUDA module
// is the same with its storage on the device: one arena allocation, the inputs, and the
// constants copied once at build; run() launches on the module's stream.
#pragma once
#include <array>
#include <chrono>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <set>

#include "weft/graph/impl/background_compile.hpp"
#include "weft/graph/impl/compile_group.hpp"
#include "weft/graph/impl/guards.hpp"
#include "weft/graph/memory_plan.hpp"
#include "weft/graph/module.hpp"
#include "weft/graph/pass.hpp"
#include "weft/runtime/thread_pool.hpp"

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

Module::State& Module::state() const {
    WEFT_CHECK(state_, "graph::Module: this module is empty (use graph::build)");
    return *state_;
}

int Module::num_inputs() const { return int(state().input_ids.size()); }
int Module::num_outputs() const { return int(state().output_ids.size()); }
const std::vector<std::string>& Module::input_names() const { return state().input_names; }
const std::vector<std::string>& Module::output_names() const { return state().output_names; }
const Graph& Module::graph() const { return state().graph; }
const std::vector<Symbol>& Module::symbols() const { return state().symbolic.symbols; }
const std::vector<SymbolicAxis>& Module::symbolic_axes() const { return state().symbolic.axes; }
const std::vector<KernelInfo>& Module::kernels() const { return state().infos; }
const std::vector<Kernel>& Module::compiled_kernels() const { return state().kernels; }
const Target& Module::target() const { return state().target; }
Device Module::device() const { return state().device; }
int64_t Module::memory_bytes() const { return state().arena_bytes; }
const std::vector<BuildPhase>& Module::build_phases() const { return state().phases; }
int64_t Module::memory_naive_bytes() const { return state().naive_bytes; }
int64_t Module::memory_operator_bytes() const { return detail::operator_bytes(state().graph); }

namespace detail {

// Which kernels run only when their branch is taken (graph/impl/guards.hpp), in guards and
// each KernelInfo; a CUDA module runs every kernel (its conditions are on the device).
inline void assign_guards(ModuleAccess::State& st) {
    if (st.device.is_cuda()) return;
    st.guards = kernel_guards(st.graph, st.groups);
    for (size_t k = 0; k < st.guards.size(); ++k) {
        st.infos[k].condition = st.guards[k].flag;
        st.infos[k].condition_value = st.guards[k].when;
    }
}

// Each kernel's arguments: its buffers' views (values[]) and the symbols' current values.
inline void make_argument_lists(ModuleAccess::State& st) {
    st.args.clear();
    for (const std::vector<int>& ids : st.arg_ids) {
        std::vector<KernelArgValue> a;
        for (int id : ids) {
            if (id < 0) a.emplace_back(st.symbolic.scalar_value(id, st.symbol_values));
            else a.emplace_back(st.values[size_t(id)]);
        }
        st.args.push_back(std::move(a));
    }
    // A kernel run on samples: its calls, each on views of its samples of each tensor that
    // depends on the symbol (the others whole).
    st.calls.assign(st.arg_ids.size(), {});
    for (size_t k = 0; k < st.arg_ids.size(); ++k) {
        const SampleRun run = st.samples.empty() ? SampleRun{} : st.samples[k];
        if (run.symbol < 0) continue;
        const size_t s = size_t(run.symbol);
        const int64_t value = st.symbol_values[s];
        // (The kernel's tensors depend on symbol s alone: per_sample_symbol.)
        auto with_samples = [&](int64_t count) {
            std::vector<int64_t> v = st.symbol_values;
            v[s] = count;
            return v;
        };
        const std::vector<int64_t> one = with_samples(1);
        auto add_call = [&](int64_t first, int64_t count) {
            const std::vector<int64_t> at = with_samples(count);
            ModuleAccess::State::Call call{&st.kernels[k], {}, {}};
            call.views.reserve(st.arg_ids[k].size());
            for (int id : st.arg_ids[k]) {
                if (id < 0) continue;
                const BufferRef& whole = st.values[size_t(id)];
                if (!st.symbolic.is_symbolic(id)) {
                    call.views.push_back(whole);
                    continue;
                }
                const int64_t sample_bytes = TensorType{st.symbolic.shape_at(st.graph, id, one), whole.dtype()}.bytes();
                call.views.push_back(BufferRef(static_cast<char*>(whole.data()) + first * sample_bytes, whole.dtype(),
                                               st.symbolic.shape_at(st.graph, id, at), {}, st.device));
            }
            size_t next = 0;  // (the views' storage moves with the call: the pointers stay valid)
            for (int id : st.arg_ids[k]) {
                if (id < 0) call.args.emplace_back(st.symbolic.scalar_value(id, at));
                else call.args.emplace_back(call.views[next++]);
            }
            st.calls[k].push_back(std::move(call));
        };
        if (run.per_call > 0)
            for (int64_t first = 0; first + run.per_call <= value; first += run.per_call) add_call(first, run.per_call);
        else
            add_call(0, std::max(value, run.at_least));
    }
    // A kernel with a variant for large sizes, where every symbol it takes is that large.
    for (size_t k = 0; k < st.large.size(); ++k) {
        if (!st.large[k].defined() || !st.calls[k].empty()) continue;
        // (Only the symbols it was compiled large for: those whose bounds reach kAssumedExtent;
        // a small batch beside a long sequence stays a symbol of the variant as of the kernel.)
        bool large = true;
        for (int id : st.large_args[k])
            if (detail::SymbolicShapes::is_base_id(id) && st.symbolic.symbols[size_t(-1 - id)].max >= kAssumedExtent)
                large &= st.symbol_values[size_t(-1 - id)] >= kAssumedExtent;
        if (!large) continue;
        ModuleAccess::State::Call call{&st.large[k], {}, {}};
        for (int id : st.large_args[k]) {
            if (id < 0) call.args.emplace_back(st.symbolic.scalar_value(id, st.symbol_values));
            else call.args.emplace_back(st.values[size_t(id)]);
        }
        st.calls[k].push_back(std::move(call));
    }
    // The kernels compiled for the current values, per size or specialized (in place of the
    // module's own, its per-sample calls and its variant for large sizes).
    if (st.bound_sizes)
        for (size_t k = 0; k < st.bound_sizes->kernels.size(); ++k) {
            if (!st.bound_sizes->kernels[k].defined()) continue;
            ModuleAccess::State::Call call{&st.bound_sizes->kernels[k], {}, {}};
            for (int id : st.bound_sizes->args[k]) call.args.emplace_back(st.values[size_t(id)]);
            st.calls[k].clear();
            st.calls[k].push_back(std::move(call));
        }
}

// The kernels kept for `values` (made the most recently used), or null.
inline const SizeKernels* kept_kernels(ModuleAccess::State& st, const std::vector<int64_t>& values) {
    for (auto it = st.sizes.begin(); it != st.sizes.end(); ++it)
        if (it->values == values) {
            st.sizes.splice(st.sizes.begin(), st.sizes, it);
            return &st.sizes.front();
        }
    return nullptr;
}

// Keeps `k` as the most recently used, in place of what was kept for its values; the last
// kMaxKeptSizes sets are kept. The bound views are rebuilt at the next run.
inline const SizeKernels& keep_kernels(ModuleAccess::State& st, SizeKernels k) {
    st.sizes.remove_if([&](const SizeKernels& x) { return x.values == k.values; });
    st.sizes.push_front(std::move(k));
    if (st.sizes.size() > kMaxKeptSizes) st.sizes.pop_back();
    st.bound_sizes = nullptr;
    st.stale_bindings = true;
    return st.sizes.front();
}

// The kernels to run at `values`: those kept for them (specialized, or per size), else the
// per-size ones compiled now (none needed at the max, or without per-size kernels).
inline const SizeKernels* kernels_at(ModuleAccess::State& st, const std::vector<int64_t>& values, bool at_max) {
    if (const SizeKernels* kept = kept_kernels(st, values)) return kept;
    if (st.per_size.empty() || at_max) return nullptr;
    return &keep_kernels(st, st.size_compiler->compile(values, false));
}

// Where the symbols are read from at run time: each symbolic axis of an input the compiled
// graph has (one no output depends on is gone), as (input index, axis, symbol index).
inline void locate_symbol_sources(ModuleAccess::State& st) {
    st.symbol_sources.clear();
    for (const SymbolicAxis& a : st.symbolic.axes) {
        auto in = std::find(st.input_names.begin(), st.input_names.end(), a.input);
        if (in == st.input_names.end()) continue;
        size_t s = 0;
        while (st.symbolic.symbols[s].name != a.symbol) ++s;
        st.symbol_sources.push_back({int(in - st.input_names.begin()), a.axis, int(s)});
    }
}

// The symbols' values that the inputs' current shapes give (in place of `values`, which
// holds the current ones: a symbol no input has keeps its value); inputs that disagree on
// one are a weft::Error naming both. Allocates nothing: run() calls it every time.
inline void symbol_values_of_inputs(const ModuleAccess::State& st, std::vector<int64_t>& values) {
    values = st.symbol_values;
    std::array<int, kMaxSymbols> from;
    from.fill(-1);
    for (const auto& [input, axis, s] : st.symbol_sources) {
        const int64_t v = st.values[size_t(st.input_ids[size_t(input)])].shape()[size_t(axis)];
        WEFT_CHECK(from[size_t(s)] < 0 || values[size_t(s)] == v, "graph::Module::run: symbol '",
                   st.symbolic.symbols[size_t(s)].name, "' is ", values[size_t(s)], " in input '",
                   st.input_names[size_t(from[size_t(s)] < 0 ? input : from[size_t(s)])], "' but ", v, " in input '",
                   st.input_names[size_t(input)], "' (dimension ", axis, "); set inputs of agreeing sizes");
        values[size_t(s)] = v;
        from[size_t(s)] = input;
    }
}

// The views of every node whose shape depends on the symbols, at `values`, and the argument
// lists that point at them; nothing when the values are those bound already.
inline void bind_symbols(ModuleAccess::State& st, const std::vector<int64_t>& values) {
    if (values == st.symbol_values && !st.stale_bindings) return;
    const Graph& g = st.graph;
    bool at_max = true;
    for (size_t s = 0; s < values.size(); ++s) at_max &= values[s] == st.symbolic.symbols[s].max;
    const SizeKernels* sizes = kernels_at(st, values, at_max);
    for (int id = 0; id < g.size(); ++id) {
        const bool per_size = st.symbolic.is_per_size(id);
        if ((!st.symbolic.is_symbolic(id) && !per_size) || !st.storage[size_t(id)].defined()) continue;
        if (per_size && g.node(id).is_constant()) {  // the data the graph has at these values
            st.values[size_t(id)] = sizes ? sizes->constants[size_t(id)] : st.storage[size_t(id)];
            continue;
        }
        const BufferRef& full = st.storage[size_t(id)];
        std::vector<int64_t> shape = !per_size ? st.symbolic.shape_at(g, id, values)
                                     : sizes   ? sizes->shapes[size_t(id)]
                                               : g.node(id).type.shape;
        // A floor term (a strided window's output) reaches 0 below the smallest input the
        // window fits in: a size the graph's operators refuse.
        for (int64_t d : shape)
            WEFT_CHECK(d >= 1, "graph::Module::run: ", describe(g.node(id)), " would have the shape ", shape_str(shape),
                       " at ", values_str(st.symbolic.symbols, values),
                       ": the graph cannot run at these sizes (a window larger than its input); use larger inputs");
        const TensorType t{shape, full.dtype()}, planned{full.shape(), full.dtype()};
        WEFT_CHECK(t.bytes() <= planned.bytes(), "graph::Module::run: ", describe(g.node(id)), " needs ", t.str(),
                   " at these sizes, more than the ", planned.str(), " planned at the symbols' max");
        st.values[size_t(id)] = BufferRef(full.data(), full.dtype(), std::move(shape), {}, st.device);
    }
    st.symbol_values = values;
    st.bound_sizes = sizes;
    st.stale_bindings = false;
    make_argument_lists(st);
}

// A specialization compiled in the background (`wait`: waiting for it), kept; values whose
// graph cannot be specialized (it differs from the compiled one there) are not tried again,
// and their runs stay on the symbolic kernels.
inline void adopt_specialized(ModuleAccess::State& st, bool wait) {
    if (!st.specializing || (!wait && !st.specializing->ready())) return;
    const auto done = std::move(st.specializing);
    try {
        keep_kernels(st, done->take());
    } catch (const Error&) {
        st.unspecializable.insert(st.specializing_values);
    }
}

// After a run's values are bound: counts the run at them, and the specialize_after_runs-th
// starts their specialization on a thread of its own (one at a time; on one compile thread,
// its parallel loops serial, so the run's threads keep the cores).
inline void count_run_at_size(ModuleAccess::State& st) {
    if (st.specialize_after_runs <= 0 || !st.size_compiler || st.specializing) return;
    if ((st.bound_sizes && st.bound_sizes->specialized) || st.unspecializable.count(st.symbol_values)) return;
    auto it = st.size_runs.find(st.symbol_values);
    if (it == st.size_runs.end()) {
        if (st.size_runs.size() >= 64) st.size_runs.clear();  // many sizes, each run rarely
        it = st.size_runs.emplace(st.symbol_values, 0).first;
    }
    if (++it->second < st.specialize_after_runs) return;
    st.size_runs.erase(it);
    st.specializing_values = st.symbol_values;
    st.specializing = std::make_unique<BackgroundCompile<SizeKernels>>(
        [compiler = st.size_compiler, values = st.symbol_values](const std::atomic<bool>& cancel) {
            runtime::SerialLoops serial;
            return compiler->compile(values, true, &cancel, 1);
        });
}

// set_input of a symbolic module: `data` may differ from the input's current shape where a
// symbol is, within the symbol's bounds; the input's view takes data's shape.
inline void resize_input(ModuleAccess::State& st, int index, const BufferRef& data) {
    const int id = st.input_ids[size_t(index)];
    const std::string& name = st.input_names[size_t(index)];
    const BufferRef& full = st.storage[size_t(id)];
    const std::vector<int64_t>& want = full.shape();
    const std::vector<int64_t>& got = data.shape();
    auto mismatch = [&] {
        return ::weft::detail::concat("graph::Module: set_input('", name, "'): expected ", full.dtype().str(),
                                      shape_str(want), " (symbolic dimensions: any value within their bounds), got ",
                                      data.dtype().str(), shape_str(got));
    };
    WEFT_CHECK(data.dtype() == full.dtype() && got.size() == want.size(), mismatch());
    for (size_t d = 0; d < got.size(); ++d) {
        if (got[d] == want[d]) continue;
        const Symbol* symbol = nullptr;
        for (const SymbolicAxis& a : st.symbolic.axes)
            if (a.input == name && a.axis == int64_t(d))
                for (const Symbol& s : st.symbolic.symbols)
                    if (s.name == a.symbol) symbol = &s;
        WEFT_CHECK(symbol, mismatch());
        WEFT_CHECK(got[d] >= symbol->min && got[d] <= symbol->max, "graph::Module: set_input('", name, "'): dimension ",
                   d, " is symbol '", symbol->name, "' = ", got[d], ", outside its bounds [", symbol->min, ", ",
                   symbol->max, "]");
    }
    st.values[size_t(id)] = BufferRef(full.data(), full.dtype(), got, {}, st.device);
}

// A module whose storage and symbols are in place (build(), graph::load_module): with
// symbolic dimensions, the storage at the symbols' max and the views bound there; then the
// argument lists.
inline void bind_storage(ModuleAccess::State& st) {
    if (!st.symbolic.empty()) {
        st.storage = st.values;
        st.symbol_values.clear();
        for (const Symbol& sym : st.symbolic.symbols) st.symbol_values.push_back(sym.max);
        st.requested_values = st.symbol_values;
        locate_symbol_sources(st);
    }
    make_argument_lists(st);
}

}  // namespace detail

const BufferRef& Module::input(int index) const {
    State& s = state();
    s.check_allocated("input");
    WEFT_CHECK(index >= 0 && index < int(s.input_ids.size()), "graph::Module: input index ", index,
               " is out of range (the module has ", s.input_ids.size(), " inputs)");
    return s.values[size_t(s.input_ids[size_t(index)])];
}

const BufferRef& Module::input(const std::string& name) const {
    return input(detail::index_of(state().input_names, name, "input"));
}

void Module::set_input(int index, const BufferRef& data) {
    const BufferRef& dst = input(index);
    const std::string& name = state().input_names[size_t(index)];
    WEFT_CHECK(data.defined(), "graph::Module: set_input('", name, "'): the buffer is undefined");
    if (!state().symbolic.empty()) detail::resize_input(state(), index, data);
    WEFT_CHECK(data.dtype() == dst.dtype() && data.shape() == dst.shape(), "graph::Module: set_input('", name,
               "'): expected ", dst.dtype().str(), shape_str(dst.shape()), ", got ", data.dtype().str(),
               shape_str(data.shape()));
    WEFT_CHECK(data.is_compact(), "graph::Module: set_input('", name, "'): the buffer must be compact (row-major)");
    dst.copy_from(data);  // from the host, or from a CUDA device
}

void Module::set_input(const std::string& name, const BufferRef& data) {
    set_input(detail::index_of(state().input_names, name, "input"), data);
}

const BufferRef& Module::get_output(int index) const {
    State& s = state();
    s.check_allocated("get_output");
    WEFT_CHECK(index >= 0 && index < int(s.output_ids.size()), "graph::Module: output index ", index,
               " is out of range (the module has ", s.output_ids.size(), " outputs)");
    return s.values[size_t(s.output_ids[size_t(index)])];
}

const BufferRef& Module::get_output(const std::string& name) const {
    return get_output(detail::index_of(state().output_names, name, "output"));
}

BufferRef Module::get_output_host(int index) const {
    const BufferRef& out = get_output(index);
    return out.copy_to(Device::cpu());  // from a device: after the work on its (blocking) streams
}

BufferRef Module::get_output_host(const std::string& name) const {
    return get_output_host(detail::index_of(state().output_names, name, "output"));
}

const cuda::Stream& Module::cuda_stream() const {
    State& s = state();
    WEFT_CHECK(s.device.is_cuda(), "graph::Module::cuda_stream: this module runs on the CPU (built for ",
               s.target.str(), "); only a module built for Target::cuda() has a stream");
    s.check_allocated("cuda_stream");
    return s.stream;
}

namespace detail {
// The symbols' values `values` names (every symbol, each within its bounds), in symbol order.
inline std::vector<int64_t> symbol_values_named(const ModuleAccess::State& s, const std::map<std::string, int64_t>& values,
                                                const char* caller) {
    std::vector<int64_t> at;
    for (const Symbol& sym : s.symbolic.symbols) {
        auto it = values.find(sym.name);
        WEFT_CHECK(it != values.end(), "graph::Module::", caller, ": no value for symbol '", sym.name, "'");
        WEFT_CHECK(it->second >= sym.min && it->second <= sym.max, "graph::Module::", caller, ": symbol '", sym.name,
                   "' = ", it->second, " is outside its bounds [", sym.min, ", ", sym.max, "]");
        at.push_back(it->second);
    }
    for (const auto& [name, v] : values) {
        bool known = false;
        for (const Symbol& sym : s.symbolic.symbols) known |= sym.name == name;
        WEFT_CHECK(known, "graph::Module::", caller, ": the module has no symbol '", name, "'");
    }
    return at;
}
}  // namespace detail

void Module::prepare_size(const std::map<std::string, int64_t>& values) {
    State& s = state();
    const std::vector<int64_t> at = detail::symbol_values_named(s, values, "prepare_size");
    bool at_max = true;
    for (size_t k = 0; k < at.size(); ++k) at_max &= at[k] == s.symbolic.symbols[k].max;
    detail::kernels_at(s, at, at_max);
}

void Module::specialize(const std::map<std::string, int64_t>& values) {
    State& s = state();
    WEFT_CHECK(!s.symbolic.empty(), "graph::Module::specialize: the module has no symbolic dimensions (its kernels "
               "are compiled for its only size)");
    WEFT_CHECK(s.size_compiler, "graph::Module::specialize: this module was loaded from an artifact, which holds "
               "compiled kernels but not the graph to compile at other sizes; build it from the graph or model");
    const std::vector<int64_t> at = detail::symbol_values_named(s, values, "specialize");
    if (const detail::SizeKernels* kept = detail::kept_kernels(s, at); kept && kept->specialized) return;
    detail::keep_kernels(s, s.size_compiler->compile(at, true));
}

void Module::wait_specialized() { detail::adopt_specialized(state(), true); }

std::vector<std::map<std::string, int64_t>> Module::specialized_sizes() const {
    std::vector<std::map<std::string, int64_t>> out;
    const State& s = state();
    for (const detail::SizeKernels& k : s.sizes) {
        if (!k.specialized) continue;
        std::map<std::string, int64_t> named;
        for (size_t i = 0; i < k.values.size(); ++i) named[s.symbolic.symbols[i].name] = k.values[i];
        out.push_back(std::move(named));
    }
    return out;
}

void Module::run() {
    State& s = state();
    s.check_allocated("run");
    s.adopt_optimized(false);
    std::optional<cuda::StreamGuard> on_stream;
    if (s.device.is_cuda()) on_stream.emplace(s.stream);
    if (!s.symbolic.empty()) {
        detail::adopt_specialized(s, false);
        detail::symbol_values_of_inputs(s, s.requested_values);
        detail::bind_symbols(s, s.requested_values);
        detail::count_run_at_size(s);
    }
    for (size_t k = 0; k < s.kernels.size(); ++k) s.run_kernel(k);
    s.enforce_checks();
}

CompileTier Module::tier() const { return state().tier; }

void Module::wait_optimized() {
    State& s = state();
    s.adopt_optimized(true);
    if (s.tier_up_error) std::rethrow_exception(s.tier_up_error);
}

}  // namespace weft::graph
