// DataType: a scalar type code, its width in bits, and a vector lane count.
#pragma once
#include <cstdint>
#include <string>

#include "weft/ir/error.hpp"

namespace weft {

struct DataType {
    enum class Code : uint8_t { Int, UInt, Float, BFloat, Handle };
    Code code = Code::Int;
    uint8_t bits = 32;
    uint16_t lanes = 1;

    constexpr DataType() = default;
    constexpr DataType(Code c, int b, int l = 1) : code(c), bits(uint8_t(b)), lanes(uint16_t(l)) {}

    constexpr bool is_int() const { return code == Code::Int; }
    constexpr bool is_uint() const { return code == Code::UInt && bits != 1; }
    constexpr bool is_bool() const { return code == Code::UInt && bits == 1; }
    constexpr bool is_float() const { return code == Code::Float || code == Code::BFloat; }
    constexpr bool is_bfloat() const { return code == Code::BFloat; }
    constexpr bool is_handle() const { return code == Code::Handle; }
    // Integer-like: int, uint or bool (the types index arithmetic and bit tricks work on).
    constexpr bool is_integer() const { return code == Code::Int || code == Code::UInt; }
    constexpr bool is_scalar() const { return lanes == 1; }
    constexpr bool is_vector() const { return lanes > 1; }
    constexpr int bytes() const { return (bits + 7) / 8; }

    constexpr DataType with_lanes(int l) const { return DataType(code, bits, l); }
    constexpr DataType element_of() const { return with_lanes(1); }
    constexpr DataType with_bits(int b) const { return DataType(code, b, lanes); }

    constexpr bool operator==(const DataType& o) const {
        return code == o.code && bits == o.bits && lanes == o.lanes;
    }
    constexpr bool operator!=(const DataType& o) const { return !(*this == o); }

    static constexpr DataType int_(int bits, int lanes = 1) { return DataType(Code::Int, bits, lanes); }
    static constexpr DataType uint(int bits, int lanes = 1) { return DataType(Code::UInt, bits, lanes); }
    static constexpr DataType float_(int bits, int lanes = 1) { return DataType(Code::Float, bits, lanes); }
    static constexpr DataType bool_(int lanes = 1) { return DataType(Code::UInt, 1, lanes); }
    static constexpr DataType handle() { return DataType(Code::Handle, 64, 1); }

    // "float32", "int64x4", "bool", "bfloat16", "handle".
    std::string str() const {
        std::string s;
        switch (code) {
            case Code::Int: s = "int" + std::to_string(bits); break;
            case Code::UInt: s = bits == 1 ? "bool" : "uint" + std::to_string(bits); break;
            case Code::Float: s = "float" + std::to_string(bits); break;
            case Code::BFloat: s = "bfloat" + std::to_string(bits); break;
            case Code::Handle: s = "handle"; break;
        }
        if (lanes > 1) s += "x" + std::to_string(lanes);
        return s;
    }

    // Inverse of str() for scalar and vector types; throws weft::Error on unknown names.
    static DataType parse(const std::string& name) {
        std::string base = name;
        int lanes = 1;
        auto x = name.find('x');
        if (x != std::string::npos) {
            base = name.substr(0, x);
            lanes = std::stoi(name.substr(x + 1));
        }
        auto num = [&](size_t from) { return std::stoi(base.substr(from)); };
        if (base == "bool") return bool_(lanes);
        if (base == "handle") return handle();
        if (base.rfind("uint", 0) == 0) return uint(num(4), lanes);
        if (base.rfind("int", 0) == 0) return int_(num(3), lanes);
        if (base.rfind("float", 0) == 0) return float_(num(5), lanes);
        if (base.rfind("bfloat", 0) == 0) return DataType(Code::BFloat, num(6), lanes);
        detail::throw_user_error("unknown data type name '" + name + "'");
    }
};

// The element types a user writes.
inline constexpr DataType boolean = DataType::bool_();
inline constexpr DataType i8 = DataType::int_(8), i16 = DataType::int_(16), i32 = DataType::int_(32),
                          i64 = DataType::int_(64);
inline constexpr DataType u8 = DataType::uint(8), u16 = DataType::uint(16), u32 = DataType::uint(32),
                          u64 = DataType::uint(64);
inline constexpr DataType f16 = DataType::float_(16), f32 = DataType::float_(32), f64 = DataType::float_(64);
inline constexpr DataType bf16 = DataType(DataType::Code::BFloat, 16);

// Loop variables, shapes and flattened indices are all int64: one index type avoids the
// int32/int64 mixing bugs that plague index arithmetic.
inline constexpr DataType index_type = i64;

// The DataType of a C++ element type (used by Buffer<T> and Kernel's call checks).
template <class T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DataType value = boolean; };
template <> struct dtype_of<int8_t> { static constexpr DataType value = i8; };
template <> struct dtype_of<int16_t> { static constexpr DataType value = i16; };
template <> struct dtype_of<int32_t> { static constexpr DataType value = i32; };
template <> struct dtype_of<int64_t> { static constexpr DataType value = i64; };
template <> struct dtype_of<uint8_t> { static constexpr DataType value = u8; };
template <> struct dtype_of<uint16_t> { static constexpr DataType value = u16; };
template <> struct dtype_of<uint32_t> { static constexpr DataType value = u32; };
template <> struct dtype_of<uint64_t> { static constexpr DataType value = u64; };
template <> struct dtype_of<float> { static constexpr DataType value = f32; };
template <> struct dtype_of<double> { static constexpr DataType value = f64; };

}  // namespace weft
