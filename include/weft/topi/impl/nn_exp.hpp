// exp as an inline polynomial, for the operators whose cost is dominated by exp (softmax,
// log_softmax).
//
// Why not ir::exp: on a vector it is a call to glibc's libmvec (_ZGVeN16v_expf), measured
// here at ~16 cycles per 16 lanes plus the call's register spills; the inline form below
// (Cephes' expf, the one Eigen and many others use) costs ~12 and lets LLVM interleave it
// with the surrounding loads and stores. It is accurate to ~2 ulp down to float32's normal
// range (-87.3) and up to 88; above 88 it returns exp(88) (the callers pass x - max <= 0);
// below, where the target has AVX-512 (2^n by ldexp), the subnormal results and 0 past
// -103.9, else 0 below -88.38 (2^n built from exponent bits stops at normal floats). -inf
// (a masked entry) gives 0. Float32 only; other types use ir::exp.
#pragma once
#include "weft/ir/target.hpp"
#include "weft/te/compute.hpp"

namespace weft::topi::nn_detail {

// Whether inline_exp scales by 2^n with ldexp: where the target has AVX-512 (one VSCALEF:
// softmax 4096x1024 5% faster on one core), rather than with 2^n built from its exponent
// bits, (n + 127) << 23: a conversion, an add, a shift and a multiply, which the targets
// without a native ldexp still run faster than their general one (three such powers).
inline bool exp_scales_with_ldexp(const Target& target) { return target.uses_avx512(); }

inline Expr inline_exp(Expr x, const Target& target) {
    DataType t = x.type();
    if (t.element_of() != f32) return ir::exp(x);  // the polynomial's constants are float32's
    auto c = [&](double v) { return ir::make_const(t, v); };
    const bool ldexp = exp_scales_with_ldexp(target);
    // Named values (lets) keep the expression a chain instead of a tree that repeats them.
    Var xc("exp.x", t), n("exp.n", t), r("exp.r", t);
    // x = n ln2 + r with |r| <= ln2 / 2; ln2 in two parts so that n ln2 is exact enough.
    Expr p = c(1.9875691500e-4);
    for (double k : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1})
        p = p * r + c(k);
    Expr er = p * (r * r) + r + c(1.0);
    Expr scaled;
    if (ldexp) {
        scaled = ir::ldexp(er, n);
    } else {  // 2^n from its exponent bits: (n + 127) << 23, n in [-127, 127]
        DataType it = DataType::int_(32, t.lanes);
        Expr bits = (ir::cast(it, n) + ir::make_const(it, 127)) * ir::make_const(it, 1 << 23);
        scaled = er * ir::reinterpret(t, bits);
    }
    Expr body = ir::Let::make(r, xc - n * c(0.693359375) - n * c(-2.12194440e-4), scaled);
    body = ir::Let::make(n, ir::floor(xc * c(1.44269504088896341) + c(0.5)), body);
    // The lowest x: one whose n the exponent bits can hold, or with ldexp one below which
    // exp(x) rounds to 0 (n = -151).
    const double lowest = ldexp ? -105.0 : -88.3762626647949;
    return ir::Let::make(xc, ir::min(ir::max(x, c(lowest)), c(88.0)), body);
}

}  // namespace weft::topi::nn_detail
