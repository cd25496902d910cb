// Hoisting allocations of symbolic size out of serial loops (CPU). A stage computed inside a
// row loop over a row of symbolic length (a softmax's exponentials over a sequence) is an
// allocation of that length in every iteration, which codegen makes a heap allocation and a
// free per row. Its size does not depend on the loop, and an iteration's buffer holds nothing
// the next one reads (it is produced anew), so one allocation before the loop serves every
// iteration. Applied from the innermost loop outwards, an allocation climbs to the outermost
// serial loop its size does not depend on; it never leaves a parallel loop (each thread needs
// its own), nor a branch (its size may be valid only where the branch runs), nor a loop
// whose variables, or the variables of lets inside it, its size reads; a size that reads
// memory (a data-dependent extent) stays where it is.
//
// Hoisted, the allocation is made even when the loop runs no iterations, where its size may
// be an expression that only the iterations keep non-negative: the size becomes max(e, 0).
// Constant sizes are left where they are (codegen puts the small ones on the stack once).
// Then a symbolic size with a constant bound over the loops around it takes the bound
// (ConstantBounder).
#pragma once
#include <optional>
#include <unordered_set>
#include <vector>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {
namespace hoist_alloc_detail {

using ir::Expr;
using ir::Stmt;

inline bool symbolic_size(const ir::Allocate* a) {
    for (const Expr& e : a->extents)
        if (!e.as<ir::IntImm>()) return true;
    return false;
}

// The variables a statement binds (loops, lets).
inline std::unordered_set<const ir::Object*> bound_vars(const Stmt& s) {
    std::unordered_set<const ir::Object*> vars;
    ir::post_order_visit(s, [&](const ir::Object* o) {
        if (o->kind == ir::NodeKind::For) vars.insert(static_cast<const ir::For*>(o)->loop_var.get());
        else if (o->kind == ir::NodeKind::LetStmt) vars.insert(static_cast<const ir::LetStmt*>(o)->var.get());
        else if (o->kind == ir::NodeKind::Let) vars.insert(static_cast<const ir::Let*>(o)->var.get());
    });
    return vars;
}

// Whether a size reads one of `vars`, or memory or a call (a size read from a buffer that
// the loop writes would change its value if read before the loop).
inline bool reads_any(const std::vector<Expr>& extents, const std::unordered_set<const ir::Object*>& vars) {
    bool found = false;
    for (const Expr& e : extents)
        ir::post_order_visit(e, [&](const ir::Object* o) {
            found |= (o->kind == ir::NodeKind::Var && vars.count(o)) || o->kind == ir::NodeKind::Load ||
                     o->kind == ir::NodeKind::Call;
        });
    return found;
}

// Takes out of a loop body the allocations of symbolic size that may leave it (not under a
// branch or a non-serial loop), their extents not reading `inner`: they replace themselves
// by their bodies and are collected, outermost first.
class Extractor : public ir::IRMutator {
public:
    explicit Extractor(const std::unordered_set<const ir::Object*>& inner) : inner_(inner) {}
    std::vector<const ir::Allocate*> taken;
    using IRMutator::mutate;

protected:
    Stmt visit_(const ir::Allocate* op, const Stmt& self) override {
        if (!symbolic_size(op) || reads_any(op->extents, inner_)) return IRMutator::visit_(op, self);
        taken.push_back(op);
        return mutate(op->body);
    }
    Stmt visit_(const ir::IfThenElse*, const Stmt& self) override { return self; }
    Stmt visit_(const ir::For* op, const Stmt& self) override {
        return op->for_kind == ir::ForKind::Serial ? IRMutator::visit_(op, self) : self;
    }

private:
    const std::unordered_set<const ir::Object*>& inner_;
};

// An allocation of symbolic size whose size has a constant bound over the enclosing loops'
// ranges (the last, partial tile of a split over a symbolic extent: n * 64 - i * 384 for i
// past n / 6 is at most 320) takes that bound: a constant size, which codegen keeps on the
// stack, instead of a heap allocation per tile.
class ConstantBounder : public ir::IRMutator {
public:
    explicit ConstantBounder(const ir::arith::VarRanges& sizes) : ranges_(sizes) {}
    using IRMutator::mutate;

protected:
    Stmt visit_(const ir::For* op, const Stmt& self) override {
        auto saved = ranges_.find(op->loop_var);
        std::optional<ir::arith::Interval> before;
        if (saved != ranges_.end()) before = saved->second;
        ranges_[op->loop_var] = ir::arith::Interval(op->min, ir::arith::simplify(op->min + op->extent - 1));
        Stmt out = IRMutator::visit_(op, self);
        if (before) ranges_[op->loop_var] = *before;
        else ranges_.erase(op->loop_var);
        return out;
    }
    Stmt visit_(const ir::Allocate* op, const Stmt& self) override {
        Stmt body = mutate(op->body);
        Expr count = ir::make_int(1);
        for (const Expr& e : op->extents) count = count * e;
        if (symbolic_size(op) && !reads_any(op->extents, {}))
            if (std::optional<int64_t> bound = upper_bound(count))
                return ir::Allocate::make(op->buffer, op->type, {ir::make_int(*bound)}, op->scope, body);
        return body.same_as(op->body) ? self : ir::Allocate::make(op->buffer, op->type, op->extents, op->scope, body);
    }

private:
    // The least constant c <= kMaxBound the simplifier proves count <= c with, by bisection
    // (its proofs keep the sizes symbolic, so n * 64 - 384 * (n / 6) cancels to at most 320).
    static constexpr int64_t kMaxBound = int64_t(1) << 24;
    std::optional<int64_t> upper_bound(const Expr& count) const {
        auto holds = [&](int64_t c) { return ir::arith::can_prove(count <= ir::make_int(c, count.type()), ranges_); };
        if (!holds(kMaxBound)) return std::nullopt;
        int64_t lo = 0, hi = kMaxBound;  // count <= hi holds; find the least such
        if (holds(0)) return int64_t(0);
        while (hi - lo > 1) {
            const int64_t mid = lo + (hi - lo) / 2;
            (holds(mid) ? hi : lo) = mid;
        }
        return hi;
    }

