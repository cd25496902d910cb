// CodeGenCUDA: C names and C types (see codegen.hpp).
#pragma once
#include <cctype>
#include <set>
#include <string>

#include "weft/codegen/cuda/impl/codegen.hpp"
#include "weft/ir/op.hpp"

namespace weft::codegen::cuda_detail {

inline std::string CodeGenCUDA::identifier(const std::string& s) {
    std::string r;
    for (char c : s) r += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "v_" + r;
    return r;
}

// The kernel's C name: its name as an identifier, with "_kernel" appended when that is a
// name CUDA's headers or C++ already use (a graph kernel is named after its output stage,
// and an operator's stage is often named like the math function it computes: "exp",
// "max"; an extern "C" function of that name does not compile).
inline std::string CodeGenCUDA::kernel_identifier(const std::string& s) {
    static const std::set<std::string> taken = {
        "int", "float", "double", "char", "short", "long", "void", "bool", "for", "if", "else", "while", "do",
        "return", "const", "auto", "default", "delete", "new", "register", "signed", "unsigned", "main",
        "min", "max", "abs", "fabs", "fabsf", "exp", "expf", "exp2", "exp2f", "expm1", "expm1f", "log", "logf",
        "log2", "log2f", "log10", "log10f", "log1p", "log1pf", "sqrt", "sqrtf", "rsqrt", "rsqrtf", "cbrt",
        "pow", "powf", "sin", "sinf", "cos", "cosf", "tan", "tanf", "tanh", "tanhf", "sinh", "cosh", "asin",
        "acos", "atan", "atan2", "erf", "erff", "erfc", "floor", "floorf", "ceil", "ceilf", "round", "roundf",
        "trunc", "truncf", "fmin", "fminf", "fmax", "fmaxf", "fma", "fmaf", "fmod", "fmodf", "isnan", "isinf",
        "isfinite", "signbit", "copysign", "ldexp", "frexp", "modf", "rint", "nearbyint", "lround", "llround",
        "sigmoid", "clamp", "printf", "malloc", "free", "memcpy", "memset", "assert"};
    std::string name = identifier(s);
    return taken.count(name) || name.rfind("__", 0) == 0 ? name + "_kernel" : name;
}

// A fresh C name for a binding of v (each binding gets its own, so C scopes never clash).
inline std::string CodeGenCUDA::bind_name(const Var& v, const std::string& hint) {
    std::string base = identifier(hint.empty() ? v.name() : hint);
    static const std::set<std::string> reserved = {"int", "float", "double", "char", "short", "long", "void",
                                                   "for", "if", "else", "while", "do", "return", "const",
                                                   "threadIdx", "blockIdx", "blockDim", "gridDim", "min", "max"};
    std::string name = base;
    for (int i = 1; used_names_.count(name) || reserved.count(name); ++i) name = base + "_" + std::to_string(i);
    used_names_.insert(name);
    names_[v.get()] = name;
    return name;
}

inline const std::string& CodeGenCUDA::name_of(const Var& v) {
    auto it = names_.find(v.get());
    WEFT_ICHECK(it != names_.end(), "CUDA codegen: unbound buffer ", v.name());
    return it->second;
}

inline std::string CodeGenCUDA::type_name(DataType t) {
    WEFT_CHECK(t.lanes == 1, "CUDA codegen of kernel '", f_.name, "': a ", t.str(), " value in an unsupported position");
    switch (t.code) {
        case DataType::Code::Float:
            if (t.bits == 32) return "float";
            if (t.bits == 64) return "double";
            if (t.bits == 16) {
                uses_f16_ = true;
                return "__half";
            }
            break;
        case DataType::Code::BFloat:
            if (t.bits == 16) {
                uses_bf16_ = true;
                return "__nv_bfloat16";
            }
            break;
        case DataType::Code::Int:
            if (t.bits == 8) return "signed char";
            if (t.bits == 16) return "short";
            if (t.bits == 32) return "int";
            if (t.bits == 64) return "long long";
            break;
        case DataType::Code::UInt:
            if (t.bits == 1) return "bool";
            if (t.bits == 8) return "unsigned char";
            if (t.bits == 16) return "unsigned short";
            if (t.bits == 32) return "unsigned int";
            if (t.bits == 64) return "unsigned long long";
            break;
        case DataType::Code::Handle: break;
    }
    detail::throw_user_error(detail::concat("CUDA codegen of kernel '", f_.name, "': type ", t.str(),
                                            " is not supported on the GPU"));
}

// The C type of a loop counter or thread index.
inline std::string CodeGenCUDA::index_type_name() const { return narrow_index_ ? "int" : "long long"; }

inline bool CodeGenCUDA::is_half(DataType t) const { return t.is_float() && t.bits == 16; }

inline std::string CodeGenCUDA::to_float(DataType t, const std::string& v) const {
    if (!is_half(t)) return v;
    return (t.is_bfloat() ? "__bfloat162float(" : "__half2float(") + v + ")";
}

inline std::string CodeGenCUDA::from_float(DataType t, const std::string& v) {
    if (!is_half(t)) return v;
    type_name(t);  // records the header
    return (t.is_bfloat() ? "__float2bfloat16(" : "__float2half(") + v + ")";
}

inline bool CodeGenCUDA::index_fits_int32() const {
    for (auto& a : f_.args) {
        if (a.kind != ir::KernelArg::Kind::Tensor) continue;
        int64_t n = 1, d;
        for (auto& e : a.shape) {
            if (!ir::as_const_int(e, &d)) return false;
            n *= d;
            if (n >= (int64_t(1) << 31)) return false;
        }
    }
    return true;
}

}  // namespace weft::codegen::cuda_detail
