// A 1024x1024x1024 float32 matmul: the algorithm, a CPU schedule (register tile in a local
// accumulator, vectorized along the output's contiguous axis, parallel rows), the lowered
// loop program, a check against a naive product, and the time.
#include <weft/weft.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

using namespace weft;

int main() {
    const int64_t M = 1024, N = 1024, K = 1024;
    Tensor A = placeholder({M, K}, f32, "A");
    Tensor B = placeholder({K, N}, f32, "B");
    IterVar k = reduce_axis(0, K, "k");
    Tensor C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");

    Schedule s = create_schedule(C);
    // Accumulate an 8x32 tile in a local buffer (registers), then write it out once.
    Tensor CC = s.cache_write(C, "local");
    auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 8, 32);
    // Columns of tiles outermost: one 128 KiB panel of B stays in L2 for all rows of tiles.
    s[C].reorder({jo, io});
    s[C].vectorize(ji);
    s[C].parallel(jo);
    s[CC].compute_at(s[C], io);
    auto [ci, cj] = std::pair{CC.axis(0), CC.axis(1)};
    auto [ko, ki] = s[CC].split(k, 4);
    s[CC].reorder({ko, ki, ci, cj});
    s[CC].unroll(ci);
    s[CC].vectorize(cj);

    std::cout << "--- schedule ---\n" << s << "\n--- lowered program ---\n" << lower(s, {A, B, C}) << "\n";

    auto t0 = std::chrono::steady_clock::now();
    Kernel mm = build(s, {A, B, C}, Target::host());
    double compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    auto a = Buffer<float>::random({M, K}, -1, 1, 1), b = Buffer<float>::random({K, N}, -1, 1, 2);
    Buffer<float> c({M, N});
    mm(a, b, c);  // warm up

    // Check a sample of elements against a naive dot product.
    double worst = 0;
    for (int64_t i = 0; i < M; i += 37)
        for (int64_t j = 0; j < N; j += 41) {
            double ref = 0;
            for (int64_t x = 0; x < K; ++x) ref += double(a(i, x)) * b(x, j);
            worst = std::max(worst, std::abs(c(i, j) - ref) / std::max(1.0, std::abs(ref)));
        }
    bool ok = worst < 1e-4;

    const int reps = 5;
    auto t1 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) mm(a, b, c);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count() / reps;
    std::printf("JIT compile: %.1f ms\nresult: %s (max relative error %.2e)\ntime: %.2f ms, %.1f GFLOP/s on %d threads\n",
                compile_ms, ok ? "correct" : "WRONG", worst, secs * 1e3, 2.0 * M * N * K / secs * 1e-9, num_threads());
    return ok ? 0 : 1;
}
