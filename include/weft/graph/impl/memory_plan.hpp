// Definitions of graph/memory_plan.hpp. An in-place chain (a request and the ones that take
// over its bytes in turn) is placed as one block, alive from its first step to its last.
// Two greedy placements of the blocks, the smaller arena wins:
//   - by first use: in the order their steps write them (larger first within a step), which
//     is optimal for blocks of one size (first-fit colouring of intervals);
//   - by size: largest first, wherever its lifetime allows (Pisarchyk and Lee's "greedy by
//     size", which TFLite uses), better when a few large tensors dominate.
// Each block goes into the smallest gap that holds it between the blocks already placed
// whose lifetimes overlap its own (above them all when none does). A third placement, by
// size with every request on its own (no in-place), is taken when strictly smaller.
#pragma once
#include <limits>
#include <algorithm>
#include <map>

#include "weft/graph/memory_plan.hpp"
#include "weft/ir/error.hpp"

namespace weft::graph {

namespace memory_detail {

inline int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

// Are requests a and b alive at a common step?
inline bool live_together(const std::vector<BufferRequest>& r, size_t a, size_t b) {
    return !(r[a].last < r[b].first || r[b].last < r[a].first);
}

// Does one of a and b take over the other's bytes at the step where the donor dies (an
// element-wise step writing over its input)? Such a pair may share bytes, but only at the
// same offset: shifted, the step would overwrite input elements before reading them.
inline bool handover(const std::vector<BufferRequest>& r, size_t a, size_t b) {
    auto takes = [&](size_t x, size_t y) { return r[y].inplace_of == int(x) && r[x].last == r[y].first; };
    return takes(a, b) || takes(b, a);
}

// What the placement places: one request, or an in-place chain (a request, the one that takes
// over its bytes, the one that takes over those, ...) at one offset, alive from the chain's
// first step to its last, as large as its largest member.
struct Block {
    int first = 0, last = 0;
    int64_t size = 0;
    std::vector<size_t> members;
};

inline std::vector<Block> blocks_of(const std::vector<BufferRequest>& r, int64_t alignment, bool chains) {
    const size_t n = r.size();
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r[a].first < r[b].first; });
    std::vector<int> block_of(n, -1);
    std::vector<bool> donated(n, false);
    std::vector<Block> blocks;
    for (size_t i : order) {  // a donor (written earlier) has its block before its taker
        int d = r[i].inplace_of;
        // One taker per donor, written strictly after it: then no two members of a chain but a
        // donor and its taker are alive at one step.
        if (chains && d >= 0 && !donated[size_t(d)] && r[size_t(d)].last == r[i].first && r[size_t(d)].first < r[i].first) {
            donated[size_t(d)] = true;
            block_of[i] = block_of[size_t(d)];
        } else {
            block_of[i] = int(blocks.size());
            blocks.push_back({r[i].first, r[i].last, 0, {}});
        }
        Block& b = blocks[size_t(block_of[i])];
        b.last = std::max(b.last, r[i].last);
        b.size = std::max(b.size, align_up(std::max<int64_t>(r[i].bytes, 1), alignment));
        b.members.push_back(i);
    }
    return blocks;
}

// Places the blocks in `order`, each in the smallest gap between the blocks already placed
// whose lifetimes overlap its own that holds it, or above them all; returns the arena size.
inline int64_t place(const std::vector<Block>& blocks, const std::vector<size_t>& order, std::vector<int64_t>& offsets) {
    offsets.assign(blocks.size(), -1);
    std::vector<size_t> placed;
    std::vector<std::pair<int64_t, int64_t>> busy;
    int64_t arena = 0;
    for (size_t i : order) {
        const Block& b = blocks[i];
        busy.clear();
        for (size_t j : placed)
            if (!(blocks[j].last < b.first || b.last < blocks[j].first))
                busy.emplace_back(offsets[j], offsets[j] + blocks[j].size);
        std::sort(busy.begin(), busy.end());
        int64_t best = -1, best_gap = -1, cursor = 0;
        for (auto& [lo, hi] : busy) {
            if (lo - cursor >= b.size && (best_gap < 0 || lo - cursor < best_gap)) best = cursor, best_gap = lo - cursor;
            cursor = std::max(cursor, hi);
        }
        offsets[i] = best >= 0 ? best : cursor;
        placed.push_back(i);
        arena = std::max(arena, offsets[i] + b.size);
    }
    return arena;
}

