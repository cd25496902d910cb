// Tensor cores (topi/cuda.hpp): the per-lane mma.sync intrinsic, the fragment-shaped
// float16/bfloat16 matmul and its schedule.
#pragma once
#include "weft/codegen/cuda/tensor_core.hpp"
#include "weft/ir/gpu.hpp"
#include "weft/topi/impl/cuda_common.hpp"

namespace weft::topi::cuda {

TensorIntrin mma_m16n8k16(DataType in) {
    WEFT_CHECK(in == f16 || in == bf16, "cuda::mma_m16n8k16: the inputs must be float16 or bfloat16, not ", in.str());
    const bool half = in == f16;
    const std::string name = half ? "cuda.mma_m16n8k16_f16" : "cuda.mma_m16n8k16_bf16";
    // One lane's part (the layouts: PTX ISA, "Matrix fragments for mma.m16n8k16"): its 2 x 2
    // accumulators are rows 8i of its origin (i < 2), columns j (j < 2), each over 16 k.
    Tensor a = placeholder({16, 16}, in, "a"), b = placeholder({16, 2}, in, "b");
    IterVar k = reduce_axis(0, 16, "k");
    Tensor c = compute({2, 2}, [&](Expr i, Expr j) { return sum(cast(f32, a(i * 8, k)) * cast(f32, b(k, j)), {k}); },
                       "c", {"i", "j"});
    const char* call = half ? codegen::tensor_core::mma_m16n8k16_f16 : codegen::tensor_core::mma_m16n8k16_bf16;
    return decl_tensor_intrin(c, [call](const TensorIntrinCall& x) {
        // The lane: g = lane / 4 picks the rows (g, g + 8), t = lane % 4 the columns (2t, 2t + 1)
        // of C and the k (2t, 2t + 1, 2t + 8, 2t + 9) of its A row and B column. The origin
        // of A is the lane's row g at k = 0; of B, k = 0 at the lane's column 2t; B's
        // fragment is column g of the warp's 8.
        Expr lane = ir::gpu::thread_index("threadIdx.x");
        Expr g = lane / 4, t = lane % 4;
        Expr zero = make_int(0), eight = make_int(8);
        std::vector<Expr> args;
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) args.push_back(x.output({make_int(i), make_int(j)}));
        for (int kh = 0; kh < 2; ++kh)      // a0..a3 at k = 2t + {0, 1}, a4..a7 at 2t + 8 + {0, 1}
            for (int rh = 0; rh < 2; ++rh)  // rows g, then g + 8
                for (int e = 0; e < 2; ++e) args.push_back(x.input(0, {make_int(8 * rh), t * 2 + make_int(8 * kh + e)}));
        for (int kh = 0; kh < 2; ++kh)
            for (int e = 0; e < 2; ++e) args.push_back(x.input(1, {t * 2 + make_int(8 * kh + e), g - t * 2}));
        (void)zero;
        (void)eight;
        return ir::Evaluate::make(ir::Call::make(i32, call, args, ir::Call::CallKind::Intrinsic));
    }, name);
}

Tensor matmul_tensorcore(const Tensor& A, const Tensor& B, const std::string& name) {
    const char* who = "cuda::matmul_tensorcore";
    WEFT_CHECK(A.ndim() == 2 && B.ndim() == 2, who, ": A and B must be 2-D, got ", A.ndim(), " and ", B.ndim(),
               " dimensions");
    WEFT_CHECK(A.dtype() == B.dtype() && (A.dtype() == f16 || A.dtype() == bf16), who, ": A and B must both be float16 or "
               "both bfloat16, got ", A.dtype().str(), " and ", B.dtype().str());
    const int64_t M = detail::const_or(A.shape()[0], -1), K = detail::const_or(A.shape()[1], -1),
                  N = detail::const_or(B.shape()[1], -1);
    WEFT_CHECK(M > 0 && N > 0 && K > 0, who, ": the shapes must be constant");
    WEFT_CHECK(detail::const_or(B.shape()[0], -1) == K, who, ": A is ", M, " x ", K, " but B has ",
               detail::const_or(B.shape()[0], -1), " rows");
    WEFT_CHECK(M % 16 == 0 && N % 8 == 0 && K % 16 == 0, who, ": M (", M, "), N (", N, ") and K (", K,
               ") must be multiples of 16, 8 and 16 (pad the operands)");
    IterVar k = reduce_axis(0, K, "k");
    // [mo, no, rl, ch, rh, cl]: a lane's (rl, ch) outer, its 2 x 2 accumulators (rh, cl) last.
    Tensor frag = compute({M / 16, N / 8, int64_t(8), int64_t(4), int64_t(2), int64_t(2)},
                          [&](const std::vector<Expr>& i) {
                              Expr row = i[0] * 16 + i[4] * 8 + i[2], col = i[1] * 8 + i[3] * 2 + i[5];
                              return sum(cast(f32, A(row, k)) * cast(f32, B(k, col)), {k});
                          },
                          name + ".frag");
    return compute({M, N}, [&](Expr i, Expr j) {
        return frag(i / 16, j / 8, i % 8, (j % 8) / 2, (i % 16) / 8, j % 2);
    }, name);
}

