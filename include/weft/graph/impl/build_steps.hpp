// graph::build's steps (graph/impl/build.hpp), each a named function: the passes and
// fusion, compiling the groups (on several threads, each with its tuning record's config
// where there is one), keeping what they compiled, then planning and allocating memory.
// graph::tune and the kernels compiled per size (graph/impl/size_kernels.hpp) share them.
#pragma once
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "weft/graph/impl/group_signature.hpp"
#include "weft/graph/impl/module.hpp"
#include "weft/runtime/thread_pool.hpp"

namespace weft::graph::detail {


// build()'s passes for this target (a GPU keeps NCHW: graph/pass.hpp), returning the
// nodes' order.
inline std::vector<int> run_passes(Graph& g, const Target& target, const BuildOptions& options,
                                   std::vector<BuildPhase>* phases = nullptr) {
    g.check();
    g = default_pipeline(options, target).run(g, phases);
    return g.check();
}

// build()'s first steps, shared with graph::tune: the passes rewrite g in place, then its
// nodes are fused into groups.
inline std::vector<FusedGroup> run_passes_and_fuse(Graph& g, const Target& target, const BuildOptions& options,
                                                   std::vector<BuildPhase>* phases = nullptr) {
    std::vector<int> order = run_passes(g, target, options, phases);
    WEFT_CHECK(!g.outputs().empty(), "graph::build: the graph has no outputs (mark them with Graph::output)");
    WEFT_CHECK(options.max_fused_expression >= 1, "graph::build: BuildOptions::max_fused_expression must be at least 1, "
               "got ", options.max_fused_expression);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<FusedGroup> groups = fuse_ops(g, order, options.fuse, options.max_fused_expression);
    if (phases) phases->push_back({"fuse", ms_since(t0)});
    return groups;
}

// BuildOptions::records, else the file of BuildOptions::records_file or of the
// WEFT_TUNING_RECORDS environment variable, else none.
inline std::shared_ptr<const autotune::Records> tuning_records(const BuildOptions& options) {
    if (options.records) return options.records;
    std::string path = options.records_file;
    if (path.empty())
        if (const char* env = std::getenv("WEFT_TUNING_RECORDS")) path = env;
    if (path.empty()) return nullptr;
    return std::make_shared<const autotune::Records>(autotune::Records::load(path));
}

// One group compiled, and what the module says of it.
struct GroupBuild {
    CompiledGroup compiled;
    KernelInfo info;
};

// Group `group` compiled with its tuning record's config (BuildOptions::records, else weft's
// pre-tuned records), else the template's defaults.
inline GroupBuild compile_with_records(const Graph& g, const FusedGroup& group, const Target& target,
                                       const BuildOptions& options, const autotune::Records* records,
                                       const SymbolicShapes* symbolic, CompileClock* clock) {
    const std::string workload = group_workload(g, group);
    std::optional<Config> tuned;
    if (records && !workload.empty()) tuned = records->best_config(target, workload);
    bool pretuned = false;
    if (!tuned && options.pretuned_records && !workload.empty()) {
        tuned = autotune::pretuned_records().best_config(target, workload);
        pretuned = tuned.has_value();
    }
    // A record was measured at the symbols' max; over a strided window's symbolic extents the
    // template's defaults choose for a symbolic size (tiles that fit any width past a few).
    if (symbolic && symbolic->any_floor_term(group.nodes)) tuned.reset(), pretuned = false;
    ConfigSpace space;  // learnt while compiling
    GroupBuild b;
    const bool fast = options.tier != CompileTier::optimized;  // (tiered: the first build)
    try {
        b.compiled = compile_group(g, group, target, tuned.value_or(Config{}).recording_into(&space), symbolic, clock,
                                   fast);
    } catch (const Error&) {
        // weft's own records never fail a build: one that no longer fits its template (a
        // knob's candidates changed since it was measured, or a symbolic extent) gives way to
        // the default.
        if (!pretuned && !(symbolic && tuned)) throw;
        tuned.reset();
        space = ConfigSpace();
        b.compiled = compile_group(g, group, target, Config{}.recording_into(&space), symbolic, clock, fast);
    }
    b.info = {group_name(g, group), group.nodes, group.master, b.compiled.kernel.compile_ms(), workload,
              !workload.empty() && space.size() > 1, tuned.has_value()};
    return b;
}

// A group with the signature of an earlier one (graph/impl/group_signature.hpp): the
// earlier one's build with this group's nodes as the kernel's arguments.
inline GroupBuild reuse_group_build(const Graph& g, const FusedGroup& group, const GroupBuild& first,
                                    std::vector<int> arg_ids) {
    GroupBuild b = first;
    b.compiled.args = std::move(arg_ids);
    b.info.name = group_name(g, group);
    b.info.nodes = group.nodes;
    b.info.master = group.master;
    return b;
}

// Every group of st compiled, on BuildOptions::compile_threads threads (0: weft's thread
// count): lowering, topi's schedules and LLVM are safe to run side by side, a group with
// an earlier group's signature takes its build, and the kernel cache compiles a kernel two
// groups still share once. `progress` is called one call at a time,
// before each group, in the order the groups start. After an error no group starts; of the
// groups that failed, the first in group order's error is thrown. Once `*cancel` is set no
// group starts either (the results are then incomplete).
inline std::vector<GroupBuild> compile_groups(const Graph& graph, const std::vector<FusedGroup>& groups,
                                              const Target& target, const BuildOptions& options,
                                              const SymbolicShapes* symbolic, CompileClock& clock,
                                              const std::atomic<bool>* cancel = nullptr) {
    WEFT_CHECK(options.compile_threads >= 0, "graph::build: BuildOptions::compile_threads must not be negative, got ",
               options.compile_threads);
    const std::shared_ptr<const autotune::Records> records = tuning_records(options);
    const size_t count = groups.size();
    std::vector<GroupBuild> results(count);
    std::vector<std::exception_ptr> errors(count);
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex progress_lock;
    int started = 0;
    // With symbolic dimensions a group's kernels depend on its nodes' symbols too: none shared.
    std::vector<GroupSignature> signatures;
    std::vector<size_t> first(count);
    for (size_t k = 0; k < count; ++k) first[k] = k;
    if (!symbolic) {
        for (const FusedGroup& group : groups) signatures.push_back(group_signature(graph, group));
        first = first_of_signature(signatures);
    }
    auto work = [&] {
        for (size_t k; !failed.load() && !(cancel && cancel->load()) && (k = next.fetch_add(1)) < count;) {
            if (options.progress) {
                std::lock_guard<std::mutex> hold(progress_lock);
                options.progress(started++, int(count), group_name(graph, groups[k]));
            }
            if (first[k] != k) continue;  // after the others, from its first
            try {
                results[k] = compile_with_records(graph, groups[k], target, options, records.get(), symbolic, &clock);
            } catch (...) {
                errors[k] = std::current_exception();
                failed.store(true);
            }
        }
    };
    const int wanted = options.compile_threads > 0 ? options.compile_threads : ::weft::num_threads();
    const size_t threads = std::min(count, size_t(std::max(1, wanted)));
    std::vector<std::thread> helpers;
    for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
    work();
    for (std::thread& t : helpers) t.join();
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);
    if (cancel && cancel->load()) return results;
    for (size_t k = 0; k < count; ++k) {
        if (first[k] == k) continue;
        const GroupBuild& built = results[first[k]];
        WEFT_ICHECK(built.compiled.args == signatures[first[k]].arg_ids, "graph::build: kernel '", built.info.name,
                    "' takes its arguments in another order than its group's signature lists them");
        results[k] = reuse_group_build(graph, groups[k], built, signatures[k].arg_ids);
    }
    return results;
}

