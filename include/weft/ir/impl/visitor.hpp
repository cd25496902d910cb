// Definitions for ir/visitor.hpp.
#include "weft/ir/visitor.hpp"

namespace weft::ir {

void IRVisitor::visit(const Expr& e) {
    if (!e.defined()) return;
    switch (e.kind()) {
#define WEFT_CASE(N) \
    case NodeKind::N: return visit_(static_cast<const node_type::N*>(e.get()));
        WEFT_EXPR_NODES(WEFT_CASE)
#undef WEFT_CASE
        default: WEFT_ICHECK(false, "not an expression kind: ", kind_name(e.kind()));
    }
}

void IRVisitor::visit(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
#define WEFT_CASE(N) \
    case NodeKind::N: return visit_(static_cast<const node_type::N*>(s.get()));
        WEFT_STMT_NODES(WEFT_CASE)
#undef WEFT_CASE
        default: WEFT_ICHECK(false, "not a statement kind: ", kind_name(s.kind()));
    }
}

void IRVisitor::visit_(const IntImm*) {}
void IRVisitor::visit_(const FloatImm*) {}
void IRVisitor::visit_(const StringImm*) {}
void IRVisitor::visit_(const VarNode*) {}
#define WEFT_VISIT_BIN(N) \
    void IRVisitor::visit_(const N* op) { visit(op->a); visit(op->b); }
WEFT_VISIT_BIN(Add) WEFT_VISIT_BIN(Sub) WEFT_VISIT_BIN(Mul) WEFT_VISIT_BIN(Div) WEFT_VISIT_BIN(Mod)
WEFT_VISIT_BIN(Min) WEFT_VISIT_BIN(Max) WEFT_VISIT_BIN(EQ) WEFT_VISIT_BIN(NE) WEFT_VISIT_BIN(LT)
WEFT_VISIT_BIN(LE) WEFT_VISIT_BIN(GT) WEFT_VISIT_BIN(GE) WEFT_VISIT_BIN(And) WEFT_VISIT_BIN(Or)
#undef WEFT_VISIT_BIN
void IRVisitor::visit_(const Not* op) { visit(op->a); }
void IRVisitor::visit_(const Select* op) { visit(op->condition); visit(op->true_value); visit(op->false_value); }
void IRVisitor::visit_(const Cast* op) { visit(op->value); }
void IRVisitor::visit_(const Call* op) { for (auto& a : op->args) visit(a); }
void IRVisitor::visit_(const Load* op) { visit(op->buffer); visit(op->index); }
void IRVisitor::visit_(const Ramp* op) { visit(op->base); visit(op->stride); }
void IRVisitor::visit_(const Broadcast* op) { visit(op->value); }
void IRVisitor::visit_(const Let* op) { visit(op->value); visit(op->var); visit(op->body); }
void IRVisitor::visit_(const Reduce* op) {
    for (auto& iv : op->axis) { visit(iv.dom().min); visit(iv.dom().extent); }
    for (auto& s : op->source) visit(s);
    visit(op->condition);
}
void IRVisitor::visit_(const ProducerLoad* op) { for (auto& i : op->indices) visit(i); }

void IRVisitor::visit_(const For* op) { visit(op->loop_var); visit(op->min); visit(op->extent); visit(op->body); }
void IRVisitor::visit_(const Store* op) { visit(op->buffer); visit(op->value); visit(op->index); }
void IRVisitor::visit_(const Allocate* op) { for (auto& e : op->extents) visit(e); visit(op->body); }
void IRVisitor::visit_(const Seq* op) { for (auto& s : op->stmts) visit(s); }
void IRVisitor::visit_(const IfThenElse* op) { visit(op->condition); visit(op->then_case); visit(op->else_case); }
void IRVisitor::visit_(const LetStmt* op) { visit(op->value); visit(op->var); visit(op->body); }
void IRVisitor::visit_(const Evaluate* op) { visit(op->value); }
void IRVisitor::visit_(const AttrStmt* op) { visit(op->value); visit(op->body); }
void IRVisitor::visit_(const AssertStmt* op) { visit(op->condition); visit(op->body); }
void IRVisitor::visit_(const ProducerStore* op) { visit(op->value); for (auto& i : op->indices) visit(i); }
void IRVisitor::visit_(const ProducerRealize* op) {
    for (auto& r : op->bounds) { visit(r.min); visit(r.extent); }
    visit(op->body);
}

