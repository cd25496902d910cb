// Definitions of graph/memory_plan.hpp: a greedy placement over the steps in order. At each
// step the requests that start there are placed, largest first, in the lowest gap of the
// arena that no live request occupies (best fit among the free gaps); an in-place request
// takes its donor's offset when the donor is as large and dies at this step.
#pragma once
#include <algorithm>
#include <map>

#include "weft/graph/memory_plan.hpp"
#include "weft/ir/error.hpp"

namespace weft::graph {

namespace memory_detail {

inline int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// Do the live ranges of requests a and b overlap (an in-place pair does not)?
inline bool overlap_in_time(const std::vector<BufferRequest>& r, size_t a, size_t b) {
    if (r[a].last < r[b].first || r[b].last < r[a].first) return false;
    auto handover = [&](size_t x, size_t y) {  // y takes over x's bytes at y.first
        return r[y].inplace_of == int(x) && r[x].last == r[y].first;
    };
    return !handover(a, b) && !handover(b, a);
}

}  // namespace memory_detail

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, int64_t alignment) {
    using memory_detail::align_up;
    WEFT_CHECK(alignment > 0, "plan_memory: the alignment must be positive");
    const size_t n = requests.size();
    MemoryPlan plan;
    plan.offsets.assign(n, -1);
    for (size_t i = 0; i < n; ++i) {
        const BufferRequest& r = requests[i];
        WEFT_CHECK(r.bytes >= 0 && r.first <= r.last, "plan_memory: request ", i, " has a negative size or ends before it starts");
        WEFT_CHECK(r.inplace_of < int(n), "plan_memory: request ", i, " names a donor that does not exist");
        plan.naive_bytes += align_up(r.bytes, alignment);
    }
    // Place in order of first use, larger first within a step.
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (requests[a].first != requests[b].first) return requests[a].first < requests[b].first;
        if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
        return a < b;
    });
    std::vector<size_t> placed;
    for (size_t i : order) {
        const BufferRequest& r = requests[i];
        const int64_t size = align_up(std::max<int64_t>(r.bytes, 1), alignment);
        int donor = r.inplace_of;
        if (donor >= 0 && plan.offsets[size_t(donor)] >= 0 && requests[size_t(donor)].last == r.first &&
            align_up(requests[size_t(donor)].bytes, alignment) >= size) {
            // The donor's bytes are free from this step on unless someone else took them.
            bool free = true;
            for (size_t j : placed)
                if (j != size_t(donor) && memory_detail::overlap_in_time(requests, i, j) &&
                    plan.offsets[j] < plan.offsets[size_t(donor)] + size &&
                    plan.offsets[size_t(donor)] < plan.offsets[j] + align_up(requests[j].bytes, alignment))
                    free = false;
            if (free) {
                plan.offsets[i] = plan.offsets[size_t(donor)];
                placed.push_back(i);
                continue;
            }
        }
        // The occupied intervals of the arena while r lives, sorted by offset.
        std::vector<std::pair<int64_t, int64_t>> busy;
        for (size_t j : placed)
            if (memory_detail::overlap_in_time(requests, i, j))
                busy.emplace_back(plan.offsets[j], plan.offsets[j] + align_up(requests[j].bytes, alignment));
        std::sort(busy.begin(), busy.end());
        // Best fit: the smallest gap that holds it; else the end of the busy region.
        int64_t best = -1, best_gap = -1, cursor = 0;
        for (auto& [lo, hi] : busy) {
            if (lo - cursor >= size && (best_gap < 0 || lo - cursor < best_gap)) best = cursor, best_gap = lo - cursor;
            cursor = std::max(cursor, hi);
        }
        plan.offsets[i] = best >= 0 ? best : cursor;
        placed.push_back(i);
    }
    for (size_t i = 0; i < n; ++i)
        plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[i] + align_up(requests[i].bytes, alignment));
    return plan;
}

bool plan_is_valid(const std::vector<BufferRequest>& requests, const MemoryPlan& plan) {
    const size_t n = requests.size();
    if (plan.offsets.size() != n) return false;
    for (size_t i = 0; i < n; ++i) {
        if (plan.offsets[i] < 0 || plan.offsets[i] + requests[i].bytes > plan.arena_bytes) return false;
        for (size_t j = i + 1; j < n; ++j) {
            if (!memory_detail::overlap_in_time(requests, i, j)) continue;
            int64_t a0 = plan.offsets[i], a1 = a0 + requests[i].bytes, b0 = plan.offsets[j], b1 = b0 + requests[j].bytes;
            if (requests[i].bytes > 0 && requests[j].bytes > 0 && a0 < b1 && b0 < a1) return false;
        }
    }
    return true;
}

}  // namespace weft::graph
