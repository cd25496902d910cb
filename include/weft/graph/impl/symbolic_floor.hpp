// Extents that are no sum of products of the symbols but a rounded-down fraction of one: a
// strided convolution or pooling over an image height, (height + 2 - 3) / 2 + 1, and chains
// of them (nested floor divisions by positive integers are one floor division). Fitted from
// an operator's type inference sampled along the symbol (graph/impl/symbolic.hpp), so every
// operator's shape rule is followed without a symbolic copy of it.
#pragma once
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

namespace weft::graph::detail {

// Floor division for b > 0 (rounds toward negative infinity, as the IR's `/` does).
inline int64_t floor_div(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }

// scale * floor((num * symbol + offset) / den), with scale, num, den >= 1 and 0 <= offset < den:
// nondecreasing in the symbol, so its extremes over the bounds are at their ends.
struct FloorTerm {
    uint32_t symbol = 0;
    int64_t scale = 1, num = 1, offset = 0, den = 1;

    int64_t eval(int64_t s) const { return scale * floor_div(num * s + offset, den); }
    bool operator==(const FloorTerm&) const = default;
};

// The largest denominator fitted, and so half the run of consecutive samples a fit needs
// (five stride-2 layers and a pool: 64).
inline constexpr int64_t kMaxFloorDen = 64;

// y = constant + term(s) for every sample (s, y), with `samples` sorted by s and holding a
// run of at least 2 * kMaxFloorDen consecutive values of s (or all of the symbol's values);
// none where y is no such function of s. A term with den 1 is linear (the caller keeps it as
// a product term).
struct FloorFit {
    int64_t constant = 0;
    FloorTerm term;
};

inline std::optional<FloorFit> fit_floor(const std::vector<std::pair<int64_t, int64_t>>& samples, uint32_t symbol) {
    if (samples.size() < 2) return std::nullopt;
    // The steps between consecutive values: never down, and their gcd the scale.
    int64_t scale = 0;
    for (size_t i = 1; i < samples.size(); ++i) {
        if (samples[i].first != samples[i - 1].first + 1) continue;
        const int64_t step = samples[i].second - samples[i - 1].second;
        if (step < 0) return std::nullopt;
        scale = std::gcd(scale, step);
    }
    if (scale == 0) return std::nullopt;  // constant (or no consecutive values): not a floor term
    const auto [s0, y0] = samples.front();
    for (auto [s, y] : samples)
        if ((y - y0) % scale != 0) return std::nullopt;
    const int64_t rise = (samples.back().second - y0) / scale, run = samples.back().first - s0;
    if (run <= 0) return std::nullopt;
    for (int64_t den = 1; den <= kMaxFloorDen; ++den) {
        // num / den is the slope; over a long run it is rise / run to within 1 / run.
        const int64_t guess = (rise * den + run / 2) / run;
        for (int64_t num = std::max<int64_t>(1, guess - 1); num <= guess + 1; ++num) {
            if (std::gcd(num, den) != 1) continue;
            for (int64_t offset = 0; offset < den; ++offset) {
                const int64_t at0 = floor_div(num * s0 + offset, den);
                bool fits = true;
                for (auto [s, y] : samples)
                    if ((y - y0) / scale != floor_div(num * s + offset, den) - at0) {
                        fits = false;
                        break;
                    }
                if (!fits) continue;
                FloorFit f;
                f.term = {symbol, scale, num, offset, den};
                f.constant = y0 - f.term.eval(s0);
                return f;
            }
        }
    }
    return std::nullopt;
}

}  // namespace weft::graph::detail
