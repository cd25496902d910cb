// CodeGenLLVM: statements, serial loops and assertions (see codegen.hpp).
#pragma once
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/MDBuilder.h>

#include "weft/codegen/llvm/impl/codegen.hpp"
#include "weft/ir/op.hpp"

namespace weft::codegen::detail {

inline void CodeGenLLVM::emit(const ir::Stmt& s) {
    WEFT_ICHECK(s.defined(), "undefined statement in kernel ", func_.name);
    switch (s.kind()) {
#define WEFT_CASE(N) \
    case ir::NodeKind::N: return emit_(static_cast<const ir::node_type::N*>(s.get()));
        WEFT_STMT_NODES(WEFT_CASE)
#undef WEFT_CASE
        default: WEFT_ICHECK(false, "not a statement: ", ir::kind_name(s.kind()));
    }
}

inline void CodeGenLLVM::emit_(const ir::For* op) {
    WEFT_CHECK(op->for_kind != ir::ForKind::ThreadBound, "loop '", op->loop_var.name(), "' of kernel ", func_.name,
               " is bound to the GPU thread axis '", op->thread_tag, "', but `bind` is only for GPU targets and this is ",
               "a CPU target (", target_.str(), "); remove the bind, or build for Target::cuda()");
    if (op->for_kind == ir::ForKind::Parallel) return emit_parallel_for(op, 0);
    // Vectorized and Unrolled loops normally are rewritten by lowering; any that remain
    // become serial loops with a hint for LLVM.
    llvm::Type* t = type_of(op->loop_var.type());
    llvm::Value* begin = int_cast(emit(op->min), t, true);
    llvm::Value* end = b_.CreateAdd(begin, int_cast(emit(op->extent), t, true), "", false, true);
    emit_loop(op->loop_var, begin, end, op->for_kind, op->body);
}

// Whether a loop's body holds copies that lowering unrolled (ir::attr::unrolled), outside
// any inner loop: such a loop's unrolling is the schedule's, and LLVM's own unroller, which
// would copy the already unrolled register tile of a micro-kernel 4-8 times more, only
// costs compile time (measured on topi's SGEMM: a third of the JIT time, same speed).
inline bool holds_unrolled_copies(const ir::Stmt& body) {
    if (!body.defined()) return false;
    if (auto* a = body.as<ir::AttrStmt>()) return a->key == ir::attr::unrolled || holds_unrolled_copies(a->body);
    if (auto* seq = body.as<ir::Seq>()) {
        for (auto& s : seq->stmts)
            if (holds_unrolled_copies(s)) return true;
        return false;
    }
    if (auto* let = body.as<ir::LetStmt>()) return holds_unrolled_copies(let->body);
    if (auto* branch = body.as<ir::IfThenElse>())
        return holds_unrolled_copies(branch->then_case) || holds_unrolled_copies(branch->else_case);
    if (auto* alloc = body.as<ir::Allocate>()) return holds_unrolled_copies(alloc->body);
    return false;
}

// The llvm.loop metadata asking LLVM to unroll or vectorize a loop, or not to unroll a serial
// loop around unrolled copies; null for other serial loops.
inline llvm::MDNode* loop_hint(llvm::LLVMContext& ctx, ir::ForKind kind, const ir::Stmt& body) {
    llvm::Metadata* hint = nullptr;
    if (kind == ir::ForKind::Serial && holds_unrolled_copies(body))
        hint = llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")});
    else if (kind == ir::ForKind::Unrolled)
        hint = llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.full")});
    else if (kind == ir::ForKind::Vectorized)
        hint = llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
                                       llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(ctx))});
    if (!hint) return nullptr;
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx, {nullptr, hint});
    loop_id->replaceOperandWith(0, loop_id);  // a loop id refers to itself
    return loop_id;
}

inline void CodeGenLLVM::emit_loop(const ir::Var& var, llvm::Value* begin, llvm::Value* end, ir::ForKind kind,
                                   const ir::Stmt& body) {
    llvm::Function* fn = fs_.fn;
    llvm::BasicBlock* preheader = b_.GetInsertBlock();
    auto* header = llvm::BasicBlock::Create(ctx_, "for." + var.name(), fn);
    auto* body_bb = llvm::BasicBlock::Create(ctx_, "for." + var.name() + ".body", fn);
    auto* exit = llvm::BasicBlock::Create(ctx_, "for." + var.name() + ".end", fn);
    b_.CreateBr(header);

    b_.SetInsertPoint(header);
    llvm::PHINode* index = b_.CreatePHI(begin->getType(), 2, var.name());
    index->addIncoming(begin, preheader);
    b_.CreateCondBr(b_.CreateICmpSLT(index, end), body_bb, exit);

    b_.SetInsertPoint(body_bb);
    llvm::Value* previous = bind(var, index);
    emit(body);
    unbind(var, previous);
    llvm::Value* next = b_.CreateAdd(index, llvm::ConstantInt::get(index->getType(), 1), "", false, true);
    index->addIncoming(next, b_.GetInsertBlock());
    llvm::BranchInst* back = b_.CreateBr(header);
    if (llvm::MDNode* hint = loop_hint(ctx_, kind, body)) back->setMetadata(llvm::LLVMContext::MD_loop, hint);

    b_.SetInsertPoint(exit);
}

