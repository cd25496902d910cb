// Loop partitioning: a loop whose body has a guard `if (likely(a < b))` that holds for a
// prefix of the loop's iterations (for every value of the loops inside) is split into a
// steady-state loop without the guard and a tail loop that keeps it. Split tails come out
// as [0, n / f) guard-free and one last, shorter iteration. A parallel loop stays one loop
// whose body branches between the two copies.
#pragma once
#include "weft/ir/arith/impl/expr_equal.hpp"
#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/equality.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {
namespace partition_detail {

using ir::Stmt;

inline const ir::Call* as_likely(const Expr& e) {
    auto* c = e.as<ir::Call>();
    return c && c->name == "likely" ? c : nullptr;
}

// Each likely condition in a statement that mentions v, with the ranges of the loops
// between the statement's top and the condition.
class LikelyFinder : public ir::IRVisitor {
public:
    explicit LikelyFinder(Var v) : v_(std::move(v)) {}
    std::vector<std::pair<Expr, ir::arith::VarRanges>> found;
    using IRVisitor::visit;

protected:
    void visit_(const ir::For* op) override {
        ranges_[op->loop_var] = ir::arith::Interval(ir::arith::bounds_of(op->min, ranges_).min,
                                                    ir::arith::bounds_of(op->min + op->extent - 1, ranges_).max);
        visit(op->body);
        ranges_.erase(op->loop_var);
    }
    void visit_(const ir::IfThenElse* op) override {
        if (auto* l = as_likely(op->condition); l && ir::uses_var(l->args[0], v_)) found.emplace_back(l->args[0], ranges_);
        IRVisitor::visit_(op);
    }

private:
    Var v_;
    ir::arith::VarRanges ranges_;
};

// Replaces likely(c) by true where c is `cond`: the same expression over the same variables.
// (Not ir::structural_equal, which is up to renaming: it took `rx < 3` for `ry < 3` and
// dropped the guard of one split's tail while partitioning the other's.)
class ReplaceLikely : public ir::IRMutator {
public:
    explicit ReplaceLikely(Expr c) : cond_(std::move(c)) {}
    using IRMutator::mutate;
    Expr visit_(const ir::Call* op, const Expr& self) override {
        if (op->name == "likely" && ir::arith::detail::same_expr(op->args[0], cond_)) return ir::make_const(boolean, 1);
        return IRMutator::visit_(op, self);
    }

private:
    Expr cond_;
};

// The first value of v at which `cond` (a < b) may fail for some inner value, if cond is
// affine in v with a decreasing margin; undefined otherwise.
inline Expr end_of_true_prefix(const Expr& cond, const Var& v, const ir::arith::VarRanges& inner) {
    auto* lt = cond.as<ir::LT>();
    if (!lt || !lt->a.type().is_integer()) return Expr();
    Expr margin = ir::arith::simplify(lt->b - lt->a);  // cond holds iff margin >= 1
    Expr lo = ir::arith::bounds_of(margin, inner).min;
    if (!lo.defined()) return Expr();
    auto at = [&](int64_t x) { return ir::arith::simplify(ir::substitute(lo, {{v, make_int(x)}})); };
    Expr c0 = at(0), slope = ir::arith::simplify(at(1) - c0);
    int64_t s;
    if (!ir::as_const_int(slope, &s) || s >= 0) return Expr();
    // lo must be exactly c0 + slope * v (affine in v).
    if (!ir::is_zero(ir::arith::simplify(lo - (c0 + slope * Expr(v))))) return Expr();
    // c0 + s*v >= 1  <=>  v <= (c0 - 1) / -s  (floor division)
    return ir::arith::simplify((c0 - 1) / make_int(-s) + 1);
}

class Partitioner : public ir::IRMutator {
public:
    using IRMutator::mutate;
    Stmt visit_(const ir::For* op, const Stmt& self) override {
        if (op->for_kind == ir::ForKind::ThreadBound) return IRMutator::visit_(op, self);
        // A parallel loop is not cut into a steady loop and a tail loop: they would run one
        // after the other (a 2-iteration loop over 2 threads would become serial). Each
        // iteration branches to a guard-free copy of the body instead.
        bool parallel = op->for_kind == ir::ForKind::Parallel;
        Stmt cut = partition(op->loop_var, op->min, op->extent, op->for_kind, op->thread_tag, op->body, 0, parallel);
        return parallel ? ir::For::make(op->loop_var, op->min, op->extent, op->for_kind, cut, op->thread_tag) : cut;
    }

private:
    // Statements and expressions the partitioner may add to one kernel by copying bodies.
    size_t growth_budget_ = 20000;

