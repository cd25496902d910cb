// A user's program, built against weft by the package tests (find_package and
// add_subdirectory). It includes only <weft/weft.hpp> (no LLVM header may reach it),
// builds a tiled, vectorized matmul with the JIT and checks it against a naive product.
#include <weft/weft.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

int main() {
    using namespace weft;
    const int64_t M = 45, N = 70, K = 33;
    Tensor A = placeholder({M, K}, f32, "A");
    Tensor B = placeholder({K, N}, f32, "B");
    IterVar k = reduce_axis(0, K, "k");
    Tensor C = compute({M, N}, [&](Expr i, Expr j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
    Schedule s = create_schedule(C);
    auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 4, 16);
    s[C].reorder({io, jo, k, ii, ji});
    s[C].vectorize(ji);
    s[C].parallel(io);
    Kernel mm = build(s, {A, B, C});

    auto a = Buffer<float>::random({M, K}, -1, 1, 1), b = Buffer<float>::random({K, N}, -1, 1, 2);
    Buffer<float> c({M, N});
    mm(a, b, c);
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double ref = 0;
            for (int64_t x = 0; x < K; ++x) ref += double(a(i, x)) * b(x, j);
            if (std::abs(c(i, j) - ref) > 1e-4 * std::max(1.0, std::abs(ref))) {
                std::fprintf(stderr, "weft consumer: C(%ld, %ld) = %f, expected %f\n", long(i), long(j), c(i, j), ref);
                return 1;
            }
        }
    std::cout << "weft consumer: ok\n";
    return 0;
}