    ir::arith::VarRanges ranges_;
};

class Hoister : public ir::IRMutator {
public:
    explicit Hoister(const ir::arith::VarRanges& sizes) : sizes_(sizes) {}
    using IRMutator::mutate;

protected:
    Stmt visit_(const ir::For* op, const Stmt& self) override {
        Stmt loop = IRMutator::visit_(op, self);  // inner loops first
        if (op->for_kind != ir::ForKind::Serial) return loop;
        const auto* f = loop.as<ir::For>();
        std::unordered_set<const ir::Object*> inner = bound_vars(f->body);
        inner.insert(f->loop_var.get());
        Extractor ex(inner);
        Stmt body = ex.mutate(f->body);
        if (ex.taken.empty()) return loop;
        Stmt out = ir::For::make(f->loop_var, f->min, f->extent, f->for_kind, body, f->thread_tag);
        for (auto it = ex.taken.rbegin(); it != ex.taken.rend(); ++it) {
            std::vector<Expr> extents;
            for (const Expr& e : (*it)->extents)
                extents.push_back(ir::arith::simplify(ir::max(e, ir::make_zero(e.type())), sizes_));
            out = ir::Allocate::make((*it)->buffer, (*it)->type, extents, (*it)->scope, out);
        }
        return out;
    }

private:
    const ir::arith::VarRanges& sizes_;
};

}  // namespace hoist_alloc_detail

// `sizes`: the kernel's sizes (size_ranges), which simplify the max(e, 0).
inline ir::Stmt hoist_allocations(const ir::Stmt& s, const ir::arith::VarRanges& sizes = {}) {
    return hoist_alloc_detail::ConstantBounder(sizes).mutate(hoist_alloc_detail::Hoister(sizes).mutate(s));
}

}  // namespace weft::lower_passes
