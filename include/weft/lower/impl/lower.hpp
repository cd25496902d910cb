// lower(): the whole pipeline, in order. Read this function to see the compiler.
#include <cstdlib>
#include <iostream>

#include "weft/ir/printer.hpp"
#include "weft/lower/impl/argument_access.hpp"
#include "weft/lower/impl/check_reads.hpp"
#include "weft/lower/impl/gpu_double_buffer.hpp"
#include "weft/lower/impl/gpu_kernel.hpp"
#include "weft/lower/impl/gpu_schedule_check.hpp"
#include "weft/lower/impl/gpu_thread_sync.hpp"
#include "weft/lower/impl/hoist_allocations.hpp"
#include "weft/lower/impl/hoist_conditions.hpp"
#include "weft/lower/impl/loop_partition.hpp"
#include "weft/lower/impl/make_entry.hpp"
#include "weft/lower/impl/parallel_work.hpp"
#include "weft/lower/impl/schedule_ops.hpp"
#include "weft/lower/impl/specialize.hpp"
#include "weft/lower/impl/storage_flatten.hpp"
#include "weft/lower/impl/storage_rewrite.hpp"
#include "weft/lower/impl/unroll_register_tiles.hpp"
#include "weft/lower/impl/vectorize.hpp"
#include "weft/lower/lower.hpp"

