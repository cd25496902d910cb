// GPU schedule of matmul, dense and batch_matmul (topi/cuda.hpp): TVM's recipe.
//  - a block computes a BM x BN tile of C; its threads form a (BM/TM) x (BN/TN) grid, each
//    thread a TM x TN register tile (a "local" cache of C, loops unrolled);
//  - the reduction runs in steps of KT; at each step the BM x KT tile of A and the KT x BN
//    tile of B are fetched into shared memory by all threads together (the fetch loops fused,
//    split by the thread count, consecutive threads on consecutive addresses, 4-wide vectors
//    when the rows are aligned), double-buffered so the next step's fetch overlaps this
//    step's arithmetic;
//  - the epilogue (bias, activation) is applied as the register tile is stored.
// Whatever the CPU compute packs (B's panels, dense's transposed weight) is inlined into the
// shared fetch: the GPU reads the original operand.
#pragma once
#include <optional>

#include "weft/topi/impl/cuda_common.hpp"

namespace weft::topi::cuda {
namespace detail {

struct GemmTiles {
    int64_t bm, bn, tm, tn, kt;
    int64_t threads_x() const { return bn / tn; }
    int64_t threads_y() const { return bm / tm; }
};

// A tile extent that divides n: the first of `candidates` that does (a multiple of `unit`),
// or n itself when it is below 8; 0 when none fits. (Shared and local tiles need constant
// sizes, and the lowering sizes a tile that a tail clips by its clipped, symbolic extent.)
inline int64_t dividing_tile(int64_t n, std::initializer_list<int64_t> candidates, int64_t unit = 1) {
    if (n > 0 && n < 8) return n % unit == 0 ? n : 0;
    return first_dividing(n, candidates, unit);
}

// Tiles from the output's rows M, columns N and the reduction K (all constant), or
// nullopt when no tiling divides them.
// `panel`: the width of the CPU's packed panels of B that the fetch reads through (0: none);
// a column tile must hold whole panels.
inline std::optional<GemmTiles> choose_gemm_tiles(int64_t M, int64_t N, int64_t K, int64_t panel) {
    if (M <= 0 || N <= 0 || K <= 0) return std::nullopt;
    // Large products: 64 x 64 blocks of 128 threads, 8 x 4 register tiles (B's 4 columns one
    // 16-byte shared load), steps of 16. Measured on an H100 at 4096^3 (benchmarks/RESULTS.md,
    // GPU): 39.7 TFLOP/s against 19.1 for 128 x 128 blocks of 8 x 8 tiles in steps of 8 (whose
    // 8 columns were 8 scalar loads with 4-way bank conflicts) and 29-37 for the other tilings
    // tried (64/128 blocks, 4x4 / 8x4 tiles, steps of 8 to 32).
    if (M % 64 == 0 && N % 64 == 0 && K % 16 == 0 && M >= 128 && N >= 128 && (panel == 0 || 64 % panel == 0))
        return GemmTiles{64, 64, 8, 4, 16};
    GemmTiles t{};
    t.bm = dividing_tile(M, {64, 32, 16, 8});
    // Through the CPU's packed panels of B, a column tile is whole panels, or the one panel.
    // (48: the CPU packs B in panels of 3 vectors when its row tile then divides M.)
    t.bn = panel > 0 && panel >= N ? N : dividing_tile(N, {64, 48, 32, 16, 8}, std::max<int64_t>(panel, 1));
    t.kt = dividing_tile(K, {16, 8, 4, 2, 1});
    if (t.bm == 0 || t.bn == 0 || t.kt == 0) return std::nullopt;
    t.tm = t.bm % 4 == 0 ? 4 : t.bm % 2 == 0 ? 2 : 1;
    t.tn = t.bn % 4 == 0 ? 4 : t.bn % 2 == 0 ? 2 : 1;
    // At least a warp of threads when there is that much work.
    while (t.tn > 1 && t.threads_x() * t.threads_y() < 32) t.tn /= 2;
    while (t.tm > 1 && t.threads_x() * t.threads_y() < 32) t.tm /= 2;
    return t;
}

// No tiling divides the shape: one thread per output element, the reduction straight from
// global memory (correct for every shape; slow).
inline void schedule_gemm_untiled(Schedule& s, const Tensor& core, const Tensor& dst) {
    for (auto& in : core.op().input_tensors())
        if (in.op()->is_compute()) s[in].compute_inline();
    auto [bx, tx] = bind_flat(s, dst, kBlockThreads, 1, !dst.same_as(core));
    if (!dst.same_as(core)) {
        s[core].set_scope("local");
        s[core].compute_at(s[dst], tx);
    }
}

// Whether fetching `in` (a placeholder the core reads as in(..., row, col)) in rows of
// `tile_cols` elements can use 4-wide vectors: rows a multiple of 4 long, every tile aligned.
inline bool fetch_vectorizable(const Tensor& in, int64_t tile_cols, bool tiles_divide) {
    if (!in.op()->is_placeholder() || in.dtype().bits != 32 || !tiles_divide) return false;
    int64_t cols = const_or(in.shape().back(), -1);
    return cols > 0 && cols % 4 == 0 && tile_cols % 4 == 0 && cols % tile_cols == 0;
}

// The knobs over the hand-chosen tiles `t`: each tile among the candidates that divide its
// extent (and for bn, hold whole panels of B); the register tiles 1 to 8. A point whose
// register tile does not divide its block's, or whose block has more than 1024 threads or
// none, is refused.
inline GemmTiles tuned_gemm_tiles(const GemmTiles& t, int64_t M, int64_t N, int64_t K, int64_t panel,
                                  const Config& config, const char* who) {
    // (A shape below 8 is its own tile, as choose_gemm_tiles has it.)
    auto dividing = [](int64_t n, std::initializer_list<int64_t> options, int64_t unit) {
        std::vector<int64_t> out;
        if (n < 8) return std::vector<int64_t>{n};
        for (int64_t o : options)
            if (o <= n && n % o == 0 && o % unit == 0) out.push_back(o);
        return out;
    };
    const int64_t unit = std::max<int64_t>(panel, 1);
    GemmTiles u{};
    u.bm = config.define("cuda.gemm.bm", dividing(M, {8, 16, 32, 64, 128}, 1), t.bm);
    u.bn = config.define("cuda.gemm.bn", panel > 0 && panel >= N ? std::vector<int64_t>{N}
                                                                  : dividing(N, {8, 16, 32, 48, 64, 128}, unit), t.bn);
    u.kt = config.define("cuda.gemm.kt", dividing(K, {1, 2, 4, 8, 16, 32}, 1), t.kt);
    u.tm = config.define("cuda.gemm.tm", {1, 2, 4, 8}, t.tm);
    u.tn = config.define("cuda.gemm.tn", {1, 2, 4, 8}, t.tn);
    WEFT_CHECK(u.bm % u.tm == 0 && u.bn % u.tn == 0, who, ": the register tile ", u.tm, "x", u.tn,
               " (cuda.gemm.tm, tn) does not divide the block's tile ", u.bm, "x", u.bn, " (cuda.gemm.bm, bn)");
    WEFT_CHECK(u.threads_x() * u.threads_y() <= 1024, who, ": a block tile of ", u.bm, "x", u.bn,
               " (cuda.gemm.bm, bn) in register tiles of ", u.tm, "x", u.tn, " (cuda.gemm.tm, tn) is ",
               u.threads_x() * u.threads_y(), " threads, over CUDA's 1024 per block");
    return u;
}

inline void schedule_gemm(Schedule& s, const Tensor& op, const Tensor& out, int batch_dims, const char* who,
                          const Config& config) {
    nn_detail::check_defined(op, who, "op");
    nn_detail::check_defined(out, who, "output");
    Tensor core = reduction_of(op);
    WEFT_CHECK(core.defined() && core.ndim() == batch_dims + 2, who, ": '", op.name(),
               "' is not the output of the matching compute (no ", batch_dims + 2, "-dimensional reduction found)");
    // The stages between the core and what the kernel writes are applied in registers.
    nn_detail::inline_epilogue(s, core, out);
    if (!op.same_as(core) && !op.same_as(out)) s[op].compute_inline();
    Tensor dst = out;
    const int64_t M = const_or(dst.shape()[size_t(batch_dims)], -1), N = const_or(dst.shape()[size_t(batch_dims) + 1], -1);
    const int64_t K = const_or(core.op()->reduce_axis[0].dom().extent, -1);
    int64_t panel = 0;
    for (auto& in : core.op().input_tensors())
        if (in.op()->is_compute() && in.ndim() == core.ndim() + 1) panel = const_or(in.shape().back(), -1);
    std::optional<GemmTiles> tiles = choose_gemm_tiles(M, N, K, panel);
    if (!tiles) return schedule_gemm_untiled(s, core, dst);
    const GemmTiles t = tuned_gemm_tiles(*tiles, M, N, K, panel, config, who);
    // The destination of the register tiles: the core itself, or the epilogue.
    Tensor acc;
    if (out.same_as(core)) {
        acc = s.cache_write(core, "local");
    } else {
        s[core].set_scope("local");
        acc = core;
    }
    // The operands' shared copies (before any other primitive on acc). The CPU's packing of
    // B, if any, is inlined: the fetch reads B itself. Operand 0 (A) is read with rows of K,
    // the others with rows of N.
    std::vector<Tensor> inputs = core.op().input_tensors(), shared;
    for (auto& in : inputs) {
        shared.push_back(s.cache_read(in, "shared", {acc}));
        if (in.op()->is_compute()) s[in].compute_inline();
    }
    const bool divides = true;  // choose_gemm_tiles picks only tiles that divide

    // The output: blocks of BM x BN, threads of TM x TN.
    Stage d = s[dst];
    IterVar i = dst.axis(batch_dims), j = dst.axis(batch_dims + 1);
    auto [by, ii] = d.split(i, t.bm);
    auto [bx, jj] = d.split(j, t.bn);
    auto [ty, ri] = d.split(ii, t.tm);
    auto [tx, rj] = d.split(jj, t.tn);
    std::vector<IterVar> order;
    for (int b = 0; b < batch_dims; ++b) order.push_back(dst.axis(b));
    for (auto& iv : {by, bx, ty, tx, ri, rj}) order.push_back(iv);
    d.reorder(order);
    if (batch_dims > 0) {
        IterVar batch = fuse_all(d, std::vector<IterVar>(order.begin(), order.begin() + batch_dims));
        d.bind(batch, block_z());
    }
    d.bind(by, block_y());
    d.bind(bx, block_x());
    d.bind(ty, thread_y());
    d.bind(tx, thread_x());
    d.unroll(ri);
    if (divides && N % 4 == 0 && t.tn == 4 && dst.dtype().bits == 32) d.vectorize(rj);
    else d.unroll(rj);

    // The register tile: the reduction in steps of KT outermost, the TM x TN products inside.
    s[acc].compute_at(d, tx);
    Stage a = s[acc];
    std::vector<IterVar> leaves = a.leaf_iter_vars();
    IterVar ai = leaves[size_t(batch_dims)], aj = leaves[size_t(batch_dims) + 1], ak = leaves.back();
    auto [ko, ki] = a.split(ak, t.kt);
    std::vector<IterVar> aorder(leaves.begin(), leaves.begin() + batch_dims);
    for (auto& iv : {ko, ki, ai, aj}) aorder.push_back(iv);
    a.reorder(aorder);
    a.unroll(ki);
    a.unroll(ai);
    // 4 columns of the register tile as one float4: B's row of the tile is one 16-byte
    // shared-memory load (consecutive threads, consecutive 16 bytes: no bank conflicts).
    if (t.tn == 4 && t.bn % 4 == 0 && dst.dtype().bits == 32 && panel % 4 == 0) a.vectorize(aj);
    else a.unroll(aj);

    // The operands' tiles in shared memory, one fetch per step of the reduction.
    for (size_t n = 0; n < shared.size(); ++n) {
        s[shared[n]].compute_at(a, ko);
        int64_t vector = fetch_vectorizable(inputs[n], n == 0 ? t.kt : t.bn, divides) ? 4 : 1;
        if (vector > 1 && (t.bm * t.kt) / vector < t.threads_x() * t.threads_y()) vector = 1;
        cooperative_fetch(s, shared[n], t.threads_x(), t.threads_y(), 1, vector);
        if (K > t.kt && K % t.kt == 0) s[shared[n]].double_buffer();  // (with a tail the pass finds no loop to overlap)
    }
}

}  // namespace detail

void schedule_matmul(Schedule& s, const Tensor& op, const Tensor& out, const Config& config) {
    detail::schedule_gemm(s, op, out, 0, "cuda::schedule_matmul", config);
}
void schedule_dense(Schedule& s, const Tensor& op, const Tensor& out, const Config& config) {
    detail::schedule_gemm(s, op, out, 0, "cuda::schedule_dense", config);
}
void schedule_batch_matmul(Schedule& s, const Tensor& op, const Tensor& out, const Config& config) {
    detail::schedule_gemm(s, op, out, op.ndim() - 2, "cuda::schedule_batch_matmul", config);
}

}  // namespace weft::topi::cuda