// The compiled groups' kernels, infos and argument lists into st, in group order.
inline void keep_compiled(ModuleAccess::State& st, std::vector<GroupBuild> built) {
    for (GroupBuild& b : built) {
        st.infos.push_back(std::move(b.info));
        st.kernels.push_back(std::move(b.compiled.kernel));
        st.samples.push_back(b.compiled.samples);
        st.large.push_back(std::move(b.compiled.large));
        st.large_args.push_back(std::move(b.compiled.large_args));
        st.arg_ids.push_back(std::move(b.compiled.args));
        st.per_size.push_back(b.compiled.per_size);
        st.infos.back().per_size = b.compiled.per_size;
    }
    if (std::find(st.per_size.begin(), st.per_size.end(), true) == st.per_size.end()) st.per_size.clear();
}

// Storage: inputs and constants have their own; each group's output is planned (shared
// with others where lifetimes allow, unless BuildOptions::plan_memory is off) and, with
// BuildOptions::allocate, placed in one arena on the module's device; then the argument
// lists, built once: run() allocates nothing (unless the symbols change).
inline void plan_and_allocate(ModuleAccess::State& st, const BuildOptions& options) {
    const Graph& g = st.graph;
    ModuleAccess::store_inputs_and_constants(st);
    assign_guards(st);
    const auto [requests, request_of] = plan_requests(g, st.kernels, st.arg_ids, options.plan_memory, st.guards);
    MemoryPlan plan;
    if (options.plan_memory) {
        plan = plan_memory(requests);
    } else {  // one buffer each, end to end
        for (auto& r : requests) {
            plan.offsets.push_back(plan.arena_bytes);
            plan.arena_bytes += planned_bytes(r.bytes);
        }
        plan.naive_bytes = plan.arena_bytes;
    }
    st.naive_bytes = plan.naive_bytes;
    st.arena_bytes = plan.arena_bytes;
    ModuleAccess::store_outputs(st);
    if (!st.allocated) return;
    // One allocation for all intermediates; each planned tensor a view at its offset (pointer
    // arithmetic only: a device pointer is never dereferenced).
    st.arena = BufferRef::allocate(DataType::uint(8), {std::max<int64_t>(plan.arena_bytes, 1)}, st.device);
    for (int id = 0; id < g.size(); ++id) {
        int r = request_of[size_t(id)];
        if (r < 0) continue;
        const Node& n = g.node(id);
        st.values[size_t(id)] = BufferRef(static_cast<char*>(st.arena.data()) + plan.offsets[size_t(r)], n.type.dtype,
                                          n.type.shape, {}, st.device);
    }
    if (st.device.is_cuda()) st.stream = cuda::Stream::create(st.device);
    bind_storage(st);
}

}  // namespace weft::graph::detail
