// CodeGenLLVM: expressions (see codegen.hpp).
#pragma once
#include "weft/codegen/llvm/impl/codegen.hpp"
#include "weft/ir/op.hpp"

namespace weft::codegen::detail {

inline llvm::Value* CodeGenLLVM::emit(const ir::Expr& e) {
    WEFT_ICHECK(e.defined(), "undefined expression in kernel ", func_.name);
    switch (e.kind()) {
#define WEFT_CASE(N) \
    case ir::NodeKind::N: return emit_(static_cast<const ir::node_type::N*>(e.get()));
        WEFT_EXPR_NODES(WEFT_CASE)
#undef WEFT_CASE
        default: WEFT_ICHECK(false, "not an expression: ", ir::kind_name(e.kind()));
    }
    return nullptr;
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::IntImm* op) {
    return llvm::ConstantInt::get(type_of(op->type), uint64_t(op->value), /*isSigned=*/true);
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::FloatImm* op) { return llvm::ConstantFP::get(type_of(op->type), op->value); }

inline llvm::Value* CodeGenLLVM::emit_(const ir::StringImm* op) { return b_.CreateGlobalString(op->value, "weft.str"); }

inline llvm::Value* CodeGenLLVM::emit_(const ir::VarNode* op) {
    auto it = fs_.vars.find(op);
    WEFT_ICHECK(it != fs_.vars.end(), "variable ", op->name, " is used outside of its definition in kernel ",
                func_.name);
    return it->second;
}

// Signed integers of 32 bits and more do not overflow (as in C and Halide): nsw lets LLVM
// widen and vectorize index arithmetic. Narrower ones wrap.
inline bool no_signed_wrap(DataType t) { return t.is_int() && t.bits >= 32; }

// a op b for op an Add, Mul, Min or Max of type t (its lanes do not matter).
inline llvm::Value* CodeGenLLVM::arith(ir::NodeKind op, DataType t, llvm::Value* a, llvm::Value* b) {
    switch (op) {
        case ir::NodeKind::Add:
            return t.is_float() ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b, "", false, no_signed_wrap(t));
        case ir::NodeKind::Mul:
            return t.is_float() ? b_.CreateFMul(a, b) : b_.CreateMul(a, b, "", false, no_signed_wrap(t));
        case ir::NodeKind::Min:
            if (t.is_float()) return b_.CreateSelect(b_.CreateFCmpOLT(a, b), a, b);  // minps on x86
            return b_.CreateBinaryIntrinsic(t.is_int() ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, b);
        case ir::NodeKind::Max:
            if (t.is_float()) return b_.CreateSelect(b_.CreateFCmpOGT(a, b), a, b);
            return b_.CreateBinaryIntrinsic(t.is_int() ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, b);
        default: WEFT_ICHECK(false, "arith: not an Add, Mul, Min or Max");
    }
    return nullptr;
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Add* op) {
    return arith(ir::NodeKind::Add, op->type, emit(op->a), emit(op->b));
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Sub* op) {
    llvm::Value *a = emit(op->a), *b = emit(op->b);
    if (op->type.is_float()) return b_.CreateFSub(a, b);
    return b_.CreateSub(a, b, "", false, no_signed_wrap(op->type));
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Mul* op) {
    return arith(ir::NodeKind::Mul, op->type, emit(op->a), emit(op->b));
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Div* op) {
    if (op->type.is_float()) return b_.CreateFDiv(emit(op->a), emit(op->b));
    return emit_floor_div(op);
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Mod* op) {
    if (op->type.is_float()) {  // x - floor(x / y) * y
        llvm::Value *a = emit(op->a), *b = emit(op->b);
        llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, b));
        return b_.CreateFSub(a, b_.CreateFMul(q, b));
    }
    return emit_floor_mod(op);
}

// The value of a constant divisor (a scalar immediate or a broadcast one).
inline bool constant_divisor(const ir::Expr& e, int64_t* value) {
    if (auto* bc = e.as<ir::Broadcast>()) return ir::as_const_int(bc->value, value);
    return ir::as_const_int(e, value);
}

inline int log2_of(int64_t v) {
    int k = 0;
    while ((int64_t(1) << k) < v) ++k;
    return k;
}

