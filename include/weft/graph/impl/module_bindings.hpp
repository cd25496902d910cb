// A module's argument lists and, with symbolic dimensions, what run() does before its kernels:
// the symbols' values read from the inputs, the views of every tensor at them, the kernels
// kept for them (compiled per size, or specialized: graph/impl/size_kernels.hpp) and the
// specialization of sizes that run often, compiled in the background.
#pragma once
#include <array>

#include "weft/graph/impl/module_state.hpp"
#include "weft/runtime/thread_pool.hpp"

namespace weft::graph::detail {

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
    // The kernels compiled for the current values, per size or specialized: in place of the
    // module's own (its per-sample calls and its variant for large sizes below).
    if (st.bound_sizes)
        for (size_t k = 0; k < st.bound_sizes->kernels.size(); ++k) {
            if (!st.bound_sizes->kernels[k].defined()) continue;
            ModuleAccess::State::Call call{&st.bound_sizes->kernels[k], {}, {}};
            for (int id : st.bound_sizes->args[k]) call.args.emplace_back(st.values[size_t(id)]);
            st.calls[k].push_back(std::move(call));
        }
    for (size_t k = 0; k < st.arg_ids.size(); ++k) {
        const SampleRun run = st.samples.empty() ? SampleRun{} : st.samples[k];
        if (run.symbol < 0 || !st.calls[k].empty()) continue;
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

}  // namespace weft::graph::detail
