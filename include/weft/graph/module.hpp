// graph::build compiles a Graph for a target; graph::Module runs it.
//
//   graph::Module m = graph::build(g);                // passes, fusion, one kernel per group,
//                                                     // memory planned and allocated once
//   m.set_input("x", x);                              // copied into the module's storage
//   m.run();                                          // no allocation
//   const BufferRef& y = m.get_output(0);             // valid until the next run()
//
// A Module is a shared handle: copies run the same compiled graph and storage, so use one
// Module per thread that runs it.
//
// For a GPU (docs/cuda.md, "Whole networks on the GPU"):
//
//   graph::Module m = graph::build(g, Target::cuda());  // kernels by NVRTC, storage on cuda(0)
//   m.set_input("x", x);                               // x on the host or on the device
//   m.run();                                           // every kernel on m.cuda_stream()
//   const BufferRef& y = m.get_output(0);              // DEVICE memory: the host cannot read it
//   BufferRef h = m.get_output_host(0);                // a host copy (waits for the run)
//
// BuildOptions::allocate = false compiles every kernel and plans memory without touching a
// device (what a machine without a GPU can check).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "weft/graph/fuse.hpp"
#include "weft/graph/graph.hpp"
#include "weft/autotune/records.hpp"
#include "weft/graph/inspect.hpp"
#include "weft/ir/target.hpp"
#include "weft/runtime/cuda/cuda.hpp"
#include "weft/runtime/kernel.hpp"

