// What a Target tells schedules: the host's caches and the thread pool's size at the time of
// the call, and the written-by-hand x86 targets for another machine.
#include <doctest/doctest.h>

#include "weft/weft.hpp"

using namespace weft;

TEST_CASE("Target::host() carries caches and the pool's current thread count") {
    const int before = num_threads();
    Target h = Target::host();
    CHECK(h.l1d_bytes > 0);
    CHECK(h.l2_bytes > 0);
    CHECK(h.l3_bytes >= 0);
    CHECK(h.num_threads == before);
    set_num_threads(1);
    CHECK(Target::host().num_threads == 1);
    set_num_threads(3);
    CHECK(Target::host().num_threads == 3);
    set_num_threads(0);
    CHECK(Target::host().num_threads == num_threads());
    // Threads and caches change schedules, not code generation: not part of str().
    Target other = h;
    other.num_threads = h.num_threads + 5;
    other.l2_bytes *= 2;
    CHECK(other.str() == h.str());
}

TEST_CASE("x86 targets for another machine") {
    Target avx2 = Target::x86_avx2(4), avx512 = Target::x86_avx512();
    CHECK(avx2.is_x86());
    CHECK(avx2.vector_bits == 256);
    CHECK(avx2.natural_lanes() == 8);
    CHECK(avx2.vector_registers() == 16);
    CHECK(avx2.has_feature("fma"));
    CHECK(!avx2.has_feature("avx512f"));
    CHECK(!avx2.uses_avx512());
    CHECK(avx2.num_threads == 4);
    CHECK(avx512.uses_avx512());
    CHECK(avx512.vector_registers() == 32);
    CHECK(avx512.num_threads == 1);
    CHECK(avx2.str() != avx512.str());
}
