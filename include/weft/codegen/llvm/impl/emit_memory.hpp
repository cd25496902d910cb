// CodeGenLLVM: loads, stores and allocations (see codegen.hpp).
//
// A buffer variable is an untyped pointer; the access's type says what an element is. A
// vector index Ramp(base, 1, n) is one contiguous vector access, Broadcast(i, n) one scalar
// load splat to n lanes, b + Ramp(0, 1, n) / c (b a sum of broadcasts) a contiguous load and
// a shuffle (each element c times), and any other vector index a masked gather / scatter.
#pragma once
#include <algorithm>
#include <functional>

#include "weft/codegen/llvm/impl/codegen.hpp"
#include "weft/ir/op.hpp"

namespace weft::codegen::detail {

// Allocations that live on the stack of the kernel (or of one parallel task): small enough
// to never threaten a worker thread's stack.
inline constexpr int64_t kMaxStackAllocationBytes = 32 * 1024;
// What weft_runtime_alloc guarantees (ir/abi.hpp).
inline constexpr uint64_t kHeapAlignment = 64;

inline llvm::Value* CodeGenLLVM::buffer(const ir::Var& buffer_var) {
    WEFT_ICHECK(buffer_var.type().is_handle(), "buffer ", buffer_var.name(), " is not a handle");
    return emit(buffer_var);
}

inline bool is_dense_ramp(const ir::Expr& index) {
    auto* ramp = index.as<ir::Ramp>();
    return ramp && ir::is_one(ramp->stride);
}

// An index that is a sum of broadcasts (added or subtracted) and one Ramp(0, 1, n) /
// Broadcast(c), c > 1 dividing n: each of n / c consecutive elements from b (the broadcasts'
// sum) repeated c times (an upsampling's read, its taps offset by -1 or +1). Returns b and c,
// or an undefined b.
inline std::pair<ir::Expr, int64_t> repeated_ramp(const ir::Expr& index) {
    ir::Expr base;
    int64_t c = 0;
    bool found = false;
    // Adds the terms of e (negated when `minus`) to base; false for a term of another kind.
    std::function<bool(const ir::Expr&, bool)> walk = [&](const ir::Expr& e, bool minus) {
        if (auto* add = e.as<ir::Add>()) return walk(add->a, minus) && walk(add->b, minus);
        if (auto* sub = e.as<ir::Sub>()) return walk(sub->a, minus) && walk(sub->b, !minus);
        if (auto* splat = e.as<ir::Broadcast>()) {
            const ir::Expr v = splat->value;
            base = !base.defined() ? (minus ? ir::make_zero(v.type()) - v : v) : minus ? base - v : base + v;
            return true;
        }
        auto* div = e.as<ir::Div>();
        if (!div || minus || found) return false;
        auto* ramp = div->a.as<ir::Ramp>();
        auto* by = div->b.as<ir::Broadcast>();
        if (!ramp || !by || !ir::is_zero(ramp->base) || !ir::is_one(ramp->stride) || !ir::as_const_int(by->value, &c) ||
            c < 2 || ramp->lanes % c != 0)
            return false;
        found = true;
        return true;
    };
    if (!walk(index, false) || !found || !base.defined()) return {};
    return {base, c};
}

inline llvm::Value* CodeGenLLVM::emit_(const ir::Load* op) {
    DataType t = op->type;
    llvm::Type* elem = memory_type(ctx_, t.element_of());
    llvm::Align align(t.element_of().bytes());
    llvm::Value* base = buffer(op->buffer);
    const ir::VarNode* buf = op->buffer.node();
    auto to_register = [&](llvm::Value* v) {  // bytes back to i1 for bool
        return t.is_bool() ? b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType())) : v;
    };
    if (t.is_scalar() || op->index.as<ir::Broadcast>()) {
        const ir::Expr& index = t.is_scalar() ? op->index : op->index.as<ir::Broadcast>()->value;
        llvm::LoadInst* load = b_.CreateAlignedLoad(elem, b_.CreateInBoundsGEP(elem, base, emit(index)), align);
        alias_.annotate(load, buf);
        llvm::Value* v = to_register(load);
        return t.is_scalar() ? v : b_.CreateVectorSplat(t.lanes, v);
    }
    llvm::Type* vector = memory_type(ctx_, t);
    if (is_dense_ramp(op->index)) {
        llvm::Value* address = b_.CreateInBoundsGEP(elem, base, emit(op->index.as<ir::Ramp>()->base));
        llvm::LoadInst* load = b_.CreateAlignedLoad(vector, address, align);
        alias_.annotate(load, buf);
        return to_register(load);
    }
    if (auto [first, repeat] = repeated_ramp(op->index); first.defined()) {
        // One contiguous load of n / c elements, each then repeated c times by a shuffle.
        const int n = t.lanes, loaded = n / int(repeat);
        llvm::Type* part = memory_type(ctx_, t.with_lanes(loaded));
        llvm::LoadInst* load = b_.CreateAlignedLoad(part, b_.CreateInBoundsGEP(elem, base, emit(first)), align);
        alias_.annotate(load, buf);
        std::vector<int> mask(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) mask[size_t(i)] = i / int(repeat);
        return to_register(b_.CreateShuffleVector(load, mask));
    }
    llvm::Value* addresses = b_.CreateInBoundsGEP(elem, base, emit(op->index));
    llvm::CallInst* gather = b_.CreateMaskedGather(vector, addresses, align);
    alias_.annotate(gather, buf);
    return to_register(gather);
}

