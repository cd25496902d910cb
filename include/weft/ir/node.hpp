// The node kinds and the handles (Expr, Stmt) behind which immutable IR nodes are shared.
//
// One X-macro list per category drives the kind enum, the visitor and the mutator, so
// adding a node touches one list. Nodes are plain structs with public const-by-convention
// fields; a handle is a shared pointer that behaves like a value. Identity (of a Var, of a
// tensor) is the node's address, never its name.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "weft/ir/type.hpp"

#define WEFT_EXPR_NODES(X)                                                                       \
    X(IntImm) X(FloatImm) X(StringImm) X(Var) X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(Min) X(Max)    \
    X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or) X(Not) X(Select) X(Cast) X(Call) X(Load)     \
    X(Ramp) X(Broadcast) X(Let) X(Reduce) X(ProducerLoad)

#define WEFT_STMT_NODES(X)                                                                       \
    X(For) X(Store) X(Allocate) X(Seq) X(IfThenElse) X(LetStmt) X(Evaluate) X(AttrStmt)            \
    X(AssertStmt) X(ProducerStore) X(ProducerRealize)

namespace weft::ir {

enum class NodeKind : uint8_t {
#define WEFT_KIND(N) N,
    WEFT_EXPR_NODES(WEFT_KIND) WEFT_STMT_NODES(WEFT_KIND)
#undef WEFT_KIND
    Object  // anything else (operations, iter vars, reducers)
};

const char* kind_name(NodeKind k);

// Base of everything shared by handle.
struct Object {
    NodeKind kind;
    explicit Object(NodeKind k) : kind(k) {}
    virtual ~Object() = default;
    Object(const Object&) = delete;
    Object& operator=(const Object&) = delete;
};

struct ExprNode : Object {
    DataType type;
    ExprNode(NodeKind k, DataType t) : Object(k), type(t) {}
};

struct StmtNode : Object {
    explicit StmtNode(NodeKind k) : Object(k) {}
};

template <class NodeT>
class Handle {
public:
    Handle() = default;
    explicit Handle(std::shared_ptr<const NodeT> p) : ptr_(std::move(p)) {}

    bool defined() const { return ptr_ != nullptr; }
    explicit operator bool() const { return defined(); }
    const NodeT* get() const { return ptr_.get(); }
    const NodeT* operator->() const { return ptr_.get(); }
    const std::shared_ptr<const NodeT>& ptr() const { return ptr_; }
    NodeKind kind() const { return ptr_->kind; }

    // The node as T if it is one, else nullptr.
    template <class T>
    const T* as() const {
        return ptr_ && ptr_->kind == T::static_kind ? static_cast<const T*>(ptr_.get()) : nullptr;
    }
    // Same node (identity), not structural equality.
    bool same_as(const Handle& o) const { return ptr_ == o.ptr_; }

protected:
    std::shared_ptr<const NodeT> ptr_;
};

class Expr : public Handle<ExprNode> {
public:
    using Handle::Handle;
    Expr() = default;
    // Literals: an int is an int32 immediate, a float or double a float32 immediate. Both are
    // "weak": combined with a typed expression they take its type (see ir/op.hpp).
    Expr(int v);
    Expr(int64_t v);
    Expr(float v);
    Expr(double v);
    DataType type() const { return ptr_->type; }
};

class Stmt : public Handle<StmtNode> {
public:
    using Handle::Handle;
};

template <class T, class... Args>
std::shared_ptr<const T> make_node(Args&&... args) {
    return std::make_shared<const T>(std::forward<Args>(args)...);
}

}  // namespace weft::ir
