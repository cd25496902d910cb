// The ONNX importer's protobuf side: dtypes, TensorProto -> BufferRef, attribute reads.
// Included only by the importer's implementation (src/weft_onnx.cpp), which is compiled with
// Debian's ONNX protobuf classes (ONNX_ML=1, ONNX_NAMESPACE=onnx).
#pragma once
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "weft/frontend/onnx/onnx.hpp"

namespace weft::onnx::detail {

namespace pb = ::ONNX_NAMESPACE;

[[noreturn]] inline void unsupported(const std::string& msg) { throw UnsupportedError("weft: onnx: " + msg); }
[[noreturn]] inline void malformed(const std::string& msg) { throw Error("weft: onnx: " + msg); }

// "weft: onnx: msg" -> "msg" (messages are re-prefixed with the node).
inline std::string strip_prefix(std::string m) {
    for (const char* p : {"weft: onnx: ", "weft: "})
        if (m.rfind(p, 0) == 0) m = m.substr(std::strlen(p));
    return m;
}

inline const char* elem_type_name(int t) {
    switch (t) {
        case pb::TensorProto::FLOAT: return "float32";
        case pb::TensorProto::UINT8: return "uint8";
        case pb::TensorProto::INT8: return "int8";
        case pb::TensorProto::UINT16: return "uint16";
        case pb::TensorProto::INT16: return "int16";
        case pb::TensorProto::INT32: return "int32";
        case pb::TensorProto::INT64: return "int64";
        case pb::TensorProto::STRING: return "string";
        case pb::TensorProto::BOOL: return "bool";
        case pb::TensorProto::FLOAT16: return "float16";
        case pb::TensorProto::DOUBLE: return "float64";
        case pb::TensorProto::UINT32: return "uint32";
        case pb::TensorProto::UINT64: return "uint64";
        case pb::TensorProto::COMPLEX64: return "complex64";
        case pb::TensorProto::COMPLEX128: return "complex128";
        case pb::TensorProto::BFLOAT16: return "bfloat16";
        default: break;
    }
    // Types of ONNX 1.14 and later that Debian's protobuf classes do not name.
    static const char* const later[] = {"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",
                                        "int4",         "float4e2m1",     "float8e8m0", "uint2",          "int2"};
    if (t >= 17 && t < 17 + int(std::size(later))) return later[t - 17];
    return "undefined";
}

// ONNX's element types that Debian's protobuf classes do not name (ONNX 1.14 and later).
enum LaterElemType : int {
    kFloat8E4M3FN = 17,
    kFloat8E4M3FNUZ = 18,
    kFloat8E5M2 = 19,
    kFloat8E5M2FNUZ = 20,
    kUInt4 = 21,
    kInt4 = 22,
    kFloat4E2M1 = 23,
    kFloat8E8M0 = 24,
    kUInt2 = 25,
    kInt2 = 26
};

// The 8- and 4-bit floats, held as the float32 values they stand for: their layout and
// the special values each has (fn: no infinities; uz: no negative zero, 0x80 is NaN).
struct SmallFloat {
    int elem, exp_bits, man_bits, bias;
    bool has_inf;      // E5M2: the top exponent is infinity (mantissa 0) or NaN
    bool top_is_nan;   // E4M3FN: only S.1111.111 is NaN; the rest of the top exponent is finite
    bool uz;           // FNUZ: 0x80 is the one NaN
    double max;        // the largest finite value
};
inline const SmallFloat* small_float(int elem) {
    static const SmallFloat table[] = {
        {kFloat8E4M3FN, 4, 3, 7, false, true, false, 448},
        {kFloat8E4M3FNUZ, 4, 3, 8, false, false, true, 240},
        {kFloat8E5M2, 5, 2, 15, true, false, false, 57344},
        {kFloat8E5M2FNUZ, 5, 2, 16, false, false, true, 57344},
        {kFloat4E2M1, 2, 1, 1, false, false, false, 6},
        {kFloat8E8M0, 8, 0, 127, false, false, false, 0x1p127},  // no sign bit: 8 bits of exponent
    };
    for (const SmallFloat& f : table)
        if (f.elem == elem) return &f;
    return nullptr;
}

// A small float's width in bits (E8M0 has no sign bit).
inline int small_float_bits(const SmallFloat& f) { return f.elem == kFloat8E8M0 ? 8 : 1 + f.exp_bits + f.man_bits; }

// The float a small float's bit pattern stands for. E8M0 is a power of two alone:
// 2^(b - 127), 0xff NaN.
inline float decode_small_float(const SmallFloat& f, unsigned b) {
    if (f.elem == kFloat8E8M0) return b == 0xff ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.f, int(b) - 127);
    const int width = small_float_bits(f);
    const unsigned e_max = (1u << f.exp_bits) - 1, m_max = (1u << f.man_bits) - 1;
    const bool negative = (b >> (width - 1)) & 1;
    const unsigned e = (b >> f.man_bits) & e_max, m = b & m_max;
    if (f.uz && b == (1u << (width - 1))) return std::numeric_limits<float>::quiet_NaN();
    if (f.has_inf && e == e_max)
        return m ? std::numeric_limits<float>::quiet_NaN()
                 : (negative ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity());
    if (f.top_is_nan && e == e_max && m == m_max) return std::numeric_limits<float>::quiet_NaN();
    const double v = e == 0 ? std::ldexp(double(m), 1 - f.bias - f.man_bits)
                            : std::ldexp(double(m + (1u << f.man_bits)), int(e) - f.bias - f.man_bits);
    return float(negative ? -v : v);
}