namespace weft::graph {

// How graph::build compiles the kernels (BuildOptions::tier): for the fastest code, for the
// shortest compile, or the short compile first with the fastest code compiled in the
// background and swapped in between runs (docs/graph.md, "Compile tiers").
enum class CompileTier { optimized, fast, tiered };
// The tier named "optimized", "fast" or "tiered" (a weft::Error naming the three otherwise):
// what command-line tools read.
CompileTier compile_tier(const std::string& name);

// The number type the heavy operators compute in (docs/graph.md, "Precision"). f32: all of
// the graph as its types say. bf16: matmuls with constant float32 weights (linear layers)
// and blocked-layout convolutions of constant weights multiply in bfloat16 and accumulate in
// float32 (AVX512_BF16's vdpbf16ps where the target has it, float32 FMAs of the rounded
// values elsewhere); everything else stays float32. int8: the same layers run on 8-bit
// integers (post-training quantization: the activations' ranges from
// BuildOptions::calibration, the weights per output channel; VNNI's vpdpbusd where the target
// has it), everything else float32.
enum class Precision { f32, bf16, int8 };
// Precision::int8: the range {min, max} of each quantized layer's input, by the layer's node
// name in the graph the passes make (graph::calibrate_int8).
using ActivationRanges = std::map<std::string, std::pair<float, float>>;
// The precision named "f32", "bf16" or "int8" (a weft::Error naming them otherwise).
Precision precision(const std::string& name);

struct BuildOptions {
    bool fuse = true;         // fuse operators into groups (graph/fuse.hpp); off: one kernel per operator
    // The largest expression a fused group inlines (graph/fuse.hpp, kMaxFusedExpression):
    // longer chains are cut into several kernels.
    int64_t max_fused_expression = kMaxFusedExpression;
    bool plan_memory = true;  // share intermediate storage (graph/memory_plan.hpp); off: one buffer each
    // The graph passes build() runs first (graph/pass.hpp), each on by default.
    bool eliminate_dead_code = true;              // drop nodes no output depends on
    bool eliminate_common_subexpressions = true;  // merge equal nodes
    bool merge_equal_constants = true;            // ... and constants with equal values
    bool fold_constants = true;                   // evaluate constant subgraphs at build time
    bool fold_scale_axis = true;                  // batch_norm, per-channel mul/add into conv2d/dense
    bool simplify_operators = true;               // pow(x, 2) -> x*x, dense -> matmul, conv taps on padding cut
    bool convert_layout = true;                   // convolutions in the blocked layout NCHW[x]c (CPU only)
    // Allocate the module's storage (inputs, the arena, the constants' copies) and, for CUDA,
    // its stream. Off: the kernels are compiled and memory is planned, nothing is allocated
    // and nothing touches a GPU; such a module can be inspected (kernels(), memory_bytes(),
    // to_dot()) but not run.
    bool allocate = true;
    int cuda_device = 0;  // the device (Device::cuda(n)) a module built for Target::cuda() runs on
    // Called before each kernel is compiled, with its index (from 0), the number of
    // kernels and its name ("conv2d_nchwc_add_relu"): progress for tools (weftc).
    // From the thread that starts the kernel, one call at a time.
    std::function<void(int index, int count, const std::string& name)> progress;
    // Threads that compile the kernels side by side (0: weft's thread count, num_threads()).
    int compile_threads = 0;
    // optimized: every kernel compiled for speed. fast: for a short compile (no loop unrolled,
    // LLVM -O0: a fifth of the build time, kernels 4-11x slower). tiered: fast, then the
    // optimized kernels compiled on a thread of the module's own, taken by the first run()
    // (or wait_optimized()) after they are ready. CPU targets; a CUDA build is always optimized.
    CompileTier tier = CompileTier::optimized;
    // With symbolic dimensions (CPU): after this many runs at one set of the symbols' values,
    // the module compiles its symbolic kernels again for exactly those values (constant
    // extents: a fixed build's speed) on a thread of its own, and runs them there once they
    // are ready (kept for the last kMaxKeptSizes sets; docs/graph.md, "Kernels specialized
    // for a size"). 0: never (Module::specialize still does it when asked).
    int specialize_after_runs = 3;
    Precision precision = Precision::f32;
    // Precision::int8: typical inputs (each a map from every graph input's name to a value)
    // that the float32 graph is run on to find each quantized activation's range. A few
    // suffice; they are run once, at build.
    std::vector<std::map<std::string, BufferRef>> calibration;
    // Precision::int8: the share (in percent, 50 to 100) of each activation's calibration
    // values its quantized range holds. 100: min-max. Below, (100 - p) / 2 percent of the
    // values are left out at each end (read from a histogram of 2048 bins over the min-max
    // range): a few outliers no longer stretch the steps every other value is rounded to.
    double calibration_percentile = 100.0;
    // Precision::int8: each quantized layer's input range, by the layer's node name (what
    // graph::calibrate_int8 returns: a calibration kept from an earlier build). Where a layer
    // has one it is not calibrated; build() fills the others from `calibration`.
    ActivationRanges activation_ranges;
    // Tuning records (autotune/records.hpp): each fused group whose workload has a record
    // for this target is built with the best record's config; the others with the
    // templates' defaults (KernelInfo::tuned says which). When neither is set, the file the
    // WEFT_TUNING_RECORDS environment variable names, if any.
    std::shared_ptr<const autotune::Records> records;
    std::string records_file;
    // For groups without a record above: weft's pre-tuned records
    // (autotune::pretuned_records()), where this target is the one they were measured on.
    bool pretuned_records = true;
};

// One compiled kernel of a module: a fused group.
struct KernelInfo {
    std::string name;        // "conv2d_bias_add_relu"
    std::vector<int> nodes;  // the graph nodes it computes (last: the one it writes)
    int master = -1;         // the node whose schedule it uses, or -1
    double compile_ms = 0;   // JIT time of its compile (served by the kernel cache: the first compile's)
    std::string workload;    // its tuning task's workload key ("" for a group without a master)
    bool tunable = false;    // its schedule has choices (a tuning task: graph::extract_tasks)
    bool tuned = false;      // built with a tuning record's config (BuildOptions::records, or pre-tuned)
    // A kernel only a branch needs (the then or else input of a `where` on a one-element
    // condition: an If the inputs decide, an iteration of a Loop they decide) runs only when
    // the bool node `condition` is `condition_value`; -1: it always runs. (CPU modules.)
    int condition = -1;
    bool condition_value = true;
    // With symbolic dimensions: compiled for each size the module runs at, when it first
    // runs there (a convolution over a symbolic image size; docs/graph.md, "Symbolic
    // dimensions"), not once over symbolic extents.
    bool per_size = false;
};

// The sets of symbol values a module keeps per-size kernels for (KernelInfo::per_size),
// besides the max, the most recently used: a model run at ever new image sizes compiles
// again past these, but its memory stays bounded.
inline constexpr size_t kMaxKeptSizes = 8;

// Where graph::build's time went, one step: "pass fold_constants", "fuse", "compile kernels",
// ... (Module::build_phases).
struct BuildPhase {
    std::string name;
    double ms = 0;
};

namespace detail {
struct ModuleAccess;  // graph/artifact.hpp's saving and loading: a module's parts
}

class Module {
public:
    Module() = default;

    int num_inputs() const;
    int num_outputs() const;
    const std::vector<std::string>& input_names() const;
    const std::vector<std::string>& output_names() const;
    // The graph's symbolic dimensions (graph::Graph::set_symbolic; empty: every shape fixed):
    // inputs take any extent within their bounds there.
    const std::vector<Symbol>& symbols() const;
    const std::vector<SymbolicAxis>& symbolic_axes() const;  // which input dimension each one is

    // Copies `data` (shape and dtype checked) into input `name` / `index`. For a CUDA module
    // `data` may be on the host or on a device.
    void set_input(const std::string& name, const BufferRef& data);
    void set_input(int index, const BufferRef& data);
    // The module's own storage of an input: fill it in place instead of set_input's copy
    // (device memory for a CUDA module).
    const BufferRef& input(const std::string& name) const;
    const BufferRef& input(int index) const;

