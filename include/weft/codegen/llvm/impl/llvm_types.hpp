// weft DataTypes as LLVM types: the type of a value in registers, and of an element in memory.
#pragma once
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Type.h>

#include "weft/ir/type.hpp"

namespace weft::codegen::detail {

// bool is i1 in registers; a vector type is a fixed LLVM vector of the element type.
inline llvm::Type* llvm_type(llvm::LLVMContext& ctx, DataType t) {
    llvm::Type* scalar = nullptr;
    switch (t.code) {
        case DataType::Code::Int:
        case DataType::Code::UInt: scalar = llvm::Type::getIntNTy(ctx, t.bits); break;
        case DataType::Code::Float:
            if (t.bits == 16) scalar = llvm::Type::getHalfTy(ctx);
            else if (t.bits == 32) scalar = llvm::Type::getFloatTy(ctx);
            else if (t.bits == 64) scalar = llvm::Type::getDoubleTy(ctx);
            break;
        case DataType::Code::BFloat:
            if (t.bits == 16) scalar = llvm::Type::getBFloatTy(ctx);
            break;
        case DataType::Code::Handle: scalar = llvm::PointerType::get(ctx, 0); break;
    }
    WEFT_CHECK(scalar != nullptr, "the LLVM backend does not support the data type ", t.str());
    return t.lanes == 1 ? scalar : llvm::FixedVectorType::get(scalar, t.lanes);
}

// In memory a bool takes a byte (as in C++), everything else is its register type.
inline llvm::Type* memory_type(llvm::LLVMContext& ctx, DataType t) {
    return t.is_bool() ? llvm_type(ctx, DataType::uint(8, t.lanes)) : llvm_type(ctx, t);
}

}  // namespace weft::codegen::detail
