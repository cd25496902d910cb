// Definitions for ir/printer.hpp: C-like text with minimal parentheses.
#include <iomanip>
#include <sstream>

#include "weft/ir/function.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::ir {
namespace {

// Binding strength of an expression's top operator: higher binds tighter.
int precedence(const Expr& e) {
    switch (e.kind()) {
        case NodeKind::Or: return 1;
        case NodeKind::And: return 2;
        case NodeKind::EQ: case NodeKind::NE: return 3;
        case NodeKind::LT: case NodeKind::LE: case NodeKind::GT: case NodeKind::GE: return 4;
        case NodeKind::Add: case NodeKind::Sub: return 5;
        case NodeKind::Mul: case NodeKind::Div: case NodeKind::Mod: return 6;
        case NodeKind::Not: return 7;
        case NodeKind::Select: return 0;
        default: return 10;
    }
}

class Printer : public IRVisitor {
public:
    explicit Printer(std::ostream& os) : os_(os) {}
    using IRVisitor::visit;

    void print(const Expr& e, int parent_prec = 0, bool right = false) {
        if (!e.defined()) { os_ << "<undefined>"; return; }
        int p = precedence(e);
        bool paren = p < parent_prec || (right && p == parent_prec && p < 10);
        if (paren) os_ << "(";
        visit(e);
        if (paren) os_ << ")";
    }

    void print(const Stmt& s) { visit(s); }

protected:
    std::ostream& os_;
    int indent_ = 0;

    void do_indent() { os_ << std::string(indent_ * 2, ' '); }
    void binary(const Expr& a, const Expr& b, const char* op, int prec) {
        print(a, prec);
        os_ << " " << op << " ";
        print(b, prec, true);
    }
    void block(const Stmt& body) {
        os_ << " {\n";
        ++indent_;
        print(body);
        --indent_;
        do_indent();
        os_ << "}\n";
    }
    template <class T>
    void list(const std::vector<T>& v) {
        for (size_t i = 0; i < v.size(); ++i) {
            if (i) os_ << ", ";
            print(v[i]);
        }
    }

    void visit_(const IntImm* op) override {
        if (op->type.is_bool()) os_ << (op->value ? "true" : "false");
        else if (op->type == index_type || op->weak) os_ << op->value;
        else os_ << op->type.str() << "(" << op->value << ")";
    }
    void visit_(const FloatImm* op) override {
        std::ostringstream s;
        s << std::setprecision(9) << op->value;
        std::string v = s.str();
        if (v.find_first_of(".eEin") == std::string::npos) v += ".0";
        if (op->type == f32) os_ << v << "f";
        else if (op->type == f64) os_ << v;
        else os_ << op->type.str() << "(" << v << ")";
    }
    void visit_(const StringImm* op) override { os_ << '"' << op->value << '"'; }
    void visit_(const VarNode* op) override { os_ << op->name; }
    void visit_(const Add* op) override { binary(op->a, op->b, "+", 5); }
    void visit_(const Sub* op) override { binary(op->a, op->b, "-", 5); }
    void visit_(const Mul* op) override { binary(op->a, op->b, "*", 6); }
    void visit_(const Div* op) override { binary(op->a, op->b, "/", 6); }
    void visit_(const Mod* op) override { binary(op->a, op->b, "%", 6); }
    void visit_(const Min* op) override { os_ << "min("; print(op->a); os_ << ", "; print(op->b); os_ << ")"; }
    void visit_(const Max* op) override { os_ << "max("; print(op->a); os_ << ", "; print(op->b); os_ << ")"; }
    void visit_(const EQ* op) override { binary(op->a, op->b, "==", 3); }
    void visit_(const NE* op) override { binary(op->a, op->b, "!=", 3); }
    void visit_(const LT* op) override { binary(op->a, op->b, "<", 4); }
    void visit_(const LE* op) override { binary(op->a, op->b, "<=", 4); }
    void visit_(const GT* op) override { binary(op->a, op->b, ">", 4); }
    void visit_(const GE* op) override { binary(op->a, op->b, ">=", 4); }
    void visit_(const And* op) override { binary(op->a, op->b, "&&", 2); }
    void visit_(const Or* op) override { binary(op->a, op->b, "||", 1); }
    void visit_(const Not* op) override { os_ << "!"; print(op->a, 7); }
    void visit_(const Select* op) override {
        os_ << "select(";
        print(op->condition); os_ << ", "; print(op->true_value); os_ << ", "; print(op->false_value);
        os_ << ")";
    }
    void visit_(const Cast* op) override { os_ << op->type.str() << "("; print(op->value); os_ << ")"; }
    void visit_(const Call* op) override { os_ << op->name << "("; list(op->args); os_ << ")"; }
    void visit_(const Load* op) override {
        os_ << op->buffer.name() << "[";
        print(op->index);
        os_ << "]";
    }
    void visit_(const Ramp* op) override {
        os_ << "ramp("; print(op->base); os_ << ", "; print(op->stride); os_ << ", " << op->lanes << ")";
    }
    void visit_(const Broadcast* op) override { os_ << "x" << op->lanes << "("; print(op->value); os_ << ")"; }
    void visit_(const Let* op) override {
        os_ << "(let " << op->var.name() << " = "; print(op->value); os_ << " in "; print(op->body); os_ << ")";
    }
    void visit_(const Reduce* op) override {
        os_ << "reduce(";
        if (op->combiner->result.size() == 1) {
            os_ << "(" << op->combiner->lhs[0].name() << ", " << op->combiner->rhs[0].name() << ") => ";
            print(op->combiner->result[0]);
            os_ << ", identity " ; print(op->combiner->identity[0]);
        } else {
            os_ << "combiner#" << op->value_index;
        }
        os_ << ", source "; list(op->source);
        os_ << ", axis [";
        for (size_t i = 0; i < op->axis.size(); ++i) {
            if (i) os_ << ", ";
            os_ << op->axis[i].name() << " in [";
            print(op->axis[i].dom().min); os_ << ", "; print(op->axis[i].dom().min + op->axis[i].dom().extent);
            os_ << ")";
        }
        os_ << "]";
        if (!is_one(op->condition)) { os_ << ", where "; print(op->condition); }
        os_ << ")";
    }
    void visit_(const ProducerLoad* op) override { os_ << op->name << "("; list(op->indices); os_ << ")"; }