void schedule_matmul_tensorcore(Schedule& s, const Tensor& C) {
    const char* who = "cuda::schedule_matmul_tensorcore";
    WEFT_CHECK(C.op()->is_compute() && C.op().input_tensors().size() == 1, who, ": '", C.name(),
               "' is not what matmul_tensorcore returned");
    Tensor frag = C.op().input_tensors()[0];
    WEFT_CHECK(frag.op()->is_reduction() && frag.ndim() == 6, who, ": '", C.name(), "' is not what matmul_tensorcore returned");
    std::vector<Tensor> ab = frag.op().input_tensors();
    WEFT_CHECK(ab.size() == 2, who, ": A and B must be different tensors");
    const DataType in = ab[0].dtype();
    const int64_t M = detail::const_or(C.shape()[0], 0), N = detail::const_or(C.shape()[1], 0),
                  K = detail::const_or(frag.op()->reduce_axis[0].dom().extent, 0);
    // Warps of 64 x 64 outputs (4 x 8 mma tiles: each A fragment serves 8 products, each B
    // fragment 4) where the shape allows, 2 x 2 warps a block. On an H100 at 4096^3: 88
    // TFLOP/s against 41 for warps of 2 x 2 tiles (32 x 16); blocks of 4 or 8 warps, 256-row
    // or 256-column blocks and 8 x 8 tiles per warp measured 63-76.
    const int64_t mi = detail::first_dividing(M / 16, {4, 2, 1}), ni = detail::first_dividing(N / 8, {8, 4, 2, 1});
    const int64_t wm = (M / (16 * mi)) % 2 == 0 ? 2 : 1, wn = (N / (8 * ni)) % 2 == 0 ? 2 : 1;
    const int64_t kt = K % 32 == 0 ? 32 : 16;  // the shared tiles' depth

    s[frag].set_scope("local");
    Tensor a_s = s.cache_read(ab[0], "shared", {frag});
    Tensor b_s = s.cache_read(ab[1], "shared", {frag});

    // C: rows i = ((mb * wm + mw) * mi + m) * 16 + rh * 8 + rl, columns likewise with 8.
    Stage c = s[C];
    auto [mo, i16] = c.split(C.axis(0), 16);
    auto [rh, rl] = c.split(i16, 8);
    auto [no, j8] = c.split(C.axis(1), 8);
    auto [ch, cl] = c.split(j8, 2);
    auto [mbw, m] = c.split(mo, mi);
    auto [mb, mw] = c.split(mbw, wm);
    auto [nbw, n] = c.split(no, ni);
    auto [nb, nw] = c.split(nbw, wn);
    c.reorder({mb, nb, mw, nw, rl, ch, m, n, rh, cl});
    IterVar lane = c.fuse(rl, ch);
    c.bind(mb, block_y());
    c.bind(nb, block_x());
    c.bind(mw, thread_y());
    c.bind(nw, thread_z());
    c.bind(lane, thread_x());
    c.unroll(m);
    c.unroll(n);
    c.unroll(rh);
    c.unroll(cl);

    // The accumulators: per lane mi x ni x 2 x 2, over k in steps of 16 (the mma's depth).
    s[frag].compute_at(c, lane);
    Stage f = s[frag];
    std::vector<IterVar> ax = f.leaf_iter_vars();  // mo, no, rl, ch, rh, cl, k
    auto [ko, kr] = f.split(ax[6], kt);
    auto [kmid, ki] = f.split(kr, 16);
    f.reorder({ko, kmid, ax[0], ax[1], ax[2], ax[3], ax[4], ax[5], ki});
    f.unroll(ax[0]);
    f.unroll(ax[1]);
    f.tensorize(ax[4], mma_m16n8k16(in));

    // A's and B's tiles for the block, fetched by all its threads.
    for (const Tensor& t : {a_s, b_s}) {
        s[t].compute_at(f, ko);
        detail::cooperative_fetch(s, t, 32, wm, wn);
        if (K > kt) s[t].double_buffer();
    }
}

}  // namespace weft::topi::cuda
