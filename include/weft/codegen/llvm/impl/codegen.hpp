// CodeGenLLVM: translates one lowered PrimFunc into LLVM IR.
//
// The member functions are defined by topic in the emit_*.hpp files next to this one:
// emit_expr (arithmetic, casts, calls), emit_memory (loads, stores, allocations),
// emit_args (the weft.arg_* intrinsics that read the kernel's arguments), emit_stmt
// (control flow, serial loops, assertions) and emit_parallel (outlined parallel loops).
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "weft/codegen/llvm/impl/alias_scopes.hpp"
#include "weft/codegen/llvm/impl/emit_kernel.hpp"
#include "weft/codegen/llvm/impl/llvm_types.hpp"
#include "weft/codegen/llvm/impl/math_intrinsics.hpp"
#include "weft/ir/function.hpp"
#include "weft/ir/target.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::codegen::detail {

class CodeGenLLVM {
public:
    CodeGenLLVM(const ir::PrimFunc& f, const Target& target, llvm::Module& m);
    // Emits the whole kernel as the external function `symbol` (and `symbol.unchecked`, see
    // the definition).
    void emit_kernel(const std::string& symbol);

private:
    // ---- expressions (emit_expr.hpp) ----
    llvm::Value* emit(const ir::Expr& e);
#define WEFT_DECLARE_EMIT(N) llvm::Value* emit_(const ir::node_type::N* op);
    WEFT_EXPR_NODES(WEFT_DECLARE_EMIT)
#undef WEFT_DECLARE_EMIT
    llvm::Value* emit_floor_div(const ir::Div* op);
    llvm::Value* emit_floor_mod(const ir::Mod* op);
    llvm::Value* emit_compare(const ir::Expr& a, const ir::Expr& b, llvm::CmpInst::Predicate signed_int,
                              llvm::CmpInst::Predicate unsigned_int, llvm::CmpInst::Predicate fp);
    llvm::Value* arith(ir::NodeKind op, DataType t, llvm::Value* a, llvm::Value* b);
    llvm::Value* emit_vector_reduce(const ir::Call* op);
    llvm::Value* emit_pure_intrinsic(const ir::Call* op);
    llvm::Value* emit_if_then_else(const ir::Call* op);
    llvm::Value* emit_extern_call(const ir::Call* op);
    llvm::Value* emit_cast(DataType from, DataType to, llvm::Value* v);
    llvm::Value* emit_bit_intrinsic(const ir::Call* op);
    llvm::Value* bfloat_to_float(llvm::Value* v, int lanes);
    llvm::Value* float_to_bfloat(llvm::Value* v, int lanes);
    llvm::Value* select_value(llvm::Value* cond, llvm::Value* t, llvm::Value* f);

    // ---- memory (emit_memory.hpp) ----
    llvm::Value* buffer(const ir::Var& buffer_var);
    // Stores `value` (a vector) at `address` bypassing the caches where it is aligned;
    // false when the target or the vector's size rules that out (emit a plain store then).
    bool emit_nontemporal_store(llvm::Value* value, llvm::Value* address, DataType t, const ir::VarNode* buffer);
    void emit_heap_allocate(const ir::Allocate* op, llvm::Value* bytes);

    // ---- kernel arguments (emit_args.hpp) ----
    llvm::Value* emit_weft_intrinsic(const ir::Call* op);
    llvm::Value* emit_amx_tile_dot(const ir::Call* op);  // emit_amx.hpp
    llvm::Value* tensor_arg_field(llvm::Value* position, unsigned field);
    llvm::Value* emit_check_arguments();

    // ---- statements (emit_stmt.hpp) ----
    void emit(const ir::Stmt& s);
#define WEFT_DECLARE_EMIT(N) void emit_(const ir::node_type::N* op);
    WEFT_STMT_NODES(WEFT_DECLARE_EMIT)
#undef WEFT_DECLARE_EMIT
    // for (var = begin; var < end; ++var) body, with loop hints for `kind`.
    void emit_loop(const ir::Var& var, llvm::Value* begin, llvm::Value* end, ir::ForKind kind, const ir::Stmt& body);
    // Leaves the current function with `code` (freeing its live heap allocations) unless
    // `ok` holds; continues in a new block where it does.
    void return_unless(llvm::Value* ok, llvm::Value* code);
    // Unless `ok` holds: calls weft_runtime_set_error(message) (an empty message: the failed
    // condition set its own) and returns -1.
    void fail_unless(llvm::Value* ok, const std::string& message);
    llvm::BasicBlock* branch_unless(llvm::Value* ok, const char* fail_block_name);
    // Frees the live heap allocations and returns `code` from the current function.
    void emit_return(llvm::Value* code);

