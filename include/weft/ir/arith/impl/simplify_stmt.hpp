// Statements: every expression is simplified with the ranges in scope (a loop's variable
// ranges over [min, min + extent - 1] inside its body; a let's variable equals its value),
// and statements proven dead or trivial go: loops that never run, branches that are never
// taken (inside `if (v < e)`, v's range is narrowed on each side), asserts that always hold, single-iteration loops (except GPU thread-bound ones,
// which name a hardware index), sequences of no-ops and unrolled markers around nothing.
#pragma once
#include "weft/ir/arith/impl/simplifier.hpp"

namespace weft::ir::arith::detail {

inline Stmt make_no_op() { return Seq::make({}); }
inline bool is_no_op(const Stmt& s) {
    auto* e = s.as<Evaluate>();
    return e && (e->value.as<IntImm>() || e->value.as<FloatImm>());
}

inline Stmt Simplifier::visit_(const For* op, const Stmt& self) {
    Expr min = mutate(op->min), extent = mutate(op->extent);
    ConstRange iterations = range_of(extent);
    if (iterations.hi <= 0) return make_no_op();
    if (iterations.is_point() && iterations.lo == 1 && op->for_kind != ForKind::ThreadBound)
        return mutate(LetStmt::make(op->loop_var, cast(op->loop_var.type(), min), op->body));
    env_.push(op->loop_var, Interval(min, mutate(min + extent - 1)));
    Stmt body = mutate(op->body);
    env_.pop();
    if (is_no_op(body)) return make_no_op();
    if (min.same_as(op->min) && extent.same_as(op->extent) && body.same_as(op->body)) return self;
    return For::make(op->loop_var, min, extent, op->for_kind, body, op->thread_tag);
}

inline Stmt Simplifier::visit_(const LetStmt* op, const Stmt& self) {
    Expr value = mutate(op->value);
    if (is_substitutable(value)) return mutate(substitute(op->body, {{op->var, value}}));
    env_.push(op->var, Interval::single_point(value));
    Stmt body = mutate(op->body);
    env_.pop();
    if (!uses_var(body, op->var)) return body;
    if (value.same_as(op->value) && body.same_as(op->body)) return self;
    return LetStmt::make(op->var, value, body);
}

inline Stmt Simplifier::visit_(const IfThenElse* op, const Stmt& self) {
    Expr c = mutate(op->condition);
    if (is_const_true(c)) return mutate(op->then_case);
    if (is_const_false(c)) return op->else_case.defined() ? mutate(op->else_case) : make_no_op();
    // `if (v < e)` with v a variable in scope: v is below e in the then branch and at least
    // e in the else branch (loop partitioning of parallel loops branches this way).
    auto* lt = c.as<LT>();
    const Interval* known = lt && lt->a.as<VarNode>() ? env_.find(Var(lt->a.ptr())) : nullptr;
    auto in_branch = [&](const Stmt& s, bool then) {
        if (!s.defined() || !known || !known->is_bounded()) return mutate(s);
        Var v(lt->a.ptr());
        Interval narrowed = then ? Interval(known->min, mutate(ir::min(known->max, lt->b - 1)))
                                 : Interval(mutate(ir::max(known->min, lt->b)), known->max);
        env_.push(v, narrowed);
        Stmt r = mutate(s);
        env_.pop();
        return r;
    };
    Stmt then_case = in_branch(op->then_case, true);
    Stmt else_case = in_branch(op->else_case, false);
    if (else_case.defined() && is_no_op(else_case)) else_case = Stmt();
    if (is_no_op(then_case)) {
        if (!else_case.defined()) return make_no_op();
        return IfThenElse::make(rewrite_not(c), else_case);
    }
    if (c.same_as(op->condition) && then_case.same_as(op->then_case) && else_case.same_as(op->else_case))
        return self;
    return IfThenElse::make(c, then_case, else_case);
}

inline Stmt Simplifier::visit_(const AssertStmt* op, const Stmt& self) {
    Expr c = mutate(op->condition);
    Stmt body = mutate(op->body);
    if (is_const_true(c)) return body.defined() ? body : make_no_op();
    if (c.same_as(op->condition) && body.same_as(op->body)) return self;
    return AssertStmt::make(c, op->message, body);
}

inline Stmt Simplifier::visit_(const Seq* op, const Stmt& self) {
    std::vector<Stmt> kept;
    bool changed = false;
    for (auto& s : op->stmts) {
        Stmt simplified = mutate(s);
        changed |= !simplified.same_as(s);
        if (is_no_op(simplified)) changed = true;
        else kept.push_back(simplified);
    }
    return changed ? Seq::make(std::move(kept)) : self;
}

// An unrolled loop whose copies all proved dead (a register tile's guarded tail slots, past
// the end of the row) leaves nothing to mark. Other attributes (a GPU launch extent, say)
// mean something without a body and stay.
inline Stmt Simplifier::visit_(const AttrStmt* op, const Stmt& self) {
    Stmt out = IRMutator::visit_(op, self);
    auto* attr = out.as<AttrStmt>();
    if (attr && attr->key == attr::unrolled && is_no_op(attr->body)) return make_no_op();
    return out;
}

}  // namespace weft::ir::arith::detail
