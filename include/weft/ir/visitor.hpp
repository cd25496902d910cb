// IRVisitor walks a tree without changing it; IRMutator rebuilds it, returning the same
// node when nothing below changed (so passes that do nothing allocate nothing).
#pragma once
#include <functional>
#include <unordered_map>

#include "weft/ir/stmt.hpp"

namespace weft::ir {

// Node struct for each kind name in the X-macro lists.
namespace node_type {
using Var = ::weft::ir::VarNode;
#define WEFT_ALIAS(N) using N = ::weft::ir::N;
WEFT_STMT_NODES(WEFT_ALIAS)
using IntImm = ::weft::ir::IntImm; using FloatImm = ::weft::ir::FloatImm; using StringImm = ::weft::ir::StringImm;
using Add = ::weft::ir::Add; using Sub = ::weft::ir::Sub; using Mul = ::weft::ir::Mul; using Div = ::weft::ir::Div;
using Mod = ::weft::ir::Mod; using Min = ::weft::ir::Min; using Max = ::weft::ir::Max; using EQ = ::weft::ir::EQ;
using NE = ::weft::ir::NE; using LT = ::weft::ir::LT; using LE = ::weft::ir::LE; using GT = ::weft::ir::GT;
using GE = ::weft::ir::GE; using And = ::weft::ir::And; using Or = ::weft::ir::Or; using Not = ::weft::ir::Not;
using Select = ::weft::ir::Select; using Cast = ::weft::ir::Cast; using Call = ::weft::ir::Call;
using Load = ::weft::ir::Load; using Ramp = ::weft::ir::Ramp; using Broadcast = ::weft::ir::Broadcast;
using Let = ::weft::ir::Let; using Reduce = ::weft::ir::Reduce; using ProducerLoad = ::weft::ir::ProducerLoad;
#undef WEFT_ALIAS
}  // namespace node_type

class IRVisitor {
public:
    virtual ~IRVisitor() = default;
    virtual void visit(const Expr& e);
    virtual void visit(const Stmt& s);

protected:
    // One overload per node kind; the defaults visit every child.
#define WEFT_VISIT(N) virtual void visit_(const node_type::N* op);
    WEFT_EXPR_NODES(WEFT_VISIT)
    WEFT_STMT_NODES(WEFT_VISIT)
#undef WEFT_VISIT
};

class IRMutator {
public:
    virtual ~IRMutator() = default;
    virtual Expr mutate(const Expr& e);
    virtual Stmt mutate(const Stmt& s);

protected:
    // One overload per node kind; `self` is the handle of `op`. The defaults mutate every
    // child and return `self` when none changed.
#define WEFT_MUTATE(N) virtual Expr visit_(const node_type::N* op, const Expr& self);
    WEFT_EXPR_NODES(WEFT_MUTATE)
#undef WEFT_MUTATE
#define WEFT_MUTATE(N) virtual Stmt visit_(const node_type::N* op, const Stmt& self);
    WEFT_STMT_NODES(WEFT_MUTATE)
#undef WEFT_MUTATE

    std::vector<Expr> mutate_all(const std::vector<Expr>& v, bool* changed);
};

// Calls f on every node of a tree, pre-order.
void post_order_visit(const Stmt& s, const std::function<void(const Object*)>& f);
void post_order_visit(const Expr& e, const std::function<void(const Object*)>& f);

// Replaces variables by expressions (identity-keyed).
Expr substitute(const Expr& e, const std::unordered_map<Var, Expr, VarHash, VarEq>& map);
Stmt substitute(const Stmt& s, const std::unordered_map<Var, Expr, VarHash, VarEq>& map);

// Whether e (or s) mentions v.
bool uses_var(const Expr& e, const Var& v);
bool uses_var(const Stmt& s, const Var& v);

}  // namespace weft::ir
