// The kernel entry: reads every argument through the weft.arg_* intrinsics (ir/abi.hpp),
// checks count, kind, rank, dtype, shape and strides with messages naming the argument,
// binds symbolic shape variables from the first buffer that has them (later uses must
// agree), and binds each tensor's data pointer and each scalar before the body runs.
#pragma once
#include <unordered_set>

#include "weft/ir/abi.hpp"
#include "weft/ir/function.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"
#include "weft/lower/impl/storage_flatten.hpp"

namespace weft::lower_passes {

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

inline ir::Stmt make_entry(const std::string& kernel, const std::vector<ir::KernelArg>& args, ir::Stmt body) {
    using namespace ir;
    check_free_variables(kernel, args, body);
    using CK = Call::CallKind;
    auto intr = [](DataType t, const char* name, std::vector<Expr> a) { return Call::make(t, name, std::move(a), CK::Intrinsic); };
    auto pos = [](size_t i) { return make_int(int64_t(i)); };
    // Built inside out: a list of (kind, ...) steps applied in order from the top.
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
    std::string k = "kernel '" + kernel + "': ";
    check(intr(i32, "weft.num_args", {}) == make_int(int64_t(args.size()), i32),
          k + "expected " + std::to_string(args.size()) + " arguments");
    std::unordered_set<const void*> bound;
    for (size_t i = 0; i < args.size(); ++i) {
        auto& a = args[i];
        std::string who = k + "argument '" + a.name + "' (#" + std::to_string(i) + ")";
        if (a.kind == KernelArg::Kind::Scalar) {
            bool is_float = a.type.is_float();
            check(intr(i32, "weft.arg_type_code", {pos(i)}) == make_int(is_float ? WEFT_ARG_FLOAT : WEFT_ARG_INT, i32),
                  who + " must be a " + std::string(is_float ? "floating-point" : "integer") + " scalar");
            Expr v = is_float ? intr(f64, "weft.arg_float", {pos(i)}) : intr(i64, "weft.arg_int", {pos(i)});
            bind(a.var, cast(a.type, v));
            bound.insert(a.var.get());
            continue;
        }
        check(intr(i32, "weft.arg_type_code", {pos(i)}) == make_int(WEFT_ARG_TENSOR, i32), who + " must be a tensor");
        check(intr(i32, "weft.arg_ndim", {pos(i)}) == make_int(int64_t(a.shape.size()), i32),
              who + " must have " + std::to_string(a.shape.size()) + (a.shape.size() == 1 ? " dimension" : " dimensions"));
        check(intr(i32, "weft.arg_dtype_code", {pos(i)}) == make_int(int64_t(a.type.code), i32) &&
                  intr(i32, "weft.arg_dtype_bits", {pos(i)}) == make_int(a.type.bits, i32) &&
                  intr(i32, "weft.arg_dtype_lanes", {pos(i)}) == make_int(a.type.lanes, i32),
              who + " must have dtype " + a.type.str());
        for (size_t d = 0; d < a.shape.size(); ++d) {
            Expr dim = intr(i64, "weft.arg_shape", {pos(i), pos(d)});
            auto* v = a.shape[d].as<VarNode>();
            if (v && !bound.count(v)) {
                check(dim >= make_int(1), who + ": dimension " + std::to_string(d) + " must be positive");
                bind(Var(a.shape[d].ptr()), dim);
                bound.insert(v);
            } else {
                check(dim == a.shape[d], who + ": dimension " + std::to_string(d) + " must be " + to_string(a.shape[d]));
            }
        }
        auto strides = compact_strides(a.shape);
        for (size_t d = 0; d < a.shape.size(); ++d)
            check(intr(i64, "weft.arg_stride", {pos(i), pos(d)}) == strides[d] ||
                      intr(i64, "weft.arg_shape", {pos(i), pos(d)}) == make_int(1),
                  who + " must be compact (row-major); its stride " + std::to_string(d) + " must be " +
                      to_string(strides[d]));
        Expr data = intr(DataType::handle(), "weft.arg_data", {pos(i)});
        if (a.alignment > 1) {
            // Checked before it is assumed: the assumption lives in the binding, after the check.
            check(intr(boolean, "weft.is_aligned", {data, make_int(a.alignment)}),
                  who + "'s data must be aligned to " + std::to_string(a.alignment) +
                      " bytes (the kernel was built with argument_alignment = " + std::to_string(a.alignment) + ")");
            data = intr(DataType::handle(), "weft.assume_aligned", {data, make_int(a.alignment)});
        }
        bind(a.var, data);
    }
    for (auto it = steps.rbegin(); it != steps.rend(); ++it)
        body = it->kind == Step::Assert ? AssertStmt::make(it->cond, it->msg, body) : LetStmt::make(it->var, it->value, body);
    return body;
}

}  // namespace weft::lower_passes
