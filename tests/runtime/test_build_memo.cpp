// build() of the same Schedule object again is served from memory without lowering, and
// only while the schedule is unchanged.
#include <doctest/doctest.h>

#include "weft/weft.hpp"

using namespace weft;

TEST_CASE("rebuilding the same schedule object returns the same compiled module until the schedule changes") {
    Tensor A = placeholder({64}, f32, "A");
    Tensor B = compute({64}, [&](Expr i) { return A(i) * 3.0f; }, "B");
    Schedule s = create_schedule(B);
    Kernel first = build(s, {A, B});
    uint64_t hits = KernelCache::global().hits();
    Kernel again = build(s, {A, B});
    CHECK(again.module() == first.module());
    CHECK(KernelCache::global().hits() == hits + 1);
    // A primitive added later changes the program: no stale kernel.
    auto [o, i] = s[B].split(B.axis(0), 16);
    s[B].vectorize(i);
    Kernel changed = build(s, {A, B});
    CHECK(changed.module() != first.module());
    CHECK(changed.signature().body.defined());
    auto a = Buffer<float>::random({64}, -1, 1, 3);
    Buffer<float> b({64});
    changed(a, b);
    for (int64_t x = 0; x < 64; ++x) CHECK(b(x) == a(x) * 3.0f);
    // Another target option: another kernel.
    LowerOptions fast;
    fast.fast_math = true;
    CHECK(build(s, {A, B}, Target::host(), fast).module() != changed.module());
}

TEST_CASE("compiled kernels the cache evicts past its budget keep working, and build again when asked") {
    KernelCache& cache = KernelCache::global();
    const int64_t saved = cache.memory_budget();
    cache.set_memory_budget(1);  // room for the newest kernel only
    Tensor A = placeholder({32}, f32, "A");
    std::vector<Kernel> kernels;
    for (int k = 1; k <= 4; ++k) {
        Tensor B = compute({32}, [&](Expr i) { return A(i) * float(k) + 0.25f; }, "evicted_" + std::to_string(k));
        kernels.push_back(build(create_schedule(B), {A, B}));
    }
    CHECK(cache.memory_bytes() > 0);
    CHECK(cache.size() >= 1);
    CHECK(cache.evictions() >= 3);
    auto a = Buffer<float>::random({32}, -1, 1, 5);
    Buffer<float> b({32});
    for (int k = 1; k <= 4; ++k) {
        kernels[size_t(k - 1)](a, b);  // handed out before their eviction: alive
        for (int64_t x = 0; x < 32; ++x) CHECK(b(x) == doctest::Approx(a(x) * float(k) + 0.25f));
    }
    cache.set_memory_budget(saved);
}