    // ---- parallel loops (emit_parallel.hpp) ----
    // work_per_iteration: the loop's ir::attr::parallel_work, 0 when unknown.
    void emit_parallel_for(const ir::For* op, int64_t work_per_iteration);

    // ---- shared helpers (here) ----
    llvm::Function* new_function(const std::string& name, llvm::FunctionType* type, llvm::GlobalValue::LinkageTypes linkage);
    // A new external function with the entry's signature (ir/abi.hpp), ready to emit into.
    llvm::Function* begin_entry_function(const std::string& name);
    llvm::AllocaInst* entry_alloca(llvm::Type* type, uint64_t align);
    llvm::FunctionCallee runtime_function(const char* name);
    llvm::Type* type_of(DataType t) { return llvm_type(ctx_, t); }
    llvm::Value* bind(const ir::Var& var, llvm::Value* value);  // returns the previous binding
    void unbind(const ir::Var& var, llvm::Value* previous);
    llvm::Value* int_cast(llvm::Value* v, llvm::Type* to, bool is_signed) { return b_.CreateIntCast(v, to, is_signed); }

    const ir::PrimFunc& func_;
    const Target& target_;
    llvm::Module& module_;
    llvm::LLVMContext& ctx_;
    llvm::IRBuilder<> b_;
    AliasScopes alias_;
    MathEmitter math_;
    std::string symbol_;
    int parallel_bodies_ = 0;
    // Inside attr::nontemporal_store: the store being emitted may bypass the caches.
    bool nontemporal_store_ = false;

    // What belongs to the LLVM function being emitted: the entry, or an outlined parallel body.
    struct FunctionState {
        llvm::Function* fn = nullptr;
        std::unordered_map<const ir::VarNode*, llvm::Value*> vars;
        // Results of weft_runtime_alloc still live here; every early return frees them.
        std::vector<llvm::Value*> heap;
        // The entry's parameters (null in outlined bodies, which never read arguments).
        llvm::Value* args = nullptr;
        llvm::Value* type_codes = nullptr;
        llvm::Value* num_args = nullptr;
        // Non-temporal stores were emitted: the function ends with a store fence (they are
        // weakly ordered, and whoever reads the output next may run on another thread).
        bool wrote_nontemporal = false;
    };
    FunctionState fs_;
};

inline CodeGenLLVM::CodeGenLLVM(const ir::PrimFunc& f, const Target& target, llvm::Module& m)
    : func_(f), target_(target), module_(m), ctx_(m.getContext()), b_(m.getContext()), alias_(m.getContext(), f.body, f.name),
      math_(b_, m, target) {
    // Floats are strict unless the kernel opted in (no reassociation, no approximations),
    // except that a multiply feeding an add may become one fused multiply-add, as C
    // compilers do by default (-ffp-contract=on): it rounds once instead of twice, so it is
    // never less accurate, and it doubles the throughput of every dot product.
    llvm::FastMathFlags flags;
    if (f.fast_math) flags = llvm::FastMathFlags::getFast();
    flags.setAllowContract(true);
    b_.setFastMathFlags(flags);
}

// The body checks its arguments first (make_entry's assert(weft.check_arguments())): it is
// emitted as `symbol.unchecked`, the entry without that check, which Kernel::call uses (it
// checked the same in C++), and `symbol` checks and then calls it, for callers of the C ABI.
inline void CodeGenLLVM::emit_kernel(const std::string& symbol) {
    WEFT_ICHECK(func_.body.defined(), "kernel ", func_.name, " has no body");
    symbol_ = symbol;
    auto* check = func_.body.as<ir::AssertStmt>();
    auto* call = check ? check->condition.as<ir::Call>() : nullptr;
    if (!call || call->name != "weft.check_arguments") {
        begin_entry_function(symbol);
        emit(func_.body);
        emit_return(b_.getInt32(0));
        return;
    }
    llvm::Function* unchecked = begin_entry_function(symbol + kUncheckedSuffix);
    emit(check->body);
    emit_return(b_.getInt32(0));
    begin_entry_function(symbol);
    return_unless(emit_check_arguments(), b_.getInt32(-1));
    llvm::CallInst* run = b_.CreateCall(unchecked, {fs_.args, fs_.type_codes, fs_.num_args});
    run->setTailCall();
    b_.CreateRet(run);
}