// The sub-byte integers (uint4, int4, uint2, int2): held one per byte as uint8 / int8, their
// values in the narrow type's range; 0 for every other type.
inline int subbyte_bits(int t) { return t == kUInt4 || t == kInt4 ? 4 : t == kUInt2 || t == kInt2 ? 2 : 0; }
inline bool subbyte_signed(int t) { return t == kInt4 || t == kInt2; }
// The types weft holds in a wider one: sub-byte integers and small floats.
inline bool is_narrow(int t) { return subbyte_bits(t) || small_float(t); }

// The weft dtype of an ONNX element type; strings, complex numbers and the 8-bit and
// smaller floats are unsupported. Sub-byte integers are held in a byte each (subbyte_bits).
inline DataType to_dtype(int t, const std::string& what) {
    if (subbyte_bits(t)) return subbyte_signed(t) ? DataType::int_(8) : DataType::uint(8);
    if (small_float(t)) return DataType::float_(32);
    switch (t) {
        case pb::TensorProto::FLOAT: return DataType::float_(32);
        case pb::TensorProto::FLOAT16: return DataType::float_(16);
        case pb::TensorProto::BFLOAT16: return DataType(DataType::Code::BFloat, 16);
        case pb::TensorProto::DOUBLE: return DataType::float_(64);
        case pb::TensorProto::UINT8: return DataType::uint(8);
        case pb::TensorProto::INT8: return DataType::int_(8);
        case pb::TensorProto::UINT16: return DataType::uint(16);
        case pb::TensorProto::INT16: return DataType::int_(16);
        case pb::TensorProto::INT32: return DataType::int_(32);
        case pb::TensorProto::INT64: return DataType::int_(64);
        case pb::TensorProto::UINT32: return DataType::uint(32);
        case pb::TensorProto::UINT64: return DataType::uint(64);
        case pb::TensorProto::BOOL: return DataType::bool_();
        default: unsupported(what + " has element type " + elem_type_name(t) + ", which weft does not support");
    }
}

// Element count of `dims`, checked: no negative extent, no more than `limit` elements.
inline int64_t checked_elements(const std::vector<int64_t>& dims, int64_t limit, const std::string& what) {
    int64_t n = 1;
    for (int64_t d : dims) {
        if (d < 0) malformed(what + " has a negative dimension " + graph::shape_str(dims));
        if (d != 0 && n > limit / d)
            malformed(what + " has " + graph::shape_str(dims) + ": more elements than the limit " +
                      std::to_string(limit) + " (LoadOptions::limits.max_tensor_elements)");
        n *= d;
    }
    if (n > limit)
        malformed(what + " has " + graph::shape_str(dims) + ": more elements than the limit " + std::to_string(limit));
    return n;
}

// The dimensions a tensor type declares, when every one is a number.
inline std::optional<std::vector<int64_t>> static_shape(const pb::TypeProto_Tensor& tt) {
    if (!tt.has_shape()) return std::nullopt;
    std::vector<int64_t> dims;
    for (const pb::TensorShapeProto_Dimension& d : tt.shape().dim()) {
        if (!d.has_dim_value()) return std::nullopt;
        dims.push_back(d.dim_value());
    }
    return dims;
}