// Integer division and remainder trap (SIGFPE on x86) for a zero divisor, and signed ones
// for MIN / -1: weft defines x / 0 and x % 0 as 0 (Halide's rule) and MIN / -1 as MIN (the
// two's-complement wrap), so no input data can crash a kernel. The divisor is replaced by 1
// where it would trap, and the result by 0 where it was 0. A constant divisor other than 0
// and -1 needs no guard (divisor: nullptr).
struct GuardedDivisor {
    llvm::Value* divisor;
    llvm::Value* was_zero;  // nullptr when the divisor cannot trap
};

inline GuardedDivisor guard_divisor(llvm::IRBuilder<>& ir, llvm::Value* a, llvm::Value* b, bool is_signed,
                                    bool constant, int64_t c) {
    if (constant && c != 0 && !(is_signed && c == -1)) return {b, nullptr};
    llvm::Type* t = b->getType();
    llvm::Value* zero = llvm::Constant::getNullValue(t);
    llvm::Value* was_zero = ir.CreateICmpEQ(b, zero);
    llvm::Value* traps = was_zero;
    if (is_signed) {
        const unsigned bits = t->getScalarSizeInBits();
        llvm::Value* min = llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(bits));
        llvm::Value* minus_one = llvm::Constant::getAllOnesValue(t);
        traps = ir.CreateOr(traps, ir.CreateAnd(ir.CreateICmpEQ(a, min), ir.CreateICmpEQ(b, minus_one)));
    }
    return {ir.CreateSelect(traps, llvm::ConstantInt::get(t, 1), b), was_zero};
}

inline llvm::Value* zero_where(llvm::IRBuilder<>& ir, const GuardedDivisor& g, llvm::Value* v) {
    return g.was_zero ? ir.CreateSelect(g.was_zero, llvm::Constant::getNullValue(v->getType()), v) : v;
}

// Integer division rounding toward negative infinity (ir/expr.hpp).
inline llvm::Value* CodeGenLLVM::emit_floor_div(const ir::Div* op) {
    llvm::Value *a = emit(op->a), *b = emit(op->b);
    llvm::Type* t = a->getType();
    int64_t c = 0;
    bool constant = constant_divisor(op->b, &c);
    if (constant && ir::is_power_of_two(c)) {
        auto* shift = llvm::ConstantInt::get(t, log2_of(c));
        return op->type.is_int() ? b_.CreateAShr(a, shift) : b_.CreateLShr(a, shift);
    }
    const GuardedDivisor g = guard_divisor(b_, a, b, op->type.is_int(), constant, c);
    if (!op->type.is_int()) return zero_where(b_, g, b_.CreateUDiv(a, g.divisor));
    b = g.divisor;
    llvm::Value* q = b_.CreateSDiv(a, b);
    llvm::Value* r = b_.CreateSRem(a, b);
    llvm::Value* zero = llvm::Constant::getNullValue(t);
    // C's quotient is one too large when the remainder is non-zero and has the sign
    // opposite to the divisor's; for a positive constant divisor that is just r < 0.
    llvm::Value* round_down = constant && c > 0 ? b_.CreateICmpSLT(r, zero)
                                                : b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                                               b_.CreateICmpNE(b_.CreateICmpSLT(r, zero),
                                                                               b_.CreateICmpSLT(b, zero)));
    return zero_where(b_, g, b_.CreateSelect(round_down, b_.CreateSub(q, llvm::ConstantInt::get(t, 1)), q));
}

