// Constant ranges: the cheap half of interval analysis. Every integer expression gets a
// range [lo, hi] of its true values (±infinity when unknown), computed in one walk. It is
// exact under wrapping: when a narrow type could wrap, the range widens to the whole type.
// The simplifier asks it for every sign and "fits in one period" fact its rules need;
// symbolic bounds (interval.hpp) use it to learn the signs of their bound expressions.
#pragma once
#include <optional>
#include <unordered_map>
#include <vector>

#include "weft/ir/arith/impl/int_math.hpp"
#include "weft/ir/arith/interval.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::ir::arith::detail {

struct ConstRange {
    i128 lo = -kInf, hi = kInf;
    static ConstRange everything() { return {}; }
    static ConstRange point(i128 v) { return {v, v}; }
    bool has_lo() const { return lo > -kInf; }
    bool has_hi() const { return hi < kInf; }
    bool is_point() const { return lo == hi && has_lo(); }
};

// The range of every value of integer type t; signed 64-bit is "unknown" (see int_math.hpp).
inline ConstRange type_range(DataType t) {
    if (no_overflow_type(t) || !t.is_integer()) return ConstRange::everything();
    return {type_min(t), type_max(t)};
}

// r, given that the value is of type t: a narrow type whose range leaves the type could
// have wrapped anywhere in it; signed 64-bit does not overflow, so an end beyond the type
// only means that end is unknown.
inline ConstRange fit_to_type(DataType t, ConstRange r) {
    if (!t.is_integer()) return r;
    if (no_overflow_type(t)) {
        // A range entirely outside the type means certain overflow: nothing is known.
        if (r.lo > type_max(t) || r.hi < type_min(t)) return ConstRange::everything();
        if (r.lo < type_min(t)) r.lo = -kInf;
        if (r.hi > type_max(t)) r.hi = kInf;
        return r;
    }
    if (r.lo < type_min(t) || r.hi > type_max(t)) return type_range(t);
    return r;
}