// Calls put(i, code) for each of the n codes of `bits` bits that t packs 8 / bits to a byte,
// the first in the lowest bits (raw_data, or int32_data with a byte per entry), after checking
// that t holds exactly the bytes n codes need.
template <class Put>
inline void for_each_packed(const pb::TensorProto& t, const std::vector<int64_t>& dims, int64_t n, int bits,
                            const std::string& what, Put put) {
    const int64_t per_byte = 8 / bits, packed = (n + per_byte - 1) / per_byte;
    const int64_t have = t.has_raw_data() ? int64_t(t.raw_data().size()) : int64_t(t.int32_data_size());
    if (have != packed)
        malformed(what + " has shape " + graph::shape_str(dims) + " (" + std::to_string(n) + " values of " +
                  std::to_string(bits) + " bits: " + std::to_string(packed) + " bytes) but " + std::to_string(have) +
                  (t.has_raw_data() ? " bytes of raw data" : " packed entries"));
    const unsigned mask = (1u << bits) - 1;
    for (int64_t i = 0; i < n; ++i) {
        const int64_t k = i / per_byte;
        const unsigned byte = t.has_raw_data() ? uint8_t(t.raw_data()[size_t(k)]) : unsigned(t.int32_data(int(k))) & 0xffu;
        put(i, (byte >> ((i % per_byte) * bits)) & mask);
    }
}

// A tensor of a sub-byte integer type, one value per byte (signed ones sign-extended), or of a
// small float type as the float32 values its codes stand for.
inline BufferRef unpack_narrow(const pb::TensorProto& t, const std::vector<int64_t>& dims, int64_t n, DataType dt,
                               const std::string& what) {
    const SmallFloat* f = small_float(t.data_type());
    const int bits = f ? small_float_bits(*f) : subbyte_bits(t.data_type());
    BufferRef b = n == 0 ? BufferRef() : BufferRef::allocate(dt, dims);
    if (f) {
        float* out = n == 0 ? nullptr : static_cast<float*>(b.data());
        for_each_packed(t, dims, n, bits, what, [&](int64_t i, unsigned code) { out[i] = decode_small_float(*f, code); });
    } else {
        uint8_t* out = n == 0 ? nullptr : static_cast<uint8_t*>(b.data());
        const unsigned sign = 1u << (bits - 1), mask = (1u << bits) - 1;
        for_each_packed(t, dims, n, bits, what, [&](int64_t i, unsigned v) {
            if (dt.is_int() && (v & sign)) v |= ~mask;  // sign-extend
            out[i] = uint8_t(v);
        });
    }
    return b;
}