// ---- mutator --------------------------------------------------------------------------

Expr IRMutator::mutate(const Expr& e) {
    if (!e.defined()) return e;
    switch (e.kind()) {
#define WEFT_CASE(N) \
    case NodeKind::N: return visit_(static_cast<const node_type::N*>(e.get()), e);
        WEFT_EXPR_NODES(WEFT_CASE)
#undef WEFT_CASE
        default: WEFT_ICHECK(false, "not an expression kind: ", kind_name(e.kind()));
    }
    return e;
}

Stmt IRMutator::mutate(const Stmt& s) {
    if (!s.defined()) return s;
    switch (s.kind()) {
#define WEFT_CASE(N) \
    case NodeKind::N: return visit_(static_cast<const node_type::N*>(s.get()), s);
        WEFT_STMT_NODES(WEFT_CASE)
#undef WEFT_CASE
        default: WEFT_ICHECK(false, "not a statement kind: ", kind_name(s.kind()));
    }
    return s;
}

std::vector<Expr> IRMutator::mutate_all(const std::vector<Expr>& v, bool* changed) {
    std::vector<Expr> out;
    out.reserve(v.size());
    for (auto& e : v) {
        out.push_back(mutate(e));
        if (!out.back().same_as(e)) *changed = true;
    }
    return out;
}

Expr IRMutator::visit_(const IntImm*, const Expr& self) { return self; }
Expr IRMutator::visit_(const FloatImm*, const Expr& self) { return self; }
Expr IRMutator::visit_(const StringImm*, const Expr& self) { return self; }
Expr IRMutator::visit_(const VarNode*, const Expr& self) { return self; }

// Rebuilding through the operators re-applies the dtype rules, so a child that became a
// vector (vectorization) broadcasts its scalar sibling.
#define WEFT_MUTATE_BIN(N, BUILD)                                       \
    Expr IRMutator::visit_(const N* op, const Expr& self) {             \
        Expr a = mutate(op->a), b = mutate(op->b);                      \
        if (a.same_as(op->a) && b.same_as(op->b)) return self;          \
        return BUILD;                                                   \
    }
WEFT_MUTATE_BIN(Add, a + b) WEFT_MUTATE_BIN(Sub, a - b) WEFT_MUTATE_BIN(Mul, a * b)
WEFT_MUTATE_BIN(Div, a / b) WEFT_MUTATE_BIN(Mod, a % b) WEFT_MUTATE_BIN(Min, min(a, b))
WEFT_MUTATE_BIN(Max, max(a, b)) WEFT_MUTATE_BIN(EQ, a == b) WEFT_MUTATE_BIN(NE, a != b)
WEFT_MUTATE_BIN(LT, a < b) WEFT_MUTATE_BIN(LE, a <= b) WEFT_MUTATE_BIN(GT, a > b)
WEFT_MUTATE_BIN(GE, a >= b) WEFT_MUTATE_BIN(And, a && b) WEFT_MUTATE_BIN(Or, a || b)
#undef WEFT_MUTATE_BIN

