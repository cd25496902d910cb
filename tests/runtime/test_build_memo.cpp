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
