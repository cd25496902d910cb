// Symbolic interval analysis (ir/arith/interval.hpp): bounds as expressions of the
// variables that are not ranged, built by interval arithmetic and simplified.
// Integer types that wrap (everything but signed 64-bit) take their constant range
// instead: a symbolic bound of wrapping arithmetic could be wrong.
//
// Ranged variables are eliminated in rounds, inner ones first: with x in [0, n - 1] and
// n in [1, 100], x - n is first bounded in x, giving [0 - n, n - 1 - n] = [-n, -1], and
// only then in n, giving [-100, -1]. Replacing both at once would lose that the two n are
// the same and give [-100, 98].
#pragma once
#include <unordered_set>

#include "weft/ir/arith/impl/simplifier.hpp"

namespace weft::ir::arith::detail {

using VarSet = std::unordered_set<const VarNode*>;

// Whether an interval only gives a sign (a size n in [0, +inf)): its ends constants or
// missing, one missing.
inline bool only_a_sign(const Interval& i) {
    auto constant_or_missing = [](const Expr& e) { return !e.defined() || e.as<IntImm>(); };
    return !i.is_bounded() && constant_or_missing(i.min) && constant_or_missing(i.max);
}

// The variables of e that are in `among` (all of them when `among` is null), each once,
// in order of first appearance; with `keep_signs`, not those whose range only gives a sign.
inline std::vector<Var> vars_of(const Expr& e, const RangeEnv* among, bool keep_signs = false) {
    struct Collector : IRVisitor {
        const RangeEnv* among;
        bool keep_signs;
        VarSet seen;
        std::vector<Var> found;
        Collector(const RangeEnv* a, bool k) : among(a), keep_signs(k) {}
        void visit(const Expr& x) override {
            if (!x.defined()) return;
            if (x.kind() != NodeKind::Var) return IRVisitor::visit(x);
            Var v(x.ptr());
            const Interval* range = among ? among->find(v) : nullptr;
            if (among && (!range || (keep_signs && only_a_sign(*range)))) return;
            if (seen.insert(v.node()).second) found.push_back(v);
        }
    } collector(among, keep_signs);
    collector.visit(e);
    return std::move(collector.found);
}

inline bool mentions_any(const Expr& e, const VarSet& vars) {
    struct Finder : IRVisitor {
        const VarSet& vars;
        bool found = false;
        explicit Finder(const VarSet& v) : vars(v) {}
        void visit(const Expr& x) override {
            if (found || !x.defined()) return;
            if (x.kind() == NodeKind::Var) found = vars.count(static_cast<const VarNode*>(x.get())) > 0;
            else IRVisitor::visit(x);
        }
    } finder(vars);
    finder.visit(e);
    return finder.found;
}

// One round: bounds with the variables of `eliminated` replaced by their intervals; every
// other variable stands for itself.
class BoundsAnalyzer {
public:
    BoundsAnalyzer(RangeEnv& env, const VarSet& eliminated) : env_(env), eliminated_(eliminated) {}