    // Runs every kernel once, in order. A CUDA module launches them on its stream and
    // returns without waiting for them (get_output_host, or cuda_stream().synchronize(), waits).
    // A tiered build's run takes the optimized kernels first if they are ready.
    void run();
    // The tier of the kernels run() uses: CompileTier::fast until a tiered build's optimized
    // kernels are taken, then optimized (a fast build stays fast).
    CompileTier tier() const;
    // A tiered build: waits until its optimized kernels are compiled and takes them now (the
    // next run() uses them). Throws the weft::Error of an optimized tier that failed to
    // compile (the module keeps running its fast kernels). Nothing to do for other builds.
    // Not while another thread runs the module.
    void wait_optimized();
    // With kernels compiled per size (KernelInfo::per_size: an image size), compiles now what
    // the first run() at these symbol values would (every symbol named, within its bounds),
    // so that run does not wait for the compiler; the sizes prepared or run at last are kept
    // (kMaxKeptSizes). Nothing to do for a module without such kernels, or at the max.
    void prepare_size(const std::map<std::string, int64_t>& values);
    // Compiles now, for exactly these symbol values (every symbol named, within its bounds),
    // every kernel whose tensors follow the symbols, with constant extents: runs there then
    // go at the speed of a build for that size, where the kernels compiled once over the
    // symbols are slower (tiles chosen for the max, a row's last tile shifted). Kept among the
    // last kMaxKeptSizes sets. BuildOptions::specialize_after_runs does it in the background
    // for the sizes that run often. A weft::Error where the model's graph differs at these
    // values from the one compiled (its structure must not depend on the symbols).
    void specialize(const std::map<std::string, int64_t>& values);
    // Waits for a specialization compiling in the background (specialize_after_runs) and
    // takes it now, so that the next run() at its size uses it. Nothing to do without one.
    // Not while another thread runs the module.
    void wait_specialized();
    // The symbol values the module keeps specialized kernels for, the most recently used first.
    std::vector<std::map<std::string, int64_t>> specialized_sizes() const;

    // An output after run(): a view of the module's storage, overwritten by the next run().
    // For a CUDA module it is device memory (Device::cuda(n)): pass it to another CUDA
    // kernel or module, or copy it with get_output_host / BufferRef::copy_to(Device::cpu()).
    const BufferRef& get_output(const std::string& name) const;
    const BufferRef& get_output(int index) const;
    // A host copy of an output (for a CUDA module, after the kernels launched so far finish).
    BufferRef get_output_host(const std::string& name) const;
    BufferRef get_output_host(int index) const;

    // Where the module runs: Device::cpu(), or Device::cuda(n) for a module built for CUDA.
    Device device() const;
    // The stream a CUDA module launches its kernels on (created at build); a weft::Error for
    // a CPU module or one built without storage.
    const cuda::Stream& cuda_stream() const;

    // ---- introspection ----------------------------------------------------------------
    const Graph& graph() const;  // the graph as compiled (after the passes)
    const std::vector<KernelInfo>& kernels() const;
    // The compiled kernels, in kernels()'s order (a CUDA kernel's device_code() holds its
    // CUDA C, PTX and launch configuration).
    const std::vector<Kernel>& compiled_kernels() const;
    const Target& target() const;
    int64_t memory_bytes() const;        // the arena of intermediates, as planned
    int64_t memory_naive_bytes() const;  // one buffer per kernel output (no reuse)
    // One buffer per operator output of the compiled graph: what running its operators one
    // by one, without fusion or reuse, would allocate.
    int64_t memory_operator_bytes() const;
    // How long build() took, step by step, in order: each graph pass ("pass fold_constants",
    // which runs the constant subgraph's kernels), "fuse", "symbolic dimensions" (with
    // symbols), "compile kernels" (wall time, on BuildOptions::compile_threads threads), then
    // the time its threads spent in "  schedules" (topi's computes and schedules), "  lowering"
    // and "  LLVM" (optimization and code generation, or the kernel cache's answer), summed
    // over the threads, and "plan memory and allocate". Empty for a module graph::load_module
    // made. `weftc compile --time-phases` prints them.
    const std::vector<BuildPhase>& build_phases() const;

    // ---- profiling and debugging (graph/inspect.hpp) ------------------------------------
    // Runs the module `repeats` times after one warm-up run, timing every kernel on its own
    // (on the current inputs; the outputs are those of the last run). A CUDA module waits
    // for each kernel on its stream, so the times are the kernels' (plus a launch).
    ProfileReport profile(int repeats = 10);
    // run(), checking each kernel as it goes: the kernel's inputs are copied, and its nodes,
    // each compiled alone (as with BuildOptions::fuse off), run on the copies; the first
    // kernel whose output differs beyond the tolerance stops the run and is reported
    // (thrown as weft::Error unless options.throw_on_mismatch is off). Compiles one kernel
    // per node the first time (the kernel cache serves later calls). CPU modules only (it
    // compares on the host): debug a CUDA module's graph built for Target::host().
    DebugReport run_debug(const DebugOptions& options = {});
    // The compiled graph in Graphviz dot, each kernel's fused group a cluster.
    std::string to_dot(const DotOptions& options = {}) const;

private:
    struct State;
    explicit Module(std::shared_ptr<State> s) : state_(std::move(s)) {}
    State& state() const;
    friend Module build(const Graph& g, const Target& target, const BuildOptions& options);
    friend struct detail::ModuleAccess;

    std::shared_ptr<State> state_;
};

Module build(const Graph& g, const Target& target = Target::host(), const BuildOptions& options = {});

}  // namespace weft::graph