inline void CodeGenLLVM::emit_(const ir::Seq* op) {
    for (auto& s : op->stmts) emit(s);
}

inline void CodeGenLLVM::emit_(const ir::IfThenElse* op) {
    llvm::Value* cond = emit(op->condition);
    llvm::Function* fn = fs_.fn;
    auto* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", fn);
    auto* end_bb = llvm::BasicBlock::Create(ctx_, "if.end", fn);
    auto* else_bb = op->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "if.else", fn) : end_bb;
    b_.CreateCondBr(cond, then_bb, else_bb);
    b_.SetInsertPoint(then_bb);
    emit(op->then_case);
    b_.CreateBr(end_bb);
    if (op->else_case.defined()) {
        b_.SetInsertPoint(else_bb);
        emit(op->else_case);
        b_.CreateBr(end_bb);
    }
    b_.SetInsertPoint(end_bb);
}

inline void CodeGenLLVM::emit_(const ir::LetStmt* op) {
    llvm::Value* previous = bind(op->var, emit(op->value));
    emit(op->body);
    unbind(op->var, previous);
}

inline void CodeGenLLVM::emit_(const ir::Evaluate* op) {
    if (!ir::is_const(op->value)) emit(op->value);
}

// Pragmas and other annotations carry nothing the CPU code needs, but for non-temporal
// stores and a parallel loop's work.
inline void CodeGenLLVM::emit_(const ir::AttrStmt* op) {
    auto* loop = op->body.as<ir::For>();
    int64_t work = 0;
    if (op->key == ir::attr::parallel_work && loop && loop->for_kind == ir::ForKind::Parallel &&
        ir::as_const_int(op->value, &work))
        return emit_parallel_for(loop, work);
    bool outer = nontemporal_store_;
    if (op->key == ir::attr::nontemporal_store) nontemporal_store_ = true;
    emit(op->body);
    nontemporal_store_ = outer;
}

inline void CodeGenLLVM::emit_(const ir::AssertStmt* op) {
    fail_unless(emit(op->condition), op->message);
    emit(op->body);
}

inline void CodeGenLLVM::emit_return(llvm::Value* code) {
    if (fs_.wrote_nontemporal) b_.CreateCall(llvm::Intrinsic::getDeclaration(&module_, llvm::Intrinsic::x86_sse_sfence));
    for (auto it = fs_.heap.rbegin(); it != fs_.heap.rend(); ++it)
        b_.CreateCall(runtime_function("weft_runtime_free"), {*it});
    b_.CreateRet(code);
}

// Branches to `fail` (a new block, where the builder is left) unless `ok`; returns the block
// where execution goes on.
inline llvm::BasicBlock* CodeGenLLVM::branch_unless(llvm::Value* ok, const char* fail) {
    auto* fail_bb = llvm::BasicBlock::Create(ctx_, fail, fs_.fn);
    auto* ok_bb = llvm::BasicBlock::Create(ctx_, "ok", fs_.fn);
    llvm::MDBuilder md(ctx_);
    b_.CreateCondBr(ok, ok_bb, fail_bb, md.createBranchWeights(1u << 20, 1));  // failures are rare
    b_.SetInsertPoint(fail_bb);
    return ok_bb;
}

inline void CodeGenLLVM::return_unless(llvm::Value* ok, llvm::Value* code) {
    llvm::BasicBlock* ok_bb = branch_unless(ok, "fail");
    emit_return(code);
    b_.SetInsertPoint(ok_bb);
}

inline void CodeGenLLVM::fail_unless(llvm::Value* ok, const std::string& message) {
    llvm::BasicBlock* ok_bb = branch_unless(ok, "report");
    // No message: the failed condition set its own (weft.check_arguments).
    if (!message.empty())
        b_.CreateCall(runtime_function("weft_runtime_set_error"), {b_.CreateGlobalString(message, "weft.error")});
    emit_return(b_.getInt32(-1));
    b_.SetInsertPoint(ok_bb);
}

inline void CodeGenLLVM::emit_(const ir::ProducerStore* op) {
    WEFT_ICHECK(false, "a ProducerStore to ", op->name, " reached the LLVM backend; storage flattening must remove it");
}

inline void CodeGenLLVM::emit_(const ir::ProducerRealize* op) {
    WEFT_ICHECK(false, "a ProducerRealize of ", op->name, " reached the LLVM backend; storage flattening must remove it");
}

}  // namespace weft::codegen::detail
