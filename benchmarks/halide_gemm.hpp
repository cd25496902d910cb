// Halide 14's GEMM with a hand-written schedule, shared by gemm_bench (its speed) and
// jit_bench (its JIT compile time). Buffers are indexed innermost first: A is a(k, i), B
// b(j, k), C c(j, i). B is packed into panels of 64 columns, computed per panel; each 64 x 6
// tile of C accumulates in registers over the whole K (columns vectorized, rows unrolled);
// panels in parallel (at more than one thread).
#pragma once
#include <Halide.h>

#include <algorithm>

namespace bench {

inline Halide::Func halide_gemm_pipeline(const Halide::Buffer<float>& a, const Halide::Buffer<float>& b, int threads) {
    using namespace Halide;
    const int M = a.dim(1).extent(), N = b.dim(0).extent(), K = a.dim(0).extent();
    const int vec = 16, nr = N >= 64 ? 64 : N >= vec ? vec : N, mr = std::min(M, 6);
    Var x("x"), y("y"), xi("xi"), yi("yi"), xo("xo"), yo("yo"), p("p"), k("k");
    Func b_zero = BoundaryConditions::constant_exterior(b, 0.f);
    Func packed("packed");
    packed(xi, k, p) = b_zero(p * nr + xi, k);
    RDom r(0, K, "r");
    Func prod("prod");
    prod(xi, y, p) = 0.f;
    prod(xi, y, p) += a(r, y) * packed(xi, r, p);
    Func out("out");
    out(x, y) = prod(x % nr, y, x / nr);

    out.split(x, xo, xi, nr, TailStrategy::GuardWithIf)
        .split(y, yo, yi, mr, TailStrategy::GuardWithIf)
        .reorder(xi, yi, yo, xo)
        .vectorize(xi, std::min(nr, vec), TailStrategy::GuardWithIf);
    // At 1 thread no parallel loop at all: Halide's JIT thread pool ignores a later thread count.
    if (threads > 1) out.parallel(xo);
    prod.compute_at(out, yo).bound_extent(xi, nr).vectorize(xi, std::min(nr, vec)).unroll(xi).unroll(y);
    prod.update().reorder(xi, y, r).vectorize(xi, std::min(nr, vec)).unroll(xi).unroll(y);
    packed.compute_at(out, xo).bound_extent(xi, nr).vectorize(xi, std::min(nr, vec));
    return out;
}

}  // namespace bench
