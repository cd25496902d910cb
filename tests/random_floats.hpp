// Uniformly distributed random floats for tests that fill plain std::vectors (seeded: a
// failure reproduces).
#pragma once
#include <random>
#include <vector>

namespace weft::test {

inline std::vector<float> random_floats(size_t n, unsigned seed, float lo = -1, float hi = 1) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

}  // namespace weft::test
