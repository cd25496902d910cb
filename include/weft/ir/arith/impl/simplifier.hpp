// The simplifier: one mutator that simplifies bottom-up. Each node's children are
// simplified first, then a rewrite_* function applies that operator's rules to the
// simplified operands. The rules live in one file per family:
//   simplify_arith.hpp     + - * : constant folding and the affine canonical form
//   simplify_divmod.hpp    / %   : floor division rules, each with its precondition
//   simplify_compare.hpp   min max == != < <= > >= : decided from ranges of a - b
//   simplify_logic.hpp     && || ! select
//   simplify_nodes.hpp     cast, ramp, broadcast, let, calls
//   simplify_stmt.hpp      statements: loops, branches, lets, asserts, sequences
// Facts come from RangeEnv (the variables' ranges in scope) through constant ranges;
// symbolic interval analysis is consulted only when a variable's range has a symbolic end.
#pragma once
#include <optional>

#include "weft/ir/arith/impl/const_fold.hpp"
#include "weft/ir/arith/impl/const_range.hpp"
#include "weft/ir/arith/impl/linear_form.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::ir::arith::detail {

// Symbolic bounds of e with the ranges of env (defined in interval_analysis.hpp).
inline Interval symbolic_bounds(const Expr& e, RangeEnv& env, bool keep_signs);

class Simplifier : public IRMutator {
public:
    explicit Simplifier(RangeEnv& env) : env_(env) {}
    using IRMutator::mutate;

    // The rules of each operator, applied to operands that are already simplified.
    Expr rewrite_binary(NodeKind kind, const Expr& a, const Expr& b);
    Expr rewrite_add(const Expr& a, const Expr& b);
    Expr rewrite_sub(const Expr& a, const Expr& b);
    Expr rewrite_mul(const Expr& a, const Expr& b);
    Expr rewrite_div(const Expr& a, const Expr& b);
    Expr rewrite_mod(const Expr& a, const Expr& b);
    Expr rewrite_min_max(NodeKind kind, const Expr& a, const Expr& b);
    Expr rewrite_compare(NodeKind kind, const Expr& a, const Expr& b);
    Expr rewrite_and(const Expr& a, const Expr& b);
    Expr rewrite_or(const Expr& a, const Expr& b);
    Expr rewrite_not(const Expr& a);
    Expr rewrite_select(const Expr& c, const Expr& t, const Expr& f);
    Expr rewrite_cast(DataType t, const Expr& v);
    Expr rewrite_ramp(const Expr& base, const Expr& stride, int lanes);

    // The constant range of e's values under the ranges in scope.
    ConstRange range_of(const Expr& e) { return const_range(e, env_); }
    // The range of a - b (true values, so no wrapping), as tight as the facts allow.
    ConstRange difference_range(const Expr& a, const Expr& b);
    // decide(range of a - b) -> optional answer; asked again with symbolic bounds when the
    // constant range cannot decide and symbolic bounds could know more.
    template <class Decide>
    auto decide_on_difference(const Expr& a, const Expr& b, Decide decide) -> decltype(decide(ConstRange{}));

protected:
    RangeEnv& env_;

