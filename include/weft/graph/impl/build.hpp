// Definition of graph/module.hpp's build(), step by step (graph/impl/build_steps.hpp): the
// passes and fusion, the symbolic dimensions' analysis, compiling the groups, then planning
// and allocating memory; a module with kernels compiled per size gets the steps that make
// them (graph/impl/size_kernels.hpp). Module::build_phases records the steps' times.
#pragma once
#include "weft/graph/impl/build_steps.hpp"
#include "weft/graph/impl/size_kernels.hpp"

namespace weft::graph {

namespace detail {
// The option named `name` in `table` (what command-line tools read); otherwise a weft::Error
// "unknown <what> 'name' (expected a, b or c)".
template <class E, size_t N>
E named_option(const std::string& name, const std::pair<const char*, E> (&table)[N], const char* what) {
    std::string expected;
    for (size_t i = 0; i < N; ++i) {
        if (name == table[i].first) return table[i].second;
        expected += std::string(i == 0 ? "" : i + 1 == N ? " or " : ", ") + table[i].first;
    }
    ::weft::detail::throw_user_error("unknown " + std::string(what) + " '" + name + "' (expected " + expected + ")");
}
}  // namespace detail

CompileTier compile_tier(const std::string& name) {
    static const std::pair<const char*, CompileTier> tiers[] = {
        {"optimized", CompileTier::optimized}, {"fast", CompileTier::fast}, {"tiered", CompileTier::tiered}};
    return detail::named_option(name, tiers, "compile tier");
}

Precision precision(const std::string& name) {
    static const std::pair<const char*, Precision> precisions[] = {
        {"f32", Precision::f32}, {"bf16", Precision::bf16}, {"int8", Precision::int8}};
    return detail::named_option(name, precisions, "precision");
}

namespace detail {

// A tiered build's second tier: st's groups compiled again, optimized, on a thread of the
// module's own (graph/impl/background_compile.hpp). st's tier is what its kernels were compiled for.
inline void start_tier_up(ModuleAccess::State& st, const BuildOptions& options) {
    const bool fast = options.tier != CompileTier::optimized && st.target.is_cpu();
    st.tier = fast ? CompileTier::fast : CompileTier::optimized;
    if (!fast || options.tier != CompileTier::tiered) return;
    BuildOptions optimized = options;
    optimized.tier = CompileTier::optimized;
    optimized.progress = nullptr;
    st.tier_up = std::make_unique<BackgroundCompile<std::vector<CompiledGroup>>>(
        [graph = st.graph, groups = st.groups, target = st.target, optimized,
         symbolic = st.symbolic](const std::atomic<bool>& cancel) {
            CompileClock clock;
            std::vector<GroupBuild> built = compile_groups(graph, groups, target, optimized,
                                                           symbolic.empty() ? nullptr : &symbolic, clock, &cancel);
            std::vector<CompiledGroup> result;
            if (cancel.load()) return result;
            for (GroupBuild& b : built) result.push_back(std::move(b.compiled));
            return result;
        });
}

// What compiles st's kernels at other sizes (graph/impl/size_kernels.hpp): the graph build()
// was given (to make the graph there; the callbacks it was built with are not called again),
// the compiled one, its groups and their arguments.
inline void keep_size_compiler(ModuleAccess::State& st, const Graph& source, const BuildOptions& options) {
    auto c = std::make_shared<SizeCompiler>();
    c->source = source;
    c->compiled = st.graph;
    c->symbolic = st.symbolic;
    c->groups = st.groups;
    c->arg_ids = st.arg_ids;
    for (const KernelInfo& info : st.infos) c->names.push_back(info.name);
    c->per_size = st.per_size;
    c->target = st.target;
    c->options = options;
    c->options.progress = nullptr;
    if (c->options.tier == CompileTier::tiered) c->options.tier = CompileTier::optimized;  // compiled at run time
    st.size_compiler = std::move(c);
    st.specialize_after_runs = options.specialize_after_runs;
}

}  // namespace detail

Module build(const Graph& graph, const Target& target, const BuildOptions& given) {
    // int8: calibrated once, at the calibration inputs' own sizes; every graph the passes make
    // (at a symbolic dimension's other sizes too, and those a module compiles when it runs)
    // then takes these ranges.
    WEFT_CHECK(given.specialize_after_runs >= 0, "graph::build: BuildOptions::specialize_after_runs must not be "
               "negative, got ", given.specialize_after_runs);
    BuildOptions options = given;
    auto st = std::make_shared<Module::State>();
    if (given.precision == Precision::int8 && target.is_cpu() && !given.calibration.empty()) {
        const auto t0 = std::chrono::steady_clock::now();
        for (auto& [layer, range] : calibrate_int8(graph, given, target)) options.activation_ranges.try_emplace(layer, range);
        st->phases.push_back({"calibrate int8", detail::ms_since(t0)});
    }
    st->graph = graph;
    st->target = target;
    st->allocated = options.allocate;
    if (target.is_cuda()) {
        st->device = Device::cuda(options.cuda_device);
        // Before the (long) compile: a module that is to run needs its device.
        WEFT_CHECK(!options.allocate || options.cuda_device < cuda::device_count(), "no CUDA device: graph::build(g, ",
                   target.str(), ") allocates the module's storage on ", st->device.str(), ", but ",
                   cuda::device_count() == 0 ? cuda::unavailable_reason()
                                             : "there are only " + std::to_string(cuda::device_count()) + " device(s)",
                   ". To compile every kernel and plan memory without a device, set BuildOptions::allocate = false");
    }
    std::vector<BuildPhase>& phases = st->phases;
    st->groups = detail::run_passes_and_fuse(st->graph, target, options, &phases);

    auto t0 = std::chrono::steady_clock::now();
    if (!graph.symbols().empty()) {
        WEFT_CHECK(!target.is_cuda(), "graph::build: symbolic dimensions are supported on the CPU only; give the "
                   "symbols fixed values to build for ", target.str());
        st->symbolic = detail::analyze_symbols(graph, st->graph, [&](Graph x) {
            detail::run_passes(x, target, options);
            return x;
        });
        phases.push_back({"symbolic dimensions", detail::ms_since(t0)});
    }

    t0 = std::chrono::steady_clock::now();
    detail::CompileClock clock;
    detail::keep_compiled(*st, detail::compile_groups(st->graph, st->groups, target, options,
                                                      st->symbolic.empty() ? nullptr : &st->symbolic, clock));
    if (!st->symbolic.empty()) detail::keep_size_compiler(*st, graph, options);
    phases.push_back({"compile kernels", detail::ms_since(t0)});
    for (auto [name, ns] : {std::pair{"  schedules", &clock.schedule_ns}, std::pair{"  lowering", &clock.lower_ns},
                            std::pair{"  LLVM", &clock.llvm_ns}})
        phases.push_back({name, double(ns->load()) / 1e6});

    t0 = std::chrono::steady_clock::now();
    detail::plan_and_allocate(*st, options);
    phases.push_back({st->allocated ? "plan memory and allocate" : "plan memory", detail::ms_since(t0)});
    detail::start_tier_up(*st, options);  // last: build() returns as soon as it can
    return Module(std::move(st));
}

}  // namespace weft::graph
