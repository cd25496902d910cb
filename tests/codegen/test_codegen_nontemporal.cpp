// Stage::store_nontemporal: the CPU backend writes the stage's vectors with x86 non-temporal
// stores (MOVNT) where the address is aligned and plain stores where it is not, and fences
// them before the kernel (or a parallel task) returns. The values must be exactly those of
// the same schedule without it, whatever the buffer's alignment and the tail.
#include <doctest/doctest.h>

#include "random_floats.hpp"

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <weft/weft.hpp>

using namespace weft;
using weft::test::random_floats;

namespace {

float chain(float x) { return std::max(1.5f * x - 0.25f, 0.f) + 0.5f; }

// y = max(1.5 x - 0.25, 0) + 0.5 over n floats, split by 64, vectorized by 16, the outer loop
// parallel when asked.
Kernel chain_kernel(int64_t n, bool nontemporal, bool parallel) {
    Tensor X = placeholder({n}, f32, "x");
    Tensor Y = compute({n}, [&](Expr i) { return max(X(i) * 1.5f - 0.25f, 0.f) + 0.5f; }, "y");
    Schedule s = create_schedule(Y);
    auto [outer, inner] = s[Y].split(Y.axis(0), 64);
    auto [mid, lanes] = s[Y].split(inner, 16);
    s[Y].vectorize(lanes);
    s[Y].unroll(mid);
    if (parallel) s[Y].parallel(outer);
    if (nontemporal) s[Y].store_nontemporal();
    return build(s, {X, Y}, Target::host(), {.name = nontemporal ? "chain_nt" : "chain"});
}

bool is_x86() { return Target::host().is_x86(); }

}  // namespace

TEST_CASE("store_nontemporal writes vectors with MOVNT and fences them") {
    if (!is_x86()) return;  // the attribute is a hint other targets ignore
    std::string plain = chain_kernel(4096, false, false).assembly();
    std::string streaming = chain_kernel(4096, true, false).assembly();
    CHECK(plain.find("vmovnt") == std::string::npos);
    CHECK(plain.find("sfence") == std::string::npos);
    CHECK(streaming.find("vmovnt") != std::string::npos);
    CHECK(streaming.find("sfence") != std::string::npos);
    // Each parallel task fences its own stores before it returns.
    std::string parallel = chain_kernel(4096, true, true).assembly();
    auto task = parallel.find(".parallel.");
    REQUIRE(task != std::string::npos);
    CHECK(parallel.find("sfence", task) != std::string::npos);
}

TEST_CASE("store_nontemporal computes what plain stores compute at any alignment and length") {
    for (int64_t n : {int64_t(1), int64_t(15), int64_t(64), int64_t(1000), int64_t(4099), int64_t(100003)}) {
        for (bool parallel : {false, true}) {
            Kernel k = chain_kernel(n, true, parallel);
            std::vector<float> x = random_floats(size_t(n) + 16, unsigned(n));
            // The plain kernel's results: the same code but the stores, so equal bit for bit.
            std::vector<float> expected(size_t(n) + 16);
            {
                Buffer<float> in(x.data(), {n + 16}), out(expected.data(), {n + 16});
                chain_kernel(n + 16, false, false)(in, out);
            }
            int64_t off_reference = 0;
            for (int64_t i = 0; i < n + 16; ++i)
                off_reference += std::abs(expected[size_t(i)] - chain(x[size_t(i)])) > 1e-6f;
            REQUIRE(off_reference == 0);
            // Outputs at every float offset from a 64-byte boundary: aligned (MOVNT), and each
            // misalignment (the plain-store fallback), with a guard zone after the end.
            for (int64_t offset : {0, 1, 3, 8, 15}) {
                Buffer<float> storage({n + 32});
                for (int64_t i = 0; i < n + 32; ++i) storage.data()[i] = -7.f;
                Buffer<float> in(x.data() + offset, {n});
                Buffer<float> out(storage.data() + offset, {n});
                k(in, out);
                int64_t wrong = 0;
                for (int64_t i = 0; i < n; ++i) wrong += out.data()[i] != expected[size_t(offset + i)];
                for (int64_t i = 0; i < offset; ++i) wrong += storage.data()[i] != -7.f;
                for (int64_t i = offset + n; i < n + 32; ++i) wrong += storage.data()[i] != -7.f;
                INFO("n = " << n << ", offset = " << offset << ", parallel = " << parallel);
                CHECK(wrong == 0);
            }
        }
    }
}

TEST_CASE("store_nontemporal on the copy of a cache_write and on a 2-d stage") {
    const int64_t rows = 37, cols = 80;
    std::vector<float> a = random_floats(size_t(rows * cols), 5), b = random_floats(size_t(cols), 6);
    Tensor A = placeholder({rows, cols}, f32, "A"), B = placeholder({cols}, f32, "B");
    Tensor C = compute({rows, cols}, [&](Expr i, Expr j) { return A(i, j) * B(j) + 1.f; }, "C");
    Schedule s = create_schedule(C);
    Tensor CL = s.cache_write(C, "local");
    auto [jo, ji] = s[C].split(C.axis(1), 16);
    s[C].vectorize(ji);
    s[CL].compute_at(s[C], jo);
    s[CL].vectorize(CL.axis(1));
    s[C].store_nontemporal();
    Kernel k = build(s, {A, B, C});
    Buffer<float> in_a(a.data(), {rows, cols}), in_b(b.data(), {cols}), out({rows, cols});
    k(in_a, in_b, out);
    int64_t wrong = 0;
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
            wrong += std::abs(out.data()[i * cols + j] - (a[size_t(i * cols + j)] * b[size_t(j)] + 1.f)) > 1e-6f;
    CHECK(wrong == 0);
    if (is_x86()) CHECK(k.assembly().find("vmovnt") != std::string::npos);
}

TEST_CASE("store_nontemporal is part of the schedule's trace and survives JSON") {
    Tensor X = placeholder({256}, f32, "x");
    Tensor Y = compute({256}, [&](Expr i) { return X(i) + 1.f; }, "y");
    Schedule s = create_schedule(Y);
    s[Y].store_nontemporal();
    Schedule back = Schedule::from_json(s.to_json(), {Y});
    CHECK(back == s);
    CHECK(back[Y].node()->nontemporal_stores);
    std::ostringstream printed;
    printed << s;
    CHECK(printed.str().find("store_nontemporal") != std::string::npos);
}
