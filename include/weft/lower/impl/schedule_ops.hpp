// Schedule -> loop nest. Stages are placed consumers first; the region of each producer is
// inferred from the program built so far (Halide's way): the union of the indices of its
// reads inside the attach loop, bounded over the loops inside that loop, clamped to the
// producer's domain. Then the producer's loop nest over that region goes at the start of
// the attach loop's body, wrapped in a ProducerRealize that says where it is stored.
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/gpu.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/lower/impl/compute_with.hpp"
#include "weft/lower/impl/prefetch.hpp"
#include "weft/lower/impl/range_visitor.hpp"
#include "weft/lower/impl/stage_nest.hpp"
#include "weft/lower/impl/tensorize.hpp"
#include "weft/lower/lower.hpp"

namespace weft::lower_passes {
namespace {

using ir::Stmt;
using VarMap = std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq>;

// Which stage an operation (current or replaced) belongs to.
struct StageIndex {
    std::unordered_map<const ir::Object*, StageNode*> by_op;
    explicit StageIndex(const Schedule& s) {
        for (auto& st : s.stages()) {
            auto* n = st.node().get();
            by_op[n->op.get()] = n;
            by_op[n->origin_op.get()] = n;
            for (auto& p : n->previous_ops) by_op[p.get()] = n;
            if (n->op->is_scan()) by_op[n->op->scan_state.get()] = n;  // the state is the scan's own output
        }
    }
    StageNode* of(const ir::Object* op) const {
        auto it = by_op.find(op);
        return it == by_op.end() ? nullptr : it->second;
    }
};

// Substitutes the bodies of inlined stages into their readers.
class Inliner : public ir::IRMutator {
public:
    Inliner(const StageIndex& idx, const std::unordered_map<StageNode*, std::vector<Expr>>& bodies)
        : idx_(idx), bodies_(bodies) {}
    using IRMutator::mutate;
    Expr visit_(const ir::ProducerLoad* op, const Expr& self) override {
        Expr e = IRMutator::visit_(op, self);
        auto* load = e.as<ir::ProducerLoad>();
        StageNode* st = idx_.of(load->producer.get());
        if (!st || st->attach != AttachType::Inline) return e;
        auto it = bodies_.find(st);
        WEFT_ICHECK(it != bodies_.end(), "inlined stage ", st->op.name(), " used before its body is known");
        VarMap m;
        for (size_t d = 0; d < st->op->axis.size(); ++d) m[st->op->axis[d].var()] = load->indices[d];
        return ir::substitute(it->second[size_t(load->value_index)], m);
    }

private:
    const StageIndex& idx_;
    const std::unordered_map<StageNode*, std::vector<Expr>>& bodies_;
};

// Finds the For loop of a given loop variable.
const ir::For* find_loop(const Stmt& s, const Var& v) {
    const ir::For* found = nullptr;
    ir::post_order_visit(s, [&](const ir::Object* n) {
        if (n->kind == ir::NodeKind::For && static_cast<const ir::For*>(n)->loop_var.same_as(v))
            found = static_cast<const ir::For*>(n);
    });
    return found;
}

// The ranges of the loops enclosing (and including) the loop over v.
class EnclosingRanges : public ir::IRVisitor {
public:
    explicit EnclosingRanges(Var v) : v_(std::move(v)) {}
    ir::arith::VarRanges result;
    // GPU: the ranges of the enclosing loops bound to threadIdx.*, which a stage stored in
    // shared memory is computed for all at once (the whole block shares its buffer).
    ir::arith::VarRanges thread_loops;
    bool found = false;
    using IRVisitor::visit;

protected:
    void visit_(const ir::For* op) override {
        if (found) return;
        path_.push_back({op->loop_var, ir::arith::Interval(op->min, op->min + op->extent - 1), op->thread_tag, op->min,
                         op->min + op->extent - 1});
        if (op->loop_var.same_as(v_)) {
            found = true;
            for (auto& p : path_) {
                result[p.var] = p.range;
                if (ir::gpu::is_thread_tag(p.tag)) {
                    thread_loops[p.var] = p.range;
                    continue;
                }
                // A loop inside a thread loop whose bounds follow the thread index (a local
                // stage's loops over one thread's elements) covers all the threads' ranges too.
                bool follows = false;
                for (auto& [v, r] : thread_loops) follows |= ir::uses_var(p.min, v) || ir::uses_var(p.max, v);
                if (follows)
                    thread_loops[p.var] = ir::arith::Interval(ir::arith::bounds_of(p.min, thread_loops).min,
                                                              ir::arith::bounds_of(p.max, thread_loops).max);
            }
        } else {
            visit(op->body);
        }
        path_.pop_back();
    }

private:
    struct Loop {
        Var var;
        ir::arith::Interval range;
        std::string tag;
        Expr min, max;
    };
    Var v_;
    std::vector<Loop> path_;
};

// The union over all reads of `stage` in a statement of their index bounds, with every
// variable bound inside the statement (loops, lets) ranging over its values.
class RegionCollector : public RangeVisitor {
public:
    // `relaxed`: variables of enclosing loops the region covers whole (GPU thread loops).
    RegionCollector(const StageIndex& idx, const StageNode* stage, ir::arith::VarRanges relaxed = {})
        : RangeVisitor(std::move(relaxed)), idx_(idx), stage_(stage) {}
    std::vector<ir::arith::Interval> region;
    bool found = false;

protected:
    using RangeVisitor::visit_;
    void visit_(const ir::For* op) override {
        visit(op->min);
        visit(op->extent);
        // A loop's min may depend on enclosing inner loops: bound it through their ranges.
        ranges_[op->loop_var] = ir::arith::Interval(ir::arith::bounds_of(op->min, ranges_).min,
                                                    ir::arith::bounds_of(op->min + op->extent - 1, ranges_).max);
        visit(op->body);
    }
    void visit_(const ir::ProducerLoad* op) override {
        IRVisitor::visit_(op);
        if (idx_.of(op->producer.get()) != stage_) return;
        add(op->indices);
    }
    // A prefetch hint (Stage::prefetch) reads nothing: it must not widen a producer's region.
    void visit_(const ir::Call* op) override {
        if (op->name != prefetch_detail::kPrefetch) IRVisitor::visit_(op);
    }
    void visit_(const ir::ProducerStore* op) override {
        IRVisitor::visit_(op);
        if (idx_.of(op->producer.get()) == stage_) add(op->indices);
    }

private:
    const StageIndex& idx_;
    const StageNode* stage_;

