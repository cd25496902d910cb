// The canonical form of affine integer expressions: a sum of constant multiples of terms
// (anything that is not + - or * by a constant: variables, loads, divisions, ...) plus a
// constant. Terms keep the order in which they first appear, the constant comes last:
//     (i*4 + j) - (j + i*4)  ->  0        i*64 + j + 1 - 1  ->  i*64 + j
// Coefficients are kept modulo 2^bits of the type (as signed numbers), so the form is exact
// for every integer width: wrapping arithmetic is still a ring.
#pragma once
#include <utility>
#include <vector>

#include "weft/ir/arith/impl/expr_equal.hpp"
#include "weft/ir/arith/impl/int_math.hpp"
#include "weft/ir/op.hpp"

namespace weft::ir::arith::detail {

struct LinearForm {
    DataType type;
    std::vector<std::pair<Expr, int64_t>> terms;  // nonzero coefficients, first appearance first
    int64_t constant = 0;

    explicit LinearForm(DataType t) : type(t) {}
    int bits() const { return type.bits; }
    bool is_constant() const { return terms.empty(); }

    void add_term(const Expr& term, int64_t coeff) {
        coeff = wrap_signed(bits(), coeff);
        if (coeff == 0) return;
        for (size_t i = 0; i < terms.size(); ++i) {
            if (!same_expr(terms[i].first, term)) continue;
            terms[i].second = wrapping_add(bits(), terms[i].second, coeff);
            if (terms[i].second == 0) terms.erase(terms.begin() + i);
            return;
        }
        terms.emplace_back(term, coeff);
    }
    void add_constant(int64_t c) { constant = wrapping_add(bits(), constant, c); }
    // this += scale * other
    void add(const LinearForm& other, int64_t scale) {
        for (auto& [t, c] : other.terms) add_term(t, wrapping_mul(bits(), c, scale));
        add_constant(wrapping_mul(bits(), other.constant, scale));
    }
};

// Whether e is a scalar integer expression the canonical form applies to.
inline bool has_linear_form(const Expr& e) {
    DataType t = e.type();
    return t.is_scalar() && t.is_integer() && !t.is_bool();
}

namespace linear_impl {
inline void decompose(const Expr& e, int64_t scale, LinearForm& out) {
    if (auto* imm = e.as<IntImm>()) return out.add_constant(wrapping_mul(out.bits(), imm->value, scale));
    if (auto* add = e.as<Add>()) {
        decompose(add->a, scale, out);
        return decompose(add->b, scale, out);
    }
    if (auto* sub = e.as<Sub>()) {
        decompose(sub->a, scale, out);
        return decompose(sub->b, wrapping_neg(out.bits(), scale), out);
    }
    if (auto* mul = e.as<Mul>()) {
        int64_t c;
        if (as_const_int(mul->b, &c)) return decompose(mul->a, wrapping_mul(out.bits(), scale, c), out);
        if (as_const_int(mul->a, &c)) return decompose(mul->b, wrapping_mul(out.bits(), scale, c), out);
    }
    out.add_term(e, scale);
}
}  // namespace linear_impl

// The affine structure of e (its terms are taken as they are, not simplified).
inline LinearForm linear_form_of(const Expr& e) {
    LinearForm f(e.type());
    linear_impl::decompose(e, 1, f);
    return f;
}

// Replaces (x / c) * (k*c) + (x % c) * k by x * k, and (x / c % m) * (k*c) + (x % c) * k by
// (x % (c*m)) * k (below). The first is the floor-division identity
// x == (x / c) * c + x % c, which holds for every c != 0 and, being a ring identity, under
// wrapping too. It undoes a split followed by a fuse of the same factor.
inline void merge_div_mod_pairs(LinearForm& f) {
    for (size_t i = 0; i < f.terms.size(); ++i) {
        auto* mod = f.terms[i].first.as<Mod>();
        int64_t c;
        if (!mod || !as_const_int(mod->b, &c) || c == 0) continue;
        int64_t k = f.terms[i].second;
        for (size_t j = 0; j < f.terms.size(); ++j) {
            auto* div = f.terms[j].first.as<Div>();
            if (!div || !same_expr(div->a, mod->a) || !same_expr(div->b, mod->b)) continue;
            if (f.terms[j].second != wrapping_mul(f.bits(), k, c)) continue;
            Expr x = mod->a;
            f.terms.erase(f.terms.begin() + std::max(i, j));
            f.terms.erase(f.terms.begin() + std::min(i, j));
            f.add(linear_form_of(x), k);
            return merge_div_mod_pairs(f);  // indices moved; rare enough to restart
        }
        // (x / c % m) * (k*c) + (x % c) * k  ->  (x % (c*m)) * k, for c, m > 0: the digits of x
        // in base c below position 2 (what a reshape that merges dimensions reads).
        for (size_t j = 0; j < f.terms.size() && c > 0; ++j) {
            auto* outer = f.terms[j].first.as<Mod>();
            int64_t m;
            if (!outer || !as_const_int(outer->b, &m) || m <= 0) continue;
            auto* div = outer->a.as<Div>();
            int64_t d;
            if (!div || !as_const_int(div->b, &d) || d != c || !same_expr(div->a, mod->a)) continue;
            if (f.terms[j].second != wrapping_mul(f.bits(), k, c)) continue;
            int64_t cm = 0;
            if (__builtin_mul_overflow(c, m, &cm) || wrap_signed(f.bits(), cm) != cm) continue;
            Expr merged = Mod::make(mod->a, make_int(cm, mod->b.type()));
            f.terms.erase(f.terms.begin() + std::max(i, j));
            f.terms.erase(f.terms.begin() + std::min(i, j));
            f.add_term(merged, k);
            return merge_div_mod_pairs(f);
        }
    }
}

// The canonical expression of f: terms in order, `t * c` for c != 1, subtraction for
// negative coefficients, the constant last (first, as `c - t`, when the first term is
// negative).
inline Expr to_expr(const LinearForm& f) {
    DataType t = f.type;
    auto negatable = [&](int64_t c) { return c < 0 && wrapping_neg(f.bits(), c) > 0; };
    auto scaled = [&](const Expr& term, int64_t c) { return c == 1 ? term : Mul::make(term, make_int(c, t)); };
    Expr result;
    bool constant_used = false;
    for (auto& [term, c] : f.terms) {
        bool subtract = negatable(c);
        Expr part = scaled(term, subtract ? -c : c);
        if (!result.defined()) {
            if (subtract) {
                result = Sub::make(make_int(f.constant, t), part);
                constant_used = true;
            } else {
                result = part;
            }
        } else {
            result = subtract ? Sub::make(result, part) : Add::make(result, part);
        }
    }
    if (!result.defined()) return make_int(f.constant, t);
    if (!constant_used && f.constant != 0)
        result = negatable(f.constant) ? Sub::make(result, make_int(-f.constant, t))
                                       : Add::make(result, make_int(f.constant, t));
    return result;
}

}  // namespace weft::ir::arith::detail