    // Bounds of e's values (of its lanes, for a vector), not yet simplified.
    Interval bounds(const Expr& e) {
        DataType t = e.type();
        if (t.is_scalar() && !mentions_any(e, eliminated_)) return Interval::single_point(e);
        if (t.is_integer() && !no_overflow_type(t)) return of_const_range(const_range(e, env_), t.element_of());
        switch (e.kind()) {
            case NodeKind::IntImm: case NodeKind::FloatImm: return Interval::single_point(e);
            case NodeKind::Var: {
                auto* i = env_.find(Var(e.ptr()));
                if (i && eliminated_.count(static_cast<const VarNode*>(e.get()))) return *i;
                return t.is_scalar() ? Interval::single_point(e) : Interval::everything();
            }
            case NodeKind::Add: {
                auto* op = e.as<Add>();
                Interval a = bounds(op->a), b = bounds(op->b);
                return {both(a.min, b.min, Add::make), both(a.max, b.max, Add::make)};
            }
            case NodeKind::Sub: {
                auto* op = e.as<Sub>();
                Interval a = bounds(op->a), b = bounds(op->b);
                return {both(a.min, b.max, Sub::make), both(a.max, b.min, Sub::make)};
            }
            case NodeKind::Mul: {
                auto* op = e.as<Mul>();
                return mul(bounds(op->a), bounds(op->b));
            }
            case NodeKind::Div: {
                auto* op = e.as<Div>();
                return div(bounds(op->a), bounds(op->b), t.is_float());
            }
            case NodeKind::Mod: {
                auto* op = e.as<Mod>();
                if (t.is_float()) return Interval::everything();
                return mod(bounds(op->a), bounds(op->b));
            }
            case NodeKind::Min: {
                auto* op = e.as<Min>();
                // An end missing on one side: min's lower end is unknown, its upper end is
                // the other side's.
                Interval a = bounds(op->a), b = bounds(op->b);
                return {both(a.min, b.min, &Min::make), either(a.max, b.max, &Min::make)};
            }
            case NodeKind::Max: {
                auto* op = e.as<Max>();
                Interval a = bounds(op->a), b = bounds(op->b);
                return {either(a.min, b.min, &Max::make), both(a.max, b.max, &Max::make)};
            }
            case NodeKind::Select: {
                auto* op = e.as<Select>();
                return union_of(bounds(op->true_value), bounds(op->false_value));
            }
            case NodeKind::Cast: return cast(e.as<Cast>());
            case NodeKind::Broadcast: return bounds(e.as<Broadcast>()->value);
            case NodeKind::Ramp: {
                auto* op = e.as<Ramp>();
                DataType s = op->base.type();
                Interval lanes(make_zero(s), make_int(op->lanes - 1, s));
                Interval base = bounds(op->base), offsets = mul(bounds(op->stride), lanes);
                return {both(base.min, offsets.min, Add::make), both(base.max, offsets.max, Add::make)};
            }
            case NodeKind::Let: {
                auto* op = e.as<Let>();
                env_.push(op->var, bounds(op->value));
                eliminated_.insert(op->var.node());
                Interval r = bounds(op->body);
                eliminated_.erase(op->var.node());
                env_.pop();
                return r;
            }
            default: return Interval::everything();  // loads, calls, float comparisons' operands...
        }
    }

private:
    RangeEnv& env_;
    VarSet eliminated_;

    using Maker = Expr (*)(Expr, Expr);
    static Expr both(const Expr& a, const Expr& b, Maker make) {
        return a.defined() && b.defined() ? make(a, b) : Expr();
    }
    static Expr either(const Expr& a, const Expr& b, Maker make) {
        if (a.defined() && b.defined()) return make(a, b);
        return a.defined() ? a : b;
    }
    static Interval union_of(const Interval& a, const Interval& b) {
        return {both(a.min, b.min, &Min::make), both(a.max, b.max, &Max::make)};
    }
    static Interval of_const_range(ConstRange r, DataType t) {
        return {r.has_lo() ? make_int(int64_t(r.lo), t) : Expr(), r.has_hi() ? make_int(int64_t(r.hi), t) : Expr()};
    }

    bool nonnegative(const Expr& x) {
        if (!x.defined()) return false;
        if (auto* f = x.as<FloatImm>()) return f->value >= 0;
        return x.type().is_integer() && const_range(x, env_).lo >= 0;
    }
    static bool constant_point(const Interval& i) {
        return i.is_bounded() && (i.min.as<IntImm>() || i.min.as<FloatImm>()) && same_expr(i.min, i.max);
    }

    // a * c for a constant c: the ends swap when c is negative.
    Interval scale(const Interval& a, const Expr& c) {
        if (is_zero(c)) return Interval::single_point(c);
        bool negative = c.as<IntImm>() ? c.as<IntImm>()->value < 0 : c.as<FloatImm>()->value < 0;
        Expr lo = a.min.defined() ? Mul::make(a.min, c) : Expr();
        Expr hi = a.max.defined() ? Mul::make(a.max, c) : Expr();
        return negative ? Interval(hi, lo) : Interval(lo, hi);
    }

