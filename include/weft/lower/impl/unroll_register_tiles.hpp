// Unrolling the loops that walk a register tile (CPU). A "local" buffer of constant size that
// fits the vector register file (a cache_write accumulator, an epilogue's tile) can live in
// registers only when every access to it has a constant position: LLVM's SROA splits such a
// buffer into separate values, and gives up on the whole buffer at the first access whose
// index varies at run time, which leaves the tile a stack array the micro-kernel loads and
// stores on every step (a fused convolution epilogue's loop over 14 pixels cost half of the
// convolution's speed that way). A schedule that computes a tile in "local" memory has said
// it wants it in registers, so the serial loops whose variable reaches an index of such a
// buffer are unrolled here, as the schedule would have had to do by hand:
//
//   allocate acc[float32 * 96] in local            allocate acc[float32 * 96] in local
//   ...                                            ...
//   for (ii, 0, 6) {                         ->    unrolled for (ii, 0, 6) {
//     Y[...] = max(acc[ramp(ii * 16, 1, 16)], 0)     Y[...] = max(acc[ramp(ii * 16, 1, 16)], 0)
//
// A loop is unrolled only when its body is straight-line code once the loops inside it are
// unrolled (a tile loop around a reduction loop stays: LLVM keeps one element in a register
// through that loop by itself), when its extent is a constant, and while the copies of any
// body stay within max_unroll (the product of the unrolled extents along a nest, innermost
// loops first; the schedule's own unrolled loops count). And only for a tile whose every
// access then has a constant position: unrolling some of a tile's loops but not all would
// only make code, the tile would stay in memory.
// Runs after vectorize (a vectorized loop is already whole vectors) and before unroll.
#pragma once
#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {
namespace register_tile_detail {

// The largest vector register file of a CPU target: 32 registers of 64 bytes (x86 with
// AVX-512). A larger "local" buffer is not a register tile. The same bound for every target,
// so that lower() without a target prints the program build() compiles.
inline constexpr int64_t kMaxRegisterTileBytes = 32 * 64;

using VarSet = std::unordered_set<const ir::VarNode*>;

// The buffers that are register tiles, and for each the variables that reach an index of it
// (directly or through a let).
class FindTileIndexVars : public ir::IRVisitor {
public:
    explicit FindTileIndexVars(int64_t max_bytes) : max_bytes_(max_bytes) {}
    std::unordered_map<const ir::Object*, VarSet> vars_of_tile;
    VarSet let_vars;
    using IRVisitor::visit;

    // A let variable in an index brings the variables of its value along.
    void finish() {
        for (auto& [tile, vars] : vars_of_tile)
            for (bool grew = true; grew;) {
                grew = false;
                for (auto& [var, value] : lets_)
                    if (vars.count(var)) grew |= add_vars_of(vars, value);
            }
    }

protected:
    void visit_(const ir::Allocate* op) override {
        int64_t elements = 1;
        bool constant = true;
        for (auto& e : op->extents) {
            int64_t n;
            constant &= ir::as_const_int(e, &n);
            if (constant) elements *= n;
        }
        if (op->scope == "local" && constant && elements * op->type.bytes() * op->type.lanes <= max_bytes_)
            vars_of_tile[op->buffer.get()];
        IRVisitor::visit_(op);
    }
    // A loop that starts elsewhere than 0 counts from its start: bound inference starts a
    // tile's loop at the tile's origin (for (i.c, io * 6, 6) { acc[i.c - io * 6] }), and the
    // loop that places the tile (io) does not move within it.
    void visit_(const ir::For* op) override {
        visit(op->min);
        visit(op->extent);
        if (ir::is_const_int(op->min, 0)) {
            visit(op->body);
            return;
        }
        const ir::Expr start = ir::substitute(op->min, from_start_);
        from_start_[op->loop_var] = ir::Expr(op->loop_var) + start;
        visit(op->body);
        from_start_.erase(op->loop_var);
    }
    void visit_(const ir::Load* op) override {
        access(op->buffer, op->index);
        IRVisitor::visit_(op);
    }
    void visit_(const ir::Store* op) override {
        access(op->buffer, op->index);
        IRVisitor::visit_(op);
    }
    void visit_(const ir::LetStmt* op) override {
        let(op->var, op->value);
        IRVisitor::visit_(op);
    }
    void visit_(const ir::Let* op) override {
        let(op->var, op->value);
        IRVisitor::visit_(op);
    }

private:
    void access(const ir::Var& buffer, const ir::Expr& index) {
        if (auto it = vars_of_tile.find(buffer.get()); it != vars_of_tile.end())
            add_vars_of(it->second, ir::substitute(index, from_start_));
    }
    void let(const ir::Var& var, const ir::Expr& value) {
        let_vars.insert(var.node());
        lets_.emplace_back(var.node(), ir::substitute(value, from_start_));
    }
    // Simplified first: before the pipeline's simplify an index still names the loops that
    // place the tile (acc[(jo * 64 + ji) - jo * 64]), which do not move within it.
    static bool add_vars_of(VarSet& vars, const ir::Expr& e) {
        bool added = false;
        ir::post_order_visit(ir::arith::simplify(e), [&](const ir::Object* node) {
            if (node->kind == ir::NodeKind::Var) added |= vars.insert(static_cast<const ir::VarNode*>(node)).second;
        });
        return added;
    }