Expr IRMutator::visit_(const Not* op, const Expr& self) {
    Expr a = mutate(op->a);
    return a.same_as(op->a) ? self : Not::make(a);
}
Expr IRMutator::visit_(const Select* op, const Expr& self) {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
    return select(c, t, f);
}
Expr IRMutator::visit_(const Cast* op, const Expr& self) {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return self;
    return Cast::make(op->type.with_lanes(v.type().lanes), v);
}
Expr IRMutator::visit_(const Call* op, const Expr& self) {
    bool changed = false;
    auto args = mutate_all(op->args, &changed);
    if (!changed) return self;
    // reinterpret, LLVM intrinsics and the reductions of a vector's lanes (vector -> scalar) have
    // the type they were given; the others (math, if_then_else) take the widest argument's lanes,
    // so that vectorizing their arguments vectorizes them.
    if (op->name == "reinterpret" || op->name.rfind("llvm.", 0) == 0 || is_vector_reduce(op->name))
        return Call::make(op->type, op->name, args, op->call_kind);
    int lanes = 1;
    for (auto& a : args) lanes = std::max<int>(lanes, a.type().lanes);
    return Call::make(op->type.with_lanes(op->type.is_handle() ? 1 : lanes), op->name, args, op->call_kind);
}
Expr IRMutator::visit_(const Load* op, const Expr& self) {
    Expr i = mutate(op->index);
    if (i.same_as(op->index)) return self;
    return Load::make(op->type.with_lanes(i.type().lanes), op->buffer, i);
}
Expr IRMutator::visit_(const Ramp* op, const Expr& self) {
    Expr b = mutate(op->base), s = mutate(op->stride);
    if (b.same_as(op->base) && s.same_as(op->stride)) return self;
    return Ramp::make(b, s, op->lanes);
}
Expr IRMutator::visit_(const Broadcast* op, const Expr& self) {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return self;
    return Broadcast::make(v, op->lanes);
}
Expr IRMutator::visit_(const Let* op, const Expr& self) {
    Expr v = mutate(op->value), b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return self;
    return Let::make(op->var, v, b);
}
Expr IRMutator::visit_(const Reduce* op, const Expr& self) {
    bool changed = false;
    auto src = mutate_all(op->source, &changed);
    Expr cond = mutate(op->condition);
    if (!changed && cond.same_as(op->condition)) return self;
    return Reduce::make(op->combiner, src, op->axis, cond, op->value_index);
}
Expr IRMutator::visit_(const ProducerLoad* op, const Expr& self) {
    bool changed = false;
    auto idx = mutate_all(op->indices, &changed);
    if (!changed) return self;
    return Expr(make_node<ProducerLoad>(op->type, op->producer, op->value_index, idx, op->name));
}

