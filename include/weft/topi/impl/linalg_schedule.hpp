// linalg's default CPU schedules: one loop nest for matmul, dense and batch_matmul (see
// topi/linalg.hpp for the recipe), tiles from linalg_plan.hpp.
#pragma once
#include "weft/topi/impl/linalg_compute.hpp"

namespace weft::topi {
namespace detail {

// The stages of one GEMM-like computation, found from the tensor its compute returned.
struct GemmParts {
    Tensor core;        // the reduction C[(b,) i, j] = sum_k ...
    Tensor pack;        // the in-kernel packing of the right operand, if any
    int64_t panel = 0;  // the panel width of a packed right operand (0: read in place)
    int batch_dims = 0;
};

inline GemmParts find_gemm_parts(const Tensor& op, int batch_dims, const char* what) {
    WEFT_CHECK(op.defined() && op.op()->is_compute(), what, ": the operator's output is undefined or a placeholder");
    GemmParts parts{.batch_dims = batch_dims};
    if (op.op()->is_reduction()) {
        parts.core = op;
    } else {  // dense's bias stage over its reduction
        for (const Tensor& t : op.op().input_tensors())
            if (t.op()->is_compute() && t.op()->is_reduction()) parts.core = t;
    }
    WEFT_CHECK(parts.core.defined() && parts.core.ndim() == batch_dims + 2, what, ": '", op.name(),
               "' is not the output of the matching compute (no ", batch_dims + 2, "-dimensional reduction found)");
    for (const Tensor& t : parts.core.op().input_tensors()) {
        if (t.ndim() != parts.core.ndim() + 1) continue;  // the panels carry one more dimension
        parts.panel = const_or(t.shape().back(), 0);
        if (is_pack_stage(t)) parts.pack = t;
    }
    return parts;
}

inline bool same_shape(const Tensor& a, const Tensor& b) {
    auto x = a.shape(), y = b.shape();
    if (x.size() != y.size()) return false;
    for (size_t d = 0; d < x.size(); ++d)
        if (!same_extent(x[d], y[d])) return false;
    return true;
}

// The register tile, in a local accumulator computed at one tile of `dst`: the reduction
// outermost, split by 4 and the 4 steps unrolled (LLVM left a loop of 4 around a 24-FMA
// body, whose counter and address arithmetic cost 8-10% at 512^3 and 1024^3), rows
// unrolled, columns vectorized.
inline void schedule_micro_kernel(Schedule& s, const Tensor& acc, int batch_dims, int64_t k_unroll) {
    Stage a = s[acc];
    std::vector<IterVar> leaves = a.leaf_iter_vars();
    IterVar i = leaves[size_t(batch_dims)], j = leaves[size_t(batch_dims) + 1], k = leaves.back();
    if (k_unroll > 1) {
        auto [ko, ki] = a.split(k, k_unroll);
        a.reorder({ko, ki, i, j});
        a.unroll(ki);
    } else {
        a.reorder({k, i, j});
    }
    a.unroll(i);
    a.vectorize(j);
}

// A few rows with B read in place (see choose_stream_chunk): C in chunks of columns, in
// parallel; each chunk's local accumulator runs over K outermost (split by 4, unrolled, so
// four rows of B stream at once), then its rows (unrolled), then its vectors.
inline void schedule_gemm_stream(Schedule& s, const GemmParts& g, const Tensor& dst, const Tensor& acc, int64_t M,
                                 int64_t N, int64_t chunk, int64_t k_unroll, const VectorUnit& v, int64_t threads) {
    const int nb = g.batch_dims;
    const int64_t lanes = v.lanes;
    Stage d = s[dst];
    auto [jc, jr] = d.split(dst.axis(nb + 1), chunk);
    auto [jo, ji] = d.split(jr, std::min(lanes, N));
    std::vector<IterVar> order = {jc, dst.axis(nb), jo, ji};
    if (nb) order.insert(order.begin(), dst.axis(0));
    d.reorder(order);
    d.vectorize(ji);
    // The batch fused with the chunks into one parallel loop only where the chunks divide N
    // (see schedule_gemm: a remainder of the fused index leaves every chunk's tile the
    // partial one's symbolic width). Else the batch is parallel where it has a task for
    // every thread, the chunks otherwise.
    const bool batch_apart = nb && N % chunk != 0;
    IterVar chunks = nb && !batch_apart ? d.fuse(dst.axis(0), jc) : jc;
    d.parallel(batch_apart && const_or(dst.shape()[0], kUnknownExtent) >= threads ? dst.axis(0) : chunks);
    s[acc].compute_at(d, chunks);

    Stage a = s[acc];
    std::vector<IterVar> leaves = a.leaf_iter_vars();
    IterVar i = leaves[size_t(nb)], j = leaves[size_t(nb) + 1], k = leaves.back();
    auto [vo, vi] = a.split(j, std::min(lanes, N));
    if (k_unroll > 1) {
        auto [ko, ki] = a.split(k, k_unroll);
        a.reorder({ko, vo, i, ki, vi});
        a.unroll(ki);
    } else {
        a.reorder({k, vo, i, vi});
    }
    if (M <= 8) a.unroll(i);
    a.vectorize(vi);
}

// B read in place with register tiles (gemm.in_place_tiles): parallel over strips of nr
// columns (with the batch where the strips divide N), then row blocks of mr, each a
// micro-kernel reading its strip of B in place. Partial last blocks and strips overlap the
// ones before (TailStrategy::ShiftInwards), so every tile is whole; a tile larger than the
// product is cut to it.
inline void schedule_gemm_in_place_tiles(Schedule& s, const GemmParts& g, const Tensor& dst, const Tensor& acc,
                                         int64_t M, int64_t N, int64_t mr, int64_t nr, int64_t k_unroll,
                                         int64_t batch, int64_t threads) {
    mr = std::min(mr, M);
    nr = std::min(nr, N);
    const int nb = g.batch_dims;
    Stage d = s[dst];
    auto [io, ii] = d.split(dst.axis(nb), mr, TailStrategy::ShiftInwards);
    auto [jo, ji] = d.split(dst.axis(nb + 1), nr, N % nr ? TailStrategy::ShiftInwards : TailStrategy::Guard);
    std::vector<IterVar> order = {jo, io, ii, ji};
    if (nb) order.insert(order.begin(), dst.axis(0));
    d.reorder(order);
    d.vectorize(ji);
    const bool batch_apart = nb && N % nr != 0;
    IterVar strips = nb && !batch_apart ? d.fuse(dst.axis(0), jo) : jo;
    d.parallel(batch_apart && batch >= threads ? dst.axis(0) : strips);
    s[acc].compute_at(d, io);
    schedule_micro_kernel(s, acc, nb, k_unroll);
}

// can_stream: the compute may read B in place (matmul, batch_matmul; dense always packs).
inline void schedule_gemm(Schedule& s, const GemmParts& g, const Tensor& op, const Tensor& out, const char* what,
                          bool can_stream, const Target& target, const Config& config) {
    Tensor dst = out.defined() ? out : op;
    WEFT_CHECK(same_shape(dst, op), what, ": the output '", dst.name(), "' must be an element-wise epilogue of '",
               op.name(), "' (shape ", shape_str(op), "), got shape ", shape_str(dst));
    if (!op.same_as(g.core) && !op.same_as(dst)) s[op].compute_inline();  // dense's bias, under a later epilogue
    Tensor acc;
    if (dst.same_as(g.core)) {
        acc = s.cache_write(g.core, "local");
    } else {
        s[g.core].set_scope("local");
        acc = g.core;
    }

    const int nb = g.batch_dims;
    auto shape = g.core.shape();
    int64_t batch = nb ? const_or(shape[0], kUnknownExtent) : 1;
    int64_t M = const_or(shape[size_t(nb)], kUnknownExtent), N = const_or(shape[size_t(nb) + 1], kUnknownExtent);
    int64_t K = const_or(g.core.op()->reduce_axis[0]->dom.extent, kUnknownExtent);
    const int64_t threads = std::max(1, target.num_threads);
    const VectorUnit v = vector_unit(target);
    // Every knob is asked on either path (B packed or read in place), so that every point of
    // a space sets them all; each path ignores the others'.
    const int64_t k_unroll = knob_k_unroll(config, K);
    const GemmTile tile{knob_tile_rows(config, v, M, N, g.panel), g.panel};
    int64_t chunk = 0;
    if (can_stream) {
        // "gemm.stream_chunk": columns per parallel chunk where B is read in place, whole
        // vectors (at most N rounded up to one).
        const int64_t max_chunk = round_up(std::max<int64_t>(N, 1), v.lanes);
        chunk = config.define("gemm.stream_chunk", knob_multiples(v.lanes, std::min(max_chunk, 64 * v.lanes)),
                              std::min(choose_stream_chunk(v, M, N, threads), max_chunk));
    }
    const int64_t panels = g.panel ? (N + tile.nr - 1) / tile.nr : 0;
    // (A symbolic N may leave a partial panel too.)
    int64_t n_const = 0;
    const bool n_known = ir::as_const_int(shape[size_t(nb) + 1], &n_const);
    const bool batch_apart = nb && g.panel && (!n_known || N % tile.nr != 0);
    const int64_t outer_tasks = batch_apart ? batch : batch * panels;
    // "gemm.parallel_panels": 1 parallel over panels, 0 over the row blocks of each panel
    // (whose panels are packed up front over all of N: a symbolic N leaves that stage no
    // constant width to vectorize, so it packs per panel).
    const bool by_panel = config.define_bool(
        "gemm.parallel_panels", threads == 1 || outer_tasks >= 2 * threads || M <= tile.mr || !g.panel || !n_known);
    // "gemm.in_place_tiles": where B is read in place, register tiles over column strips of B
    // (the packed path's loop nest without the packing: each strip read from memory by its
    // first row block, from cache by the others) instead of accumulator chunks in L1.
    const bool in_place_tiles = can_stream && config.define_bool("gemm.in_place_tiles", false);
    if (!g.panel && in_place_tiles)
        return schedule_gemm_in_place_tiles(s, g, dst, acc, M, N, tile.mr, knob_panel_width(config, v, M, N),
                                            k_unroll, batch, threads);
    if (!g.panel) return schedule_gemm_stream(s, g, dst, acc, M, N, chunk, k_unroll, v, threads);

    Stage d = s[dst];
    // A last, partial row block recomputes rows of the one before (TailStrategy::ShiftInwards)
    // instead of running a second, shorter micro-kernel: one copy to compile (a third less
    // JIT time at 1024^3, M = 170 x 6 + 4) and full register tiles throughout.
    auto [io, ii] = d.split(dst.axis(nb), tile.mr, TailStrategy::ShiftInwards);
    auto [jo, ji] = d.split(dst.axis(nb + 1), tile.nr);
    std::vector<IterVar> order = {jo, io, ii, ji};
    if (nb) order.insert(order.begin(), dst.axis(0));
    d.reorder(order);
    d.vectorize(ji);

    // Parallel over column panels (each packed once, in L2, for all its rows) when there
    // are enough of them for every thread; else over the row blocks of each panel, the
    // panels packed up front. (Not over panels and rows fused: the fused loop's partial
    // last row block would leave every tile with symbolic bounds, and no register tile.)
    // A batch's panels are fused with the batch into one parallel loop, unless the last
    // panel is partial: the panel is then a remainder of the fused index (f % panels),
    // which loop partitioning cannot cut on, and every tile took the partial panel's
    // symbolic width (no register tile: 4x256x256 @ 256x80 ran at 0.04 of the rate at
    // N = 64 in the same process). There the batch alone is parallel (`batch_apart`), its
    // panels a loop inside that partitioning cuts into full panels and the last one.
    IterVar panel = nb && !batch_apart ? d.fuse(dst.axis(0), jo) : jo;
    d.parallel(by_panel ? (batch_apart ? dst.axis(0) : panel) : io);
    s[acc].compute_at(d, io);
    schedule_micro_kernel(s, acc, nb, k_unroll);

    if (g.pack.defined()) {
        Stage p = s[g.pack];
        std::vector<IterVar> axes = p.leaf_iter_vars();  // [b], panel, k, column
        p.vectorize(axes.back());
        if (by_panel) {
            p.compute_at(d, panel);
        } else {
            p.parallel(nb ? p.fuse(axes[0], axes[1]) : axes[0]);
        }
    }
}

}  // namespace detail

void schedule_matmul(Schedule& s, const Tensor& op, const Tensor& out, const Target& target, const Config& config) {
    detail::schedule_gemm(s, detail::find_gemm_parts(op, 0, "schedule_matmul"), op, out, "schedule_matmul", true, target,
                          config);
}

void schedule_dense(Schedule& s, const Tensor& op, const Tensor& out, const Target& target, const Config& config) {
    detail::schedule_gemm(s, detail::find_gemm_parts(op, 0, "schedule_dense"), op, out, "schedule_dense", false, target,
                          config);
}

void schedule_batch_matmul(Schedule& s, const Tensor& op, const Tensor& out, const Target& target,
                           const Config& config) {
    detail::schedule_gemm(s, detail::find_gemm_parts(op, 1, "schedule_batch_matmul"), op, out,
                          "schedule_batch_matmul", true, target, config);
}

void schedule_dense_pack_weight(Schedule& s, const Tensor& packed_W) {
    WEFT_CHECK(packed_W.defined() && packed_W.op()->is_compute() && !packed_W.op()->is_reduction() &&
                   packed_W.ndim() == 3,
               "schedule_dense_pack_weight: '", packed_W.defined() ? packed_W.name() : "?",
               "' is not the output of dense_pack_weight");
    Stage p = s[packed_W];
    std::vector<IterVar> axes = p.leaf_iter_vars();
    p.vectorize(axes[2]);
    p.parallel(axes[0]);
}

}  // namespace weft::topi
