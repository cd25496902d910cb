// CUDA C for the tensor-core calls of codegen/cuda/tensor_core.hpp: one inline-PTX
// statement per mma, its accumulators as "+f" operands (read and written in place), the
// 16-bit inputs packed two per 32-bit register.
#pragma once
#include <functional>
#include <string>

#include "weft/codegen/cuda/tensor_core.hpp"
#include "weft/ir/error.hpp"
#include "weft/ir/expr.hpp"

namespace weft::codegen::tensor_core {

// The statement for `op` (without the trailing ';'), or empty when op is not a tensor-core
// call. `print` prints an argument as a C expression (a load of a buffer element prints as
// an lvalue, which the accumulators' "+f" constraints need).
inline std::string print_call(const ir::Call* op, const std::function<std::string(const ir::Expr&)>& print) {
    const bool f16 = op->name == mma_m16n8k16_f16, bf16 = op->name == mma_m16n8k16_bf16;
    if (!f16 && !bf16) return {};
    WEFT_ICHECK(op->args.size() == 16, "tensor-core call ", op->name, " takes 16 arguments, got ", op->args.size());
    for (int i = 0; i < 4; ++i)
        WEFT_ICHECK(op->args[size_t(i)].as<ir::Load>(), "tensor-core call ", op->name, ": accumulator ", i,
                    " must be a buffer element");
    const std::string bits = f16 ? "__half_as_ushort" : "__bfloat16_as_ushort";
    auto pack = [&](int lo, int hi) {
        return "(unsigned)" + bits + "(" + print(op->args[size_t(lo)]) + ") | ((unsigned)" + bits + "(" +
               print(op->args[size_t(hi)]) + ") << 16)";
    };
    const std::string type = f16 ? "f16" : "bf16";
    std::string s = "asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32." + type + "." + type +
                    ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"\n      : ";
    for (int i = 0; i < 4; ++i) s += std::string(i ? ", " : "") + "\"+f\"(" + print(op->args[size_t(i)]) + ")";
    s += "\n      : ";
    for (int r = 0; r < 6; ++r) s += std::string(r ? ",\n        " : "") + "\"r\"(" + pack(4 + 2 * r, 5 + 2 * r) + ")";
    return s + ")";
}

}  // namespace weft::codegen::tensor_core
