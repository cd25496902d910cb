// min, max and comparisons of integers, decided from the range of a - b: a <= b when the
// difference is never positive, and so on. Floats are only constant-folded (NaN makes
// min(x, x) and !(a < b) differ from what the integer rules assume).
#pragma once
#include <numeric>

#include "weft/ir/arith/impl/simplifier.hpp"

namespace weft::ir::arith::detail {

// Guards the one level of recursion allowed from the simplifier into symbolic interval
// analysis (which simplifies its results, which may ask again).
inline thread_local int symbolic_proof_depth = 0;

inline ConstRange intersect(ConstRange a, ConstRange b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }

inline ConstRange Simplifier::range_of_linear(const LinearForm& f) {
    ConstRange r = ConstRange::point(f.constant);
    for (auto& [term, coeff] : f.terms) {
        ConstRange part = const_range_impl::of_mul(range_of(term), ConstRange::point(coeff));
        r = {xadd(r.lo, part.lo), xadd(r.hi, part.hi)};
    }
    return r;
}

inline ConstRange Simplifier::difference_range(const Expr& a, const Expr& b) {
    // From the two ranges: exact for every type, as it works on true values.
    ConstRange ra = range_of(a), rb = range_of(b);
    ConstRange d{xadd(ra.lo, xneg(rb.hi)), xadd(ra.hi, xneg(rb.lo))};
    // From the canonical form of a - b, where shared terms cancel (x + 1 vs x): only where
    // a - b cannot overflow.
    if (has_linear_form(a) && no_overflow_type(a.type())) {
        LinearForm f = linear_form_of(a);
        f.add(linear_form_of(b), -1);
        d = intersect(d, range_of_linear(f));
        d = intersect(d, relaxed_range(f));
    }
    return d;
}

// Bounds of a linear form through its min and max terms: min(p, q) <= p and <= q, max(p, q)
// >= both, so replacing one such term by an operand bounds the form from one side, and the
// operand may cancel other terms: min(x, n - 6) + 5 - (n - 1) <= (n - 6) + 5 - (n - 1) = 0,
// which proves a tile shifted inwards inside a symbolic extent n (TailStrategy::ShiftInwards).
inline ConstRange Simplifier::relaxed_range(const LinearForm& f) {
    ConstRange r;  // unbounded
    for (size_t i = 0; i < f.terms.size(); ++i) {
        const Expr& term = f.terms[i].first;
        const int64_t c = f.terms[i].second;
        const Expr *p = nullptr, *q = nullptr;
        bool is_min = false;
        if (auto* m = term.as<Min>()) p = &m->a, q = &m->b, is_min = true;
        else if (auto* m = term.as<Max>()) p = &m->a, q = &m->b;
        else continue;
        if (!has_linear_form(*p) || !has_linear_form(*q)) continue;
        // c * min(p, q) <= c * operand for c > 0 (an upper bound); for c < 0 a lower one.
        const bool gives_upper = is_min == (c > 0);
        for (const Expr* operand : {p, q}) {
            LinearForm g = f;
            g.add_term(term, -c);
            g.add(linear_form_of(*operand), c);
            ConstRange part = range_of_linear(g);
            if (gives_upper) r.hi = std::min(r.hi, part.hi);
            else r.lo = std::max(r.lo, part.lo);
        }
    }
    return intersect(r, floor_division_range(f));
}

// Bounds of a linear form through its floor divisions by positive constants: c * (x / c)
// lies in [x - c + 1, x], so with every such term replaced by a bound (the form scaled by L
// first, so that each coefficient is a multiple of its divisor) the terms may cancel:
// 64 * (n / 64) - n <= 0, which proves a tile of the steady loop of a split by 64 full.
inline ConstRange Simplifier::floor_division_range(const LinearForm& f) {
    int64_t scale = 1;
    bool any = false;
    for (auto& [term, k] : f.terms) {
        auto* div = term.as<Div>();
        int64_t c = 0;
        if (!div || !as_const_int(div->b, &c) || c <= 0 || !has_linear_form(div->a)) continue;
        const int64_t need = c / std::gcd(k < 0 ? -k : k, c);
        scale = std::lcm(scale, need);
        if (scale > (int64_t(1) << 16)) return {};
        any = true;
    }
    if (!any) return {};
    // (Nothing here may wrap: where a product would leave +-2^40, no bound.)
    constexpr int64_t kLimit = int64_t(1) << 40;
    auto small = [&](int64_t a, int64_t b, int64_t* out) {
        return !__builtin_mul_overflow(a, b, out) && *out > -kLimit && *out < kLimit;
    };
    int64_t constant = 0;
    if (!small(f.constant, scale, &constant)) return {};
    LinearForm up(f.type), down(f.type);
    up.add_constant(constant);
    down.add_constant(constant);
    for (auto& [term, k] : f.terms) {
        int64_t K = 0;
        if (!small(k, scale, &K)) return {};
        auto* div = term.as<Div>();
        int64_t c = 0;
        if (!div || !as_const_int(div->b, &c) || c <= 0 || !has_linear_form(div->a) || K % c != 0) {
            up.add_term(term, K);
            down.add_term(term, K);
            continue;
        }
        const int64_t q = K / c;  // K * floor(x / c) lies between q * x and q * (x - c + 1)
        const LinearForm x = linear_form_of(div->a);
        int64_t shift = 0;
        if (int64_t scaled = 0; !small(q, 1 - c, &shift) || !small(x.constant, q, &scaled)) return {};
        for (auto& [t, a] : x.terms)
            if (int64_t scaled = 0; !small(a, q, &scaled)) return {};
        up.add(x, q);
        down.add(x, q);
        if (q < 0) up.add_constant(shift);
        else down.add_constant(shift);
    }
    ConstRange r, hi = range_of_linear(up), lo = range_of_linear(down);
    auto floor_div = [](i128 a, i128 b) { return a / b - (a % b != 0 && a < 0); };
    if (hi.has_hi()) r.hi = floor_div(hi.hi, scale);
    if (lo.has_lo()) r.lo = -floor_div(-lo.lo, scale);
    return r;
}

// Symbolic interval analysis of a - b: it knows what constant ranges cannot, that i < n
// when i ranges over [0, n - 1]. Asked only when a variable of a - b has a symbolic range.
inline std::optional<ConstRange> Simplifier::symbolic_difference_range(const Expr& a, const Expr& b) {
    if (symbolic_proof_depth > 0 || !has_linear_form(a) || !no_overflow_type(a.type())) return std::nullopt;
    LinearForm f = linear_form_of(a);
    f.add(linear_form_of(b), -1);
    Expr diff = to_expr(f);
    if (!env_.mentions_symbolic_range(diff)) return std::nullopt;
    ++symbolic_proof_depth;
    Interval bounds = symbolic_bounds(diff, env_, true);
    --symbolic_proof_depth;
    i128 lo, hi;
    ConstRange r;
    if (bounds.has_lower() && as_true_const(bounds.min, &lo)) r.lo = lo;
    if (bounds.has_upper() && as_true_const(bounds.max, &hi)) r.hi = hi;
    // Symbolic bounds that do not fold: their min, max and floor-division terms may still
    // bound them (64 * min(n / 64, (n + 63) / 64) - n <= 0).
    for (const Expr* b : {bounds.has_lower() && !r.has_lo() ? &bounds.min : nullptr,
                          bounds.has_upper() && !r.has_hi() ? &bounds.max : nullptr}) {
        if (!b || !has_linear_form(*b)) continue;
        const LinearForm g = linear_form_of(*b);
        const ConstRange relaxed = intersect(range_of_linear(g), relaxed_range(g));
        if (b == &bounds.min) r.lo = relaxed.lo;
        else r.hi = relaxed.hi;
    }
    return r;
}

template <class Decide>
auto Simplifier::decide_on_difference(const Expr& a, const Expr& b, Decide decide) -> decltype(decide(ConstRange{})) {
    ConstRange d = difference_range(a, b);
    if (auto answer = decide(d)) return answer;
    if (auto symbolic = symbolic_difference_range(a, b)) return decide(intersect(d, *symbolic));
    return std::nullopt;
}

inline Expr Simplifier::rewrite_min_max(NodeKind kind, const Expr& a, const Expr& b) {
    bool is_min = kind == NodeKind::Min;
    auto make = [&](const Expr& x, const Expr& y) { return is_min ? Min::make(x, y) : Max::make(x, y); };
    if (!a.type().is_integer()) return make(a, b);
    if (same_expr(a, b)) return a;
    // Constants go right, so that nested constants meet: min(min(x, 3), 5).
    if (is_const(a) && !is_const(b)) return rewrite_min_max(kind, b, a);
    // When the ranges order the operands, min and max pick one.
    auto a_is_smaller = decide_on_difference(a, b, [&](ConstRange d) -> std::optional<bool> {
        // Equal over the ranges (a variable whose range is one point): pick the constant, so
        // that min(x*32 + 31, 31) and max(x*32, 0) for x in [0, 0] both fold to constants and
        // their difference does too (a GPU tile's size must be a constant).
        if (d.lo == 0 && d.hi == 0 && is_const(b)) return !is_min;
        if (d.hi <= 0) return true;
        if (d.lo >= 0) return false;
        return std::nullopt;
    });
    if (a_is_smaller) return *a_is_smaller == is_min ? a : b;
    // min(min(x, c1), c2) == min(x, min(c1, c2)), and the same for max.
    if (auto* inner = is_min ? a.as<Min>() : nullptr; inner && is_const(inner->b) && is_const(b))
        return rewrite_min_max(kind, inner->a, rewrite_min_max(kind, inner->b, b));
    if (auto* inner = is_min ? nullptr : a.as<Max>(); inner && is_const(inner->b) && is_const(b))
        return rewrite_min_max(kind, inner->a, rewrite_min_max(kind, inner->b, b));
    return make(a, b);
}

inline Expr Simplifier::rewrite_compare(NodeKind kind, const Expr& a, const Expr& b) {
    if (!a.type().is_integer()) return make_binary(kind, a, b);
    DataType bool_type = DataType::bool_(a.type().lanes);
    // a > b is b < a, a >= b is b <= a.
    bool swapped = kind == NodeKind::GT || kind == NodeKind::GE;
    const Expr& x = swapped ? b : a;
    const Expr& y = swapped ? a : b;
    NodeKind base = kind == NodeKind::GT ? NodeKind::LT : kind == NodeKind::GE ? NodeKind::LE : kind;
    std::optional<bool> answer = decide_on_difference(x, y, [&](ConstRange d) -> std::optional<bool> {
        switch (base) {  // d is the range of x - y
            case NodeKind::LT:
                if (d.hi <= -1) return true;
                if (d.lo >= 0) return false;
                break;
            case NodeKind::LE:
                if (d.hi <= 0) return true;
                if (d.lo >= 1) return false;
                break;
            case NodeKind::EQ:
            case NodeKind::NE: {
                bool equal = d.lo == 0 && d.hi == 0;
                bool different = d.hi <= -1 || d.lo >= 1;
                if (equal || different) return (base == NodeKind::EQ) == equal;
                break;
            }
            default: break;
        }
        return std::nullopt;
    });
    if (answer) return make_const(bool_type, *answer ? 1 : 0);
    if (same_expr(a, b)) {
        bool reflexive = kind == NodeKind::EQ || kind == NodeKind::LE || kind == NodeKind::GE;
        return make_const(bool_type, reflexive ? 1 : 0);
    }
    return make_binary(kind, a, b);
}

}  // namespace weft::ir::arith::detail
