// CodeGenLLVM: the weft.* intrinsics (ir/abi.hpp) through which a kernel's prologue reads
// and checks its arguments, plus weft.prefetch.
#pragma once
#include <cstddef>

#include "weft/codegen/llvm/impl/codegen.hpp"
#include "weft/ir/abi.hpp"

namespace weft::codegen::detail {

// WeftTensorArg's fields, in declaration order.
enum TensorArgField : unsigned { kData, kShape, kStrides, kNdim, kDtypeCode, kDtypeBits, kDtypeLanes };

inline llvm::StructType* tensor_arg_type(llvm::LLVMContext& ctx) {
    auto* ptr = llvm::PointerType::get(ctx, 0);
    auto* t = llvm::StructType::get(ctx, {ptr, ptr, ptr, llvm::Type::getInt32Ty(ctx), llvm::Type::getInt8Ty(ctx),
                                          llvm::Type::getInt8Ty(ctx), llvm::Type::getInt16Ty(ctx)});
    return t;
}
static_assert(offsetof(WeftTensorArg, ndim) == 24 && offsetof(WeftTensorArg, dtype_lanes) == 30 &&
                  sizeof(WeftTensorArg) == 32,
              "tensor_arg_type must mirror WeftTensorArg");
static_assert(sizeof(WeftValue) == 8, "arguments are 8-byte slots");

// Field `field` of the WeftTensorArg passed at `position`.
inline llvm::Value* CodeGenLLVM::tensor_arg_field(llvm::Value* position, unsigned field) {
    auto* ptr = llvm::PointerType::get(ctx_, 0);
    llvm::Value* tensor = b_.CreateLoad(ptr, b_.CreateInBoundsGEP(ptr, fs_.args, position));
    llvm::StructType* st = tensor_arg_type(ctx_);
    return b_.CreateLoad(st->getElementType(field), b_.CreateStructGEP(st, tensor, field));
}

inline llvm::Value* CodeGenLLVM::emit_weft_intrinsic(const ir::Call* op) {
    const std::string& n = op->name;
    if (n == "weft.prefetch") {
        // weft.prefetch(buffer, index), or weft.prefetch(load) (Stage::prefetch: the address of
        // the load, which is not performed); the element type is the call's type.
        llvm::Type* elem = memory_type(ctx_, op->type.element_of());
        const ir::Load* load = op->args.size() == 1 ? op->args[0].as<ir::Load>() : nullptr;
        WEFT_ICHECK(load || (op->args.size() == 2 && op->args[0].type().is_handle()),
                    "weft.prefetch(buffer, index) or weft.prefetch(load)");
        llvm::Value* address = load ? b_.CreateGEP(elem, buffer(load->buffer), emit(load->index))
                                    : b_.CreateInBoundsGEP(elem, emit(op->args[0]), emit(op->args[1]));
        // read, high locality, data cache
        b_.CreateIntrinsic(llvm::Intrinsic::prefetch, {address->getType()},
                           {address, b_.getInt32(0), b_.getInt32(3), b_.getInt32(1)});
        return llvm::Constant::getNullValue(type_of(op->type));
    }
    if (n == "weft.is_aligned" || n == "weft.assume_aligned") {
        // (pointer, bytes): make_entry tests an argument's promised alignment, then binds the
        // pointer through the assumption, so that LLVM's known bits carry it to every access.
        WEFT_ICHECK(op->args.size() == 2 && op->args[1].as<ir::IntImm>(), n, "(pointer, constant bytes)");
        llvm::Value* pointer = emit(op->args[0]);
        const uint64_t bytes = uint64_t(op->args[1].as<ir::IntImm>()->value);
        if (n == "weft.assume_aligned") {
            b_.CreateAlignmentAssumption(module_.getDataLayout(), pointer, bytes);
            return pointer;
        }
        llvm::Value* low_bits = b_.CreateAnd(b_.CreatePtrToInt(pointer, b_.getInt64Ty()), b_.getInt64(bytes - 1));
        return b_.CreateICmpEQ(low_bits, b_.getInt64(0));
    }
    WEFT_ICHECK(fs_.args != nullptr, n, " is only available in the kernel's entry, not in a parallel loop body");
    llvm::Type* result = type_of(op->type);
    if (n == "weft.num_args") return int_cast(fs_.num_args, result, true);
    WEFT_ICHECK(!op->args.empty(), n, " needs an argument position");
    llvm::Value* position = emit(op->args[0]);
    auto* i64 = b_.getInt64Ty();
    if (n == "weft.arg_type_code")
        return int_cast(b_.CreateLoad(b_.getInt32Ty(), b_.CreateInBoundsGEP(b_.getInt32Ty(), fs_.type_codes, position)),
                        result, true);
    if (n == "weft.arg_int") return int_cast(b_.CreateLoad(i64, b_.CreateInBoundsGEP(i64, fs_.args, position)), result, true);
    if (n == "weft.arg_float") {
        llvm::Value* v = b_.CreateLoad(b_.getDoubleTy(), b_.CreateInBoundsGEP(i64, fs_.args, position));
        return b_.CreateFPCast(v, result);
    }
    if (n == "weft.arg_data") return tensor_arg_field(position, kData);
    if (n == "weft.arg_ndim") return int_cast(tensor_arg_field(position, kNdim), result, true);
    if (n == "weft.arg_dtype_code") return int_cast(tensor_arg_field(position, kDtypeCode), result, false);
    if (n == "weft.arg_dtype_bits") return int_cast(tensor_arg_field(position, kDtypeBits), result, false);
    if (n == "weft.arg_dtype_lanes") return int_cast(tensor_arg_field(position, kDtypeLanes), result, false);
    if (n == "weft.arg_shape" || n == "weft.arg_stride") {
        WEFT_ICHECK(op->args.size() == 2, n, "(i, d) takes 2 arguments");
        llvm::Value* array = tensor_arg_field(position, n == "weft.arg_shape" ? kShape : kStrides);
        llvm::Value* d = emit(op->args[1]);
        return int_cast(b_.CreateLoad(i64, b_.CreateInBoundsGEP(i64, array, d)), result, true);
    }
    WEFT_ICHECK(false, "the LLVM backend does not know the intrinsic ", n);
    return nullptr;
}

}  // namespace weft::codegen::detail
