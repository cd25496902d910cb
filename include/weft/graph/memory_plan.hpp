// Static memory planning: every intermediate tensor of a compiled graph gets an offset in
// one arena allocated at build time. Two tensors may share bytes only when their lifetimes
// (the steps from the one that writes a tensor to the last one that reads it) do not
// overlap — or, for an element-wise step, when the step's output may overwrite an input
// that dies at that step (in place: at the same offset).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace weft::graph {

struct BufferRequest {
    int64_t bytes = 0;
    int first = 0;  // the step that writes it
    int last = 0;   // the last step that reads it (>= first; graph outputs: the last step)
    // A request whose bytes this one may take over at `first` when that one's last == first
    // (an element-wise step writing over its own input); -1: none.
    int inplace_of = -1;
};

struct MemoryPlan {
    std::vector<int64_t> offsets;  // per request, into the arena
    int64_t arena_bytes = 0;       // the peak: what the arena needs
    int64_t naive_bytes = 0;       // the sum of all requests (one buffer each)
};

// Offsets for the requests, each aligned to `alignment` bytes.
// The plan's alignment of every tensor in the arena (a cache line, AVX-512's widest load).
inline constexpr int64_t kPlanAlignment = 64;
// `bytes` rounded up to the plan's alignment.
inline int64_t planned_bytes(int64_t bytes) { return (bytes + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment; }

MemoryPlan plan_memory(const std::vector<BufferRequest>& requests, int64_t alignment = kPlanAlignment);

// Whether no two requests that are live at the same step share a byte (except an in-place
// pair at the same offset) and every request fits in the arena: what the property tests
// check, and what graph::load_module checks of an artifact's plan. When not, `why` (if given)
// receives the first fault found, naming the requests by `names` (else by index).
bool plan_is_valid(const std::vector<BufferRequest>& requests, const MemoryPlan& plan, std::string* why = nullptr,
                   const std::vector<std::string>& names = {});

}  // namespace weft::graph