// The remainder of floor division: has the divisor's sign.
inline llvm::Value* CodeGenLLVM::emit_floor_mod(const ir::Mod* op) {
    llvm::Value *a = emit(op->a), *b = emit(op->b);
    llvm::Type* t = a->getType();
    int64_t c = 0;
    bool constant = constant_divisor(op->b, &c);
    if (constant && ir::is_power_of_two(c)) return b_.CreateAnd(a, llvm::ConstantInt::get(t, c - 1));
    const GuardedDivisor g = guard_divisor(b_, a, b, op->type.is_int(), constant, c);
    if (!op->type.is_int()) return zero_where(b_, g, b_.CreateURem(a, g.divisor));
    b = g.divisor;
    llvm::Value* r = b_.CreateSRem(a, b);
    llvm::Value* zero = llvm::Constant::getNullValue(t);
    llvm::Value* add_divisor = constant && c > 0 ? b_.CreateICmpSLT(r, zero)
                                                 : b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                                                b_.CreateICmpNE(b_.CreateICmpSLT(r, zero),
                                                                                b_.CreateICmpSLT(b, zero)));
    return zero_where(b_, g, b_.CreateSelect(add_divisor, b_.CreateAdd(r, b), r));
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Min* op) {
    return arith(ir::NodeKind::Min, op->type, emit(op->a), emit(op->b));
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Max* op) {
    return arith(ir::NodeKind::Max, op->type, emit(op->a), emit(op->b));
}

// vector_reduce_*(v): the lanes combined as a tree, each step the operation on the two halves
// of the vector (a shuffle each: vextract / vpermilps on x86), log2(lanes) steps deep.
inline llvm::Value* CodeGenLLVM::emit_vector_reduce(const ir::Call* op) {
    WEFT_ICHECK(op->args.size() == 1, op->name, " takes one vector");
    ir::NodeKind kind;
    const bool known = ir::vector_reduce_op(op->name, &kind);
    WEFT_ICHECK(known, "unknown reduction ", op->name);
    const DataType t = op->args[0].type();
    llvm::Value* v = emit(op->args[0]);
    if (t.lanes == 1) return v;
    std::vector<llvm::Value*> odd_lanes;  // lanes left over by halving an odd count
    int lanes = t.lanes;
    while (lanes > 2) {
        if (lanes % 2) odd_lanes.push_back(b_.CreateExtractElement(v, uint64_t(--lanes)));
        const int half = lanes / 2;
        std::vector<int> low(static_cast<size_t>(half)), high(static_cast<size_t>(half));
        for (int i = 0; i < half; ++i) low[size_t(i)] = i, high[size_t(i)] = half + i;
        v = arith(kind, t, b_.CreateShuffleVector(v, low), b_.CreateShuffleVector(v, high));
        lanes = half;
    }
    llvm::Value* result = b_.CreateExtractElement(v, uint64_t(0));
    if (lanes == 2) result = arith(kind, t, result, b_.CreateExtractElement(v, uint64_t(1)));
    for (auto it = odd_lanes.rbegin(); it != odd_lanes.rend(); ++it) result = arith(kind, t, result, *it);
    return result;
}

inline llvm::Value* CodeGenLLVM::emit_compare(const ir::Expr& a_expr, const ir::Expr& b_expr,
                                              llvm::CmpInst::Predicate signed_int,
                                              llvm::CmpInst::Predicate unsigned_int, llvm::CmpInst::Predicate fp) {
    llvm::Value *a = emit(a_expr), *b = emit(b_expr);
    DataType t = a_expr.type();
    if (t.is_float()) return b_.CreateFCmp(fp, a, b);
    return b_.CreateICmp(t.is_int() ? signed_int : unsigned_int, a, b);
}

using Pred = llvm::CmpInst::Predicate;
inline llvm::Value* CodeGenLLVM::emit_(const ir::EQ* op) {
    return emit_compare(op->a, op->b, Pred::ICMP_EQ, Pred::ICMP_EQ, Pred::FCMP_OEQ);
}
inline llvm::Value* CodeGenLLVM::emit_(const ir::NE* op) {  // NaN != NaN, as in C
    return emit_compare(op->a, op->b, Pred::ICMP_NE, Pred::ICMP_NE, Pred::FCMP_UNE);
}
inline llvm::Value* CodeGenLLVM::emit_(const ir::LT* op) {
    return emit_compare(op->a, op->b, Pred::ICMP_SLT, Pred::ICMP_ULT, Pred::FCMP_OLT);
}
inline llvm::Value* CodeGenLLVM::emit_(const ir::LE* op) {
    return emit_compare(op->a, op->b, Pred::ICMP_SLE, Pred::ICMP_ULE, Pred::FCMP_OLE);
}
inline llvm::Value* CodeGenLLVM::emit_(const ir::GT* op) {
    return emit_compare(op->a, op->b, Pred::ICMP_SGT, Pred::ICMP_UGT, Pred::FCMP_OGT);
}
inline llvm::Value* CodeGenLLVM::emit_(const ir::GE* op) {
    return emit_compare(op->a, op->b, Pred::ICMP_SGE, Pred::ICMP_UGE, Pred::FCMP_OGE);
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::And* op) { return b_.CreateAnd(emit(op->a), emit(op->b)); }
inline llvm::Value* CodeGenLLVM::emit_(const ir::Or* op) { return b_.CreateOr(emit(op->a), emit(op->b)); }
inline llvm::Value* CodeGenLLVM::emit_(const ir::Not* op) { return b_.CreateNot(emit(op->a)); }