    static size_t node_count(const Stmt& s) {
        size_t n = 0;
        ir::post_order_visit(s, [&](const ir::Object*) { ++n; });
        return n;
    }

    // The loop over v in [min, min + extent), cut where a guard stops holding: into a steady
    // loop and a tail loop (a Seq of loops), or, for `branch` (the body of a parallel loop),
    // into `if (v < split) steady-body else tail-body`.
    Stmt partition(const Var& v, const Expr& min, const Expr& extent, ir::ForKind kind, const std::string& tag,
                   const Stmt& body, int depth, bool branch) {
        if (depth < 4) {
            LikelyFinder lf(v);
            lf.visit(body);
            for (auto& [cond, inner] : lf.found) {
                Expr end = end_of_true_prefix(cond, v, inner);
                if (!end.defined()) continue;
                Expr stop = ir::arith::simplify(min + extent);
                Expr split = ir::arith::simplify(ir::min(ir::max(end, min), stop));
                if (ir::arith::can_prove(split == stop)) {
                    // The guard holds everywhere.
                    return partition(v, min, extent, kind, tag, ReplaceLikely(cond).mutate(body), depth + 1, branch);
                }
                if (ir::arith::can_prove(split == min)) continue;  // it never holds
                // Each split copies the body; past a budget, keep the guard instead (correct,
                // slower) so deep nests of non-dividing splits cannot blow up compile time.
                size_t cost = node_count(body);
                if (cost > growth_budget_) continue;
                growth_budget_ -= cost;
                Stmt steady = partition(v, min, ir::arith::simplify(split - min), kind, tag,
                                        ReplaceLikely(cond).mutate(body), depth + 1, branch);
                Stmt tail = leaf(v, split, ir::arith::simplify(stop - split), kind, tag, body, branch);
                return branch ? ir::IfThenElse::make(Expr(v) < split, steady, tail) : ir::Seq::make({steady, tail});
            }
        }
        return leaf(v, min, extent, kind, tag, body, branch);
    }
    Stmt leaf(const Var& v, const Expr& min, const Expr& extent, ir::ForKind kind, const std::string& tag,
              const Stmt& body, bool branch) {
        // One value: substitute the loop variable so inner guards and bounds simplify.
        if (branch) return mutate(ir::is_one(extent) ? ir::substitute(body, {{v, min}}) : body);
        return make_loop(v, min, extent, kind, tag, body);
    }
    Stmt make_loop(const Var& v, const Expr& min, const Expr& extent, ir::ForKind kind, const std::string& tag,
                   const Stmt& body) {
        // One iteration: substitute the loop variable so inner guards become analyzable.
        if (ir::is_one(extent) && kind != ir::ForKind::Parallel)
            return mutate(ir::substitute(body, {{v, min}}));
        return ir::For::make(v, min, extent, kind, mutate(body), tag);
    }
};

// After partitioning, remaining likely() markers are plain conditions.
class StripLikely : public ir::IRMutator {
public:
    using IRMutator::mutate;
    Expr visit_(const ir::Call* op, const Expr& self) override {
        if (op->name == "likely") return mutate(op->args[0]);
        return IRMutator::visit_(op, self);
    }
};

}  // namespace partition_detail

inline ir::Stmt loop_partition(const ir::Stmt& s) {
    partition_detail::Partitioner p;
    return partition_detail::StripLikely().mutate(ir::arith::simplify(p.mutate(s)));
}

}  // namespace weft::lower_passes
