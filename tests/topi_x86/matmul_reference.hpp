// Low-precision matmuls against references of the same inputs. A bfloat16 matmul's float32
// result against a double reference of the same inputs: how many
// elements of c differ from sum_k a(i, k) b(k, j) by more than `per_step` x K x the sum of the
// products' magnitudes (float32 sums of K products, one rounding per pair and per step).
#pragma once
#include <cmath>

#include "weft/weft.hpp"

namespace weft::test {

inline int64_t bf16_matmul_mismatches(const Buffer<bfloat16>& a, const Buffer<bfloat16>& b, const Buffer<float>& c,
                                      double per_step) {
    const int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
    int64_t wrong = 0;
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            double want = 0, scale = 0;
            for (int64_t k = 0; k < K; ++k) {
                const double p = double(float(a(i, k))) * double(float(b(k, j)));
                want += p;
                scale += std::abs(p);
            }
            wrong += std::abs(c(i, j) - want) > per_step * double(K) * scale + 1e-30;
        }
    return wrong;
}

// How many elements of the int32 c differ from the exact sum_k a(i, k) b(k, j) (u8 x s8).
inline int64_t u8s8_matmul_mismatches(const Buffer<uint8_t>& a, const Buffer<int8_t>& b, const Buffer<int32_t>& c) {
    const int64_t M = a.shape()[0], K = a.shape()[1], N = b.shape()[1];
    int64_t wrong = 0;
    for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
            int64_t want = 0;
            for (int64_t k = 0; k < K; ++k) want += int64_t(a(i, k)) * int64_t(b(k, j));
            wrong += c(i, j) != want;
        }
    return wrong;
}

}  // namespace weft::test