    Interval mul(const Interval& a, const Interval& b) {
        if (constant_point(b)) return scale(a, b.min);
        if (constant_point(a)) return scale(b, a.min);
        if (a.is_bounded() && b.is_bounded()) {
            // The extremes of a product over a box are at its corners, whatever the signs;
            // simplifying the min/max below picks the corner when the signs are known.
            Expr p[4] = {Mul::make(a.min, b.min), Mul::make(a.min, b.max), Mul::make(a.max, b.min),
                         Mul::make(a.max, b.max)};
            return {Min::make(Min::make(p[0], p[1]), Min::make(p[2], p[3])),
                    Max::make(Max::make(p[0], p[1]), Max::make(p[2], p[3]))};
        }
        if (nonnegative(a.min) && nonnegative(b.min))
            return {Mul::make(a.min, b.min), both(a.max, b.max, &Mul::make)};
        return Interval::everything();
    }

    Interval div(const Interval& a, const Interval& b, bool is_float) {
        if (constant_point(b)) {
            if (is_zero(b.min)) return Interval::everything();
            bool negative = b.min.as<IntImm>() ? b.min.as<IntImm>()->value < 0 : b.min.as<FloatImm>()->value < 0;
            Expr lo = a.min.defined() ? Div::make(a.min, b.min) : Expr();
            Expr hi = a.max.defined() ? Div::make(a.max, b.min) : Expr();
            return negative ? Interval(hi, lo) : Interval(lo, hi);  // division by c is monotone
        }
        // A positive divisor range: floor(x / y) grows with x, and for a fixed x moves
        // toward 0 (x >= 0) or -1 (x < 0) as y grows, so the extremes are at the ends; an
        // unbounded y only adds the limits 0 and -1.
        if (is_float || !b.min.defined() || const_range(b.min, env_).lo < 1) return Interval::everything();
        DataType t = b.min.type();
        Expr lo, hi;
        if (a.min.defined())
            lo = Min::make(Div::make(a.min, b.min), b.max.defined() ? Div::make(a.min, b.max) : make_int(-1, t));
        if (a.max.defined())
            hi = Max::make(Div::make(a.max, b.min), b.max.defined() ? Div::make(a.max, b.max) : make_zero(t));
        return {lo, hi};
    }

    Interval mod(const Interval& a, const Interval& b) {
        if (constant_point(b)) {
            int64_t c = b.min.as<IntImm>()->value;
            DataType t = b.min.type();
            if (c == 0) return Interval::everything();
            if (c < 0) return {make_int(c + 1, t), make_zero(t)};
            // Within one period of c (a.max / c == a.min / c) the modulo is a shift.
            if (a.is_bounded()) {
                Simplifier s(env_);
                Expr periods = s.mutate(Sub::make(Div::make(a.max, b.min), Div::make(a.min, b.min)));
                if (is_zero(periods)) return {Mod::make(a.min, b.min), Mod::make(a.max, b.min)};
            }
            Expr top = make_int(c - 1, t);
            if (nonnegative(a.min) && a.max.defined()) return {make_zero(t), Min::make(a.max, top)};
            return {make_zero(t), top};
        }
        // A positive divisor y: x % y lies in [0, y - 1], and in [0, x] when x >= 0.
        if (!b.min.defined() || const_range(b.min, env_).lo < 1) return Interval::everything();
        DataType t = b.min.type();
        Expr top = b.max.defined() ? Sub::make(b.max, make_one(t)) : Expr();
        if (nonnegative(a.min)) top = either(top, a.max, &Min::make);
        return {make_zero(t), top};
    }