// A TensorProto as an owning compact buffer (rank 0 stays shape []); a tensor without
// elements is an undefined BufferRef (size 0).
inline BufferRef tensor_to_buffer(const pb::TensorProto& t, int64_t limit, const std::string& what) {
    if (t.data_location() == pb::TensorProto::EXTERNAL || t.external_data_size() > 0)
        unsupported(what + " keeps its data in an external file, which the importer does not read");
    if (t.has_segment()) unsupported(what + " is a segment of a tensor");
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    int64_t n = checked_elements(dims, limit, what);
    DataType dt = to_dtype(t.data_type(), what);
    const int64_t bytes = dt.is_bool() ? 1 : dt.bytes();
    if (is_narrow(t.data_type())) return unpack_narrow(t, dims, n, dt, what);
    auto count_error = [&](int64_t got) {
        malformed(what + " has shape " + graph::shape_str(dims) + " (" + std::to_string(n) + " elements) but " +
                  std::to_string(got) + " values");
    };
    // The data must fit the shape before anything is allocated (a corrupt shape must not
    // allocate gigabytes).
    int64_t have = -1;
    if (t.has_raw_data()) {
        if (int64_t(t.raw_data().size()) != n * bytes)
            malformed(what + " has shape " + graph::shape_str(dims) + " (" + std::to_string(n * bytes) +
                      " bytes) but " + std::to_string(t.raw_data().size()) + " bytes of raw data");
    } else {
        switch (t.data_type()) {
            case pb::TensorProto::FLOAT: have = t.float_data_size(); break;
            case pb::TensorProto::DOUBLE: have = t.double_data_size(); break;
            case pb::TensorProto::INT64: have = t.int64_data_size(); break;
            case pb::TensorProto::UINT32:
            case pb::TensorProto::UINT64: have = t.uint64_data_size(); break;
            default: have = t.int32_data_size(); break;
        }
        if (have != n) count_error(have);
    }
    if (n == 0) return BufferRef();  // weft's buffers are never empty: an undefined one stands for it
    if (t.has_raw_data()) {  // (copy_to: one pass over the new memory, no zero fill first)
        BufferRef b = BufferRef(const_cast<char*>(t.raw_data().data()), dt, dims).copy_to(Device::cpu());
        char* out = static_cast<char*>(b.data());
        if (dt.is_bool())
            for (int64_t i = 0; i < n; ++i) out[i] = out[i] != 0;
        return b;
    }
    BufferRef b = BufferRef::allocate(dt, dims);
    char* out = static_cast<char*>(b.data());
    auto copy = [&](const auto& field, auto tag) {
        using T = decltype(tag);
        if (int64_t(field.size()) != n) count_error(int64_t(field.size()));
        T* p = reinterpret_cast<T*>(out);
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(field.Get(int(i)));
    };
    switch (t.data_type()) {
        case pb::TensorProto::FLOAT: copy(t.float_data(), float{}); break;
        case pb::TensorProto::DOUBLE: copy(t.double_data(), double{}); break;
        case pb::TensorProto::INT64: copy(t.int64_data(), int64_t{}); break;
        case pb::TensorProto::INT32: copy(t.int32_data(), int32_t{}); break;
        case pb::TensorProto::INT16: copy(t.int32_data(), int16_t{}); break;
        case pb::TensorProto::INT8: copy(t.int32_data(), int8_t{}); break;
        case pb::TensorProto::UINT16: copy(t.int32_data(), uint16_t{}); break;
        case pb::TensorProto::FLOAT16:  // int32_data holds the 16-bit patterns
        case pb::TensorProto::BFLOAT16: copy(t.int32_data(), uint16_t{}); break;
        case pb::TensorProto::UINT8: copy(t.int32_data(), uint8_t{}); break;
        case pb::TensorProto::BOOL:
            if (int64_t(t.int32_data_size()) != n) count_error(t.int32_data_size());
            for (int64_t i = 0; i < n; ++i) out[i] = t.int32_data(int(i)) != 0;
            break;
        case pb::TensorProto::UINT32: copy(t.uint64_data(), uint32_t{}); break;
        case pb::TensorProto::UINT64: copy(t.uint64_data(), uint64_t{}); break;
        default: break;  // to_dtype rejected the rest
    }
    return b;
}

// The values of an integer buffer (any integer dtype) as int64.
inline std::vector<int64_t> buffer_ints(const BufferRef& b) {
    std::vector<int64_t> r(size_t(b.size()));
    const char* p = static_cast<const char*>(b.data());
    DataType dt = b.dtype();
    for (int64_t i = 0; i < b.size(); ++i) {
        if (dt == DataType::int_(64)) r[size_t(i)] = reinterpret_cast<const int64_t*>(p)[i];
        else if (dt == DataType::int_(32)) r[size_t(i)] = reinterpret_cast<const int32_t*>(p)[i];
        else if (dt == DataType::int_(16)) r[size_t(i)] = reinterpret_cast<const int16_t*>(p)[i];
        else if (dt == DataType::int_(8)) r[size_t(i)] = reinterpret_cast<const int8_t*>(p)[i];
        else if (dt == DataType::uint(8) || dt.is_bool()) r[size_t(i)] = reinterpret_cast<const uint8_t*>(p)[i];
        else if (dt == DataType::uint(16)) r[size_t(i)] = reinterpret_cast<const uint16_t*>(p)[i];
        else if (dt == DataType::uint(32)) r[size_t(i)] = reinterpret_cast<const uint32_t*>(p)[i];
        else if (dt == DataType::uint(64)) r[size_t(i)] = int64_t(reinterpret_cast<const uint64_t*>(p)[i]);
        else if (dt == DataType::float_(32)) r[size_t(i)] = int64_t(reinterpret_cast<const float*>(p)[i]);
        else if (dt == DataType::float_(64)) r[size_t(i)] = int64_t(reinterpret_cast<const double*>(p)[i]);
        else malformed("cannot read a " + dt.str() + " tensor as integers");
    }
    return r;
}