    void visit_(const For* op) override {
        do_indent();
        if (op->for_kind != ForKind::Serial) os_ << for_kind_name(op->for_kind) << " ";
        os_ << "for (" << op->loop_var.name() << ", ";
        print(op->min); os_ << ", "; print(op->extent); os_ << ")";
        if (!op->thread_tag.empty()) os_ << " bind(" << op->thread_tag << ")";
        block(op->body);
    }
    void visit_(const Store* op) override {
        do_indent();
        os_ << op->buffer.name() << "["; print(op->index); os_ << "] = "; print(op->value); os_ << "\n";
    }
    void visit_(const Allocate* op) override {
        do_indent();
        os_ << "allocate " << op->buffer.name() << "[" << op->type.str();
        for (auto& e : op->extents) { os_ << " * "; print(e, 6); }
        os_ << "] in " << op->scope << "\n";
        print(op->body);
    }
    void visit_(const Seq* op) override { for (auto& s : op->stmts) print(s); }
    void visit_(const IfThenElse* op) override {
        do_indent();
        os_ << "if ("; print(op->condition); os_ << ")";
        block(op->then_case);
        if (op->else_case.defined()) {
            do_indent();
            os_ << "else";
            block(op->else_case);
        }
    }
    void visit_(const LetStmt* op) override {
        do_indent();
        os_ << "let " << op->var.name() << " = "; print(op->value); os_ << "\n";
        print(op->body);
    }
    void visit_(const Evaluate* op) override {
        do_indent();
        print(op->value);
        os_ << "\n";
    }
    void visit_(const AttrStmt* op) override {
        do_indent();
        os_ << "// attr " << op->key << " = "; print(op->value); os_ << "\n";
        print(op->body);
    }
    void visit_(const AssertStmt* op) override {
        do_indent();
        os_ << "assert("; print(op->condition);
        if (!op->message.empty()) os_ << ", \"" << op->message << "\"";  // none: the condition sets its own
        os_ << ")\n";
        print(op->body);
    }
    void visit_(const ProducerStore* op) override {
        do_indent();
        os_ << op->name << "("; list(op->indices); os_ << ") = "; print(op->value); os_ << "\n";
    }
    void visit_(const ProducerRealize* op) override {
        do_indent();
        os_ << "realize " << op->name << "(";
        for (size_t i = 0; i < op->bounds.size(); ++i) {
            if (i) os_ << ", ";
            os_ << "["; print(op->bounds[i].min); os_ << ", "; print(op->bounds[i].min + op->bounds[i].extent); os_ << ")";
        }
        os_ << ")";
        if (op->scope != "global") os_ << " in " << op->scope;
        block(op->body);
    }
};

}  // namespace

std::ostream& operator<<(std::ostream& os, const Expr& e) { Printer(os).print(e); return os; }
std::ostream& operator<<(std::ostream& os, const Stmt& s) { Printer(os).print(s); return os; }
std::string to_string(const Expr& e) { std::ostringstream s; s << e; return s.str(); }
std::string to_string(const Stmt& st) { std::ostringstream s; s << st; return s.str(); }

std::ostream& operator<<(std::ostream& os, const PrimFunc& f) {
    os << "kernel " << f.name << "(";
    for (size_t i = 0; i < f.args.size(); ++i) {
        auto& a = f.args[i];
        if (i) os << ", ";
        os << a.type.str() << " " << a.name;
        if (a.kind == KernelArg::Kind::Tensor) {
            os << "[";
            for (size_t d = 0; d < a.shape.size(); ++d) { if (d) os << ", "; os << a.shape[d]; }
            os << "]";
        }
    }
    os << ")" << (f.fast_math ? " fast_math" : "") << (f.fast_compile ? " fast_compile" : "") << " {\n";
    std::ostringstream body;
    body << f.body;
    std::istringstream lines(body.str());
    for (std::string line; std::getline(lines, line);) os << "  " << line << "\n";
    return os << "}\n";
}

}  // namespace weft::ir
