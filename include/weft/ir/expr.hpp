// Expression nodes. Each has a `make` that builds a checked, immutable node.
//
// Integer division and modulo (Div, Mod on int/uint types) use FLOOR semantics:
// (-7) / 2 == -4 and (-7) % 2 == 1, so x == (x / d) * d + x % d and 0 <= x % d < d for d > 0.
// This is what index arithmetic needs (splits and fuses stay correct for negative values)
// and what the simplifier's div/mod rules assume. C's truncating division is available as
// the intrinsics truncdiv / truncmod (see ir/op.hpp). On floats, Div is ordinary division
// and Mod is x - floor(x / y) * y.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "weft/ir/node.hpp"

namespace weft::ir {

#define WEFT_NODE_KIND(N) static constexpr NodeKind static_kind = NodeKind::N;

struct IntImm : ExprNode {
    WEFT_NODE_KIND(IntImm)
    int64_t value;
    // Set for immediates made from C++ literals: they adopt the other operand's type.
    bool weak;
    IntImm(DataType t, int64_t v, bool w) : ExprNode(NodeKind::IntImm, t), value(v), weak(w) {}
    static Expr make(DataType t, int64_t v, bool weak = false);
};

struct FloatImm : ExprNode {
    WEFT_NODE_KIND(FloatImm)
    double value;
    bool weak;
    FloatImm(DataType t, double v, bool w) : ExprNode(NodeKind::FloatImm, t), value(v), weak(w) {}
    static Expr make(DataType t, double v, bool weak = false);
};

struct StringImm : ExprNode {
    WEFT_NODE_KIND(StringImm)
    std::string value;
    explicit StringImm(std::string v) : ExprNode(NodeKind::StringImm, DataType::handle()), value(std::move(v)) {}
    static Expr make(std::string v) { return Expr(make_node<StringImm>(std::move(v))); }
};

struct VarNode : ExprNode {
    WEFT_NODE_KIND(Var)
    std::string name;
    // A typical value (0: none): what schedules size their tiles for where an extent uses
    // this variable (Halide's Param::set_estimate; ir/arith/estimate.hpp). Not a bound.
    int64_t estimate = 0;
    VarNode(DataType t, std::string n, int64_t estimate = 0)
        : ExprNode(NodeKind::Var, t), name(std::move(n)), estimate(estimate) {}
};

// A variable. Identity is the node: two Vars with the same name are different variables.
class Var : public Expr {
public:
    Var() = default;
    explicit Var(std::string name, DataType t = index_type)
        : Expr(make_node<VarNode>(t, std::move(name))) {}
    // A size variable with a typical value (VarNode::estimate): Var::sized("height", 224).
    static Var sized(std::string name, int64_t estimate, DataType t = index_type) {
        return Var(make_node<VarNode>(t, std::move(name), estimate));
    }
    explicit Var(std::shared_ptr<const ExprNode> p) : Expr(std::move(p)) {
        WEFT_ICHECK(!defined() || kind() == NodeKind::Var);
    }
    const VarNode* operator->() const { return static_cast<const VarNode*>(get()); }
    const VarNode* node() const { return static_cast<const VarNode*>(get()); }
    const std::string& name() const { return node()->name; }
};

struct VarHash {
    size_t operator()(const Var& v) const { return std::hash<const void*>()(v.get()); }
};
struct VarEq {
    bool operator()(const Var& a, const Var& b) const { return a.same_as(b); }
};

template <class Self>
struct BinaryNode : ExprNode {
    Expr a, b;
    BinaryNode(DataType t, Expr a_, Expr b_) : ExprNode(Self::static_kind, t), a(std::move(a_)), b(std::move(b_)) {}
};

#define WEFT_BINARY(N)                                                    \
    struct N : BinaryNode<N> {                                            \
        WEFT_NODE_KIND(N)                                                 \
        using BinaryNode<N>::BinaryNode;                                  \
        static Expr make(Expr a, Expr b);                                 \
    };
WEFT_BINARY(Add)
WEFT_BINARY(Sub)
WEFT_BINARY(Mul)
WEFT_BINARY(Div)
WEFT_BINARY(Mod)
WEFT_BINARY(Min)
WEFT_BINARY(Max)
WEFT_BINARY(EQ)
WEFT_BINARY(NE)
WEFT_BINARY(LT)
WEFT_BINARY(LE)
WEFT_BINARY(GT)
WEFT_BINARY(GE)
WEFT_BINARY(And)
WEFT_BINARY(Or)
#undef WEFT_BINARY

struct Not : ExprNode {
    WEFT_NODE_KIND(Not)
    Expr a;
    Not(DataType t, Expr a_) : ExprNode(NodeKind::Not, t), a(std::move(a_)) {}
    static Expr make(Expr a);
};

struct Select : ExprNode {
    WEFT_NODE_KIND(Select)
    Expr condition, true_value, false_value;
    Select(DataType t, Expr c, Expr tv, Expr fv)
        : ExprNode(NodeKind::Select, t), condition(std::move(c)), true_value(std::move(tv)), false_value(std::move(fv)) {}
    static Expr make(Expr c, Expr t, Expr f);
};

struct Cast : ExprNode {
    WEFT_NODE_KIND(Cast)
    Expr value;
    Cast(DataType t, Expr v) : ExprNode(NodeKind::Cast, t), value(std::move(v)) {}
    static Expr make(DataType t, Expr v);
};

// A call. PureIntrinsic: math with no side effects (exp, sqrt, ...); Intrinsic: weft's own
// operations with effects or special lowering (argument access, prefetch); Extern: a C
// function resolved by symbol name at JIT time.
struct Call : ExprNode {
    WEFT_NODE_KIND(Call)
    enum class CallKind : uint8_t { PureIntrinsic, Intrinsic, Extern };
    std::string name;
    std::vector<Expr> args;
    CallKind call_kind;
    Call(DataType t, std::string n, std::vector<Expr> a, CallKind k)
        : ExprNode(NodeKind::Call, t), name(std::move(n)), args(std::move(a)), call_kind(k) {}
    static Expr make(DataType t, std::string name, std::vector<Expr> args, CallKind k = CallKind::PureIntrinsic);
};

// vector_reduce_add / _mul / _min / _max(v): the lanes of vector v combined into one scalar
// with the operator of an Add, Mul, Min or Max node (PureIntrinsic; a vectorized reduce axis
// makes them, lower/impl/vectorize.hpp; both backends combine the lanes as a tree).
// The intrinsic's name for operator `op`, or nullptr when op is none of the four.
inline const char* vector_reduce_name(NodeKind op) {
    switch (op) {
        case NodeKind::Add: return "vector_reduce_add";
        case NodeKind::Mul: return "vector_reduce_mul";
        case NodeKind::Min: return "vector_reduce_min";
        case NodeKind::Max: return "vector_reduce_max";
        default: return nullptr;
    }
}
// The operator of the intrinsic `call_name` into *op; false when it is not one of them.
inline bool vector_reduce_op(const std::string& call_name, NodeKind* op) {
    for (NodeKind k : {NodeKind::Add, NodeKind::Mul, NodeKind::Min, NodeKind::Max})
        if (call_name == vector_reduce_name(k)) return *op = k, true;
    return false;
}
inline bool is_vector_reduce(const std::string& call_name) {
    NodeKind op;
    return vector_reduce_op(call_name, &op);
}

// A load from a flat buffer (after storage flattening). `buffer` is a handle-typed Var.
// A vector load has a vector index (usually a Ramp).
struct Load : ExprNode {
    WEFT_NODE_KIND(Load)
    Var buffer;
    Expr index;
    Load(DataType t, Var b, Expr i) : ExprNode(NodeKind::Load, t), buffer(std::move(b)), index(std::move(i)) {}
    static Expr make(DataType t, Var buffer, Expr index);
};

// base, base + stride, ..., base + (lanes-1) * stride.
struct Ramp : ExprNode {
    WEFT_NODE_KIND(Ramp)
    Expr base, stride;
    int lanes;
    Ramp(DataType t, Expr b, Expr s, int l)
        : ExprNode(NodeKind::Ramp, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
    static Expr make(Expr base, Expr stride, int lanes);
};

struct Broadcast : ExprNode {
    WEFT_NODE_KIND(Broadcast)
    Expr value;
    int lanes;
    Broadcast(DataType t, Expr v, int l) : ExprNode(NodeKind::Broadcast, t), value(std::move(v)), lanes(l) {}
    static Expr make(Expr value, int lanes);
};

struct Let : ExprNode {
    WEFT_NODE_KIND(Let)
    Var var;
    Expr value, body;
    Let(DataType t, Var v, Expr val, Expr b)
        : ExprNode(NodeKind::Let, t), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
    static Expr make(Var v, Expr value, Expr body);
};

// [min, min + extent).
struct Range {
    Expr min, extent;
    Range() = default;
    Range(Expr m, Expr e) : min(std::move(m)), extent(std::move(e)) {}
};

// The role of an iteration variable.
enum class IterKind : uint8_t { DataPar, Reduce, Thread };

// An iteration variable: a Var with its domain. Shared by te (axes of a compute), the
// Reduce node (reduction axes) and schedules (leaf loops).
struct IterVarNode : Object {
    Var var;
    Range dom;
    IterKind iter_kind;
    std::string thread_tag;
    IterVarNode(Var v, Range d, IterKind k, std::string tag)
        : Object(NodeKind::Object), var(std::move(v)), dom(std::move(d)), iter_kind(k), thread_tag(std::move(tag)) {}
};

class IterVar : public Handle<IterVarNode> {
public:
    using Handle::Handle;
    IterVar(Range dom, Var v, IterKind k, std::string tag = "")
        : Handle(make_node<IterVarNode>(std::move(v), std::move(dom), k, std::move(tag))) {}
    const Var& var() const { return ptr_->var; }
    const Range& dom() const { return ptr_->dom; }
    const std::string& name() const { return ptr_->var.name(); }
    operator Expr() const { return ptr_->var; }
};

// A commutative, associative combiner: result[i] = f(lhs, rhs), with an identity element.
// Reducers of several values (argmax over (index, value)) have one lhs/rhs var per value.
struct CommReducerNode : Object {
    std::vector<Var> lhs, rhs;
    std::vector<Expr> result, identity;
    CommReducerNode(std::vector<Var> l, std::vector<Var> r, std::vector<Expr> res, std::vector<Expr> id)
        : Object(NodeKind::Object), lhs(std::move(l)), rhs(std::move(r)), result(std::move(res)), identity(std::move(id)) {}
};
using CommReducer = std::shared_ptr<const CommReducerNode>;

// A reduction over `axis` of `source` (one expression per reduced value), combined with
// `combiner`; the node's value is component `value_index`. Appears only at the top of a
// compute body.
struct Reduce : ExprNode {
    WEFT_NODE_KIND(Reduce)
    CommReducer combiner;
    std::vector<Expr> source;
    std::vector<IterVar> axis;
    Expr condition;
    int value_index;
    Reduce(DataType t, CommReducer c, std::vector<Expr> s, std::vector<IterVar> a, Expr cond, int vi)
        : ExprNode(NodeKind::Reduce, t), combiner(std::move(c)), source(std::move(s)), axis(std::move(a)),
          condition(std::move(cond)), value_index(vi) {}
    static Expr make(CommReducer c, std::vector<Expr> source, std::vector<IterVar> axis, Expr condition,
                     int value_index);
};

// A read of a tensor before storage flattening: producer(indices...). `producer` is the
// operation (a te object); `value_index` picks its output.
struct ProducerLoad : ExprNode {
    WEFT_NODE_KIND(ProducerLoad)
    std::shared_ptr<const Object> producer;
    int value_index;
    std::vector<Expr> indices;
    std::string name;  // for printing
    ProducerLoad(DataType t, std::shared_ptr<const Object> p, int vi, std::vector<Expr> idx, std::string n)
        : ExprNode(NodeKind::ProducerLoad, t), producer(std::move(p)), value_index(vi), indices(std::move(idx)),
          name(std::move(n)) {}
};

}  // namespace weft::ir