Stmt IRMutator::visit_(const For* op, const Stmt& self) {
    Expr m = mutate(op->min), e = mutate(op->extent);
    Stmt b = mutate(op->body);
    if (m.same_as(op->min) && e.same_as(op->extent) && b.same_as(op->body)) return self;
    return For::make(op->loop_var, m, e, op->for_kind, b, op->thread_tag);
}
Stmt IRMutator::visit_(const Store* op, const Stmt& self) {
    Expr v = mutate(op->value), i = mutate(op->index);
    if (v.same_as(op->value) && i.same_as(op->index)) return self;
    return Store::make(op->buffer, v, i);
}
Stmt IRMutator::visit_(const Allocate* op, const Stmt& self) {
    bool changed = false;
    auto ext = mutate_all(op->extents, &changed);
    Stmt b = mutate(op->body);
    if (!changed && b.same_as(op->body)) return self;
    return Allocate::make(op->buffer, op->type, ext, op->scope, b);
}
Stmt IRMutator::visit_(const Seq* op, const Stmt& self) {
    bool changed = false;
    std::vector<Stmt> out;
    for (auto& s : op->stmts) {
        out.push_back(mutate(s));
        if (!out.back().same_as(s)) changed = true;
    }
    return changed ? Seq::make(out) : self;
}
Stmt IRMutator::visit_(const IfThenElse* op, const Stmt& self) {
    Expr c = mutate(op->condition);
    Stmt t = mutate(op->then_case), e = mutate(op->else_case);
    if (c.same_as(op->condition) && t.same_as(op->then_case) && e.same_as(op->else_case)) return self;
    return IfThenElse::make(c, t, e);
}
Stmt IRMutator::visit_(const LetStmt* op, const Stmt& self) {
    Expr v = mutate(op->value);
    Stmt b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return self;
    return LetStmt::make(op->var, v, b);
}
Stmt IRMutator::visit_(const Evaluate* op, const Stmt& self) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? self : Evaluate::make(v);
}
Stmt IRMutator::visit_(const AttrStmt* op, const Stmt& self) {
    Expr v = mutate(op->value);
    Stmt b = mutate(op->body);
    if (v.same_as(op->value) && b.same_as(op->body)) return self;
    return AttrStmt::make(op->key, v, b);
}
Stmt IRMutator::visit_(const AssertStmt* op, const Stmt& self) {
    Expr c = mutate(op->condition);
    Stmt b = mutate(op->body);
    if (c.same_as(op->condition) && b.same_as(op->body)) return self;
    return AssertStmt::make(c, op->message, b);
}
Stmt IRMutator::visit_(const ProducerStore* op, const Stmt& self) {
    bool changed = false;
    Expr v = mutate(op->value);
    auto idx = mutate_all(op->indices, &changed);
    if (!changed && v.same_as(op->value)) return self;
    return Stmt(make_node<ProducerStore>(op->producer, op->value_index, v, idx, op->name));
}
Stmt IRMutator::visit_(const ProducerRealize* op, const Stmt& self) {
    bool changed = false;
    std::vector<Range> bounds;
    for (auto& r : op->bounds) {
        Range nr(mutate(r.min), mutate(r.extent));
        if (!nr.min.same_as(r.min) || !nr.extent.same_as(r.extent)) changed = true;
        bounds.push_back(nr);
    }
    Stmt b = mutate(op->body);
    if (!changed && b.same_as(op->body)) return self;
    return Stmt(make_node<ProducerRealize>(op->producer, op->value_index, op->type, bounds, op->scope, b, op->name));
}

// ---- helpers --------------------------------------------------------------------------

namespace {
struct FnVisitor : IRVisitor {
    const std::function<void(const Object*)>& f;
    explicit FnVisitor(const std::function<void(const Object*)>& fn) : f(fn) {}
    void visit(const Expr& e) override {
        if (!e.defined()) return;
        IRVisitor::visit(e);
        f(e.get());
    }
    void visit(const Stmt& s) override {
        if (!s.defined()) return;
        IRVisitor::visit(s);
        f(s.get());
    }
};

struct Substituter : IRMutator {
    const std::unordered_map<Var, Expr, VarHash, VarEq>& map;
    explicit Substituter(const std::unordered_map<Var, Expr, VarHash, VarEq>& m) : map(m) {}
    Expr visit_(const VarNode* op, const Expr& self) override {
        auto it = map.find(Var(self.ptr()));
        return it == map.end() ? self : it->second;
    }
};
}  // namespace

void post_order_visit(const Stmt& s, const std::function<void(const Object*)>& f) { FnVisitor v(f); v.visit(s); }
void post_order_visit(const Expr& e, const std::function<void(const Object*)>& f) { FnVisitor v(f); v.visit(e); }

Expr substitute(const Expr& e, const std::unordered_map<Var, Expr, VarHash, VarEq>& map) {
    if (map.empty()) return e;
    Substituter s(map);
    return s.mutate(e);
}
Stmt substitute(const Stmt& st, const std::unordered_map<Var, Expr, VarHash, VarEq>& map) {
    if (map.empty()) return st;
    Substituter s(map);
    return s.mutate(st);
}

bool uses_var(const Expr& e, const Var& v) {
    bool found = false;
    post_order_visit(e, [&](const Object* n) { found |= n == v.get(); });
    return found;
}
bool uses_var(const Stmt& s, const Var& v) {
    bool found = false;
    post_order_visit(s, [&](const Object* n) { found |= n == v.get(); });
    return found;
}

}  // namespace weft::ir