inline llvm::Function* CodeGenLLVM::begin_entry_function(const std::string& name) {
    auto* ptr = llvm::PointerType::get(ctx_, 0);
    auto* type = llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr, b_.getInt32Ty()}, false);
    llvm::Function* fn = new_function(name, type, llvm::GlobalValue::ExternalLinkage);
    for (unsigned i = 0; i < 2; ++i) {
        fn->addParamAttr(i, llvm::Attribute::NoCapture);
        fn->addParamAttr(i, llvm::Attribute::ReadOnly);
    }
    fs_ = FunctionState{};
    fs_.fn = fn;
    fs_.args = fn->getArg(0);
    fs_.type_codes = fn->getArg(1);
    fs_.num_args = fn->getArg(2);
    fn->getArg(0)->setName("args");
    fn->getArg(1)->setName("type_codes");
    fn->getArg(2)->setName("num_args");
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn));
    return fn;
}

inline llvm::Function* CodeGenLLVM::new_function(const std::string& name, llvm::FunctionType* type,
                                                 llvm::GlobalValue::LinkageTypes linkage) {
    llvm::Function* fn = llvm::Function::Create(type, linkage, name, module_);
    fn->setDoesNotThrow();
    if (!target_.cpu.empty()) fn->addFnAttr("target-cpu", target_.cpu);
    if (!target_.features.empty()) fn->addFnAttr("target-features", target_.features);
    // Without these, LLVM on AVX-512 machines keeps to 256-bit vectors (and splits 512-bit
    // arguments of libmvec calls in two).
    std::string width = std::to_string(target_.vector_bits);
    fn->addFnAttr("prefer-vector-width", width);
    fn->addFnAttr("min-legal-vector-width", width);
    if (func_.fast_math) fn->addFnAttr("unsafe-fp-math", "true");
    return fn;
}

inline llvm::AllocaInst* CodeGenLLVM::entry_alloca(llvm::Type* type, uint64_t align) {
    // In the entry block, so that allocations inside loops do not grow the stack.
    llvm::BasicBlock& entry = fs_.fn->getEntryBlock();
    llvm::IRBuilder<> at_entry(&entry, entry.begin());
    llvm::AllocaInst* a = at_entry.CreateAlloca(type);
    a->setAlignment(llvm::Align(align));
    return a;
}

// The functions of ir/abi.hpp that generated code calls.
inline llvm::FunctionCallee CodeGenLLVM::runtime_function(const char* name) {
    auto* ptr = llvm::PointerType::get(ctx_, 0);
    auto* i32 = b_.getInt32Ty();
    auto* i64 = b_.getInt64Ty();
    auto* void_ = b_.getVoidTy();
    std::string n = name;
    llvm::FunctionType* type = nullptr;
    if (n == "weft_runtime_set_error") type = llvm::FunctionType::get(void_, {ptr}, false);
    else if (n == "weft_runtime_parallel_for") type = llvm::FunctionType::get(i32, {ptr, ptr, i64, i64}, false);
    else if (n == "weft_runtime_alloc") type = llvm::FunctionType::get(ptr, {i64}, false);
    else if (n == "weft_runtime_request_amx") type = llvm::FunctionType::get(i32, {}, false);
    else if (n == "weft_runtime_free") type = llvm::FunctionType::get(void_, {ptr}, false);
    else if (n == "weft_runtime_check_arguments") type = llvm::FunctionType::get(i32, {ptr, ptr, i32, ptr, ptr}, false);
    WEFT_ICHECK(type != nullptr, "unknown runtime function ", n);
    llvm::FunctionCallee callee = module_.getOrInsertFunction(n, type);
    auto* fn = llvm::cast<llvm::Function>(callee.getCallee());
    fn->setDoesNotThrow();
    if (n == "weft_runtime_alloc") {
        // Fresh, 64-byte aligned memory: lets LLVM use aligned vector accesses.
        fn->addRetAttr(llvm::Attribute::NoAlias);
        fn->addRetAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
    }
    return callee;
}

inline llvm::Value* CodeGenLLVM::bind(const ir::Var& var, llvm::Value* value) {
    if (value->getName().empty() && !llvm::isa<llvm::Constant>(value)) value->setName(var.name());
    auto& slot = fs_.vars[var.node()];
    llvm::Value* previous = slot;
    slot = value;
    return previous;
}

inline void CodeGenLLVM::unbind(const ir::Var& var, llvm::Value* previous) {
    if (previous) fs_.vars[var.node()] = previous;
    else fs_.vars.erase(var.node());
}

// ---- the seam with the JIT translation unit (emit_kernel.hpp) ----
void emit_kernel(const ir::PrimFunc& f, const Target& target, const std::string& symbol, llvm::Module& m) {
    CodeGenLLVM cg(f, target, m);
    cg.emit_kernel(symbol);
}

const char* emitter_build_stamp() { return __DATE__ " " __TIME__; }

}  // namespace weft::codegen::detail
