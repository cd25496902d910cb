// Host types for 16-bit floating point, the element types of Buffer<bfloat16> and
// Buffer<float16>: bfloat16 (float32's upper half: 8 exponent bits, 7 of mantissa; what
// AVX512_BF16 and AMX multiply) and float16 (IEEE 754 binary16). They store; arithmetic goes
// through float:
//   Buffer<bfloat16> w({64, 64});
//   w(0, 0) = bfloat16(0.1f);            // rounded to nearest even: 0.10009765625
//   float x = float(w(0, 0));
// Conversions round to nearest even (as weft's kernels do), keep NaN a NaN and infinities
// infinite; float16 keeps subnormals and overflows to infinity past 65504.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

#include "weft/ir/type.hpp"

namespace weft {

struct bfloat16 {
    uint16_t bits = 0;

    constexpr bfloat16() = default;
    explicit bfloat16(float f) : bits(from_float(f)) {}
    explicit operator float() const { return std::bit_cast<float>(uint32_t(bits) << 16); }
    static constexpr bfloat16 from_bits(uint16_t b) {
        bfloat16 h;
        h.bits = b;
        return h;
    }
    // Compared as numbers: -0 == +0, a NaN equals nothing.
    friend bool operator==(bfloat16 a, bfloat16 b) { return float(a) == float(b); }

private:
    static uint16_t from_float(float f) {
        const uint32_t x = std::bit_cast<uint32_t>(f);
        if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x0040u);  // a quiet NaN
        return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
    }
};

struct float16 {
    uint16_t bits = 0;

    constexpr float16() = default;
    explicit float16(float f) : bits(from_float(f)) {}
    explicit operator float() const {
        const uint32_t sign = uint32_t(bits & 0x8000u) << 16, exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
        if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
            const float magnitude = float(mantissa) * 0x1p-24f;
            return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
        }
        if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
        return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
    }
    static constexpr float16 from_bits(uint16_t b) {
        float16 h;
        h.bits = b;
        return h;
    }
    friend bool operator==(float16 a, float16 b) { return float(a) == float(b); }

private:
    static uint16_t from_float(float f) {
        const uint32_t x = std::bit_cast<uint32_t>(f), sign = (x >> 16) & 0x8000u, magnitude = x & 0x7fffffffu;
        if (magnitude > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));  // NaN
        if (magnitude >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // 65520 and up round to infinity
        if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal (or zero) of 2^-24 steps
            const float steps = std::nearbyint(std::bit_cast<float>(magnitude) * 0x1p24f);
            return uint16_t(sign | uint32_t(steps));  // 1024 steps: the smallest normal, right
        }
        const uint32_t rebased = magnitude - 0x38000000u;  // exponent bias 127 -> 15
        return uint16_t(sign | ((rebased + 0x0fffu + ((rebased >> 13) & 1u)) >> 13));
    }
};

template <> struct dtype_of<bfloat16> { static constexpr DataType value = bf16; };
template <> struct dtype_of<float16> { static constexpr DataType value = f16; };

}  // namespace weft
