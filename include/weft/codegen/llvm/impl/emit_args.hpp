// CodeGenLLVM: the weft.* intrinsics (ir/abi.hpp) through which a kernel's prologue checks
// and reads its arguments, plus weft.prefetch and the AMX tiles (emit_amx.hpp).
#pragma once
#include <cstddef>

#include "weft/codegen/llvm/impl/codegen.hpp"
#include "weft/codegen/llvm/impl/emit_amx.hpp"
#include "weft/ir/abi.hpp"
#include "weft/ir/argument_spec.hpp"

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
    if (is_amx_tile_dot(n)) return emit_amx_tile_dot(op);
    if (n == "weft.assume_aligned") {
        // (pointer, bytes): the runtime checked an argument's promised alignment; binding the
        // pointer through the assumption carries it to every access (LLVM's known bits).
        WEFT_ICHECK(op->args.size() == 2 && op->args[1].as<ir::IntImm>(), n, "(pointer, constant bytes)");
        llvm::Value* pointer = emit(op->args[0]);
        b_.CreateAlignmentAssumption(module_.getDataLayout(), pointer, uint64_t(op->args[1].as<ir::IntImm>()->value));
        return pointer;
    }
    WEFT_ICHECK(fs_.args != nullptr, n, " is only available in the kernel's entry, not in a parallel loop body");
    if (n == "weft.check_arguments") return emit_check_arguments();
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

// The kernel's signature as constant data (ir/argument_spec.hpp) and one call of the runtime
// that checks the arguments against it; true when they hold.
inline llvm::Value* CodeGenLLVM::emit_check_arguments() {
    ir::ArgumentSpec spec = ir::argument_spec(func_.name, func_.args);
    auto* words = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint64_t>(
                                                         reinterpret_cast<const uint64_t*>(spec.words.data()), spec.words.size()));
    auto* table = new llvm::GlobalVariable(module_, words->getType(), true, llvm::GlobalValue::PrivateLinkage, words,
                                           "weft.argument_spec");
    auto* names = b_.CreateGlobalString(spec.names, "weft.argument_names");
    llvm::Value* ok = b_.CreateCall(runtime_function("weft_runtime_check_arguments"),
                                    {fs_.args, fs_.type_codes, fs_.num_args, table, names});
    return b_.CreateICmpNE(ok, b_.getInt32(0));
}

}  // namespace weft::codegen::detail