// A select of bfloat16 values chooses their bits: LLVM legalizes a bfloat select (and its
// constants) through float32 and back, a call to __truncsfbf2 on CPUs without AVX512_BF16,
// which the JIT cannot link.
inline llvm::Value* CodeGenLLVM::select_value(llvm::Value* cond, llvm::Value* t, llvm::Value* f) {
    if (!t->getType()->getScalarType()->isBFloatTy()) return b_.CreateSelect(cond, t, f);
    llvm::Type* bits = t->getType()->getWithNewType(b_.getInt16Ty());
    return b_.CreateBitCast(b_.CreateSelect(cond, b_.CreateBitCast(t, bits), b_.CreateBitCast(f, bits)), t->getType());
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Select* op) {
    // A scalar condition with vector values is a valid LLVM select as it is.
    return select_value(emit(op->condition), emit(op->true_value), emit(op->false_value));
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Cast* op) { return emit_cast(op->value.type(), op->type, emit(op->value)); }

inline llvm::Value* CodeGenLLVM::emit_cast(DataType from, DataType to, llvm::Value* v) {
    llvm::Type* target = type_of(to);
    if (from == to) return v;
    // bfloat16 goes through float32 by its bits: LLVM would call __truncsfbf2 on CPUs without
    // AVX512-BF16, which the JIT cannot count on finding.
    const DataType wide = f32.with_lanes(to.lanes);
    if (from.is_bfloat()) return emit_cast(wide, to, bfloat_to_float(v, to.lanes));
    if (to.is_bfloat() && !from.is_handle()) return float_to_bfloat(from == wide ? v : emit_cast(from, wide, v), to.lanes);
    if (to.is_bool()) {  // nonzero is true
        if (from.is_float()) return b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
        if (from.is_handle()) return b_.CreateIsNotNull(v);
        return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    }
    if (from.is_handle()) return to.is_handle() ? v : b_.CreatePtrToInt(v, target);
    if (to.is_handle()) return b_.CreateIntToPtr(v, target);
    if (from.is_float() && to.is_float()) {
        // half <-> bfloat have the same width: go through float.
        if (from.bits == to.bits) return b_.CreateFPTrunc(b_.CreateFPExt(v, type_of(f32.with_lanes(to.lanes))), target);
        return b_.CreateFPCast(v, target);
    }
    if (from.is_float()) return to.is_int() ? b_.CreateFPToSI(v, target) : b_.CreateFPToUI(v, target);
    if (to.is_float()) return from.is_int() ? b_.CreateSIToFP(v, target) : b_.CreateUIToFP(v, target);
    return b_.CreateIntCast(v, target, from.is_int());
}

// Bit operations (ir/op.hpp); a shift amount outside [0, bits) selects the defined result
// (LLVM's shifts would be poison there).
inline llvm::Value* CodeGenLLVM::emit_bit_intrinsic(const ir::Call* op) {
    const std::string& n = op->name;
    llvm::Value* a = emit(op->args[0]);
    if (n == "bitwise_not") return b_.CreateNot(a);
    llvm::Value* b = emit(op->args[1]);
    if (n == "bitwise_and") return b_.CreateAnd(a, b);
    if (n == "bitwise_or") return b_.CreateOr(a, b);
    if (n == "bitwise_xor") return b_.CreateXor(a, b);
    llvm::Type* t = a->getType();
    const unsigned bits = t->getScalarSizeInBits();
    llvm::Value* in_range = b_.CreateICmpULT(b, llvm::ConstantInt::get(t, bits));
    llvm::Value* zero = llvm::Constant::getNullValue(t);
    if (n == "shift_left") return b_.CreateSelect(in_range, b_.CreateShl(a, b), zero);
    if (!op->type.is_int()) return b_.CreateSelect(in_range, b_.CreateLShr(a, b), zero);
    llvm::Value* sign = b_.CreateAShr(a, llvm::ConstantInt::get(t, bits - 1));
    return b_.CreateSelect(in_range, b_.CreateAShr(a, b), sign);
}

