// Definitions of autotune/sketch.hpp.
#pragma once
#include <algorithm>
#include <functional>
#include <set>

#include "weft/autotune/sketch.hpp"
#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/error.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::autotune {
namespace sketch_detail {

// The constant extent of an axis, or 0 when it is not constant (a reduce axis's extent is
// end - begin as written: simplified first).
inline int64_t extent_of(const IterVar& iv) {
    int64_t e = 0;
    return ir::as_const_int(ir::arith::simplify(iv.dom().extent), &e) && e > 0 ? e : 0;
}

// The candidates among `options` that divide n (n itself when none does).
inline std::vector<int64_t> dividing(int64_t n, std::initializer_list<int64_t> options) {
    std::vector<int64_t> out;
    for (int64_t o : options)
        if (o <= n && n % o == 0) out.push_back(o);
    if (out.empty()) out.push_back(1);
    return out;
}

inline int64_t largest_at_most(const std::vector<int64_t>& v, int64_t cap) {
    int64_t best = v.front();
    for (int64_t x : v)
        if (x <= cap) best = std::max(best, x);
    return best;
}

// The compute stages that produce `out`, producers first (out last).
inline std::vector<Tensor> computes_of(const Tensor& out) {
    std::vector<Tensor> order;
    std::set<const void*> seen;
    std::function<void(const Tensor&)> visit = [&](const Tensor& t) {
        if (!t.op()->is_compute() || !seen.insert(t.op().get()).second) return;
        for (const Tensor& in : t.op().input_tensors()) visit(in);
        order.push_back(t);
    };
    visit(out);
    return order;
}

}  // namespace sketch_detail

