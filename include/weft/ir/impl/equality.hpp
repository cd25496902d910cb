// Definitions for ir/equality.hpp. Both equality and hashing serialize a tree into a
// token stream (variables numbered in order of first appearance), so the two can never
// disagree about what "the same" means.
#include <cstring>
#include <unordered_map>

#include "weft/ir/equality.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::ir {
namespace {

class Serializer : public IRVisitor {
public:
    std::vector<uint64_t> tokens;
    using IRVisitor::visit;

    void visit(const Expr& e) override {
        if (!e.defined()) { tokens.push_back(0xdead); return; }
        tokens.push_back(uint64_t(e.kind()) + 1);
        type(e.type());
        IRVisitor::visit(e);
    }
    void visit(const Stmt& s) override {
        if (!s.defined()) { tokens.push_back(0xdeadbeef); return; }
        tokens.push_back(uint64_t(s.kind()) + 1);
        IRVisitor::visit(s);
    }

protected:
    std::unordered_map<const Object*, uint64_t> var_ids_;

    void type(DataType t) { tokens.push_back(uint64_t(t.code) | uint64_t(t.bits) << 8 | uint64_t(t.lanes) << 16); }
    void str(const std::string& s) {
        tokens.push_back(s.size());
        for (size_t i = 0; i < s.size(); i += 8) {
            uint64_t w = 0;
            std::memcpy(&w, s.data() + i, std::min<size_t>(8, s.size() - i));
            tokens.push_back(w);
        }
    }
    void var(const Var& v) {
        auto [it, fresh] = var_ids_.emplace(v.get(), var_ids_.size());
        tokens.push_back(0x7a5 + (it->second << 12));
        type(v.type());
    }
    void expr_list(const std::vector<Expr>& v) { tokens.push_back(v.size()); for (auto& e : v) visit(e); }

    void visit_(const IntImm* op) override { tokens.push_back(uint64_t(op->value)); }
    void visit_(const FloatImm* op) override {
        uint64_t b;
        std::memcpy(&b, &op->value, 8);
        tokens.push_back(b);
    }
    void visit_(const StringImm* op) override { str(op->value); }
    void visit_(const VarNode* op) override {
        auto [it, fresh] = var_ids_.emplace(op, var_ids_.size());
        tokens.push_back(it->second);
    }
    void visit_(const Call* op) override {
        str(op->name);
        tokens.push_back(uint64_t(op->call_kind));
        expr_list(op->args);
    }
    void visit_(const Load* op) override { var(op->buffer); visit(op->index); }
    void visit_(const Ramp* op) override { tokens.push_back(op->lanes); IRVisitor::visit_(op); }
    void visit_(const Broadcast* op) override { tokens.push_back(op->lanes); IRVisitor::visit_(op); }
    void visit_(const Let* op) override { var(op->var); visit(op->value); visit(op->body); }
    void visit_(const Reduce* op) override {
        auto& c = *op->combiner;
        for (auto& v : c.lhs) var(v);
        for (auto& v : c.rhs) var(v);
        expr_list(c.result);
        expr_list(c.identity);
        for (auto& iv : op->axis) { var(iv.var()); visit(iv.dom().min); visit(iv.dom().extent); }
        expr_list(op->source);
        visit(op->condition);
        tokens.push_back(op->value_index);
    }
    void visit_(const ProducerLoad* op) override {
        tokens.push_back(uint64_t(reinterpret_cast<uintptr_t>(op->producer.get())));
        tokens.push_back(op->value_index);
        expr_list(op->indices);
    }
    void visit_(const For* op) override {
        var(op->loop_var);
        tokens.push_back(uint64_t(op->for_kind));
        str(op->thread_tag);
        visit(op->min); visit(op->extent); visit(op->body);
    }
    void visit_(const Store* op) override { var(op->buffer); visit(op->value); visit(op->index); }
    void visit_(const Allocate* op) override {
        var(op->buffer);
        type(op->type);
        str(op->scope);
        expr_list(op->extents);
        visit(op->body);
    }
    void visit_(const Seq* op) override { tokens.push_back(op->stmts.size()); IRVisitor::visit_(op); }
    void visit_(const LetStmt* op) override { var(op->var); visit(op->value); visit(op->body); }
    void visit_(const AttrStmt* op) override { str(op->key); IRVisitor::visit_(op); }
    void visit_(const AssertStmt* op) override { str(op->message); IRVisitor::visit_(op); }
    void visit_(const ProducerStore* op) override {
        tokens.push_back(uint64_t(reinterpret_cast<uintptr_t>(op->producer.get())));
        tokens.push_back(op->value_index);
        visit(op->value);
        expr_list(op->indices);
    }
    void visit_(const ProducerRealize* op) override {
        tokens.push_back(uint64_t(reinterpret_cast<uintptr_t>(op->producer.get())));
        tokens.push_back(op->value_index);
        type(op->type);
        str(op->scope);
        for (auto& r : op->bounds) { visit(r.min); visit(r.extent); }
        visit(op->body);
    }
};

template <class T>
std::vector<uint64_t> serialize(const T& node) {
    Serializer s;
    s.visit(node);
    return std::move(s.tokens);
}

uint64_t hash_tokens(const std::vector<uint64_t>& t) {
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over 64-bit words, then a final mix
    for (uint64_t w : t) {
        h ^= w;
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

}  // namespace

bool structural_equal(const Expr& a, const Expr& b) { return serialize(a) == serialize(b); }
bool structural_equal(const Stmt& a, const Stmt& b) { return serialize(a) == serialize(b); }
uint64_t structural_hash(const Expr& e) { return hash_tokens(serialize(e)); }
uint64_t structural_hash(const Stmt& s) { return hash_tokens(serialize(s)); }

}  // namespace weft::ir