    Interval cast(const Cast* op) {
        DataType to = op->type.element_of(), from = op->value.type();
        // Only monotone conversions that cannot wrap keep their ends: to floats, and to
        // signed 64-bit from anything but uint64 (narrow targets took the constant route).
        bool monotone = to.is_float() || !(from.is_uint() && from.bits >= 64);
        if (!monotone) return Interval::everything();
        Interval v = bounds(op->value);
        return {v.min.defined() ? Cast::make(to, v.min) : Expr(), v.max.defined() ? Cast::make(to, v.max) : Expr()};
    }
};

// With `keep_signs` (the simplifier's proofs), a variable whose range only gives a sign
// stands for itself: replaced by [0, +inf), a size n would lose the identity that cancels
// it (6 * (n / 6) - n <= 0), and the constant ranges of the bounds still use the sign.
inline Interval symbolic_bounds(const Expr& e, RangeEnv& env, bool keep_signs) {
    // The ranged variables e depends on, directly or through other intervals, and for each
    // the ranged variables its own interval mentions.
    std::vector<Var> pending = vars_of(e, &env, keep_signs);
    std::unordered_map<const VarNode*, VarSet> depends_on;
    for (size_t k = 0; k < pending.size(); ++k) {
        const Interval* i = env.find(pending[k]);
        VarSet& deps = depends_on[pending[k].node()];
        for (const Expr& end : {i->min, i->max}) {
            if (!end.defined()) continue;
            for (const Var& u : vars_of(end, &env, keep_signs)) {
                deps.insert(u.node());
                if (!depends_on.count(u.node()) &&
                    std::none_of(pending.begin(), pending.end(), [&](const Var& p) { return p.same_as(u); }))
                    pending.push_back(u);
            }
        }
    }
    Simplifier simplifier(env);
    Interval current = Interval::single_point(e);
    // A vector takes one round even with nothing to eliminate: its bounds are scalars.
    bool first_round = e.type().is_vector();
    while (!pending.empty() || first_round) {
        first_round = false;
        // This round takes the variables no other pending interval mentions; on a cycle,
        // all of them (still sound: a bound may mention a ranged variable).
        VarSet round;
        for (const Var& v : pending) {
            bool needed_by_other = std::any_of(pending.begin(), pending.end(), [&](const Var& u) {
                return !u.same_as(v) && depends_on[u.node()].count(v.node());
            });
            if (!needed_by_other) round.insert(v.node());
        }
        if (round.empty())
            for (const Var& v : pending) round.insert(v.node());
        std::erase_if(pending, [&](const Var& v) { return round.count(v.node()) > 0; });

        BoundsAnalyzer analyzer(env, round);
        if (current.is_single_point()) {
            current = analyzer.bounds(current.min);
        } else {
            current = {current.min.defined() ? analyzer.bounds(current.min).min : Expr(),
                       current.max.defined() ? analyzer.bounds(current.max).max : Expr()};
        }
        if (current.is_single_point()) current = Interval::single_point(simplifier.mutate(current.min));
        else current = {simplifier.mutate(current.min), simplifier.mutate(current.max)};
    }
    return current;
}

}  // namespace weft::ir::arith::detail

namespace weft::ir::arith {

Interval bounds_of(const Expr& e, const VarRanges& ranges) {
    detail::RangeEnv env(ranges);
    detail::Simplifier s(env);
    return detail::symbolic_bounds(s.mutate(e), env, false);
}

Interval interval_union(const Interval& a, const Interval& b) {
    detail::RangeEnv env({});
    detail::Simplifier s(env);
    Expr lo = a.min.defined() && b.min.defined() ? s.rewrite_min_max(NodeKind::Min, a.min, b.min) : Expr();
    Expr hi = a.max.defined() && b.max.defined() ? s.rewrite_min_max(NodeKind::Max, a.max, b.max) : Expr();
    return {lo, hi};
}

bool const_bounds(const Expr& e, const VarRanges& ranges, int64_t* lo, int64_t* hi) {
    using namespace detail;
    RangeEnv env(ranges);
    Simplifier s(env);
    Expr simplified = s.mutate(e);
    ConstRange r = const_range(simplified, env);
    // Symbolic bounds are tighter when a range has a symbolic end (n - x for x in [0, n - 1]).
    if (!r.has_lo() || !r.has_hi() || env.mentions_symbolic_range(simplified)) {
        Interval symbolic = symbolic_bounds(simplified, env, false);
        i128 v;
        if (symbolic.has_lower() && as_true_const(symbolic.min, &v)) r.lo = std::max(r.lo, v);
        if (symbolic.has_upper() && as_true_const(symbolic.max, &v)) r.hi = std::min(r.hi, v);
    }
    auto fits = [](i128 v) { return v >= INT64_MIN && v <= INT64_MAX; };
    if (!r.has_lo() || !r.has_hi() || !fits(r.lo) || !fits(r.hi)) return false;
    *lo = int64_t(r.lo);
    *hi = int64_t(r.hi);
    return true;
}

}  // namespace weft::ir::arith