// A bfloat16 is the high half of a float32.
inline llvm::Value* CodeGenLLVM::bfloat_to_float(llvm::Value* v, int lanes) {
    auto vec = [&](llvm::Type* t) { return lanes > 1 ? (llvm::Type*)llvm::FixedVectorType::get(t, unsigned(lanes)) : t; };
    llvm::Value* bits = b_.CreateBitCast(v, vec(b_.getInt16Ty()));
    llvm::Value* wide = b_.CreateShl(b_.CreateZExt(bits, vec(b_.getInt32Ty())), 16);
    return b_.CreateBitCast(wide, vec(b_.getFloatTy()));
}

// float32 to bfloat16 rounded to nearest even; a NaN stays a (quiet) NaN.
inline llvm::Value* CodeGenLLVM::float_to_bfloat(llvm::Value* v, int lanes) {
    auto vec = [&](llvm::Type* t) { return lanes > 1 ? (llvm::Type*)llvm::FixedVectorType::get(t, unsigned(lanes)) : t; };
    llvm::Type* i32 = vec(b_.getInt32Ty());
    auto k = [&](uint32_t c) { return llvm::ConstantInt::get(i32, c); };
    llvm::Value* u = b_.CreateBitCast(v, i32);
    llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(u, 16), k(1));
    llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(u, b_.CreateAdd(k(0x7FFF), lsb)), 16);
    llvm::Value* quiet = b_.CreateOr(b_.CreateLShr(u, 16), k(0x40));
    llvm::Value* bits = b_.CreateSelect(b_.CreateFCmpUNO(v, v), quiet, rounded);
    return b_.CreateBitCast(b_.CreateTrunc(bits, vec(b_.getInt16Ty())), vec(b_.getBFloatTy()));
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Call* op) {
    switch (op->call_kind) {
        case ir::Call::CallKind::Intrinsic: return emit_weft_intrinsic(op);
        case ir::Call::CallKind::PureIntrinsic: return emit_pure_intrinsic(op);
        case ir::Call::CallKind::Extern: return emit_extern_call(op);
    }
    return nullptr;
}

inline llvm::Value* CodeGenLLVM::emit_pure_intrinsic(const ir::Call* op) {
    const std::string& n = op->name;
    if (n == "if_then_else") return emit_if_then_else(op);
    if (n == "reinterpret") return b_.CreateBitCast(emit(op->args[0]), type_of(op->type));
    if (ir::is_vector_reduce(n)) return emit_vector_reduce(op);
    if (n.rfind("llvm.", 0) == 0) return emit_extern_call(op);  // LLVM knows intrinsics by name
    if (n == "truncdiv" || n == "truncmod") {  // C semantics
        llvm::Value *a = emit(op->args[0]), *b = emit(op->args[1]);
        bool is_signed = op->type.is_int();
        int64_t c = 0;
        const GuardedDivisor g = guard_divisor(b_, a, b, is_signed, constant_divisor(op->args[1], &c), c);
        if (n == "truncdiv")
            return zero_where(b_, g, is_signed ? b_.CreateSDiv(a, g.divisor) : b_.CreateUDiv(a, g.divisor));
        return zero_where(b_, g, is_signed ? b_.CreateSRem(a, g.divisor) : b_.CreateURem(a, g.divisor));
    }
    if (ir::is_bit_intrinsic(n)) return emit_bit_intrinsic(op);
    WEFT_ICHECK(MathEmitter::handles(n), "the LLVM backend does not know the intrinsic ", n);
    std::vector<llvm::Value*> args;
    for (auto& a : op->args) args.push_back(emit(a));
    return math_.emit(n, args, op->type);
}

