// Hoisting loop-invariant conditions (TVM's HoistIfThenElse): a loop whose body is one guarded
// statement, `for (v) { if (a && b) S }`, where `a` does not depend on v, becomes
// `if (a) { for (v) { if (b) S } }`. Applied from the innermost loop outwards, a condition
// climbs to the outermost loop it does not depend on: a reduction's where-condition on an
// outer loop (a convolution's "this tap row lies inside the input", which depends on the
// output row and kh only) is tested once per kh instead of once per multiply-add, and the
// loops inside it are guard-free again (they vectorize and unroll as steady code).
//
// A body that is a sequence of guarded statements (the pieces loop partitioning cut an inner
// loop into) gives up the terms all of its guards share.
//
// Only conditions that cannot fault or trap are moved: a hoisted condition is evaluated even
// when the loop runs no iterations. Loads, calls and divisions by a non-constant are left.
// GPU thread loops are left as they are (a thread's guard stays inside its thread).
#pragma once
#include <algorithm>
#include <vector>

#include "weft/ir/arith/impl/expr_equal.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {
namespace hoist_detail {

using ir::Expr;
using ir::Stmt;

inline bool safe_to_evaluate_early(const Expr& e) {
    bool safe = true;
    ir::post_order_visit(e, [&](const ir::Object* node) {
        switch (node->kind) {
            case ir::NodeKind::Load:
            case ir::NodeKind::ProducerLoad:
            case ir::NodeKind::Call:
            case ir::NodeKind::Let:
            case ir::NodeKind::Reduce: safe = false; break;
            case ir::NodeKind::Div:
            case ir::NodeKind::Mod: {
                const Expr& divisor = node->kind == ir::NodeKind::Div ? static_cast<const ir::Div*>(node)->b
                                                                      : static_cast<const ir::Mod*>(node)->b;
                if (!divisor.as<ir::IntImm>() || ir::is_zero(divisor)) safe = false;
                break;
            }
            default: break;
        }
    });
    return safe;
}

inline void conjuncts(const Expr& e, std::vector<Expr>* out) {
    if (auto* a = e.as<ir::And>()) {
        conjuncts(a->a, out);
        conjuncts(a->b, out);
    } else {
        out->push_back(e);
    }
}

inline Expr conjunction(const std::vector<Expr>& terms) {
    Expr all;
    for (const Expr& t : terms) all = all.defined() ? (all && t) : t;
    return all;
}

inline bool is_no_op(const Stmt& s) {
    auto* e = s.as<ir::Evaluate>();
    return e && (e->value.as<ir::IntImm>() != nullptr);
}

// A guarded statement of a loop body and the terms of its condition.
struct Guard {
    const ir::IfThenElse* stmt;
    std::vector<Expr> terms;
    bool has(const Expr& t) const {
        for (const Expr& x : terms)
            if (ir::arith::detail::same_expr(x, t)) return true;
        return false;
    }
};

// The guards of a loop body: the body itself when it is an if without else, or each
// statement of a sequence when all of them are (loop partitioning leaves such sequences: the
// pieces of a split inner loop, each under the same outer guard). False when the body has
// another shape. Pieces whose condition has a literal false term, and no-ops, are left out
// of `guards`; `never` counts the former.
inline bool guards_of(const Stmt& body, std::vector<Guard>* guards, int* never) {
    auto* seq = body.as<ir::Seq>();
    for (const Stmt& item : seq ? seq->stmts : std::vector<Stmt>{body}) {
        if (is_no_op(item)) continue;
        auto* stmt = item.as<ir::IfThenElse>();
        if (!stmt || stmt->else_case.defined()) return false;
        Guard g{stmt, {}};
        conjuncts(stmt->condition, &g.terms);
        if (std::any_of(g.terms.begin(), g.terms.end(), [](const Expr& t) { return ir::is_zero(t); })) ++*never;
        else guards->push_back(std::move(g));
    }
    return true;
}

class Hoister : public ir::IRMutator {
public:
    using IRMutator::mutate;
    Stmt visit_(const ir::For* op, const Stmt& self) override {
        Stmt mutated = IRMutator::visit_(op, self);
        auto* loop = mutated.as<ir::For>();
        if (!loop || loop->for_kind == ir::ForKind::ThreadBound) return mutated;
        std::vector<Guard> guards;
        int never = 0;
        if (!guards_of(loop->body, &guards, &never)) return mutated;
        // Every statement is guarded by a condition that never holds: the loop does nothing.
        if (guards.empty() && never > 0) return ir::Evaluate::make(ir::make_int(0));
        if (guards.empty()) return mutated;
        // The terms of the first guard that every guard has, that do not depend on the loop.
        Guard common{nullptr, {}};
        for (const Expr& t : guards[0].terms) {
            if (ir::uses_var(t, loop->loop_var) || !safe_to_evaluate_early(t)) continue;
            if (std::all_of(guards.begin() + 1, guards.end(), [&](const Guard& g) { return g.has(t); }))
                common.terms.push_back(t);
        }
        if (common.terms.empty()) return mutated;
        std::vector<Stmt> pieces;
        for (const Guard& g : guards) {
            std::vector<Expr> rest;
            for (const Expr& t : g.terms)
                if (!common.has(t)) rest.push_back(t);
            pieces.push_back(rest.empty() ? g.stmt->then_case : ir::IfThenElse::make(conjunction(rest), g.stmt->then_case));
        }
        return ir::IfThenElse::make(conjunction(common.terms),
                                    ir::For::make(loop->loop_var, loop->min, loop->extent, loop->for_kind,
                                                  ir::Seq::make(pieces), loop->thread_tag));
    }
};

}  // namespace hoist_detail

inline ir::Stmt hoist_loop_invariant_conditions(const ir::Stmt& s) { return hoist_detail::Hoister().mutate(s); }

}  // namespace weft::lower_passes