void auto_schedule(Schedule& s, const Tensor& out, const Target& target, const Config& config) {
    using namespace sketch_detail;
    WEFT_CHECK(out.op()->is_compute(), "autotune::auto_schedule: '", out.name(), "' is not computed");
    WEFT_CHECK(target.is_cpu(), "autotune::auto_schedule: sketches are for CPU targets, got ", target.str());
    // Find the reduction the output accumulates, if one; inline the element-wise stages (those
    // that feed the reduction — a padding — only where auto.inline says so: inlined, a
    // padding's test runs in the innermost loop; computed first, it costs a pass).
    std::vector<Tensor> reductions;
    const std::vector<Tensor> stages = computes_of(out);
    for (const Tensor& t : stages)
        if (!t.same_as(out) && t.op()->is_reduction()) reductions.push_back(t);
    Tensor reduction;  // accumulated in the register tile
    if (out.op()->is_reduction()) reduction = out;
    else if (reductions.size() == 1 && reductions[0].ndim() == out.ndim()) reduction = reductions[0];
    std::set<const void*> feeding;  // the element-wise stages the reduction reads
    if (reduction.defined())
        for (const Tensor& t : computes_of(reduction))
            if (!t.same_as(reduction) && !t.op()->is_reduction()) feeding.insert(t.op().get());
    // By default a stage with a test in it (a padding's bounds) is computed first: inlined,
    // its test runs in the reduction's innermost loop (docs/tuning.md, "Template-free
    // schedules", has the figure).
    bool feeding_tests = false;
    for (const Tensor& t : stages)
        if (feeding.count(t.op().get()))
            for (const Expr& e : t.op()->body)
                ir::post_order_visit(e, [&](const ir::Object* node) {
                    if (node->kind == ir::NodeKind::Select) feeding_tests = true;
                    if (node->kind == ir::NodeKind::Call && static_cast<const ir::Call*>(node)->name == "if_then_else")
                        feeding_tests = true;
                });
    const bool inline_feeding = feeding.empty() || config.define("auto.inline", {0, 1}, feeding_tests ? 0 : 1) != 0;
    for (const Tensor& t : stages) {
        if (t.same_as(out) || t.op()->is_reduction()) continue;
        if (inline_feeding || !feeding.count(t.op().get())) s[t].compute_inline();
    }
    for (const Tensor& r : reductions)
        if (!r.same_as(reduction)) {
            // A reduction that stays whole: its outer loop in parallel.
            if (target.num_threads > 1 && !r.op()->axis.empty()) s[r].parallel(r.op()->axis[0]);
        }

    const int64_t lanes = std::max(1, target.vector_bits / 32);
    // A long reduction along its innermost axis may keep one partial result per vector lane
    // (Ansor's rfactor rule: auto.rfactor; the lanes combined as a tree at the end), where the
    // register tile would vectorize across rows. The lanes: the widest power of two up to the
    // vector width that divides the axis twice over.
    int64_t rf_lanes = 0;
    if (reduction.defined()) {
        const int64_t e = extent_of(reduction.op()->reduce_axis.back());
        for (int64_t l = lanes; l >= 4 && rf_lanes == 0; l /= 2)
            if (e % l == 0 && e >= 2 * l) rf_lanes = l;
    }
    const bool rfactor = rf_lanes > 0 && config.define("auto.rfactor", {0, 1}, 0) != 0;
    // Otherwise a reduction output accumulates in a cache (made before any other primitive on it).
    Tensor acc, partial;
    if (rfactor) {
        auto [ko, ki] = s[reduction].split(reduction.op()->reduce_axis.back(), rf_lanes);
        partial = s.rfactor(reduction, ki);
        Stage p = s[partial];
        const IterVar lane = partial.op()->axis.back();
        std::vector<IterVar> lane_last;
        for (const IterVar& iv : p.leaf_iter_vars())
            if (!iv.same_as(lane)) lane_last.push_back(iv);
        lane_last.push_back(lane);
        p.reorder(lane_last);
        p.vectorize(lane);
    } else if (reduction.defined()) {
        acc = reduction.same_as(out) ? s.cache_write(out, "local") : reduction;
        if (!reduction.same_as(out)) s[acc].set_scope("local");
    }

    // The output's two tile levels.
    Stage w = s[out];
    const std::vector<IterVar> axes = out.op()->axis;
    const int n = int(axes.size());
    std::vector<IterVar> outer, middle, inner;
    int64_t last_tile = 1;  // the register tile of the last axis: the vectorized one
    for (int i = 0; i < n; ++i) {
        const int64_t e = extent_of(axes[size_t(i)]);
        if (e == 0) {  // a symbolic extent: left whole
            outer.push_back(axes[size_t(i)]);
            continue;
        }
        const std::string name = "auto.s" + std::to_string(i);
        std::vector<int64_t> tiles;  // every divisor up to 64
        for (int64_t d = 1; d <= std::min<int64_t>(e, 64); ++d)
            if (e % d == 0) tiles.push_back(d);
        const int64_t chosen = i == n - 1 ? largest_at_most(tiles, lanes) : i == n - 2 ? largest_at_most(tiles, 4) : 1;
        const int64_t t = config.define(name + ".inner", tiles, chosen);
        // At most this many register tiles in the cache tile: as many as divide the axis.
        int64_t m = config.define(name + ".outer", {1, 2, 4, 8, 16, 32}, 1);
        while ((e / t) % m != 0) --m;
        if (i == n - 1) last_tile = t;
        auto [o, rest] = w.split(axes[size_t(i)], t * m);
        auto [mid, in] = w.split(rest, t);
        outer.push_back(o);
        middle.push_back(mid);
        inner.push_back(in);
    }
    std::vector<IterVar> order = outer;
    order.insert(order.end(), middle.begin(), middle.end());
    order.insert(order.end(), inner.begin(), inner.end());
    if (rfactor && reduction.same_as(out)) order.push_back(w.leaf_iter_vars().back());  // the lanes
    w.reorder(order);
    // The outer loops fused and parallel.
    const int64_t parallel = config.define("auto.parallel", {0, 1, 2}, target.num_threads > 1 ? 1 : 0);
    IterVar fused;
    for (int64_t i = 0; i < std::min<int64_t>(parallel, int64_t(outer.size())); ++i)
        fused = i == 0 ? outer[0] : w.fuse(fused, outer[size_t(i)]);
    if (fused.defined()) w.parallel(fused);

    if (rfactor) {
        // The partial results (and the reduction of an epilogue) per cache tile; the lanes
        // combined as a tree (the reduction's last loop, vectorized).
        if (!middle.empty()) {
            s[partial].compute_at(w, middle.back());
            if (!reduction.same_as(out)) s[reduction].compute_at(w, middle.back());
        }
        s[reduction].vectorize(s[reduction].leaf_iter_vars().back());
        if (!reduction.same_as(out) && last_tile > 1 && middle.size() == size_t(n)) w.vectorize(inner.back());
        return;
    }
    const int64_t unroll = config.define("auto.unroll", {0, 1}, 1);
    if (!reduction.defined() || middle.empty()) {
        if (last_tile > 1 && middle.size() == size_t(n)) w.vectorize(inner.back());
        return;
    }
    // The reduction accumulates a register tile at the innermost cache-tile loop.
    s[acc].compute_at(w, middle.back());
    Stage a = s[acc];
    std::vector<IterVar> ko, ki;
    for (size_t j = 0; j < acc.op()->reduce_axis.size(); ++j) {
        const IterVar& k = acc.op()->reduce_axis[j];
        const int64_t e = extent_of(k);
        if (e == 0) {
            ko.push_back(k);
            continue;
        }
        const int64_t f = config.define("auto.k" + std::to_string(j), dividing(e, {1, 2, 4, 8, 16, 32, 64}), 1);
        auto [o, i] = a.split(k, f);
        ko.push_back(o);
        ki.push_back(i);
    }
    std::vector<IterVar> acc_order = ko;
    acc_order.insert(acc_order.end(), ki.begin(), ki.end());
    for (const IterVar& iv : acc.op()->axis) acc_order.push_back(iv);
    a.reorder(acc_order);
    const std::vector<IterVar>& tile = acc.op()->axis;
    if (!tile.empty()) {
        if (unroll)
            for (size_t i = 0; i + 1 < tile.size(); ++i) a.unroll(tile[i]);
        if (last_tile > 1) a.vectorize(tile.back());
    }
    if (last_tile > 1 && middle.size() == size_t(n)) w.vectorize(inner.back());
}

}  // namespace weft::autotune
