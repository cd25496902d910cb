// The math intrinsics of ir/op.hpp (exp, log, sqrt, rsqrt, tanh, sigmoid, erf, pow, abs,
// floor, ceil, round, ldexp) on scalars and vectors.
//
// Vectors of exp/log/pow/tanh/erf call glibc's libmvec directly (_ZGVeN16v_expf: one call
// for 16 lanes instead of 16 calls to expf), split into the widest variant the target has;
// lanes no variant covers are computed one by one with the scalar libm function.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/DynamicLibrary.h>

#include "weft/codegen/llvm/impl/vector_pieces.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/target.hpp"
#include "weft/ir/type.hpp"

namespace weft::codegen::detail {

// Whether glibc's vector math library in this process defines `symbol` (older glibc lacks
// tanh and erf, for example).
inline bool libmvec_has(const std::string& symbol) {
    static llvm::sys::DynamicLibrary libmvec = llvm::sys::DynamicLibrary::getPermanentLibrary("libmvec.so.1");
    return libmvec.isValid() && libmvec.getAddressOfSymbol(symbol.c_str()) != nullptr;
}

class MathEmitter {
public:
    MathEmitter(llvm::IRBuilder<>& b, llvm::Module& m, const Target& target) : b_(b), m_(m) {
        bool x86 = target.is_x86();
        // Vector-ABI ISA letters: 'b' SSE (xmm), 'd' AVX2 (ymm), 'e' AVX-512 (zmm).
        avx512_ = target.uses_avx512();
        if (avx512_) isas_.push_back({512, 'e'});
        if (x86 && target.vector_bits >= 256 && target.has_feature("avx2")) isas_.push_back({256, 'd'});
        if (x86) isas_.push_back({128, 'b'});
    }

    static bool handles(const std::string& name) {
        static const char* names[] = {"exp",   "log",  "sqrt", "rsqrt",     "tanh", "sigmoid", "erf", "pow",
                                      "fmod", "abs",  "floor", "ceil", "round", "roundeven", "ldexp"};
        for (auto* n : names)
            if (name == n) return true;
        for (const std::string& n : ir::libm_unary_functions())
            if (name == n) return true;
        return false;
    }

    // `args` are already emitted; t is the call's (and every argument's) type.
    llvm::Value* emit(const std::string& name, const std::vector<llvm::Value*>& args, DataType t) {
        if (name == "abs" && !t.is_float())
            return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, args[0], b_.getFalse());
        WEFT_CHECK(t.bits == 32 || t.bits == 64, "math intrinsic ", name, " on ", t.str(),
                   " is not supported by the LLVM backend yet; cast the value to float32 first");
        if (name == "sqrt") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0]);
        if (name == "floor") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, args[0]);
        if (name == "ceil") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, args[0]);
        if (name == "round") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::round, args[0]);  // half away from 0
        if (name == "roundeven") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, args[0]);
        if (name == "fmod") return b_.CreateFRem(args[0], args[1]);  // LLVM's frem is C's fmod
        if (name == "abs") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, args[0]);
        if (name == "ldexp") return avx512_ ? scalef(args[0], args[1], t) : ldexp(args[0], args[1], t);
        if (name == "rsqrt") return b_.CreateFDiv(one(args[0]), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, args[0]));
        if (name == "sigmoid") {
            llvm::Value* e = libm("exp", {b_.CreateFNeg(args[0])}, t);
            return b_.CreateFDiv(one(args[0]), b_.CreateFAdd(one(args[0]), e));
        }
        return libm(name, args, t);
    }