    void add(const std::vector<Expr>& indices) {
        if (region.empty()) region.resize(indices.size());
        for (size_t d = 0; d < indices.size(); ++d) {
            auto b = ir::arith::bounds_of(indices[d], ranges_);
            region[d] = found ? ir::arith::interval_union(region[d], b) : b;
        }
        found = true;
    }
};

// Inserts `produce` at the start of the body of the loop over `v`, inside a realize.
class InsertAtLoop : public ir::IRMutator {
public:
    InsertAtLoop(Var v, std::function<Stmt(const Stmt&)> wrap) : v_(std::move(v)), wrap_(std::move(wrap)) {}
    using IRMutator::mutate;
    bool done = false;
    Stmt visit_(const ir::For* op, const Stmt& self) override {
        if (!op->loop_var.same_as(v_)) return IRMutator::visit_(op, self);
        done = true;
        return ir::For::make(op->loop_var, op->min, op->extent, op->for_kind, wrap_(op->body), op->thread_tag);
    }

private:
    Var v_;
    std::function<Stmt(const Stmt&)> wrap_;
};

bool reads_stage(const Stmt& s, const StageIndex& idx, const StageNode* st) {
    bool r = false;
    ir::post_order_visit(s, [&](const ir::Object* n) {
        if (n->kind == ir::NodeKind::ProducerLoad && idx.of(static_cast<const ir::ProducerLoad*>(n)->producer.get()) == st)
            r = true;
    });
    return r;
}

// GPU: the threadIdx.* axes some stage binds (the kernel launches them), and per stage the
// guards that make one thread of each launched axis the stage does not bind do its stores.
// A "local" stage is per thread and needs none; any other (shared, or a global output)
// would otherwise be written by every thread of the axis at once.
std::set<std::string> launched_thread_tags(const Schedule& s) {
    std::set<std::string> tags;
    for (auto& st : s.stages())
        for (auto& [iv, a] : st.node()->attrs)
            if (a.kind == ir::ForKind::ThreadBound && ir::gpu::is_thread_tag(a.thread_tag)) tags.insert(a.thread_tag);
    return tags;
}
std::vector<Expr> thread_guards(const StageNode& n, const std::set<std::string>& launched) {
    std::vector<Expr> guards;
    if (n.scope == "local") return guards;
    for (auto& tag : launched) {
        bool bound = false;
        for (auto& iv : n.leaf_iter_vars)
            if (auto* a = n.attr(iv)) bound |= a->kind == ir::ForKind::ThreadBound && a->thread_tag == tag;
        if (!bound) guards.push_back(ir::gpu::thread_index(tag) == make_int(0));
    }
    return guards;
}

// The outermost leaf position of `n` inside which no other stage is computed: a guard
// around the loops from there does not hide those stages from the threads.
size_t thread_guard_level(const Schedule& s, const StageNode& n) {
    size_t level = 0;
    for (auto& other : s.stages()) {
        auto* o = other.node().get();
        if (o->attach != AttachType::Scope || o->attach_stage.lock().get() != &n) continue;
        for (size_t i = 0; i < n.leaf_iter_vars.size(); ++i)
            if (n.leaf_iter_vars[i].same_as(o->attach_ivar)) level = std::max(level, i + 1);
    }
    return level;
}

// A scan (te::scan): its time loop must stay the outermost serial loop, and the stages
// that read its state must run inside it (create_schedule attaches them; a later
// compute_root or compute_at elsewhere would compute them before the rows they read exist).
void check_scan_schedule(const Schedule& s, const StageNode& n) {
    const IterVar& time = n.op->axis[0];
    WEFT_CHECK(!n.leaf_iter_vars.empty() && n.leaf_iter_vars[0].same_as(time), "scan '", n.op.name(), "': its time loop '",
               time.name(), "' must stay its outermost loop (steps run in order); split, fuse or reorder the other axes");
    if (const IterVarAttr* a = n.attr(time))
        WEFT_CHECK(a->kind == ir::ForKind::Serial || a->kind == ir::ForKind::Unrolled, "scan '", n.op.name(),
                   "': its time loop '", time.name(), "' must run serially (each step reads the one before)");
    for (const Operation& b : te::scan_body_ops(n.op)) {
        const StageNode* st = nullptr;
        for (auto& other : s.stages())
            if (other.node()->op.same_as(b) || other.node()->origin_op.same_as(b)) st = other.node().get();
        if (!st || st->attach == AttachType::Inline) continue;
        bool inside = false;  // attached to the scan, or to a stage attached inside it
        for (auto p = st->attach == AttachType::Scope ? st->attach_stage.lock() : nullptr; p && !inside;
             p = p->attach == AttachType::Scope ? p->attach_stage.lock() : nullptr)
            inside = p.get() == &n;
        WEFT_CHECK(inside, "scan '", n.op.name(), "': '", b.name(), "' reads its state, so it must be computed inside the "
                   "scan's steps (compute_at its time loop '", time.name(), "' or inline), not before them");
    }
}

// The rows [0, k) of a scan: its init, copied.
Stmt scan_init_nest(const StageNode& n, Inliner& inliner) {
    Operation init(n.op->scan_init);
    const std::vector<Expr> shape = init->output_shape();
    std::vector<Var> vars;
    std::vector<Expr> index;
    for (size_t d = 0; d < shape.size(); ++d) {
        vars.emplace_back(n.op->axis[d].var().name() + ".init", index_type);
        index.push_back(vars.back());
    }
    Stmt body(ir::make_node<ir::ProducerStore>(n.op.ptr(), 0, inliner.mutate(init.output(0).at(index)), index,
                                               n.op.output(0).name()));
    for (size_t d = shape.size(); d-- > 0;) body = ir::For::make(vars[d], make_int(0), shape[d], ir::ForKind::Serial, body);
    return body;
}

}  // namespace

Stmt schedule_ops(const Schedule& s) {
    StageIndex idx(s);
    const std::set<std::string> launched = launched_thread_tags(s);
    // 1. Inline: bodies of every compute stage with inlined producers substituted.
    std::unordered_map<StageNode*, std::vector<Expr>> bodies;
    for (auto& st : s.stages()) {
        auto* n = st.node().get();
        if (!n->op->is_compute()) continue;
        Inliner inl(idx, bodies);
        std::vector<Expr> b;
        for (auto& e : n->op->body) b.push_back(inl.mutate(e));
        bodies[n] = b;
    }
    // 2. Place stages, consumers first.
    Stmt program;
    std::vector<TensorizeSite> tensorize_sites;
    const auto& stages = s.stages();
    // compute_with: per stage A, the stage B fused with it, and how many loops deep.
    std::unordered_map<const StageNode*, std::pair<const StageNode*, size_t>> fused_with;
    std::unordered_set<const StageNode*> fused_placed;  // B's whose marked nest is in the program
    for (size_t i = 0; i < stages.size(); ++i) {
        auto* b = stages[i].node().get();
        auto a = b->with_stage.lock();
        if (!a) continue;
        size_t depth = compute_with_depth(*a, *b);
        bool a_first = false;
        for (size_t j = 0; j < i; ++j) a_first |= stages[j].node() == a;
        WEFT_CHECK(a_first, "compute_with of '", b->op.name(), "' with '", a->op.name(), "': '", a->op.name(),
                   "' comes after '", b->op.name(), "' in the schedule's stage order, so it runs after it; fuse '",
                   a->op.name(), "' with '", b->op.name(), "' instead");
        fused_with[a.get()] = {b, depth};
    }
    auto region_of = [&idx](const StageNode* a) -> RegionOf {
        return [&idx, a](const Stmt& st) -> std::optional<std::vector<ir::arith::Interval>> {
            RegionCollector rc(idx, a);
            rc.visit(st);
            if (!rc.found) return std::nullopt;
            return rc.region;
        };
    };
    for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
        auto* n = it->node().get();
        WEFT_CHECK(!(n->nontemporal_stores && n->attach == AttachType::Inline), "store_nontemporal: '", n->op.name(),
                   "' is computed inline, so it stores nothing; use it on the stage that writes the output");
        if (!n->op->is_compute() || n->attach == AttachType::Inline) continue;
        std::vector<Expr> shape = n->op->output_shape();
        Stmt attach_body;
        if (n->attach == AttachType::Scope) {
            auto parent = n->attach_stage.lock();
            WEFT_CHECK(parent && parent->attach != AttachType::Inline, "compute_at: stage '", n->op.name(),
                       "' is attached to a loop of '", parent ? parent->op.name() : "?",
                       "', but that stage is inlined and has no loops");
            const ir::For* loop = program.defined() ? find_loop(program, n->attach_ivar.var()) : nullptr;
            WEFT_CHECK(loop, "compute_at: stage '", n->op.name(), "' is attached to loop '", n->attach_ivar.name(),
                       "' of '", parent->op.name(), "', which is not a loop of the lowered program",
                       parent->with_stage.lock() ? " (it may be one of the loops compute_with fused with those of '" +
                                                       parent->with_stage.lock()->op.name() + "': attach to that stage's loop)"
                                                 : "");
            WEFT_CHECK(reads_stage(loop->body, idx, n), "compute_at: '", parent->op.name(), "' does not read '",
                       n->op.name(), "' inside its loop '", n->attach_ivar.name(), "'");
            attach_body = loop->body;
        } else {
            attach_body = program;
        }
        // The region this stage must produce (all of a scan: each step reads the one before).
        std::vector<ir::Range> region;
        if (n->is_output || n->op->is_scan()) {
            for (auto& e : shape) region.emplace_back(make_int(0), e);
        } else {
            ir::arith::VarRanges outer, relaxed;
            if (n->attach == AttachType::Scope) {
                EnclosingRanges er(n->attach_ivar.var());
                er.visit(program);
                outer = er.result;
                if (n->scope != "local") relaxed = er.thread_loops;
            }
            RegionCollector rc(idx, n, relaxed);
            if (attach_body.defined()) rc.visit(attach_body);
            if (!rc.found) continue;  // nothing reads it: dead code
            for (size_t d = 0; d < shape.size(); ++d) {
                auto& iv = rc.region[d];
                // Reads outside the domain can only come from guarded code; never compute them.
                Expr lo = iv.has_lower() ? ir::max(iv.min, make_int(0)) : make_int(0);
                Expr hi = iv.has_upper() ? ir::min(iv.max, shape[d] - 1) : shape[d] - 1;
                lo = ir::arith::simplify(lo, outer);
                // Empty when every read is guarded away (a tail iteration past the end).
                region.emplace_back(lo, ir::arith::simplify(ir::max(hi - lo + 1, make_int(0)), outer));
            }
        }
        if (n->attach == AttachType::Scope && program.defined()) {
            // A producer computed inside a loop must not also be read outside it.
            auto parent = n->attach_stage.lock();
            Stmt outside = InsertAtLoop(n->attach_ivar.var(), [](const Stmt&) { return ir::Evaluate::make(make_int(0, i32)); })
                               .mutate(program);
            WEFT_CHECK(!reads_stage(outside, idx, n), "compute_at: '", n->op.name(), "' is computed inside loop '",
                       n->attach_ivar.name(), "' of '", parent->op.name(),
                       "', but it is also read outside that loop; compute it at the root (or at a loop enclosing all its readers)");
        }
        Stmt nest;
        if (n->op->is_scan()) {
            // The init rows, then the steps from row k on.
            check_scan_schedule(s, *n);
            std::vector<ir::Range> steps = region;
            steps[0] = ir::Range(make_int(n->op->scan_init_rows), shape[0] - n->op->scan_init_rows);
            Inliner inl(idx, bodies);
            nest = ir::Seq::make({scan_init_nest(*n, inl), make_stage_nest(*n, bodies[n], steps, &tensorize_sites)});
        } else {
            nest = make_stage_nest(*n, bodies[n], region, &tensorize_sites, thread_guards(*n, launched),
                                   thread_guard_level(s, *n));
        }
        for (auto& p : n->prefetches) {
            const StageNode* src = idx.of(p.tensor.op().get());
            WEFT_CHECK(!src || src->op->is_placeholder() || src->attach == AttachType::Root, "prefetch of '",
                       p.tensor.name(), "' on stage '", n->op.name(), "': '", p.tensor.name(), "' is computed ",
                       src && src->attach == AttachType::Inline ? "inline (it has no buffer)" : "inside a loop of another stage",
                       "; prefetch an input or a stage computed at the root");
        }
        nest = insert_prefetches(*n, nest);
        if (n->double_buffer) nest = ir::AttrStmt::make(ir::gpu::double_buffer_write_key, make_int(1), nest);
        if (n->with_stage.lock()) {
            nest = ir::AttrStmt::make(kComputeWithSite, make_int(0), nest);
            fused_placed.insert(n);
        }
        auto fused = fused_with.find(n);
        const bool fuse_here = fused != fused_with.end() && fused_placed.count(fused->second.first);
        auto wrap = [&](const Stmt& body) -> Stmt {
            Stmt seq = fuse_here ? place_compute_with(body, *n, *fused->second.first, fused->second.second, nest,
                                                      region_of(n))
                       : body.defined() ? ir::Seq::make({nest, body})
                                        : nest;
            if (n->is_output) return seq;
            for (int v = n->op->num_outputs() - 1; v >= 0; --v)
                seq = Stmt(ir::make_node<ir::ProducerRealize>(n->op.ptr(), v, n->op->output_dtype(v), region, n->scope,
                                                              seq, n->op.output(v).name()));
            // Read by lower/impl/gpu_double_buffer.hpp once the realize is an Allocate.
            if (n->double_buffer) seq = ir::AttrStmt::make(ir::gpu::double_buffer_key, make_int(1), seq);
            return seq;
        };
        if (n->attach == AttachType::Scope) {
            InsertAtLoop ins(n->attach_ivar.var(), wrap);
            program = ins.mutate(program);
        } else {
            program = wrap(program);
        }
    }
    WEFT_ICHECK(program.defined(), "schedule produced no statement");
    // 3. Tensor intrinsics replace the nests they were given, now that every read is placed.
    return apply_tensorize(program, tensorize_sites);
}

}  // namespace weft::lower_passes