namespace weft {
namespace {

// Prints the program after each pass when asked to (Halide's HL_DEBUG_CODEGEN habit).
struct PassPrinter {
    bool on;
    ir::Stmt last;
    void operator()(const char* pass, const ir::Stmt& s) {
        if (!on) return;
        std::cerr << "=== after " << pass << " ===\n";
        if (last.defined() && last.same_as(s)) std::cerr << "(unchanged)\n";
        else std::cerr << s;
        last = s;
    }
};

// The storage key of a tensor: its stage (any alias of the op) and output index.
const void* tensor_key(const StageNode* stage, int value_index) {
    return reinterpret_cast<const char*>(stage) + value_index;
}

}  // namespace

ir::PrimFunc lower(const Schedule& s, const std::vector<Argument>& args, const LowerOptions& options) {
    using namespace lower_passes;
    WEFT_CHECK(s.node() != nullptr, "lower: the schedule is undefined (use create_schedule)");
    const char* env = std::getenv("WEFT_PRINT_PASSES");
    PassPrinter print{options.print_passes || (env && std::string(env) == "1"), {}};

    // Arguments: one flat buffer (or scalar) each, in the caller's order.
    ir::PrimFunc f;
    f.name = options.name.empty() ? s.outputs().at(0).name() : options.name;
    f.fast_math = options.fast_math;
    f.fast_compile = options.fast_compile && !options.target.is_cuda();
    const int64_t alignment = options.argument_alignment;
    WEFT_CHECK(alignment == 0 || (alignment <= 4096 && ir::is_power_of_two(alignment)), "lower: kernel '", f.name,
               "': argument_alignment must be 0 or a power of two up to 4096 bytes, not ", alignment);
    std::unordered_map<const ir::Object*, const StageNode*> stage_of;
    for (auto& st : s.stages()) {
        auto* n = st.node().get();
        stage_of[n->op.get()] = n;
        stage_of[n->origin_op.get()] = n;
        for (auto& p : n->previous_ops) stage_of[p.get()] = n;
        if (n->op->is_scan()) {
            // A scan's state placeholder is the scan's own output (te::scan).
            stage_of[n->op->scan_state.get()] = n;
            WEFT_CHECK(!options.target.is_cuda(), "lower: kernel '", options.name.empty() ? s.outputs().at(0).name() : options.name,
                       "': scan '", n->op.name(), "' runs on CPUs only (the CUDA backend has no recurrences yet)");
        }
    }
    auto resolve = [&](const ir::Object* producer, int vi) -> const void* {
        auto it = stage_of.find(producer);
        return it == stage_of.end() ? tensor_key(reinterpret_cast<const StageNode*>(producer), vi)
                                    : tensor_key(it->second, vi);
    };
    StorageFlattener flattener(resolve);
    std::unordered_map<const void*, size_t> position;  // each argument's first position
    for (auto& a : args) {
        if (auto* t = std::get_if<Tensor>(&a.value)) {
            WEFT_CHECK(t->defined(), "lower: an argument tensor is undefined");
            auto [seen, first] = position.try_emplace(resolve(t->op().get(), t->value_index()), f.args.size());
            WEFT_CHECK(first, "lower: kernel '", f.name, "': tensor '", t->name(), "' is passed twice (arguments #",
                       seen->second + 1, " and #", f.args.size() + 1, "); list each tensor once");
            if (auto it = stage_of.find(t->op().get()); it != stage_of.end())
                WEFT_CHECK(!it->second->op->is_compute() || it->second->is_output, "lower: argument '", t->name(),
                           "' is an intermediate stage of the schedule, not an output, so the kernel would never write "
                           "it; pass it to create_schedule among the outputs to get it written");
            Var data(t->name(), DataType::handle());
            f.args.push_back({ir::KernelArg::Kind::Tensor, t->name(), data, t->dtype(), t->shape(),
                              options.target.is_cuda() ? 0 : alignment});
            flattener.add_argument(resolve(t->op().get(), t->value_index()), data, t->dtype(), t->shape());
        } else {
            const Var& v = std::get<Var>(a.value);
            WEFT_CHECK(v.defined(), "lower: an argument variable is undefined");
            auto [seen, first] = position.try_emplace(v.get(), f.args.size());
            WEFT_CHECK(first, "lower: kernel '", f.name, "': variable '", v.name(), "' is passed twice (arguments #",
                       seen->second + 1, " and #", f.args.size() + 1, "); list each variable once");
            f.args.push_back({ir::KernelArg::Kind::Scalar, v.name(), v, v.type(), {}});
        }
    }
    // By identity, not by name: two tensors may share a name ("compute" by default).
    for (auto& out : s.outputs())
        for (int v = 0; v < out->num_outputs(); ++v) {
            bool passed = false;
            for (auto& a : args)
                if (auto* t = std::get_if<Tensor>(&a.value))
                    passed |= resolve(t->op().get(), t->value_index()) == resolve(out.get(), v);
            WEFT_CHECK(passed, "lower: output '", out.output(v).name(),
                       "' is not in the argument list; pass it so the kernel can write it");
        }

    mark_argument_access(s, args, stage_of, f);
    // Reads outside their tensors: an error now for constant shapes, asserts at the entry
    // for symbolic ones.
    std::vector<EntryAssert> read_asserts = check_reads_in_bounds(s);

    const bool gpu = options.target.is_cuda();
    if (gpu) check_gpu_schedule(s, f.name);

    // 1. Bound inference, schedule -> loop nest, inlining (compute_inline stages vanish).
    //    GPU: a stage in shared memory covers the region of all threads of the block, and
    //    stores of a stage shared by threads that do not split its work among them are
    //    guarded to one thread (threadIdx == 0).
    ir::Stmt body = schedule_ops(s);
    print("schedule_ops (bound inference, loop nests, inlining)", body);
    // 2. Tensors -> flat buffers with strides; realizes become allocations.
    body = flattener.mutate(body);
    print("storage_flatten", body);
    // 3. Split tails: steady-state loops without guards, guarded tail loops.
    //    Must run before vectorize so the steady state vectorizes.
    const ir::arith::VarRanges sizes = size_ranges(f.args, options.sizes);
    //    Specialized on sizes (LowerOptions::specialize_at_least, and the schedule's
    //    ShiftInwardsOrGuard splits): partitioned knowing them large, beside the generic one.
    body = partition_specialized(body, sizes, specializations(s, f.args, options.specialize_at_least), f.name);
    print("loop_partition", body);
    //    A guard that does not depend on a loop moves out of it (one test per outer iteration).
    body = hoist_loop_invariant_conditions(body);
    print("hoist_loop_invariant_conditions", body);
    // 4. Vectorized loops -> Ramp/Broadcast vector code (or serial loops when unsafe).
    body = vectorize_loops(body, gpu ? 0 : options.target.vector_bits);
    print("vectorize", body);
    // 5. Loops that index a register tile (a small "local" buffer) are unrolled, so every
    //    access to the tile has a constant position and LLVM keeps it in registers (CPU).
    //    (LowerOptions::fast_compile: none is, every unrolled loop stays a loop.)
    const int max_unroll = options.fast_compile ? 0 : options.max_unroll;
    if (!gpu && max_unroll > 0) {
        body = unroll_register_tile_loops(body, max_unroll);
        print("unroll_register_tile_loops", body);
    }
    //    Unrolled loops -> copies of the body.
    body = unroll_loops(body, max_unroll);
    print("unroll", body);
    // 6. Simplify the whole program.
    body = ir::arith::simplify(body, sizes);
    print("simplify", body);
    // GPU: double-buffered shared stages get two buffers and a fetch one iteration ahead.
    //    Before storage rewrite, which must see the doubled buffer.
    if (gpu) {
        body = inject_double_buffer(body);
        print("inject_double_buffer (GPU)", body);
    }
    // 7. Intermediate buffers whose lifetimes do not overlap share memory.
    body = storage_rewrite(body);
    print("storage_rewrite", body);
    if (gpu) {
        // 8 (GPU). The kernel: bound loops become thread indices, launch extents become
        //    attributes, limits are checked; then barriers where threads share memory.
        body = make_gpu_kernel(f.name, body, loop_descriptions(s));
        print("make_gpu_kernel (thread binding, launch extents, limits)", body);
        body = insert_thread_sync(body);
        print("insert_thread_sync (barriers)", body);
        check_gpu_arguments(f.name, f.args, body);
        f.body = body;
        return f;
    }
    // 8. An allocation of symbolic size leaves the serial loops its size does not depend on
    //    (one heap allocation, not one per row).
    body = hoist_allocations(body, sizes);
    print("hoist_allocations", body);
    // 9. Each parallel loop says how much work an iteration does, so the thread pool can run
    //    a small one on the calling thread alone. Last: it measures the final loop nest.
    body = annotate_parallel_work(body);
    print("annotate_parallel_work", body);
    // 10. The entry: argument checks and bindings, and the reads' bounds on symbolic shapes.
    for (auto it = read_asserts.rbegin(); it != read_asserts.rend(); ++it)
        body = ir::AssertStmt::make(it->cond, "kernel '" + f.name + "': " + it->message, body);
    body = make_entry(f.name, f.args, body, options.sizes);
    print("make_entry (argument checks)", body);
    f.body = body;
    return f;
}

}  // namespace weft
