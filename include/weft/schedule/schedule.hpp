// Schedules: how to compute, kept apart from what to compute.
//
// A Schedule holds one Stage per operation. Each stage is plain data: its loop nest (leaf
// iteration variables, outer to inner), the relations that derived them from the op's axes
// (split, fuse), per-loop kinds (parallel, vectorized, unrolled, bound to a GPU thread
// axis), pragmas, where the stage is computed (root, inline, or at a loop of a consumer)
// and its storage scope. Every primitive checks its legality and throws weft::Error with
// the reason; lowering reads this data, nothing else does.
//
// Every primitive call is also recorded in a trace (Schedule::trace), which prints,
// compares, and serializes to JSON and back (replayed onto a fresh schedule of the same
// computation): the form the auto-tuner stores in its records.
#pragma once
#include <map>
#include <memory>
#include <source_location>
#include <tuple>
#include <variant>

#include "weft/te/compute.hpp"
#include "weft/te/tensor_intrin.hpp"

namespace weft {

using te::Operation;
using te::Tensor;

// A GPU thread axis a loop can be bound to.
struct ThreadAxis {
    std::string tag;  // "blockIdx.x", "threadIdx.y", "vthread", ...
};
inline ThreadAxis block_x() { return {"blockIdx.x"}; }
inline ThreadAxis block_y() { return {"blockIdx.y"}; }
inline ThreadAxis block_z() { return {"blockIdx.z"}; }
inline ThreadAxis thread_x() { return {"threadIdx.x"}; }
inline ThreadAxis thread_y() { return {"threadIdx.y"}; }
inline ThreadAxis thread_z() { return {"threadIdx.z"}; }
// A virtual thread (TVM's vthread): the loop runs inside each GPU thread, unrolled, as if it
// were more threads; its iterations' accesses interleave, which spreads shared-memory banks.
inline ThreadAxis vthread() { return {"vthread"}; }

// What a split does with the last, partial iteration of its outer loop when the factor
// does not divide the extent (Halide's TailStrategy).
enum class TailStrategy : uint8_t {
    // The inner loop runs `factor` iterations everywhere; those past the end are skipped by a
    // guard (loop partitioning then gives the last outer iteration a copy of its own).
    Guard,
    // The last outer iteration starts at extent - factor instead: it overlaps the one before
    // and recomputes a few elements, so every outer iteration runs the same full tile (one
    // copy of an unrolled micro-kernel instead of two, whole vectors, no guard). Needs an
    // extent of at least `factor` (smaller or symbolic extents keep the guard) and a stage
    // whose elements may be computed twice: not a reduce axis, and a reduction's outer loop
    // must enclose its reduce loops.
    ShiftInwards,
    // ShiftInwards where the extent holds a tile, and over a symbolic extent that may not: the
    // last tile starts at max(extent - factor, 0) and keeps its guard. Where the lowering knows
    // the extent holds a tile (a kernel specialized on its sizes: LowerOptions::
    // specialize_at_least) the guard holds everywhere and every tile is whole, the last one
    // shifted; elsewhere the tiles stay guarded. (ShiftInwards alone keeps only the guard over
    // a symbolic extent, which loop partitioning cuts into a steady loop of whole tiles.)
    ShiftInwardsOrGuard,
};

// parent = outer * factor + inner (by factor), or outer has `nparts` iterations.
struct SplitRelation {
    IterVar parent, outer, inner;
    Expr factor, nparts;  // exactly one is defined
    TailStrategy tail = TailStrategy::Guard;
};
// fused = outer * extent(inner) + inner.
struct FuseRelation {
    IterVar outer, inner, fused;
};
using IterVarRelation = std::variant<SplitRelation, FuseRelation>;

struct IterVarAttr {
    ir::ForKind kind = ir::ForKind::Serial;
    std::string thread_tag;
    std::vector<std::pair<std::string, Expr>> pragmas;
};

enum class AttachType : uint8_t { Root, Inline, Scope };

struct StageNode;
class Stage;

// One recorded primitive call (see Schedule::trace).
struct TraceStep {
    std::string stage;                 // the stage's operation name
    std::string primitive;             // "split", "reorder", "cache_write", ...
    std::vector<int> iter_vars;        // positions in the stage's all_iter_vars
    std::vector<int64_t> ints;         // factors, nparts
    std::vector<std::string> strings;  // scopes, thread tags, pragma names, reader names
    bool operator==(const TraceStep&) const = default;
};

class Stage {
public:
    Stage() = default;
    explicit Stage(std::shared_ptr<StageNode> n) : n_(std::move(n)) {}