private:
    llvm::Value* one(llvm::Value* like) { return llvm::ConstantFP::get(like->getType(), 1.0); }

    // ldexp(x, n) = x * 2^floor(n) with AVX-512's VSCALEF, which computes exactly that (one
    // instruction where building 2^n from its exponent bits takes a conversion, an add, a
    // shift and a multiply), in 512-bit pieces; a shorter piece or a scalar fills the low
    // lanes of one.
    llvm::Value* scalef(llvm::Value* x, llvm::Value* n, DataType t) {
        const int full = 512 / t.bits, lanes = t.lanes;
        const bool f32 = t.bits == 32;
        auto* piece_type = llvm::FixedVectorType::get(x->getType()->getScalarType(), unsigned(full));
        llvm::Function* fn = llvm::Intrinsic::getDeclaration(
            &m_, f32 ? llvm::Intrinsic::x86_avx512_mask_scalef_ps_512 : llvm::Intrinsic::x86_avx512_mask_scalef_pd_512);
        llvm::Value* every_lane = f32 ? b_.getInt16(0xffff) : b_.getInt8(0xff);
        llvm::Value* current_rounding = b_.getInt32(4);  // _MM_FROUND_CUR_DIRECTION
        // Lanes [at, at + count) of v in the low lanes of a full piece.
        auto piece = [&](llvm::Value* v, int at, int count) -> llvm::Value* {
            if (t.is_scalar()) return b_.CreateInsertElement(llvm::PoisonValue::get(piece_type), v, uint64_t(0));
            if (count == full && lanes == full) return v;
            std::vector<int> mask;
            for (int i = 0; i < full; ++i) mask.push_back(i < count ? at + i : -1);
            return b_.CreateShuffleVector(v, mask);
        };
        std::vector<VectorPiece> pieces;
        for (int at = 0; at < lanes; at += full) {
            const int count = std::min(full, lanes - at);
            llvm::Value* r = b_.CreateCall(fn, {piece(x, at, count), piece(n, at, count),
                                                llvm::PoisonValue::get(piece_type), every_lane, current_rounding});
            if (t.is_scalar()) return b_.CreateExtractElement(r, uint64_t(0));
            pieces.push_back({at, count, count == full ? r : extract_lanes(b_, r, 0, count)});
        }
        return assemble_lanes(b_, x->getType(), pieces);
    }

    // ldexp elsewhere: x times three powers of two built from their exponent bits,
    // 2^k = bits((k + bias) << mantissa), k = floor(n) clamped to +-300 for float32 and
    // +-2200 for float64 (beyond, every result is 0 or inf) and split as k1 = floor(k / 4),
    // k2 = floor((k - k1) / 2), k3 = the rest: all of k's sign and within a normal exponent,
    // so the products move monotonically to the result and each power is exact. (LLVM 19
    // lowers llvm.ldexp on x86 to a libm call per lane.) A subnormal result whose
    // intermediate product was subnormal already may be rounded twice. NaN where n is NaN,
    // as VSCALEF gives.
    llvm::Value* ldexp(llvm::Value* x, llvm::Value* n, DataType t) {
        const bool f32 = t.bits == 32;
        llvm::Type* ftype = x->getType();
        llvm::Type* itype = ftype->getWithNewType(f32 ? b_.getInt32Ty() : b_.getInt64Ty());
        const double limit = f32 ? 300.0 : 2200.0;
        llvm::Value* k = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, n);
        k = b_.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, k, llvm::ConstantFP::get(ftype, -limit));
        k = b_.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, k, llvm::ConstantFP::get(ftype, limit));
        llvm::Value* ki = b_.CreateFPToSI(k, itype);
        auto constant = [&](int64_t v) { return llvm::ConstantInt::getSigned(itype, v); };
        auto power_of_two = [&](llvm::Value* e) {
            llvm::Value* biased = b_.CreateAdd(e, constant(f32 ? 127 : 1023));
            return b_.CreateBitCast(b_.CreateShl(biased, constant(f32 ? 23 : 52)), ftype);
        };
        llvm::Value* k1 = b_.CreateAShr(ki, constant(2));
        llvm::Value* rest = b_.CreateSub(ki, k1);
        llvm::Value* k2 = b_.CreateAShr(rest, constant(1));
        llvm::Value* k3 = b_.CreateSub(rest, k2);
        llvm::Value* scaled = b_.CreateFMul(b_.CreateFMul(b_.CreateFMul(x, power_of_two(k1)), power_of_two(k2)),
                                            power_of_two(k3));
        return b_.CreateSelect(b_.CreateFCmpUNO(n, n), b_.CreateFAdd(x, n), scaled);
    }

    // exp, log, pow, tanh, erf.
    llvm::Value* libm(const std::string& name, const std::vector<llvm::Value*>& args, DataType t) {
        if (t.is_scalar()) return scalar_libm(name, args, t);
        int lanes = t.lanes;
        std::vector<VectorPiece> pieces;
        for (int at = 0; at < lanes;) {
            std::string symbol;
            int n = widest_variant(name, t.bits, lanes - at, &symbol);
            if (n == 0) {  // no vector variant fits: one lane with the scalar function
                std::vector<llvm::Value*> lane_args;
                for (auto* a : args) lane_args.push_back(b_.CreateExtractElement(a, uint64_t(at)));
                pieces.push_back({at, 1, scalar_libm(name, lane_args, t.element_of())});
                at += 1;
                continue;
            }
            std::vector<llvm::Value*> chunk_args;
            for (auto* a : args) chunk_args.push_back(extract_lanes(b_, a, at, n));
            auto fn = pure_function(symbol, chunk_args[0]->getType(), args.size());
            pieces.push_back({at, n, b_.CreateCall(fn, chunk_args)});
            at += n;
        }
        return assemble_lanes(b_, args[0]->getType(), pieces);
    }

    // The lane count of the widest libmvec variant of `name` for `bits`-bit floats that the
    // target supports and that fits in `remaining` lanes; 0 when there is none.
    int widest_variant(const std::string& name, int bits, int remaining, std::string* symbol) {
        for (auto [width, isa] : isas_) {
            int n = width / bits;
            if (n > remaining) continue;
            // _ZGV <isa> N <lanes> <one 'v' per vector argument> _ <scalar name>
            std::string s = std::string("_ZGV") + isa + "N" + std::to_string(n) + (name == "pow" ? "vv" : "v") + "_" +
                            scalar_name(name, bits);
            if (!libmvec_has(s)) continue;
            *symbol = s;
            return n;
        }
        return 0;
    }

    static std::string scalar_name(const std::string& name, int bits) { return bits == 32 ? name + "f" : name; }

    llvm::Value* scalar_libm(const std::string& name, const std::vector<llvm::Value*>& args, DataType t) {
        // exp, log and pow as LLVM intrinsics: the loop vectorizer knows how to widen them.
        if (name == "exp") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, args[0]);
        if (name == "log") return b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, args[0]);
        if (name == "pow") return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, args[0], args[1]);
        const auto& libm = ir::libm_unary_functions();
        WEFT_ICHECK(name == "tanh" || name == "erf" || std::find(libm.begin(), libm.end(), name) != libm.end(),
                    "no libm lowering for ", name);
        return b_.CreateCall(pure_function(scalar_name(name, t.bits), args[0]->getType(), args.size()), args);
    }

    // A math function without side effects (we do not read errno), so LLVM may hoist,
    // combine or drop calls to it.
    llvm::FunctionCallee pure_function(const std::string& symbol, llvm::Type* type, size_t arity) {
        std::vector<llvm::Type*> params(arity, type);
        auto callee = m_.getOrInsertFunction(symbol, llvm::FunctionType::get(type, params, false));
        if (auto* fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
            fn->setDoesNotAccessMemory();
            fn->setDoesNotThrow();
            fn->setWillReturn();
        }
        return callee;
    }

    struct Isa {
        int width;
        char letter;
    };
    llvm::IRBuilder<>& b_;
    llvm::Module& m_;
    std::vector<Isa> isas_;  // widest first
    bool avx512_ = false;
};

}  // namespace weft::codegen::detail