    Expr rewrite_vector_affine(NodeKind kind, const Expr& a, const Expr& b);
    Expr rewrite_vector_div_mod(NodeKind kind, const Expr& a, const Expr& b);
    Expr rewrite_div_mod_by_expr(NodeKind kind, const Expr& a, const Expr& b);
    ConstRange range_of_linear(const LinearForm& f);
    ConstRange relaxed_range(const LinearForm& f);
    ConstRange floor_division_range(const LinearForm& f);
    std::optional<ConstRange> symbolic_difference_range(const Expr& a, const Expr& b);

#define WEFT_SIMPLIFY_BINARY(N)                                     \
    Expr visit_(const N* op, const Expr&) override {                \
        Expr a = mutate(op->a), b = mutate(op->b);                  \
        return rewrite_binary(NodeKind::N, a, b);                   \
    }
    WEFT_SIMPLIFY_BINARY(Add) WEFT_SIMPLIFY_BINARY(Sub) WEFT_SIMPLIFY_BINARY(Mul) WEFT_SIMPLIFY_BINARY(Div)
    WEFT_SIMPLIFY_BINARY(Mod) WEFT_SIMPLIFY_BINARY(Min) WEFT_SIMPLIFY_BINARY(Max) WEFT_SIMPLIFY_BINARY(EQ)
    WEFT_SIMPLIFY_BINARY(NE) WEFT_SIMPLIFY_BINARY(LT) WEFT_SIMPLIFY_BINARY(LE) WEFT_SIMPLIFY_BINARY(GT)
    WEFT_SIMPLIFY_BINARY(GE) WEFT_SIMPLIFY_BINARY(And) WEFT_SIMPLIFY_BINARY(Or)
#undef WEFT_SIMPLIFY_BINARY
    Expr visit_(const Not* op, const Expr&) override { return rewrite_not(mutate(op->a)); }
    Expr visit_(const Select* op, const Expr&) override {
        Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
        return rewrite_select(c, t, f);
    }
    Expr visit_(const Cast* op, const Expr&) override { return rewrite_cast(op->type, mutate(op->value)); }
    Expr visit_(const Ramp* op, const Expr&) override {
        Expr base = mutate(op->base), stride = mutate(op->stride);
        return rewrite_ramp(base, stride, op->lanes);
    }
    Expr visit_(const Let* op, const Expr& self) override;
    Expr visit_(const Call* op, const Expr& self) override;

    Stmt visit_(const For* op, const Stmt& self) override;
    Stmt visit_(const LetStmt* op, const Stmt& self) override;
    Stmt visit_(const IfThenElse* op, const Stmt& self) override;
    Stmt visit_(const AssertStmt* op, const Stmt& self) override;
    Stmt visit_(const Seq* op, const Stmt& self) override;
    Stmt visit_(const AttrStmt* op, const Stmt& self) override;
};

inline Expr make_binary(NodeKind kind, const Expr& a, const Expr& b) {
    switch (kind) {
#define WEFT_MAKE_BINARY(N) \
    case NodeKind::N: return N::make(a, b);
        WEFT_MAKE_BINARY(Add) WEFT_MAKE_BINARY(Sub) WEFT_MAKE_BINARY(Mul) WEFT_MAKE_BINARY(Div)
        WEFT_MAKE_BINARY(Mod) WEFT_MAKE_BINARY(Min) WEFT_MAKE_BINARY(Max) WEFT_MAKE_BINARY(EQ)
        WEFT_MAKE_BINARY(NE) WEFT_MAKE_BINARY(LT) WEFT_MAKE_BINARY(LE) WEFT_MAKE_BINARY(GT)
        WEFT_MAKE_BINARY(GE) WEFT_MAKE_BINARY(And) WEFT_MAKE_BINARY(Or)
#undef WEFT_MAKE_BINARY
        default: WEFT_ICHECK(false, "not a binary operator: ", kind_name(kind));
    }
    return Expr();
}

inline Expr Simplifier::rewrite_binary(NodeKind kind, const Expr& a, const Expr& b) {
    if (Expr folded = fold_binary(kind, a, b); folded.defined()) return folded;
    // Lane-wise operators commute with broadcasting: x(a) op x(b) == x(a op b).
    auto *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(rewrite_binary(kind, ba->value, bb->value), ba->lanes);
    switch (kind) {
        case NodeKind::Add: return rewrite_add(a, b);
        case NodeKind::Sub: return rewrite_sub(a, b);
        case NodeKind::Mul: return rewrite_mul(a, b);
        case NodeKind::Div: return rewrite_div(a, b);
        case NodeKind::Mod: return rewrite_mod(a, b);
        case NodeKind::Min: case NodeKind::Max: return rewrite_min_max(kind, a, b);
        case NodeKind::And: return rewrite_and(a, b);
        case NodeKind::Or: return rewrite_or(a, b);
        default: return rewrite_compare(kind, a, b);
    }
}

// Whether a bool expression is the constant true (false), scalar or broadcast.
inline bool is_const_true(const Expr& e) { return e.type().is_bool() && is_const_int(e, 1); }
inline bool is_const_false(const Expr& e) { return e.type().is_bool() && is_const_int(e, 0); }

}  // namespace weft::ir::arith::detail