inline ConstRange range_union(ConstRange a, ConstRange b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

// The variables' ranges in scope: symbolic intervals (from the caller, loops and lets) and
// the constant ranges derived from them on demand. Scopes push and pop; a variable may be
// shadowed.
class RangeEnv {
public:
    explicit RangeEnv(const VarRanges& ranges) {
        for (auto& [v, i] : ranges) symbolic_.emplace(v, in_type_of(v, i));
    }

    void push(const Var& v, const Interval& i) {
        auto it = symbolic_.find(v);
        saved_.push_back({v, it == symbolic_.end() ? std::nullopt : std::optional<Interval>(it->second)});
        symbolic_[v] = in_type_of(v, i);
        const_cache_.clear();
    }
    void pop() {
        auto [v, previous] = std::move(saved_.back());
        saved_.pop_back();
        if (previous) symbolic_[v] = std::move(*previous);
        else symbolic_.erase(v);
        const_cache_.clear();
    }

    const Interval* find(const Var& v) const {
        auto it = symbolic_.find(v);
        return it == symbolic_.end() ? nullptr : &it->second;
    }
    const VarRanges& symbolic() const { return symbolic_; }

    // Whether v's interval has an end that is not a constant.
    bool has_symbolic_end(const Var& v) const {
        auto* i = find(v);
        if (!i) return false;
        auto symbolic_end = [](const Expr& e) { return e.defined() && !e.as<IntImm>(); };
        return symbolic_end(i->min) || symbolic_end(i->max);
    }

    // Whether e mentions a variable whose range has a symbolic end: only about those can
    // symbolic bounds know more than constant ranges do.
    bool mentions_symbolic_range(const Expr& e) const {
        struct Finder : IRVisitor {
            const RangeEnv& env;
            bool found = false;
            explicit Finder(const RangeEnv& en) : env(en) {}
            void visit(const Expr& x) override {
                if (found || !x.defined()) return;
                if (x.kind() == NodeKind::Var) found = env.has_symbolic_end(Var(x.ptr()));
                else IRVisitor::visit(x);
            }
        } finder(*this);
        finder.visit(e);
        return finder.found;
    }

    ConstRange* cached(const VarNode* v) {
        auto it = const_cache_.find(v);
        return it == const_cache_.end() ? nullptr : &it->second;
    }
    void cache(const VarNode* v, ConstRange r) { const_cache_[v] = r; }

private:
    VarRanges symbolic_;

    // An interval whose ends have v's type: a range written with a C++ literal (an int32
    // `0` for an int64 loop variable) is converted, so bound arithmetic never mixes types.
    static Interval in_type_of(const Var& v, const Interval& i) {
        auto convert = [&](const Expr& e) { return e.defined() && e.type() != v.type() ? cast(v.type(), e) : e; };
        return {convert(i.min), convert(i.max)};
    }
    std::vector<std::pair<Var, std::optional<Interval>>> saved_;
    std::unordered_map<const VarNode*, ConstRange> const_cache_;
};

inline ConstRange const_range(const Expr& e, RangeEnv& env);

namespace const_range_impl {

inline ConstRange of_var(const Expr& e, RangeEnv& env) {
    auto* node = static_cast<const VarNode*>(e.get());
    if (auto* c = env.cached(node)) return *c;
    ConstRange r = type_range(e.type());
    const Interval* i = env.find(Var(e.ptr()));
    if (i) {
        env.cache(node, r);  // guards against intervals that mention their own variable
        ConstRange from{i->min.defined() ? const_range(i->min, env).lo : -kInf,
                        i->max.defined() ? const_range(i->max, env).hi : kInf};
        r = fit_to_type(e.type(), from);
    }
    env.cache(node, r);
    return r;
}

inline ConstRange of_mul(ConstRange a, ConstRange b) {
    i128 p[4] = {xmul(a.lo, b.lo), xmul(a.lo, b.hi), xmul(a.hi, b.lo), xmul(a.hi, b.hi)};
    return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
}

// floor(a / b) for b entirely positive: floor division grows with a, and for a fixed a
// moves toward 0 or -1 as b grows, so the extremes are at the ends.
inline ConstRange of_div_positive(ConstRange a, ConstRange b) {
    auto div_end = [](i128 x, i128 d) -> i128 {
        if (is_inf(d)) return is_inf(x) ? x : (x >= 0 ? 0 : -1);
        return xfloor_div(x, d);
    };
    i128 lo = a.lo >= 0 ? div_end(a.lo, b.hi) : div_end(a.lo, b.lo);
    i128 hi = a.hi >= 0 ? div_end(a.hi, b.lo) : div_end(a.hi, b.hi);
    return {lo, hi};
}

inline ConstRange of_div(ConstRange a, ConstRange b) {
    if (b.lo > 0) return of_div_positive(a, b);
    // floor(a / b) == floor(-a / -b)
    if (b.hi < 0) return of_div_positive({xneg(a.hi), xneg(a.lo)}, {xneg(b.hi), xneg(b.lo)});
    return ConstRange::everything();  // the divisor may be 0
}

inline ConstRange of_mod(ConstRange a, ConstRange b) {
    if (b.is_point() && b.lo != 0) {
        i128 c = b.lo;
        // Within one period of c the modulo is a shift: exact.
        if (a.has_lo() && a.has_hi() && floor_div(a.lo, c) == floor_div(a.hi, c)) {
            i128 shift = floor_div(a.lo, c) * c;
            return {a.lo - shift, a.hi - shift};
        }
    }
    if (b.lo > 0) {
        if (a.lo >= 0) return {0, std::min(a.hi, xadd(b.hi, -1))};
        return {0, xadd(b.hi, -1)};
    }
    if (b.hi < 0) return {xadd(b.lo, 1), 0};
    return ConstRange::everything();
}

}  // namespace const_range_impl

inline ConstRange const_range(const Expr& e, RangeEnv& env) {
    using namespace const_range_impl;
    DataType t = e.type();
    if (!t.is_integer()) return ConstRange::everything();
    auto sub = [&](const Expr& x) { return const_range(x, env); };
    switch (e.kind()) {
        case NodeKind::IntImm: return ConstRange::point(true_value(t, e.as<IntImm>()->value));
        case NodeKind::Var: return of_var(e, env);
        case NodeKind::Add: {
            auto *op = e.as<Add>();
            ConstRange a = sub(op->a), b = sub(op->b);
            return fit_to_type(t, {xadd(a.lo, b.lo), xadd(a.hi, b.hi)});
        }
        case NodeKind::Sub: {
            auto *op = e.as<Sub>();
            ConstRange a = sub(op->a), b = sub(op->b);
            return fit_to_type(t, {xadd(a.lo, xneg(b.hi)), xadd(a.hi, xneg(b.lo))});
        }
        case NodeKind::Mul: {
            auto *op = e.as<Mul>();
            return fit_to_type(t, of_mul(sub(op->a), sub(op->b)));
        }
        case NodeKind::Div: {
            auto *op = e.as<Div>();
            return fit_to_type(t, of_div(sub(op->a), sub(op->b)));
        }
        case NodeKind::Mod: {
            auto *op = e.as<Mod>();
            return fit_to_type(t, of_mod(sub(op->a), sub(op->b)));
        }
        case NodeKind::Min: {
            auto *op = e.as<Min>();
            ConstRange a = sub(op->a), b = sub(op->b);
            return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
        }
        case NodeKind::Max: {
            auto *op = e.as<Max>();
            ConstRange a = sub(op->a), b = sub(op->b);
            return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
        }
        case NodeKind::Select: {
            auto *op = e.as<Select>();
            return range_union(sub(op->true_value), sub(op->false_value));
        }
        case NodeKind::Cast: {
            auto *op = e.as<Cast>();
            if (!op->value.type().is_integer()) return type_range(t);
            ConstRange v = sub(op->value);
            // A value that fits in the new type keeps its range; otherwise it may wrap.
            if (v.lo >= type_min(t) && v.hi <= type_max(t)) return v;
            return type_range(t);
        }
        case NodeKind::Broadcast: return sub(e.as<Broadcast>()->value);
        case NodeKind::Ramp: {
            auto *op = e.as<Ramp>();
            ConstRange offsets = of_mul(sub(op->stride), {0, op->lanes - 1});
            ConstRange base = sub(op->base);
            return fit_to_type(t, {xadd(base.lo, offsets.lo), xadd(base.hi, offsets.hi)});
        }
        case NodeKind::Let: {
            auto *op = e.as<Let>();
            env.push(op->var, Interval::single_point(op->value));
            ConstRange r = sub(op->body);
            env.pop();
            return r;
        }
        default: return type_range(t);  // comparisons and logic ([0, 1]), loads, calls
    }
}

}  // namespace weft::ir::arith::detail
