// The kernel entry: checks count, kind, rank, dtype, shape, strides and alignment of every
// argument with one call of the runtime (weft.check_arguments, on the table of
// ir/argument_spec.hpp; its messages name the argument), then reads the arguments through
// the weft.arg_* intrinsics (ir/abi.hpp): binds symbolic shape variables from the first
// buffer that has them (the runtime checked that later uses agree), and each tensor's data
// pointer and each scalar, before the body runs. Extents that are expressions of symbols
// (n * 2) are asserted here, after the symbols are bound.
#pragma once
#include <algorithm>
#include <unordered_set>

#include "weft/ir/abi.hpp"
#include "weft/ir/arith/interval.hpp"
#include "weft/ir/function.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"

namespace weft::lower_passes {

// The kernel's sizes: the variables the entry binds from tensor arguments' shapes (a
// dimension n) and the scalar arguments declared sizes (LowerOptions::sizes, checked by the
// entry). Each is in [0, +inf), a fact the passes that simplify use (loop_partition).
inline ir::arith::VarRanges size_ranges(const std::vector<ir::KernelArg>& args, const std::vector<Var>& scalars) {
    ir::arith::VarRanges sizes;
    auto add = [&](const Expr& v) {
        if (v.as<ir::VarNode>() && v.type().is_int()) sizes[Var(v.ptr())] = ir::arith::Interval(ir::make_zero(v.type()), Expr());
    };
    for (const ir::KernelArg& a : args)
        for (const Expr& d : a.shape) add(d);
    for (const Var& v : scalars) add(v);
    return sizes;
}

// A variable the program reads that nothing binds (no loop, let, allocation or argument) is a
// scalar the user forgot in the argument list: say so here, before codegen trips on it.
inline void check_free_variables(const std::string& kernel, const std::vector<ir::KernelArg>& args,
                                 const ir::Stmt& body) {
    struct Finder : ir::IRVisitor {
        std::unordered_set<const ir::Object*> bound;
        std::vector<std::string> free;
        using IRVisitor::visit;
        void visit_(const ir::VarNode* op) override {
            if (bound.insert(op).second) free.push_back(op->name);  // report each one once
        }
        void visit_(const ir::For* op) override {
            bound.insert(op->loop_var.get());
            IRVisitor::visit_(op);
        }
        void visit_(const ir::LetStmt* op) override {
            bound.insert(op->var.get());
            IRVisitor::visit_(op);
        }
        void visit_(const ir::Let* op) override {
            bound.insert(op->var.get());
            IRVisitor::visit_(op);
        }
        void visit_(const ir::Allocate* op) override {
            bound.insert(op->buffer.get());
            IRVisitor::visit_(op);
        }
    } finder;
    for (auto& a : args) {
        finder.bound.insert(a.var.get());
        for (auto& d : a.shape)
            if (d.as<ir::VarNode>()) finder.bound.insert(d.get());
    }
    finder.visit(body);
    if (finder.free.empty()) return;
    std::string names;
    for (auto& n : finder.free) names += (names.empty() ? "'" : ", '") + n + "'";
    detail::throw_user_error(detail::concat("kernel '", kernel, "': ", names,
                                            " is used by the computation but is not an argument of the kernel "
                                            "(nor a symbolic dimension of one); add it to the argument list"));
}

inline ir::Stmt make_entry(const std::string& kernel, const std::vector<ir::KernelArg>& args, ir::Stmt body,
                           const std::vector<Var>& sizes = {}) {
    using namespace ir;
    check_free_variables(kernel, args, body);
    using CK = Call::CallKind;
    auto intr = [](DataType t, const char* name, std::vector<Expr> a) { return Call::make(t, name, std::move(a), CK::Intrinsic); };
    auto pos = [](size_t i) { return make_int(int64_t(i)); };
    // Built inside out: a list of (kind, ...) steps applied in order from the top. First the
    // runtime checks everything the signature's table says (ir/argument_spec.hpp); its
    // message is the error, so the assert carries none.
    struct Step {
        enum { Assert, Let } kind;
        Expr cond;
        std::string msg;
        Var var;
        Expr value;
    };
    std::vector<Step> steps;
    auto check = [&](Expr c, std::string m) { steps.push_back({Step::Assert, c, std::move(m), {}, {}}); };
    auto bind = [&](Var v, Expr val) { steps.push_back({Step::Let, {}, {}, std::move(v), std::move(val)}); };
    check(intr(boolean, "weft.check_arguments", {}), "");
    std::string k = "kernel '" + kernel + "': ";
    std::unordered_set<const void*> bound;
    // A dimension `b * 4` may name a scalar listed after its tensor: checked after the lets.
    std::vector<Step> expression_dims;
    for (size_t i = 0; i < args.size(); ++i) {
        auto& a = args[i];
        if (a.kind == KernelArg::Kind::Scalar) {
            Expr v = a.type.is_float() ? intr(f64, "weft.arg_float", {pos(i)}) : intr(i64, "weft.arg_int", {pos(i)});
            bind(a.var, cast(a.type, v));
            bound.insert(a.var.get());
            if (std::any_of(sizes.begin(), sizes.end(), [&](const Var& s) { return s.same_as(a.var); }))
                check(a.var >= make_zero(a.type), k + "scalar argument '" + a.name + "' (#" + std::to_string(i) +
                                                      ") is a size (LowerOptions::sizes) and must not be negative");
            continue;
        }
        for (size_t d = 0; d < a.shape.size(); ++d) {
            if (a.shape[d].as<IntImm>()) continue;  // checked by the runtime
            Expr dim = intr(i64, "weft.arg_shape", {pos(i), pos(d)});
            auto* v = a.shape[d].as<VarNode>();
            if (v && bound.insert(v).second) bind(Var(a.shape[d].ptr()), dim);
            else if (!v)  // an expression of symbols: the table cannot say it (checked once all are bound)
                expression_dims.push_back({Step::Assert, dim == a.shape[d],
                                           k + "argument '" + a.name + "' (#" + std::to_string(i) + "): dimension " +
                                               std::to_string(d) + " must be " + to_string(a.shape[d]),
                                           {}, {}});
        }
        Expr data = intr(DataType::handle(), "weft.arg_data", {pos(i)});
        // The runtime checked the promised alignment; the binding carries it to every access.
        if (a.alignment > 1) data = intr(DataType::handle(), "weft.assume_aligned", {data, make_int(a.alignment)});
        bind(a.var, data);
    }
    steps.insert(steps.end(), expression_dims.begin(), expression_dims.end());
    for (auto it = steps.rbegin(); it != steps.rend(); ++it)
        body = it->kind == Step::Assert ? AssertStmt::make(it->cond, it->msg, body) : LetStmt::make(it->var, it->value, body);
    return body;
}

}  // namespace weft::lower_passes