// Only the chosen branch runs: a guarded load must not touch memory when its guard fails.
inline llvm::Value* CodeGenLLVM::emit_if_then_else(const ir::Call* op) {
    WEFT_ICHECK(op->args.size() == 3, "if_then_else takes 3 arguments");
    llvm::Value* cond = emit(op->args[0]);
    if (cond->getType()->isVectorTy())  // per-lane: both sides (the vectorizer guarantees they are safe)
        return select_value(cond, emit(op->args[1]), emit(op->args[2]));
    llvm::Function* fn = fs_.fn;
    auto* then_bb = llvm::BasicBlock::Create(ctx_, "ite.then", fn);
    auto* else_bb = llvm::BasicBlock::Create(ctx_, "ite.else", fn);
    auto* merge_bb = llvm::BasicBlock::Create(ctx_, "ite.end", fn);
    b_.CreateCondBr(cond, then_bb, else_bb);
    b_.SetInsertPoint(then_bb);
    llvm::Value* t = emit(op->args[1]);
    llvm::BasicBlock* then_end = b_.GetInsertBlock();
    b_.CreateBr(merge_bb);
    b_.SetInsertPoint(else_bb);
    llvm::Value* f = emit(op->args[2]);
    llvm::BasicBlock* else_end = b_.GetInsertBlock();
    b_.CreateBr(merge_bb);
    b_.SetInsertPoint(merge_bb);
    // (bfloat16 through its bits, as select_value: LLVM turns this phi into a select)
    llvm::Type* type = t->getType();
    const bool bits = type->getScalarType()->isBFloatTy();
    llvm::Type* merged = bits ? type->getWithNewType(b_.getInt16Ty()) : type;
    auto as_merged = [&](llvm::Value* v, llvm::BasicBlock* end) {
        if (!bits) return v;
        llvm::IRBuilder<> at(end->getTerminator());
        return at.CreateBitCast(v, merged);
    };
    llvm::Value* t_merged = as_merged(t, then_end);
    llvm::Value* f_merged = as_merged(f, else_end);
    llvm::PHINode* phi = b_.CreatePHI(merged, 2);
    phi->addIncoming(t_merged, then_end);
    phi->addIncoming(f_merged, else_end);
    return bits ? b_.CreateBitCast(phi, type) : phi;
}

// A C function found by symbol name when the JIT links the kernel.
inline llvm::Value* CodeGenLLVM::emit_extern_call(const ir::Call* op) {
    std::vector<llvm::Value*> args;
    std::vector<llvm::Type*> params;
    for (auto& a : op->args) {
        args.push_back(emit(a));
        params.push_back(args.back()->getType());
    }
    auto callee = module_.getOrInsertFunction(op->name, llvm::FunctionType::get(type_of(op->type), params, false));
    return b_.CreateCall(callee, args);
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Ramp* op) {
    llvm::Value* base = b_.CreateVectorSplat(op->lanes, emit(op->base));
    llvm::Value* stride = b_.CreateVectorSplat(op->lanes, emit(op->stride));
    std::vector<llvm::Constant*> steps;
    llvm::Type* elem = type_of(op->base.type());
    for (int i = 0; i < op->lanes; ++i) steps.push_back(llvm::ConstantInt::get(elem, i));
    DataType t = op->type;
    return b_.CreateAdd(base, b_.CreateMul(stride, llvm::ConstantVector::get(steps), "", false, no_signed_wrap(t)), "",
                        false, no_signed_wrap(t));
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Broadcast* op) { return b_.CreateVectorSplat(op->lanes, emit(op->value)); }

inline llvm::Value* CodeGenLLVM::emit_(const ir::Let* op) {
    llvm::Value* previous = bind(op->var, emit(op->value));
    llvm::Value* v = emit(op->body);
    unbind(op->var, previous);
    return v;
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Reduce*) {
    WEFT_ICHECK(false, "a Reduce node reached the LLVM backend; lowering must remove it");
    return nullptr;
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::ProducerLoad* op) {
    WEFT_ICHECK(false, "a ProducerLoad of ", op->name, " reached the LLVM backend; storage flattening must remove it");
    return nullptr;
}

}  // namespace weft::codegen::detail