// The blocks in order of first use (larger first within a step), or by size (larger
// first, earlier first within a size).
inline std::vector<size_t> block_order(const std::vector<Block>& blocks, bool by_size) {
    std::vector<size_t> order(blocks.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const Block &x = blocks[a], &y = blocks[b];
        if (by_size && x.size != y.size) return x.size > y.size;
        if (x.first != y.first) return x.first < y.first;
        return x.size > y.size;
    });
    return order;
}

}  // namespace memory_detail

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, int64_t alignment) {
    using namespace memory_detail;
    WEFT_CHECK(alignment > 0, "plan_memory: the alignment must be positive");
    const size_t n = requests.size();
    MemoryPlan plan;
    for (size_t i = 0; i < n; ++i) {
        const BufferRequest& r = requests[i];
        WEFT_CHECK(r.bytes >= 0 && r.first <= r.last, "plan_memory: request ", i, " has a negative size or ends before it starts");
        WEFT_CHECK(r.inplace_of < int(n) && r.inplace_of != int(i), "plan_memory: request ", i,
                   " names a donor that does not exist");
        plan.naive_bytes += align_up(std::max<int64_t>(r.bytes, 1), alignment);
    }
    // In-place chains by first use, then by size; then every request on its own by size (no
    // in-place), taken only when strictly smaller.
    plan.arena_bytes = -1;
    for (int strategy = 0; strategy < 3; ++strategy) {
        std::vector<Block> blocks = blocks_of(requests, alignment, strategy < 2);
        std::vector<int64_t> offsets;
        int64_t arena = place(blocks, block_order(blocks, strategy > 0), offsets);
        if (plan.arena_bytes >= 0 && arena >= plan.arena_bytes) continue;
        plan.arena_bytes = arena;
        plan.offsets.assign(n, -1);
        for (size_t b = 0; b < blocks.size(); ++b)
            for (size_t i : blocks[b].members) plan.offsets[i] = offsets[b];
    }
    return plan;
}

namespace memory_detail {

// "'conv1' (bytes [0, 4096), live at steps 2 to 5)": request i as plan_is_valid's faults name it.
inline std::string describe_request(const std::vector<BufferRequest>& r, const MemoryPlan& plan,
                                    const std::vector<std::string>& names, size_t i) {
    std::string name = i < names.size() ? "'" + names[i] + "'" : "request " + std::to_string(i);
    int64_t end = 0;  // a corrupt offset must not overflow the message's arithmetic
    if (__builtin_add_overflow(plan.offsets[i], r[i].bytes, &end)) end = std::numeric_limits<int64_t>::max();
    return ::weft::detail::concat(name, " (bytes [", plan.offsets[i], ", ", end, "), live at steps ", r[i].first, " to ",
                                  r[i].last, ")");
}

}  // namespace memory_detail

bool plan_is_valid(const std::vector<BufferRequest>& requests, const MemoryPlan& plan, std::string* why,
                   const std::vector<std::string>& names) {
    using memory_detail::describe_request;
    auto fault = [&](const std::string& what) {
        if (why) *why = what;
        return false;
    };
    const size_t n = requests.size();
    if (plan.offsets.size() != n)
        return fault(::weft::detail::concat("the plan has ", plan.offsets.size(), " offsets for ", n, " requests"));
    for (size_t i = 0; i < n; ++i) {  // (the arena less the offset: a huge offset cannot overflow)
        if (plan.offsets[i] < 0 || plan.offsets[i] > plan.arena_bytes || requests[i].bytes > plan.arena_bytes - plan.offsets[i])
            return fault(::weft::detail::concat(describe_request(requests, plan, names, i), " does not fit in the arena of ",
                                                plan.arena_bytes, " bytes"));
    }
    for (size_t i = 0; i < n; ++i) {
        for (size_t j = i + 1; j < n; ++j) {
            if (!memory_detail::live_together(requests, i, j)) continue;
            int64_t a0 = plan.offsets[i], a1 = a0 + requests[i].bytes, b0 = plan.offsets[j], b1 = b0 + requests[j].bytes;
            if (requests[i].bytes == 0 || requests[j].bytes == 0 || a1 <= b0 || b1 <= a0) continue;
            if (a0 == b0 && memory_detail::handover(requests, i, j)) continue;
            const bool shifted = memory_detail::handover(requests, i, j);
            return fault(describe_request(requests, plan, names, i) + " and " + describe_request(requests, plan, names, j) +
                         (shifted ? " share bytes at different offsets (writing in place needs the same one)"
                                  : " share bytes while both are live"));
        }
    }
    return true;
}

}  // namespace weft::graph
