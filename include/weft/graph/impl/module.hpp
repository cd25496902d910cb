// Definitions of graph/module.hpp's Module: its inputs and outputs, run() (the bindings of
// graph/impl/module_bindings.hpp, then every kernel in order), the sizes it compiles for and
// its tiers. A CUDA module is the same with its storage on the device: one arena
// allocation, the inputs, and the constants copied once at build; run() launches on the
// module's stream. build() is graph/impl/build.hpp.
#pragma once
#include <optional>

#include "weft/graph/impl/module_bindings.hpp"

namespace weft::graph {

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