    // parent -> (outer, inner) with inner of `factor` iterations; `tail` says how a last,
    // partial tile runs when factor does not divide the extent.
    std::pair<IterVar, IterVar> split(const IterVar& parent, int64_t factor,
                                      std::source_location loc = std::source_location::current());
    std::pair<IterVar, IterVar> split(const IterVar& parent, int64_t factor, TailStrategy tail,
                                      std::source_location loc = std::source_location::current());
    // parent -> (outer, inner) with outer of `nparts` iterations.
    std::pair<IterVar, IterVar> split_nparts(const IterVar& parent, int64_t nparts,
                                             std::source_location loc = std::source_location::current());
    // Splits x and y and orders the loops (x.outer, y.outer, x.inner, y.inner).
    std::tuple<IterVar, IterVar, IterVar, IterVar> tile(const IterVar& x, const IterVar& y, int64_t x_factor,
                                                        int64_t y_factor,
                                                        std::source_location loc = std::source_location::current());
    // Two adjacent loops (outer immediately enclosing inner) become one.
    IterVar fuse(const IterVar& outer, const IterVar& inner, std::source_location loc = std::source_location::current());
    // Puts the given loops in this order, in the positions they occupy now.
    void reorder(const std::vector<IterVar>& order, std::source_location loc = std::source_location::current());
    void vectorize(const IterVar& iv, std::source_location loc = std::source_location::current());
    void unroll(const IterVar& iv, std::source_location loc = std::source_location::current());
    void parallel(const IterVar& iv, std::source_location loc = std::source_location::current());
    // GPU only: runs iterations of iv on a block/thread index. A CPU build rejects it.
    void bind(const IterVar& iv, const ThreadAxis& axis, std::source_location loc = std::source_location::current());
    // An annotation on a loop, visible in the lowered program as attr "pragma_<name>".
    void pragma(const IterVar& iv, const std::string& name, int64_t value = 1,
                std::source_location loc = std::source_location::current());
    // Computes this stage inside the loop `iv` of `parent` (which must consume it), only
    // the region that one iteration of that loop needs.
    void compute_at(const Stage& parent, const IterVar& iv, std::source_location loc = std::source_location::current());
    // Substitutes this stage's expression into its consumers; no loop nest of its own.
    void compute_inline(std::source_location loc = std::source_location::current());
    // Computes the whole stage at the top level of the kernel (the default).
    void compute_root(std::source_location loc = std::source_location::current());
    // Fuses this stage's loops with those of `other`, from the outermost down to other's loop
    // `iv` and as many of this stage's (Halide's compute_with): each iteration of the fused
    // loops runs other's body, then this stage's. Use it for two passes over the same data,
    // such as a softmax row's exponentials and their sum, so the second pass reads what the
    // first just wrote (registers, L1) instead of a second sweep. Lowering checks the rest
    // and says what differs: both stages computed at the same place (the root, or the same
    // loop of the same consumer) with nothing computed between them; fused loops of the same
    // range, kind and thread binding, none a reduce loop of `other`; `other` does not read this
    // stage, and what this stage reads of `other` in an iteration, `other` wrote in that one.
    void compute_with(const Stage& other, const IterVar& iv,
                      std::source_location loc = std::source_location::current());
    // Replaces the loop nest from `axis` inward by a tensor intrinsic (te/tensor_intrin.hpp).
    // The loops inside `axis` must match the intrinsic's axes in order and extent (data axes
    // to its data axes, reduce loops to its reduce axes) and compute what its description
    // computes; lowering checks that and says what differs. The last primitive on the stage's loops.
    void tensorize(const IterVar& axis, const TensorIntrin& intrin,
                   std::source_location loc = std::source_location::current());
    // "global" (heap), "local" (stack/registers), "shared" (GPU shared memory).
    void set_scope(const std::string& scope, std::source_location loc = std::source_location::current());
    // GPU only: a "shared" stage computed inside a serial loop gets two buffers; the fetch for
    // the loop's next iteration runs while the current one computes (TVM's double buffering:
    // one barrier per iteration instead of two).
    void double_buffer(std::source_location loc = std::source_location::current());
    // CPU (x86): the stage writes its vectors with non-temporal stores, which go to memory
    // without first reading each written cache line and without evicting what the caches
    // hold. Pays for outputs much larger than the caches that nothing reads soon (a memory-
    // bound kernel over tens of MiB moves a third less data); hurts when the next kernel
    // reads the output while it would still be cached. Not for reductions (their output is
    // read back while it is computed). Other targets ignore it.
    void store_nontemporal(std::source_location loc = std::source_location::current());
    // CPU: at the start of each iteration of the loop `iv`, software-prefetches (x86
    // prefetcht0) the elements of `t` that this stage reads `offset` iterations of `iv` later,
    // one hint per cache line (TVM's prefetch). A hint: results never change, and addresses
    // past t's end are harmless (a prefetch never faults). `t` is an input or a stage
    // computed at the root that this stage reads directly; `iv` a loop of this stage that is
    // not vectorized.
    void prefetch(const Tensor& t, const IterVar& iv, int64_t offset = 1,
                  std::source_location loc = std::source_location::current());

    // The operation this stage computes now (cache_write replaces it), its original one,
    // and its loop nest.
    Operation op() const;
    Operation origin_op() const;
    const std::vector<IterVar>& leaf_iter_vars() const;
    const std::vector<IterVar>& all_iter_vars() const;
    std::string name() const;
    bool defined() const { return n_ != nullptr; }
    bool same_as(const Stage& o) const { return n_ == o.n_; }
    const std::shared_ptr<StageNode>& node() const { return n_; }

private:
    std::shared_ptr<StageNode> n_;
};

struct ScheduleNode;

class Schedule {
public:
    Schedule() = default;
    explicit Schedule(std::shared_ptr<ScheduleNode> n) : n_(std::move(n)) {}

