// A 1024x1024x1024 float32 matmul: the algorithm (with B packed into column panels), a CPU
// schedule (a 6x64 register tile in a local accumulator, vectorized along the output's
// contiguous axis, parallel panels), the lowered loop program, a check against a naive
// product, and the time.
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
    // B copied into panels of 64 columns (Bp[p, k, c] = B[k, p * 64 + c]) inside the kernel:
    // the tile below then reads its 64 columns of B contiguously, k after k, instead of one
    // short piece per 4 KiB row of B.
    const int64_t nr = 64, mr = 6;
    Tensor Bp = compute({N / nr, K, nr}, [&](Expr p, Expr kk, Expr c) { return B(kk, p * nr + c); }, "B_packed");
    IterVar k = reduce_axis(0, K, "k");
    Tensor C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * Bp(j / nr, k, j % nr), {k}); }, "C");

    Schedule s = create_schedule(C);
    // A 6x64 tile of C accumulates in a local buffer (24 vector registers), then is written
    // out once. 1024 rows are 170 tiles of 6 and 4 more: ShiftInwards moves the last tile up
    // to end at row 1024 (it recomputes 2 rows) instead of compiling a second, shorter tile.
    Tensor CC = s.cache_write(C, "local");
    auto [io, ii] = s[C].split(C.axis(0), mr, TailStrategy::ShiftInwards);
    auto [jo, ji] = s[C].split(C.axis(1), nr);
    // Panels of columns outermost, in parallel: each packs its panel once (256 KiB, in L2)
    // and every tile of rows reads it from there.
    s[C].reorder({jo, io, ii, ji});
    s[C].vectorize(ji);
    s[C].parallel(jo);
    s[Bp].compute_at(s[C], jo);
    s[Bp].vectorize(Bp.axis(2));
    s[CC].compute_at(s[C], io);
    auto [ci, cj] = std::pair{CC.axis(0), CC.axis(1)};
    auto [ko, ki] = s[CC].split(k, 4);
    s[CC].reorder({ko, ki, ci, cj});
    s[CC].unroll(ki);  // 4 steps of k unrolled: no loop counter between them
    s[CC].vectorize(cj);
    // The tile's rows (ci, and ii in the copy-out) need no unroll call: lowering unrolls the
    // loops that index a local tile, so that it stays in registers (docs/schedules.md#cache_write).

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
