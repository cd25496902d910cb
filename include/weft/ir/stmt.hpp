// Statement nodes: the loop program.
#pragma once
#include "weft/ir/expr.hpp"

namespace weft::ir {

// How a loop runs. ThreadBound loops are mapped to GPU block/thread indices (thread_tag).
enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, ThreadBound };
const char* for_kind_name(ForKind k);

struct For : StmtNode {
    WEFT_NODE_KIND(For)
    Var loop_var;
    Expr min, extent;
    ForKind for_kind;
    Stmt body;
    std::string thread_tag;
    For(Var v, Expr m, Expr e, ForKind k, Stmt b, std::string tag)
        : StmtNode(NodeKind::For), loop_var(std::move(v)), min(std::move(m)), extent(std::move(e)), for_kind(k),
          body(std::move(b)), thread_tag(std::move(tag)) {}
    static Stmt make(Var v, Expr min, Expr extent, ForKind k, Stmt body, std::string thread_tag = "");
};

// buffer[index] = value, on a flat buffer. A vector store has a vector index and value.
struct Store : StmtNode {
    WEFT_NODE_KIND(Store)
    Var buffer;
    Expr value, index;
    Store(Var b, Expr v, Expr i) : StmtNode(NodeKind::Store), buffer(std::move(b)), value(std::move(v)), index(std::move(i)) {}
    static Stmt make(Var buffer, Expr value, Expr index);
};

// A buffer of `extents` elements of `type`, alive in `body`, in a storage scope
// ("global": kernel memory — the CPU backend uses the stack when the size is a constant up
// to 32 KiB, the heap otherwise; "local": stack/registers; "shared": GPU shared memory).
struct Allocate : StmtNode {
    WEFT_NODE_KIND(Allocate)
    Var buffer;
    DataType type;
    std::vector<Expr> extents;
    std::string scope;
    Stmt body;
    Allocate(Var b, DataType t, std::vector<Expr> e, std::string s, Stmt bd)
        : StmtNode(NodeKind::Allocate), buffer(std::move(b)), type(t), extents(std::move(e)), scope(std::move(s)),
          body(std::move(bd)) {}
    static Stmt make(Var buffer, DataType t, std::vector<Expr> extents, std::string scope, Stmt body);
};

struct Seq : StmtNode {
    WEFT_NODE_KIND(Seq)
    std::vector<Stmt> stmts;
    explicit Seq(std::vector<Stmt> s) : StmtNode(NodeKind::Seq), stmts(std::move(s)) {}
    // Flattens nested sequences, drops undefined statements; one statement stays itself.
    static Stmt make(std::vector<Stmt> stmts);
};

struct IfThenElse : StmtNode {
    WEFT_NODE_KIND(IfThenElse)
    Expr condition;
    Stmt then_case, else_case;  // else_case may be undefined
    IfThenElse(Expr c, Stmt t, Stmt e)
        : StmtNode(NodeKind::IfThenElse), condition(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
    static Stmt make(Expr c, Stmt t, Stmt e = Stmt());
};

struct LetStmt : StmtNode {
    WEFT_NODE_KIND(LetStmt)
    Var var;
    Expr value;
    Stmt body;
    LetStmt(Var v, Expr val, Stmt b) : StmtNode(NodeKind::LetStmt), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
    static Stmt make(Var v, Expr value, Stmt body);
};

struct Evaluate : StmtNode {
    WEFT_NODE_KIND(Evaluate)
    Expr value;
    explicit Evaluate(Expr v) : StmtNode(NodeKind::Evaluate), value(std::move(v)) {}
    static Stmt make(Expr v) { return Stmt(make_node<Evaluate>(std::move(v))); }
};

// An annotation on `body`: a pragma ("pragma_<name>"), a thread extent, an alignment fact.
// AttrStmt keys that passes leave for later ones.
namespace attr {
// Around the copies of a loop that lowering unrolled (value: the count), so that codegen
// leaves the unrolling of the loop around them to the schedule.
inline constexpr const char* unrolled = "unrolled";
// Around a store of a Stage::store_nontemporal stage (value 1): on x86 the CPU backend writes
// its vectors with non-temporal (streaming) stores where the address is aligned.
inline constexpr const char* nontemporal_store = "nontemporal_store";
// Around a parallel loop (value: the estimated work of one iteration, 0 when unknown; see
// lower/impl/parallel_work.hpp): codegen passes it to the thread pool, which runs a loop too
// small to pay for a second thread on the calling thread alone.
inline constexpr const char* parallel_work = "parallel_work";
}  // namespace attr

struct AttrStmt : StmtNode {
    WEFT_NODE_KIND(AttrStmt)
    std::string key;
    Expr value;
    Stmt body;
    AttrStmt(std::string k, Expr v, Stmt b) : StmtNode(NodeKind::AttrStmt), key(std::move(k)), value(std::move(v)), body(std::move(b)) {}
    static Stmt make(std::string key, Expr value, Stmt body) {
        return Stmt(make_node<AttrStmt>(std::move(key), std::move(value), std::move(body)));
    }
};

// If `condition` is false, the kernel stops and reports `message` as a weft::Error.
struct AssertStmt : StmtNode {
    WEFT_NODE_KIND(AssertStmt)
    Expr condition;
    std::string message;
    Stmt body;
    AssertStmt(Expr c, std::string m, Stmt b)
        : StmtNode(NodeKind::AssertStmt), condition(std::move(c)), message(std::move(m)), body(std::move(b)) {}
    static Stmt make(Expr c, std::string message, Stmt body);
};

// producer(indices...) = value, before storage flattening.
struct ProducerStore : StmtNode {
    WEFT_NODE_KIND(ProducerStore)
    std::shared_ptr<const Object> producer;
    int value_index;
    Expr value;
    std::vector<Expr> indices;
    std::string name;
    ProducerStore(std::shared_ptr<const Object> p, int vi, Expr v, std::vector<Expr> idx, std::string n)
        : StmtNode(NodeKind::ProducerStore), producer(std::move(p)), value_index(vi), value(std::move(v)),
          indices(std::move(idx)), name(std::move(n)) {}
};

// The region `bounds` of producer's output `value_index` exists (is allocated) in `body`.
struct ProducerRealize : StmtNode {
    WEFT_NODE_KIND(ProducerRealize)
    std::shared_ptr<const Object> producer;
    int value_index;
    DataType type;
    std::vector<Range> bounds;
    std::string scope;
    Stmt body;
    std::string name;
    ProducerRealize(std::shared_ptr<const Object> p, int vi, DataType t, std::vector<Range> b, std::string s, Stmt bd,
                    std::string n)
        : StmtNode(NodeKind::ProducerRealize), producer(std::move(p)), value_index(vi), type(t), bounds(std::move(b)),
          scope(std::move(s)), body(std::move(bd)), name(std::move(n)) {}
};

#undef WEFT_NODE_KIND

}  // namespace weft::ir
