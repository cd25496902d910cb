// Loop partitioning: a loop whose body tests `likely(c)` (a guard `if (likely(a < b))`, or
// a likely term of any condition, e.g. a padded read's if_then_else) where c holds for a
// prefix or a suffix of the loop's iterations (for every value of the loops inside) is split
// into a steady-state loop where likely(c) is true and a head or tail loop that keeps the
// test. Split tails come out as [0, n / f) guard-free and one last, shorter iteration; a
// lower bound such as `likely(0 <= y + k - 1)` peels the first iterations instead. A
// parallel loop stays one loop whose body branches between the copies. Inside a piece, the
// pieces' ranges of the enclosing loops are known, so a guard they settle does not cut an
// inner loop again (the head rows of a padded read hold their upper bound already).
#pragma once
#include <optional>

#include "weft/ir/arith/impl/expr_equal.hpp"
#include "weft/ir/arith/impl/int_math.hpp"
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

// Each likely condition in a statement that depends on v, with the ranges of the loops
// between the statement's top and the condition. A condition depends on v when it mentions v
// or a loop inside whose bounds do (a stage computed at v's loop has loops over the tile v
// selects). A condition that reads a variable bound by a let inside the statement is
// skipped (its range is unknown here).
class LikelyFinder : public ir::IRVisitor {
public:
    explicit LikelyFinder(Var v) : dependent_{std::move(v)} {}
    std::vector<std::pair<Expr, ir::arith::VarRanges>> found;
    using IRVisitor::visit;

protected:
    void visit_(const ir::For* op) override {
        ranges_[op->loop_var] = ir::arith::Interval(ir::arith::bounds_of(op->min, ranges_).min,
                                                    ir::arith::bounds_of(op->min + op->extent - 1, ranges_).max);
        bool dep = depends(op->min) || depends(op->extent);
        if (dep) dependent_.push_back(op->loop_var);
        visit(op->body);
        if (dep) dependent_.pop_back();
        ranges_.erase(op->loop_var);
    }
    void visit_(const ir::Call* op) override {
        if (op->name == "likely" && op->args.size() == 1 && depends(op->args[0]) && !uses_let(op->args[0]))
            found.emplace_back(op->args[0], ranges_);
        IRVisitor::visit_(op);
    }
    void visit_(const ir::LetStmt* op) override {
        lets_.push_back(op->var);
        IRVisitor::visit_(op);
    }
    void visit_(const ir::Let* op) override {
        lets_.push_back(op->var);
        IRVisitor::visit_(op);
    }

private:
    static bool uses_any(const Expr& e, const std::vector<Var>& vars) {
        for (const Var& x : vars)
            if (ir::uses_var(e, x)) return true;
        return false;
    }
    bool depends(const Expr& e) const { return uses_any(e, dependent_); }
    bool uses_let(const Expr& e) const { return uses_any(e, lets_); }
    std::vector<Var> dependent_;
    ir::arith::VarRanges ranges_;
    std::vector<Var> lets_;
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

// Where cond holds for every inner value, when cond compares two integer expressions and
// their margin (larger side minus smaller) is affine in v: a prefix [.., end) of v's values
// for a decreasing margin, a suffix [start, ..) for an increasing one.
struct TrueRange {
    Expr at;              // end of the prefix, or start of the suffix; undefined if neither
    bool prefix = true;
};

// The divisor c > 0 where e is `x / c` (floor division of a 64-bit integer), else 0.
inline int64_t positive_divisor(const Expr& e) {
    auto* d = e.as<ir::Div>();
    int64_t c = 0;
    if (!d || !ir::arith::detail::no_overflow_type(e.type()) || !ir::as_const_int(d->b, &c) || c <= 0) return 0;
    return c;
}

inline TrueRange true_range(const Expr& cond, const Var& v, const ir::arith::VarRanges& inner) {
    // cond holds iff margin >= need, i.e. a - b >= need (b <= a - need) for its two sides a >= b.
    Expr big, small;
    int64_t need = 0;
    if (auto* lt = cond.as<ir::LT>()) big = lt->b, small = lt->a, need = 1;
    else if (auto* le = cond.as<ir::LE>()) big = le->b, small = le->a;
    else if (auto* gt = cond.as<ir::GT>()) big = gt->a, small = gt->b, need = 1;
    else if (auto* ge = cond.as<ir::GE>()) big = ge->a, small = ge->b;
    else return {};
    // A side that is a floor division x / c by a constant c > 0 is multiplied out, so that
    // the margin is affine in x (a fused axis: x = f / 3 over the fused index f):
    //   x / c >= b + need  <=>  x >= (b + need) * c, i.e. x - (b + need) * c >= 0;
    //   a - need >= x / c  <=>  (a - need) * c + c - 1 >= x, i.e. (a - need + 1) * c - 1 - x >= 0.
    Expr margin;
    if (int64_t c = positive_divisor(big)) {
        margin = big.as<ir::Div>()->a - (small + make_int(need)) * make_int(c);
        need = 0;
    } else if (int64_t c = positive_divisor(small)) {
        margin = (big - make_int(need) + make_int(1)) * make_int(c) - make_int(1) - small.as<ir::Div>()->a;
        need = 0;
    } else {
        margin = big - small;
    }
    if (!margin.type().is_integer()) return {};
    margin = ir::arith::simplify(margin);
    Expr lo = ir::arith::bounds_of(margin, inner).min;
    if (!lo.defined()) return {};
    auto at = [&](int64_t x) { return ir::arith::simplify(ir::substitute(lo, {{v, make_int(x)}})); };
    Expr c0 = at(0), slope = ir::arith::simplify(at(1) - c0);
    int64_t s;
    if (!ir::as_const_int(slope, &s) || s == 0) return {};
    // lo must be exactly c0 + slope * v (affine in v).
    if (!ir::is_zero(ir::arith::simplify(lo - (c0 + slope * Expr(v))))) return {};
    // s < 0: c0 + s*v >= need  <=>  v <= (c0 - need) / -s, so the prefix ends one past that.
    if (s < 0) return {ir::arith::simplify((c0 - need) / make_int(-s) + 1), true};
    // s > 0: c0 + s*v >= need  <=>  v >= ceil((need - c0) / s)  (floor division below).
    return {ir::arith::simplify((need - c0 + (s - 1)) / make_int(s)), false};
}

class Partitioner : public ir::IRMutator {
public:
    explicit Partitioner(ir::arith::VarRanges facts) : outer_(std::move(facts)) {}
    using IRMutator::mutate;
    Stmt visit_(const ir::For* op, const Stmt& self) override {
        if (op->for_kind == ir::ForKind::ThreadBound) return IRMutator::visit_(op, self);
        // A parallel loop is not cut into a steady loop and a tail loop: they would run one
        // after the other (a 2-iteration loop over 2 threads would become serial). Each
        // iteration branches to a guard-free copy of the body instead.
        bool parallel = op->for_kind == ir::ForKind::Parallel;
        Stmt cut = partition(op->loop_var, op->min, op->extent, op->for_kind, op->thread_tag, op->body, 0, parallel,
                             loop_range(op->min, op->extent));
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

    static ir::arith::Interval loop_range(const Expr& min, const Expr& extent) {
        return ir::arith::Interval(min, ir::arith::simplify(min + extent - 1));
    }
    // `range` narrowed to [lo, hi] (either undefined: that side as it is). Where one bound is
    // provably the tighter, it alone (a min of two symbolic bounds defeats later proofs).
    ir::arith::Interval narrowed(const ir::arith::Interval& range, const Expr& lo, const Expr& hi) const {
        auto tighter = [&](const Expr& a, const Expr& b, bool upper) {
            if (!b.defined()) return a;
            if (ir::arith::can_prove(upper ? b <= a : b >= a, outer_)) return b;
            if (ir::arith::can_prove(upper ? a <= b : a >= b, outer_)) return a;
            return ir::arith::simplify(upper ? ir::min(a, b) : ir::max(a, b));
        };
        return ir::arith::Interval(tighter(range.min, lo, false), tighter(range.max, hi, true));
    }

    // The loop over v in [min, min + extent), cut where a guard stops holding: into a steady
    // loop and a tail loop (a Seq of loops), or, for `branch` (the body of a parallel loop),
    // into `if (v < split) steady-body else tail-body`. `range`: what v's values are known to
    // be within this piece, where it runs at all. A piece's bounds are clamped to keep the
    // pieces in order (split = min(max(at, min), stop)), but a value in the piece satisfies
    // the unclamped bound too: v < max(at, min) with v >= min means v < at. Over a symbolic
    // width, that fact is what proves an interior tile whole.
    Stmt partition(const Var& v, const Expr& min, const Expr& extent, ir::ForKind kind, const std::string& tag,
                   const Stmt& body, int depth, bool branch, const ir::arith::Interval& range) {
        // A single iteration is not cut: leaf() substitutes v, which settles its guards.
        if (depth < 4 && !ir::is_one(extent)) {
            LikelyFinder lf(v);
            lf.visit(body);
            for (auto& [cond, inner] : lf.found) {
                TrueRange r = true_range(cond, v, inner);
                if (!r.at.defined()) continue;
                Expr stop = ir::arith::simplify(min + extent);
                Expr split = ir::arith::simplify(ir::min(ir::max(r.at, min), stop));
                // The first and the last value of v where cond holds.
                Expr from = r.prefix ? min : split, to = r.prefix ? split : stop;
                // Over the ranges of the enclosing loops' pieces: in the head piece of a lower
                // bound, say, an upper bound of the same rows already holds everywhere.
                if (ir::arith::can_prove(from == min && to == stop, outer_)) {
                    // The guard holds everywhere.
                    return partition(v, min, extent, kind, tag, ReplaceLikely(cond).mutate(body), depth + 1, branch,
                                     range);
                }
                if (ir::arith::can_prove(from == to, outer_)) continue;  // it never holds
                // Each split copies the body; past a budget, keep the guard instead (correct,
                // slower) so deep nests of non-dividing splits cannot blow up compile time.
                size_t cost = node_count(body);
                if (cost > growth_budget_) continue;
                growth_budget_ -= cost;
                // Below the split, v < r.at; from it on, v >= r.at (where those pieces run).
                const Expr below = ir::arith::simplify(r.at - 1);
                const ir::arith::Interval low = narrowed(range, Expr(), below), high = narrowed(range, r.at, Expr());
                Stmt steady = partition(v, from, ir::arith::simplify(to - from), kind, tag,
                                        ReplaceLikely(cond).mutate(body), depth + 1, branch, r.prefix ? low : high);
                if (r.prefix) {
                    Stmt tail = leaf(v, split, ir::arith::simplify(stop - split), kind, tag, body, branch, high);
                    return branch ? ir::IfThenElse::make(Expr(v) < split, steady, tail) : ir::Seq::make({steady, tail});
                }
                // The head keeps the guard; the rest may still have a prefix (an upper bound).
                Stmt head = leaf(v, min, ir::arith::simplify(split - min), kind, tag, body, branch, low);
                return branch ? ir::IfThenElse::make(Expr(v) < split, head, steady) : ir::Seq::make({head, steady});
            }
        }
        return leaf(v, min, extent, kind, tag, body, branch, range);
    }
    Stmt leaf(const Var& v, const Expr& min, const Expr& extent, ir::ForKind kind, const std::string& tag,
              const Stmt& body, bool branch, const ir::arith::Interval& range) {
        // (`range` holds every value of the piece: its loop's, or a cut's narrower facts.)
        const ir::arith::Interval own = loop_range(min, extent), &in = range;
        // Where the piece knows more than its loop says, the body is simplified with that
        // (the final simplify sees only the loops).
        const bool knows_more = !ir::arith::detail::same_expr(in.min, own.min) ||
                                !ir::arith::detail::same_expr(in.max, own.max);
        // One value: substitute the loop variable so inner guards and bounds simplify.
        if (branch)
            return ir::is_one(extent) ? mutate(ir::substitute(body, {{v, min}})) : mutate_in(v, in, body, knows_more);
        // One iteration: substitute the loop variable so inner guards become analyzable.
        if (ir::is_one(extent) && kind != ir::ForKind::Parallel) return mutate(ir::substitute(body, {{v, min}}));
        return ir::For::make(v, min, extent, kind, mutate_in(v, in, body, knows_more), tag);
    }
    // The body of a piece where v is within `range`, partitioned knowing that.
    Stmt mutate_in(const Var& v, const ir::arith::Interval& range, const Stmt& body, bool simplify_body = false) {
        auto saved = outer_.find(v);
        std::optional<ir::arith::Interval> before;
        if (saved != outer_.end()) before = saved->second;
        outer_[v] = range;
        Stmt out = mutate(body);
        if (simplify_body) out = ir::arith::simplify(out, outer_);
        if (before) outer_[v] = *before;
        else outer_.erase(v);
        return out;
    }

    ir::arith::VarRanges outer_;  // the enclosing loop pieces' ranges, and the sizes' signs
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

// `sizes`: the kernel's symbolic sizes, each in [0, +inf) (arith::size_ranges). Knowing
// them non-negative, a split's steady loop over a symbolic n ends at n / f, from which the
// simplifier proves its tiles whole (a register tile of constant rows).
inline ir::Stmt loop_partition(const ir::Stmt& s, const ir::arith::VarRanges& sizes = {}) {
    partition_detail::Partitioner p(sizes);
    return partition_detail::StripLikely().mutate(ir::arith::simplify(p.mutate(s), sizes));
}

}  // namespace weft::lower_passes