// The values of a buffer (any numeric dtype) as double.
inline std::vector<double> buffer_floats(const BufferRef& b) {
    DataType dt = b.dtype();
    if (dt == DataType::float_(32)) {
        const float* p = static_cast<const float*>(b.data());
        return std::vector<double>(p, p + b.size());
    }
    if (dt == DataType::float_(64)) {
        const double* p = static_cast<const double*>(b.data());
        return std::vector<double>(p, p + b.size());
    }
    std::vector<int64_t> v = buffer_ints(b);
    return std::vector<double>(v.begin(), v.end());
}

// `value` as the integer type T, saturated to its range (NaN: 0). A plain conversion of a
// value out of range is undefined behaviour: a model's attribute of 2^63 (an NLLLoss
// ignore_index near INT64_MAX, which a double rounds up past it) found by fuzz_onnx.
template <class T>
T saturated(double value) {
    if (std::isnan(value)) return T(0);
    if (value <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (value >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return T(value);
}

// Element i of a numeric or bool buffer set to `value` (converted to its dtype; integers
// saturate).
inline void set_element(BufferRef& b, int64_t i, double value) {
    DataType dtype = b.dtype();
    char* p = static_cast<char*>(b.data());
    if (dtype == DataType::float_(32)) reinterpret_cast<float*>(p)[i] = float(value);
    else if (dtype == DataType::float_(64)) reinterpret_cast<double*>(p)[i] = value;
    else if (dtype == DataType::int_(64)) reinterpret_cast<int64_t*>(p)[i] = saturated<int64_t>(value);
    else if (dtype == DataType::int_(32)) reinterpret_cast<int32_t*>(p)[i] = saturated<int32_t>(value);
    else if (dtype == DataType::int_(16)) reinterpret_cast<int16_t*>(p)[i] = saturated<int16_t>(value);
    else if (dtype == DataType::int_(8)) reinterpret_cast<int8_t*>(p)[i] = saturated<int8_t>(value);
    else if (dtype == DataType::uint(8)) reinterpret_cast<uint8_t*>(p)[i] = saturated<uint8_t>(value);
    else if (dtype == DataType::uint(16)) reinterpret_cast<uint16_t*>(p)[i] = saturated<uint16_t>(value);
    else if (dtype == DataType::uint(32)) reinterpret_cast<uint32_t*>(p)[i] = saturated<uint32_t>(value);
    else if (dtype == DataType::uint(64)) reinterpret_cast<uint64_t*>(p)[i] = saturated<uint64_t>(value);
    else if (dtype.is_bool()) p[i] = value != 0;
    else malformed("cannot make a constant of " + dtype.str());
}

// A buffer of `dtype` and `shape` with every element `value`.
inline BufferRef filled_buffer(DataType dtype, const std::vector<int64_t>& shape, double value) {
    BufferRef b = BufferRef::allocate(dtype, shape);
    for (int64_t i = 0; i < b.size(); ++i) set_element(b, i, value);
    return b;
}

inline BufferRef int64_buffer(const std::vector<int64_t>& v, std::vector<int64_t> shape) {
    BufferRef b = BufferRef::allocate(DataType::int_(64), std::move(shape));
    if (!v.empty()) std::memcpy(b.data(), v.data(), v.size() * sizeof(int64_t));
    return b;
}

// ---- attributes ---------------------------------------------------------------------------

inline const char* attr_type_name(int t) {
    switch (t) {
        case pb::AttributeProto::FLOAT: return "float";
        case pb::AttributeProto::INT: return "int";
        case pb::AttributeProto::STRING: return "string";
        case pb::AttributeProto::TENSOR: return "tensor";
        case pb::AttributeProto::GRAPH: return "graph";
        case pb::AttributeProto::FLOATS: return "floats";
        case pb::AttributeProto::INTS: return "ints";
        case pb::AttributeProto::STRINGS: return "strings";
        case pb::AttributeProto::SPARSE_TENSOR: return "sparse tensor";
        default: return "undefined";
    }
}

}  // namespace weft::onnx::detail