inline void CodeGenLLVM::emit_(const ir::Store* op) {
    DataType t = op->value.type();
    llvm::Type* elem = memory_type(ctx_, t.element_of());
    llvm::Align align(t.element_of().bytes());
    llvm::Value* base = buffer(op->buffer);
    llvm::Value* value = emit(op->value);
    if (t.is_bool()) value = b_.CreateZExt(value, memory_type(ctx_, t));
    llvm::Instruction* access = nullptr;
    if (t.is_scalar()) {
        access = b_.CreateAlignedStore(value, b_.CreateInBoundsGEP(elem, base, emit(op->index)), align);
    } else if (is_dense_ramp(op->index)) {
        llvm::Value* address = b_.CreateInBoundsGEP(elem, base, emit(op->index.as<ir::Ramp>()->base));
        if (nontemporal_store_ && emit_nontemporal_store(value, address, t, op->buffer.node())) return;
        access = b_.CreateAlignedStore(value, address, align);
    } else {
        access = b_.CreateMaskedScatter(value, b_.CreateInBoundsGEP(elem, base, emit(op->index)), align);
    }
    alias_.annotate(access, op->buffer.node());
}

// x86's MOVNT stores need an address aligned to the vector (LLVM splits an under-aligned
// non-temporal store into scalar pieces), so the store checks the address at run time and
// falls back to a plain store. Vectors wider than a cache line need only a line's alignment:
// LLVM writes them as several line-sized stores.
inline bool CodeGenLLVM::emit_nontemporal_store(llvm::Value* value, llvm::Value* address, DataType t,
                                                const ir::VarNode* buffer) {
    const uint64_t bytes = uint64_t(t.bytes()) * uint64_t(t.lanes);
    if (!target_.is_x86() || bytes < 16 || !ir::is_power_of_two(int64_t(bytes))) return false;
    const uint64_t alignment = std::min<uint64_t>(bytes, 64);
    llvm::Value* offset = b_.CreateAnd(b_.CreatePtrToInt(address, b_.getInt64Ty()), b_.getInt64(alignment - 1));
    auto* streaming = llvm::BasicBlock::Create(ctx_, "store.nontemporal", fs_.fn);
    auto* cached = llvm::BasicBlock::Create(ctx_, "store.cached", fs_.fn);
    auto* done = llvm::BasicBlock::Create(ctx_, "store.done", fs_.fn);
    b_.CreateCondBr(b_.CreateICmpEQ(offset, b_.getInt64(0)), streaming, cached);
    b_.SetInsertPoint(streaming);
    llvm::StoreInst* nt = b_.CreateAlignedStore(value, address, llvm::Align(alignment));
    nt->setMetadata(llvm::LLVMContext::MD_nontemporal,
                    llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
    alias_.annotate(nt, buffer);
    b_.CreateBr(done);
    b_.SetInsertPoint(cached);
    alias_.annotate(b_.CreateAlignedStore(value, address, llvm::Align(t.element_of().bytes())), buffer);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    fs_.wrote_nontemporal = true;
    return true;
}

inline void CodeGenLLVM::emit_(const ir::Allocate* op) {
    DataType t = op->type;
    int64_t count = 1;
    bool constant = true;
    for (auto& e : op->extents) {
        int64_t v = 0;
        if (ir::as_const_int(e, &v)) count *= v;
        else constant = false;
    }
    int64_t element_bytes = int64_t(t.bytes()) * t.lanes;
    // On a CPU both "local" and "global" intermediates are private to one kernel call; a
    // small constant-size one lives on the stack either way (a heap allocation per
    // iteration of an enclosing loop would dominate small compute_at stages).
    if ((op->scope == "local" || op->scope == "global") && constant && count * element_bytes <= kMaxStackAllocationBytes) {
        auto* storage = entry_alloca(llvm::ArrayType::get(b_.getInt8Ty(), uint64_t(std::max<int64_t>(count, 1) * element_bytes)),
                                     kHeapAlignment);
        storage->setName(op->buffer.name());
        llvm::Value* previous = bind(op->buffer, storage);
        emit(op->body);
        unbind(op->buffer, previous);
        return;
    }
    llvm::Value* bytes = b_.getInt64(uint64_t(element_bytes));
    for (auto& e : op->extents) bytes = b_.CreateMul(bytes, int_cast(emit(e), b_.getInt64Ty(), true));
    emit_heap_allocate(op, bytes);
}

// "global" scope, or too big or symbolic for the stack: weft_runtime_alloc, freed after the
// body and on every early return out of it.
inline void CodeGenLLVM::emit_heap_allocate(const ir::Allocate* op, llvm::Value* bytes) {
    // Checked here so the message names the buffer (weft_runtime_alloc's would not).
    fail_unless(b_.CreateICmpSGE(bytes, b_.getInt64(0)),
                "buffer '" + op->buffer.name() + "' of kernel " + func_.name + " has a negative size");
    llvm::Value* memory = b_.CreateCall(runtime_function("weft_runtime_alloc"), {bytes}, op->buffer.name());
    fail_unless(b_.CreateIsNotNull(memory),
                "out of memory allocating buffer '" + op->buffer.name() + "' in kernel " + func_.name);
    llvm::Value* previous = bind(op->buffer, memory);
    fs_.heap.push_back(memory);
    emit(op->body);
    fs_.heap.pop_back();
    unbind(op->buffer, previous);
    b_.CreateCall(runtime_function("weft_runtime_free"), {memory});
}

}  // namespace weft::codegen::detail
