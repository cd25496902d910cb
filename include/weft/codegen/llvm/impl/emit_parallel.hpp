// CodeGenLLVM: parallel loops (see codegen.hpp).
//
//   for (x, min, extent, parallel) body
// becomes an internal function
//   int32_t body_fn(int64_t begin, int64_t end, void* closure)   // runs x in [min+begin, min+end)
// whose closure struct holds `min` and every variable of the enclosing function the body
// uses (scalars and buffer pointers), and a call
//   rc = weft_runtime_parallel_for(body_fn, &closure, extent, work_per_iteration); if (rc) return rc;
// (work_per_iteration: lowering's estimate, ir::attr::parallel_work, which lets the pool run
// a small loop on the calling thread alone).
// Allocations and assertions inside the body belong to body_fn.
#pragma once
#include <unordered_set>

#include "weft/codegen/llvm/impl/codegen.hpp"

namespace weft::codegen::detail {

inline void CodeGenLLVM::emit_parallel_for(const ir::For* op, int64_t work_per_iteration) {
    llvm::Type* index_type = type_of(op->loop_var.type());
    llvm::Value* min = int_cast(emit(op->min), index_type, true);
    llvm::Value* extent = int_cast(emit(op->extent), b_.getInt64Ty(), true);

    // What the body reads from the enclosing function, in a fixed order.
    std::vector<const ir::VarNode*> captured;
    std::unordered_set<const ir::VarNode*> seen;
    ir::post_order_visit(op->body, [&](const ir::Object* n) {
        if (n->kind != ir::NodeKind::Var) return;
        auto* v = static_cast<const ir::VarNode*>(n);
        if (v != op->loop_var.node() && fs_.vars.count(v) && seen.insert(v).second) captured.push_back(v);
    });
    std::vector<llvm::Type*> fields{index_type};
    for (auto* v : captured) fields.push_back(fs_.vars.at(v)->getType());
    auto* closure_type = llvm::StructType::get(ctx_, fields);
    llvm::AllocaInst* closure = entry_alloca(closure_type, 8);
    closure->setName("closure." + op->loop_var.name());
    b_.CreateStore(min, b_.CreateStructGEP(closure_type, closure, 0));
    for (size_t i = 0; i < captured.size(); ++i)
        b_.CreateStore(fs_.vars.at(captured[i]), b_.CreateStructGEP(closure_type, closure, unsigned(i + 1)));

    auto* ptr = llvm::PointerType::get(ctx_, 0);
    auto* i64 = b_.getInt64Ty();
    auto* body_type = llvm::FunctionType::get(b_.getInt32Ty(), {i64, i64, ptr}, false);
    std::string name = symbol_ + ".parallel." + std::to_string(parallel_bodies_++) + "." + op->loop_var.name();
    llvm::Function* body_fn = new_function(name, body_type, llvm::GlobalValue::InternalLinkage);
    body_fn->addParamAttr(2, llvm::Attribute::NoAlias);

    // Emit body_fn with its own state, then come back.
    llvm::IRBuilderBase::InsertPoint resume = b_.saveIP();
    FunctionState outer = std::move(fs_);
    fs_ = FunctionState{};
    fs_.fn = body_fn;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body_fn));
    llvm::Value* env = body_fn->getArg(2);
    llvm::Value* inner_min = b_.CreateLoad(index_type, b_.CreateStructGEP(closure_type, env, 0));
    for (size_t i = 0; i < captured.size(); ++i) {
        llvm::Value* v = b_.CreateLoad(fields[i + 1], b_.CreateStructGEP(closure_type, env, unsigned(i + 1)),
                                       captured[i]->name);
        fs_.vars[captured[i]] = v;
    }
    llvm::Value* begin = b_.CreateAdd(inner_min, int_cast(body_fn->getArg(0), index_type, true), "", false, true);
    llvm::Value* end = b_.CreateAdd(inner_min, int_cast(body_fn->getArg(1), index_type, true), "", false, true);
    emit_loop(op->loop_var, begin, end, ir::ForKind::Serial, op->body);
    emit_return(b_.getInt32(0));
    fs_ = std::move(outer);
    b_.restoreIP(resume);

    llvm::Value* rc = b_.CreateCall(runtime_function("weft_runtime_parallel_for"),
                                     {body_fn, closure, extent, b_.getInt64(work_per_iteration)});
    return_unless(b_.CreateICmpEQ(rc, b_.getInt32(0)), rc);
}

}  // namespace weft::codegen::detail