    int64_t max_bytes_;
    std::unordered_map<ir::Var, ir::Expr, ir::VarHash, ir::VarEq> from_start_;  // loop var -> var + its start
    std::vector<std::pair<const ir::VarNode*, ir::Expr>> lets_;
};

// Marks the candidate loops, innermost first, and records which loops end up unrolled (or run
// once). `copies_`: the largest product of unrolled extents along any path through the
// statements visited so far at the current depth; `loops_`: whether a loop stays among them.
class MarkTileLoops : public ir::IRMutator {
public:
    MarkTileLoops(const VarSet& candidates, int max_unroll) : candidates_(candidates), max_unroll_(max_unroll) {}
    VarSet marked, constant_positions;
    using IRMutator::mutate;

protected:
    ir::Stmt visit_(const ir::For* op, const ir::Stmt& self) override {
        const int64_t copies_outside = copies_;
        const bool loops_outside = loops_;
        copies_ = 1;
        loops_ = false;
        ir::Stmt body = mutate(op->body);
        int64_t n = 0;
        const bool constant = ir::as_const_int(op->extent, &n);
        ir::ForKind kind = op->for_kind;
        if (kind == ir::ForKind::Serial && constant && n > 1 && !loops_ && n * copies_ <= max_unroll_ &&
            candidates_.count(op->loop_var.node())) {
            kind = ir::ForKind::Unrolled;
            marked.insert(op->loop_var.node());
        }
        const bool unrolled = constant && (n <= 1 || (kind == ir::ForKind::Unrolled && n <= max_unroll_));
        if (unrolled) constant_positions.insert(op->loop_var.node());
        copies_ = std::max(copies_outside, unrolled ? std::max<int64_t>(n, 1) * copies_ : copies_);
        loops_ = loops_outside || loops_ || !unrolled;
        if (kind == op->for_kind && body.same_as(op->body)) return self;
        return ir::For::make(op->loop_var, op->min, op->extent, kind, body, op->thread_tag);
    }

private:
    const VarSet& candidates_;
    int64_t max_unroll_;
    int64_t copies_ = 1;
    bool loops_ = false;
};

// Turns the marked loops that did not give any tile constant positions back into loops.
class UnmarkLoops : public ir::IRMutator {
public:
    explicit UnmarkLoops(const VarSet& loops) : loops_(loops) {}
    using IRMutator::mutate;

protected:
    ir::Stmt visit_(const ir::For* op, const ir::Stmt& self) override {
        ir::Stmt s = IRMutator::visit_(op, self);
        auto* f = s.as<ir::For>();
        if (!loops_.count(f->loop_var.node())) return s;
        return ir::For::make(f->loop_var, f->min, f->extent, ir::ForKind::Serial, f->body, f->thread_tag);
    }

private:
    const VarSet& loops_;
};

}  // namespace register_tile_detail

// `max_unroll`: LowerOptions::max_unroll.
inline ir::Stmt unroll_register_tile_loops(const ir::Stmt& s, int max_unroll) {
    using namespace register_tile_detail;
    FindTileIndexVars find(kMaxRegisterTileBytes);
    find.visit(s);
    find.finish();
    VarSet candidates;
    for (auto& [tile, vars] : find.vars_of_tile) candidates.insert(vars.begin(), vars.end());
    if (candidates.empty()) return s;
    MarkTileLoops mark(candidates, max_unroll);
    ir::Stmt marked = mark.mutate(s);
    if (mark.marked.empty()) return s;
    // A tile is in registers when every variable of its indices is a let or a loop that runs
    // unrolled (a parameter or a loop left a loop keeps it in memory).
    VarSet useful;
    for (auto& [tile, vars] : find.vars_of_tile) {
        bool constant = true;
        for (auto* v : vars) constant &= find.let_vars.count(v) || mark.constant_positions.count(v);
        if (constant) useful.insert(vars.begin(), vars.end());
    }
    VarSet useless;
    for (auto* v : mark.marked)
        if (!useful.count(v)) useless.insert(v);
    return useless.empty() ? marked : UnmarkLoops(useless).mutate(marked);
}

}  // namespace weft::lower_passes
