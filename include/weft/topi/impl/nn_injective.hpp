// Definition of topi/injective.hpp: the default schedule of element-wise chains.
#pragma once
#include "weft/topi/impl/nn_detail.hpp"
#include "weft/topi/injective.hpp"

namespace weft::topi {

namespace nn_detail {

// The loops vectorize_injective made: the outermost (parallel when there is enough work),
// the vector loop, and the loop just outside it (where a producer of one vector is computed).
struct InjectiveLoops {
    IterVar outer, block, lane;
};

// Runs the stage of `out` (its data axes untouched so far) as vectors of the target's width along
// its innermost axes: all axes fused into one when `fuse_everything`, else all but the last
// fused into a row loop. Parallel over chunks (or rows) when there is enough work.
inline InjectiveLoops vectorize_injective(Schedule& s, const Tensor& out, bool fuse_everything,
                                          const Target& target) {
    Stage st = s[out];
    const int lanes = vector_lanes(out.dtype(), target);
    const int ndim = out.ndim();
    const int64_t size = const_size(out.shape());
    const bool parallel = size < 0 || size >= kMinParallelElements;
    std::vector<IterVar> axes;
    for (int d = 0; d < ndim; ++d) axes.push_back(out.axis(d));
    if (fuse_everything || ndim == 1) {
        IterVar all = fuse_all(st, axes);
        auto [vecs, lane] = st.split(all, lanes);
        st.vectorize(lane);
        if (!parallel) return {vecs, vecs, lane};
        // Chunks of 1024 vectors: contiguous stretches, each thread gets a run of them.
        auto [chunk, inner] = st.split(vecs, 1024);
        st.parallel(chunk);
        return {chunk, inner, lane};
    }
    // A last axis shorter than a vector after a symbolic one (a block of 3 channels after an
    // image's symbolic width): the two are one run of vectors, so the rows loop divides by a
    // symbolic extent once per row, not once per pixel.
    int64_t last = 0;
    if (ndim >= 3 && ir::as_const_int(axes.back()->dom.extent, &last) && last < lanes &&
        !ir::is_const(axes[size_t(ndim - 2)]->dom.extent)) {
        IterVar rows = fuse_all(st, std::vector<IterVar>(axes.begin(), axes.end() - 2));
        auto [vecs, lane] = st.split(st.fuse(axes[size_t(ndim - 2)], axes.back()), lanes);
        st.vectorize(lane);
        if (parallel) st.parallel(rows);
        return {rows, vecs, lane};
    }
    IterVar rows = fuse_all(st, std::vector<IterVar>(axes.begin(), axes.end() - 1));
    auto [vecs, lane] = st.split(axes.back(), lanes);
    st.vectorize(lane);
    if (parallel) st.parallel(rows);
    return {rows, vecs, lane};
}

}  // namespace nn_detail

void schedule_injective(Schedule& s, const Tensor& out, const Target& target, const Config&) {
    nn_detail::check_defined(out, "schedule_injective", "output");
    WEFT_CHECK(out.op()->is_compute() && !out.op()->is_reduction(), "schedule_injective: '", out.name(),
               "' is ", out.op()->is_compute() ? "a reduction (use its own schedule, e.g. schedule_reduce)"
                                               : "a placeholder (nothing to schedule)");
    std::vector<Tensor> chain = nn_detail::inline_injective_inputs(s, out);
    nn_detail::vectorize_injective(s, out, nn_detail::reads_element_for_element(chain), target);
    nn_detail::store_nontemporal_if_large(s, out);
}

}  // namespace weft::topi
