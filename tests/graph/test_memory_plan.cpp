// The memory planner (graph/memory_plan.hpp) on random DAG-shaped request sets, and the
// executor's storage: planned arenas of real networks, and run() allocating nothing.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <limits>
#include <new>
#include <random>

#include "graph_check.hpp"
#include "weft/graph/memory_plan.hpp"

// ---- counting heap allocations ------------------------------------------------------------
// Every operator new of this test binary counts while `counting` is set.

namespace {
std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};

void* counted_alloc(std::size_t n, std::size_t align) {
    if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
    if (n == 0) n = 1;
    void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align) : std::malloc(n);
    if (!p) throw std::bad_alloc();
    return p;
}
}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n, 0); }
void* operator new[](std::size_t n) { return counted_alloc(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_alloc(n, std::size_t(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_alloc(n, std::size_t(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted_alloc(n, 0);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

using namespace weft;
using graph::BufferRequest;

namespace {

int64_t align64(int64_t b) { return (std::max<int64_t>(b, 1) + 63) / 64 * 64; }

// A random network's requests: step k writes request k and reads 1 to 3 earlier ones (mostly
// recent ones, as in real networks); some requests are outputs (alive to the end). With
// `inplace`, a step whose input dies there may take it over (same size). With `one_size`,
// every request has the same size.
std::vector<BufferRequest> random_requests(std::mt19937_64& rng, bool inplace, bool one_size) {
    auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
    const int steps = int(uniform(1, 40));
    std::vector<BufferRequest> r(static_cast<size_t>(steps));
    std::vector<std::vector<int>> reads(static_cast<size_t>(steps));
    for (int k = 0; k < steps; ++k) {
        r[size_t(k)].first = r[size_t(k)].last = k;
        r[size_t(k)].bytes = one_size ? 256 : uniform(0, 3) == 0 ? uniform(1, 64) : uniform(1, 1 << 14);
        for (int e = 0, edges = int(uniform(1, 3)); k > 0 && e < edges; ++e) {
            int from = uniform(0, 2) ? std::max(0, k - int(uniform(1, 3))) : int(uniform(0, k - 1));
            reads[size_t(k)].push_back(from);
            r[size_t(from)].last = std::max(r[size_t(from)].last, k);
        }
    }
    for (auto& q : r)
        if (uniform(0, 9) == 0) q.last = steps;  // a graph output
    r.back().last = steps;
    if (inplace)
        for (int k = 0; k < steps; ++k)
            for (int from : reads[size_t(k)])
                if (r[size_t(from)].last == k && from != k && uniform(0, 1)) {
                    r[size_t(k)].inplace_of = from;
                    r[size_t(k)].bytes = r[size_t(from)].bytes;
                    break;
                }
    return r;
}

// No plan can use less: the most bytes alive at one step (an in-place pair counted once).
int64_t lower_bound(const std::vector<BufferRequest>& r) {
    int64_t best = 0;
    for (int t = 0;; ++t) {
        int64_t live = 0;
        bool any = false;
        for (size_t i = 0; i < r.size(); ++i) {
            if (r[i].first > t || r[i].last < t) continue;
            any = true;
            live += align64(r[i].bytes);
            int d = r[i].inplace_of;
            if (d >= 0 && r[i].first == t && r[size_t(d)].last == t) live -= std::min(align64(r[i].bytes), align64(r[size_t(d)].bytes));
        }
        if (!any && t > 0) break;
        best = std::max(best, live);
    }
    return best;
}

bool disjoint_lifetimes_exist(const std::vector<BufferRequest>& r) {
    for (size_t i = 0; i < r.size(); ++i)
        for (size_t j = i + 1; j < r.size(); ++j)
            if (r[i].last < r[j].first || r[j].last < r[i].first) return true;
    return false;
}

}  // namespace

TEST_CASE("memory plans of random DAG-shaped request sets are valid and share memory") {
    std::mt19937_64 rng(20240611);
    int cases = 0, reusable = 0, reused = 0, inplace_pairs = 0, inplace_kept = 0;
    double planned = 0, naive = 0;
    for (int c = 0; c < 3000; ++c) {
        const bool inplace = c % 3 != 0, one_size = c % 5 == 0;
        std::vector<BufferRequest> r = random_requests(rng, inplace, one_size);
        graph::MemoryPlan plan = graph::plan_memory(r);
        CAPTURE(c);
        REQUIRE(graph::plan_is_valid(r, plan));
        int64_t naive_bytes = 0;
        for (auto& q : r) naive_bytes += align64(q.bytes);
        CHECK(plan.naive_bytes == naive_bytes);
        CHECK(plan.arena_bytes <= plan.naive_bytes);
        CHECK(plan.arena_bytes >= lower_bound(r));
        for (int64_t off : plan.offsets) CHECK(off % 64 == 0);
        // One size and no in-place: first-fit in order of first use colours the intervals
        // optimally.
        if (one_size && !inplace) CHECK(plan.arena_bytes == lower_bound(r));
        for (size_t i = 0; i < r.size(); ++i)
            if (r[i].inplace_of >= 0) {
                ++inplace_pairs;
                inplace_kept += plan.offsets[i] == plan.offsets[size_t(r[i].inplace_of)];
            }
        ++cases;
        planned += double(plan.arena_bytes);
        naive += double(plan.naive_bytes);
        if (disjoint_lifetimes_exist(r)) {
            ++reusable;
            reused += plan.arena_bytes < plan.naive_bytes;
        }
    }
    MESSAGE(cases, " cases: arena ", planned / naive, " of naive; reuse in ", reused, " of ", reusable,
            " where lifetimes allow; in place ", inplace_kept, " of ", inplace_pairs);
    CHECK(reused >= reusable * 95 / 100);
    CHECK(planned < 0.6 * naive);
    CHECK(inplace_kept >= inplace_pairs * 95 / 100);
}

TEST_CASE("plan_is_valid rejects shared bytes of live tensors and shifted in-place pairs") {
    // 0 lives over steps 0-1, 1 over 1-2 and takes over 0's bytes at step 1.
    std::vector<BufferRequest> r = {{.bytes = 256, .first = 0, .last = 1}, {.bytes = 256, .first = 1, .last = 2, .inplace_of = 0}};
    CHECK(graph::plan_is_valid(r, {{0, 0}, 256, 512}));
    CHECK(!graph::plan_is_valid(r, {{0, 64}, 320, 512}));  // overlapping, shifted: not in place
    CHECK(graph::plan_is_valid(r, {{0, 256}, 512, 512}));
    r[1].inplace_of = -1;
    CHECK(!graph::plan_is_valid(r, {{0, 0}, 256, 512}));
    CHECK(!graph::plan_is_valid(r, {{0, 256}, 500, 512}));  // beyond the arena
    // The reason, naming the requests when given names (what graph::load_module reports).
    std::string why;
    CHECK(!graph::plan_is_valid(r, {{0, 64}, 320, 512}, &why, {"a", "b"}));
    CHECK(why == "'a' (bytes [0, 256), live at steps 0 to 1) and 'b' (bytes [64, 320), live at steps 1 to 2) share bytes "
                 "while both are live");
    CHECK(!graph::plan_is_valid(r, {{0, 256}, 500, 512}, &why));
    CHECK(why == "request 1 (bytes [256, 512), live at steps 1 to 2) does not fit in the arena of 500 bytes");
    CHECK(!graph::plan_is_valid(r, {{0, std::numeric_limits<int64_t>::max()}, 500, 512}));  // no overflow
    r[1].inplace_of = 0;
    CHECK(!graph::plan_is_valid(r, {{0, 64}, 320, 512}, &why));
    CHECK(why.find("share bytes at different offsets") != std::string::npos);
    r[1].inplace_of = -1;
    // The planner's own plans for it.
    CHECK(graph::plan_memory(r).arena_bytes == 512);
    r[1].inplace_of = 0;
    CHECK(graph::plan_memory(r).arena_bytes == 256);
}

TEST_CASE("greedy by size wins where a large tensor would otherwise land above small ones") {
    // Small a (0-1) and b (0-3), then large c (2-3): in order of first use c goes above b; by
    // size, c goes first and a, b fit beside it.
    std::vector<BufferRequest> r = {{.bytes = 64, .first = 0, .last = 1},
                                    {.bytes = 64, .first = 0, .last = 3},
                                    {.bytes = 1024, .first = 2, .last = 3}};
    graph::MemoryPlan plan = graph::plan_memory(r);
    CHECK(graph::plan_is_valid(r, plan));
    CHECK(plan.arena_bytes == 1024 + 64);
}

TEST_CASE("a chain network's arena is far below one buffer per tensor") {
    // 12 conv-relu layers of the same shape: two buffers take turns.
    graph::Graph g;
    graph::Value x = g.input("x", {1, 8, 8, 8});
    for (int i = 0; i < 12; ++i)
        x = g.relu(g.conv2d(x, g.constant("w" + std::to_string(i), Buffer<float>::random({8, 8, 3, 3}, -0.3f, 0.3f, uint64_t(i))),
                            {.pad = 1}));
    g.output(x, "y");
    graph::Module m = graph::build(g, Target::host(), graph_check::nchw());
    const int64_t layer = 8 * 8 * 8 * 4;
    CHECK(m.kernels().size() == 12);
    CHECK(m.memory_naive_bytes() == 12 * layer);
    CHECK(m.memory_bytes() == 2 * layer);
    // Unfused, the relus run in place over the convolutions' outputs: still two buffers
    // for 24 tensors.
    graph::Module u = graph::build(g, Target::host(), graph_check::nchw(false));
    CHECK(u.kernels().size() == 24);
    CHECK(u.memory_naive_bytes() == 24 * layer);
    CHECK(u.memory_bytes() == 2 * layer);
    auto inputs = graph_check::random_inputs(g, 3);
    CHECK(graph_check::max_error(graph_check::run_graph(m, inputs)[0], graph_check::run_graph(u, inputs)[0]) < 1e-4);
}

namespace {

// conv3x3 (8 -> 8 channels, same size) with a bias, from a seed.
graph::Value conv(graph::Graph& g, graph::Value x, uint64_t seed) {
    auto w = Buffer<float>::random({8, 8, 3, 3}, -0.2f, 0.2f, seed), b = Buffer<float>::random({8}, -0.1f, 0.1f, seed + 100);
    return g.conv2d(x, g.constant("", w), g.constant("", b), {.pad = 1});
}

}  // namespace

TEST_CASE("a convolution kernel whose epilogue adds a dying residual writes over it") {
    // stem, then two residual blocks relu(conv(relu(conv(x))) + x): the second conv's kernel
    // reads x only in its epilogue (x dies there), so it writes its output over x.
    graph::Graph g;
    graph::Value x = g.relu(conv(g, g.input("in", {1, 8, 10, 10}), 1));
    for (uint64_t b = 0; b < 2; ++b) x = g.relu(g.add(conv(g, g.relu(conv(g, x, 10 + b)), 20 + b), x));
    g.output(x, "y");
    const int64_t tensor = 8 * 10 * 10 * 4;
    graph::Module m = graph_check::check_fused_matches_unfused(g, 1e-4, graph_check::nchw());
    CHECK(m.kernels().size() == 5);
    CHECK(m.memory_bytes() == 2 * tensor);  // three tensors live at once without it
    CHECK(m.run_debug().ok);
}

TEST_CASE("a convolution kernel never writes over the convolution's own data") {
    // relu(conv(x) + x): x is read by the convolution (at neighbouring positions), not only
    // by the epilogue, so the output needs bytes of its own.
    graph::Graph g;
    graph::Value x = g.relu(conv(g, g.input("in", {1, 8, 10, 10}), 1));
    g.output(g.relu(g.add(conv(g, x, 2), x)), "y");
    graph::Module m = graph_check::check_fused_matches_unfused(g, 1e-4, graph_check::nchw());
    CHECK(m.kernels().size() == 2);
    CHECK(m.memory_bytes() == 2 * 8 * 10 * 10 * 4);
}

TEST_CASE("an element-wise chain runs in place in one buffer") {
    graph::Graph g;
    graph::Value x = g.input("x", {64, 65});
    graph::Value y = g.sigmoid(g.exp(g.tanh(g.relu(g.add(x, x)))));
    g.output(g.sqrt(g.mul(y, y)), "y");
    graph::Module u = graph::build(g, Target::host(), {.fuse = false});
    CHECK(u.kernels().size() == 7);
    CHECK(u.memory_bytes() == align64(64 * 65 * 4));
    graph::Module m = graph::build(g);
    CHECK(m.kernels().size() == 1);
    auto inputs = graph_check::random_inputs(g, 4);
    CHECK(graph_check::max_error(graph_check::run_graph(m, inputs)[0], graph_check::run_graph(u, inputs)[0]) < 1e-5);
}

TEST_CASE("Module run allocates nothing and keeps its storage in place") {
    graph::Graph g;
    graph::Value x = g.input("x", {1, 8, 12, 12});
    graph::Value w = g.constant("w", Buffer<float>::random({16, 8, 3, 3}, -0.3f, 0.3f, 5));
    graph::Value y = g.relu(g.conv2d(x, w, {.pad = 1}));
    graph::Value z = g.softmax(g.dense(g.input("v", {4, 32}), g.constant("d", Buffer<float>::random({8, 32}, -1.f, 1.f, 6))));
    g.output(g.max_pool2d(y, {.kernel = 2, .stride = 2}), "pooled");
    g.output(z, "p");
    for (bool fuse : {true, false}) {
        CAPTURE(fuse);
        graph::Module m = graph::build(g, Target::host(), {.fuse = fuse});
        m.set_input("x", Buffer<float>::random({1, 8, 12, 12}, -1.f, 1.f, 7));
        m.set_input("v", Buffer<float>::random({4, 32}, -1.f, 1.f, 8));
        m.run();  // first run: the thread pool starts
        const void* out0 = m.get_output(0).data();
        const void* out1 = m.get_output(1).data();
        const void* in0 = m.input(0).data();
        allocations = 0;
        counting = true;
        for (int i = 0; i < 5; ++i) m.run();
        counting = false;
        CHECK(allocations.load() == 0);
        CHECK(m.get_output(0).data() == out0);
        CHECK(m.get_output(1).data() == out1);
        CHECK(m.input(0).data() == in0);
    }
    // The counter counts: a vector allocates.
    counting = true;
    std::vector<int>* v = new std::vector<int>(10);
    counting = false;
    CHECK(allocations.load() >= 1);
    delete v;
}

TEST_CASE("a matmul whose last row tile overlaps the one before does not write over its residual") {
    // dense + bias + a dying residual h: the GEMM schedule's last block of rows starts early
    // (TailStrategy::ShiftInwards: 29 rows are no multiple of its row tile) and computes the
    // rows it overlaps twice. Written over h, the second pass would add h's new values.
    graph::Graph g;
    graph::Value x = g.input("x", {29, 64});
    graph::Value h = g.relu(g.add(x, x));
    graph::Value f = g.dense(h, g.constant("w1", Buffer<float>::random({96, 64}, -0.2f, 0.2f, 1)),
                             g.constant("b1", Buffer<float>::random({96}, -0.1f, 0.1f, 2)));
    graph::Value y = g.add(g.dense(f, g.constant("w2", Buffer<float>::random({64, 96}, -0.2f, 0.2f, 3)),
                                   g.constant("b2", Buffer<float>::random({64}, -0.1f, 0.1f, 4))),
                           h);
    g.output(y, "y");
    graph::Module m = graph_check::check_fused_matches_unfused(g, 1e-4, graph_check::nchw());
    CHECK(m.kernels().size() == 3);
}