    // The stage of a tensor's (original) operation.
    Stage operator[](const Tensor& t) const;
    Stage operator[](const Operation& op) const;

    // A copy of `t` in `scope` that `readers` read instead of t. Returns the cache tensor.
    Tensor cache_read(const Tensor& t, const std::string& scope, const std::vector<Tensor>& readers,
                      std::source_location loc = std::source_location::current());
    // The stage of t now computes into a cache tensor in `scope`, then copies it to t.
    // Returns the cache tensor (schedule its stage with s[cache]); t's axes stay valid
    // for the copy, and t's reduce axes move to the cache stage.
    Tensor cache_write(const Tensor& t, const std::string& scope,
                       std::source_location loc = std::source_location::current());

    // Factors the reduction computing t over one of its reduce loops (TVM's rfactor): a new
    // stage RF keeps `axis` (an original reduce axis of t, or a loop split from one) as a data
    // axis at position `factor_axis` of its output (-1: last) and reduces over the other
    // reduce loops; t becomes the reduction of RF over `axis`'s range. Use it to vectorize or
    // parallelize a reduction without reassociating float math: each lane of RF keeps its own
    // partial result. Comes before any primitive on t's stage other than splits of its reduce
    // axes. Returns RF (schedule it with s[RF]).
    Tensor rfactor(const Tensor& t, const IterVar& axis, int factor_axis = -1,
                   std::source_location loc = std::source_location::current());

    const std::vector<Stage>& stages() const;
    const std::vector<Operation>& outputs() const;
    const std::vector<TraceStep>& trace() const;

    // JSON text of the trace, and a schedule of `outputs` rebuilt by replaying one.
    std::string to_json() const;
    static Schedule from_json(const std::string& json, const std::vector<Tensor>& outputs);

    // Same computation and same primitives with the same arguments.
    bool operator==(const Schedule& o) const;
    const std::shared_ptr<ScheduleNode>& node() const { return n_; }

private:
    std::shared_ptr<ScheduleNode> n_;
};

// One stage per operation reachable from the outputs, in topological order.
Schedule create_schedule(const std::vector<Tensor>& outputs);
inline Schedule create_schedule(const Tensor& output) { return create_schedule(std::vector<Tensor>{output}); }

// Human-readable: one block per stage with its loop nest, relations and attachment.
std::ostream& operator<<(std::ostream& os, const Schedule& s);

// ---- the data behind the handles (read by lowering) ----------------------------------

struct StageNode {
    Operation op, origin_op;
    // Operations this stage computed before cache_read/cache_write rewrote it: consumers
    // built earlier still read them, and they mean this stage.
    std::vector<Operation> previous_ops;
    std::vector<IterVar> all_iter_vars;
    std::vector<IterVar> leaf_iter_vars;
    std::vector<IterVarRelation> relations;
    std::vector<std::pair<IterVar, IterVarAttr>> attrs;  // in order of first annotation
    AttachType attach = AttachType::Root;
    std::weak_ptr<StageNode> attach_stage;
    IterVar attach_ivar;
    // Stage::compute_with: this stage's loops are fused with with_stage's, down to its loop with_ivar.
    std::weak_ptr<StageNode> with_stage;
    IterVar with_ivar;
    std::string scope = "global";
    bool double_buffer = false;  // Stage::double_buffer
    bool nontemporal_stores = false;  // Stage::store_nontemporal
    struct Prefetch {
        Tensor tensor;
        IterVar loop;
        int64_t offset;
    };
    std::vector<Prefetch> prefetches;  // Stage::prefetch
    IterVar tensorize_axis;  // with tensorize_intrin: the loop nest from here inward is replaced
    TensorIntrin tensorize_intrin;
    std::source_location tensorize_loc;
    bool is_output = false;
    ScheduleNode* schedule = nullptr;

    const IterVarAttr* attr(const IterVar& iv) const {
        for (auto& [k, a] : attrs)
            if (k.same_as(iv)) return &a;
        return nullptr;
    }
    IterVarAttr& attr_mut(const IterVar& iv) {
        for (auto& [k, a] : attrs)
            if (k.same_as(iv)) return a;
        attrs.emplace_back(iv, IterVarAttr{});
        return attrs.back().second;
    }
    // Whether the stage computes some of its elements twice: one of its splits shifts its
    // last tile inwards (TailStrategy::ShiftInwards), over the tile before. Its output must
    // then not share bytes with an input it reads (graph memory planning's in place).
    bool recomputes_elements() const {
        for (const IterVarRelation& rel : relations)
            if (auto* sp = std::get_if<SplitRelation>(&rel); sp && sp->tail != TailStrategy::Guard) return true;
        return false;
    }
};

struct ScheduleNode {
    std::vector<Operation> outputs;
    std::vector<Stage> stages;
    std::vector<TraceStep> trace;
};

}  // namespace weft
