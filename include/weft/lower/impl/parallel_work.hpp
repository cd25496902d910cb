// The work of a parallel loop's iteration, for the thread pool's choice of how many threads
// to split the loop over (CPU). Waking a second thread and waiting for it costs a few
// microseconds on a quiet machine and up to a scheduler time slice on a busy one, so a loop
// that does less work than that runs faster on its caller alone; the runtime can tell only
// if the kernel says how much work an iteration does. This pass wraps each parallel loop in
// AttrStmt("parallel_work", W), which codegen passes to weft_runtime_parallel_for:
//
//   parallel for (i, 0, 64) {              attr parallel_work = 1024
//     for (j, 0, 64) {               ->    parallel for (i, 0, 64) {
//       Y[ramp(i*64 + j*16, 1, 16)] = ...       for (j, 0, 64) { ... }
//
// W counts element stores: a store of a vector of L lanes counts L, and a loop multiplies
// its body's count by its trip count (a non-constant trip count by its constant upper
// bound, e.g. a tail's min(16, n - x)); both branches of an `if` count. That is the
// multiply-adds of a GEMM or convolution and the elements of an element-wise kernel: a
// rough, cheap measure, which is all the choice between one thread and several needs.
// W is 0 (unknown: the runtime uses every thread, as for a large loop) when an inner trip
// count has no constant bound.
// Runs last, on the final loop nest (after unrolling and simplification).
#pragma once
#include <algorithm>
#include <optional>

#include "weft/ir/arith/interval.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {
namespace parallel_work_detail {

// Large enough for any real loop nest, small enough that a product with an int64 trip count
// cannot overflow __int128 before it is clamped.
inline constexpr int64_t kWorkCap = int64_t(1) << 62;

inline int64_t clamped_product(int64_t a, int64_t b) {
    return static_cast<int64_t>(std::min<__int128>(static_cast<__int128>(a) * b, kWorkCap));
}

// A constant upper bound of e, when there is one: the interval analysis's, or for a
// min(a, b) whose other side is unbounded (a tail's min(16, n - x) with n unknown) the
// bound of the side that has one.
inline std::optional<int64_t> const_upper_bound(const ir::Expr& e, const ir::arith::VarRanges& ranges) {
    int64_t lo = 0, hi = 0;
    if (ir::arith::const_bounds(e, ranges, &lo, &hi)) return hi;
    if (auto* m = e.as<ir::Min>()) {
        std::optional<int64_t> a = const_upper_bound(m->a, ranges), b = const_upper_bound(m->b, ranges);
        if (a && b) return std::min(*a, *b);
        return a ? a : b;
    }
    return std::nullopt;
}

// Element stores of one execution of a statement; nullopt when a loop's trip count has no
// constant upper bound.
class WorkCounter {
public:
    std::optional<int64_t> count(const ir::Stmt& s) {
        if (!s.defined()) return 0;
        if (auto* store = s.as<ir::Store>()) return int64_t(store->value.type().lanes);
        if (auto* loop = s.as<ir::For>()) return count_loop(*loop);
        if (auto* seq = s.as<ir::Seq>()) {
            int64_t total = 0;
            for (const ir::Stmt& child : seq->stmts) {
                std::optional<int64_t> w = count(child);
                if (!w) return std::nullopt;
                total = std::min(total + *w, kWorkCap);
            }
            return total;
        }
        if (auto* branch = s.as<ir::IfThenElse>()) {
            std::optional<int64_t> then_work = count(branch->then_case), else_work = count(branch->else_case);
            if (!then_work || !else_work) return std::nullopt;
            return std::min(*then_work + *else_work, kWorkCap);
        }
        if (auto* let = s.as<ir::LetStmt>()) return count(let->body);
        if (auto* alloc = s.as<ir::Allocate>()) return count(alloc->body);
        if (auto* attr = s.as<ir::AttrStmt>()) return count(attr->body);
        if (auto* assertion = s.as<ir::AssertStmt>()) return count(assertion->body);
        return 0;  // Evaluate (a prefetch, a call): no store of its own
    }

    // One iteration of `loop`'s body, the loop variable ranging over the loop's range where
    // that is constant (for the trip counts inside that depend on it).
    std::optional<int64_t> count_iteration(const ir::For& loop) {
        int64_t min_lo = 0, min_hi = 0;
        std::optional<int64_t> extent = const_upper_bound(loop.extent, ranges_);
        bool bounded = extent && *extent > 0 && ir::arith::const_bounds(loop.min, ranges_, &min_lo, &min_hi);
        if (bounded)
            ranges_[loop.loop_var] = ir::arith::Interval(ir::make_int(min_lo), ir::make_int(min_hi + *extent - 1));
        std::optional<int64_t> body = count(loop.body);
        if (bounded) ranges_.erase(loop.loop_var);
        return body;
    }

private:
    std::optional<int64_t> count_loop(const ir::For& loop) {
        std::optional<int64_t> extent = const_upper_bound(loop.extent, ranges_);
        if (!extent) return std::nullopt;
        if (*extent <= 0) return 0;
        std::optional<int64_t> body = count_iteration(loop);
        if (!body) return std::nullopt;
        return clamped_product(*body, *extent);
    }

    ir::arith::VarRanges ranges_;
};

inline int64_t work_per_iteration(const ir::For& loop) {
    std::optional<int64_t> w = WorkCounter().count_iteration(loop);
    return w ? *w : 0;
}

class AnnotateParallelWork : public ir::IRMutator {
protected:
    using IRMutator::visit_;
    ir::Stmt visit_(const ir::For* op, const ir::Stmt& self) override {
        ir::Stmt s = IRMutator::visit_(op, self);
        if (op->for_kind != ir::ForKind::Parallel) return s;
        return ir::AttrStmt::make(ir::attr::parallel_work, ir::make_int(work_per_iteration(*op)), s);
    }
};

}  // namespace parallel_work_detail

inline ir::Stmt annotate_parallel_work(const ir::Stmt& s) {
    return parallel_work_detail::AnnotateParallelWork().mutate(s);
}

}  // namespace weft::lower_passes
