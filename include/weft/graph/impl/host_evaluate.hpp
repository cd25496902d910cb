// OpDef::evaluate for the operators that only move data, and for the integer arithmetic of
// shapes, so that fold_constants computes a network's constant part (weights packed for the
// blocked layout, transposed, reshaped; an importer's Shape -> Gather -> Mul -> Concat)
// on the host instead of compiling a kernel for each. Each gives exactly what the
// operator's compute gives; one that cannot for its inputs' dtypes returns an undefined
// buffer, and the node is compiled instead.
#pragma once
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <type_traits>

#include "weft/graph/graph.hpp"
#include "weft/topi/transform.hpp"

namespace weft::graph::ops::host {

// An element of `bytes` bytes, copied by value (the loops below move elements of any dtype).
template <size_t Bytes>
struct Element {
    unsigned char b[Bytes];
};

// Calls f.template operator()<Element<bytes>>() for the element size of `dtype`.
template <class F>
void with_element(DataType dtype, F&& f) {
    switch (dtype.bytes()) {
        case 1: return f.template operator()<Element<1>>();
        case 2: return f.template operator()<Element<2>>();
        case 4: return f.template operator()<Element<4>>();
        case 8: return f.template operator()<Element<8>>();
        default:
            ::weft::detail::throw_internal_error(::weft::detail::concat("host evaluation of ", dtype.str(),
                                                                        ": elements of ", dtype.bytes(), " bytes"));
    }
}

// A compact host buffer of `type`, zero-filled.
inline BufferRef output_of(const TensorType& type) { return BufferRef::allocate(type.dtype, type.shape); }

// reshape, flatten, squeeze, unsqueeze: the same elements in the same order, so the input's
// storage under the output's shape (kept alive by the view; constants are never written).
inline BufferRef same_elements(const std::vector<BufferRef>& in, const Attrs&, const TensorType& out) {
    auto input = std::make_shared<const BufferRef>(in[0]);
    return BufferRef(input, BufferRef(in[0].data(), out.dtype, out.shape));
}

// Calls f(i, offsets) for i over the elements of an `extent`-shaped output in row-major
// order, offsets[k] = first[k] + the sum over d of index[d] * strides[k][d]: the output
// walked once, each operand's offset kept up with it (0 strides broadcast).
template <size_t K, class F>
void walk(const std::vector<int64_t>& extent, std::array<int64_t, K> offsets,
          const std::array<std::vector<int64_t>, K>& strides, F&& f) {
    const size_t rank = extent.size();
    int64_t n = 1;
    for (int64_t e : extent) n *= e;
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < n; ++i) {
        f(i, offsets);
        for (size_t d = rank; d-- > 0;) {
            for (size_t k = 0; k < K; ++k) offsets[k] += strides[k][d];
            if (++index[d] < extent[d]) break;
            for (size_t k = 0; k < K; ++k) offsets[k] -= strides[k][d] * extent[d];
            index[d] = 0;
        }
    }
}

// r's elements in order, each x's element at first + sum over d of index[d] * stride[d].
inline void strided_copy(const BufferRef& x, BufferRef& r, int64_t first, const std::vector<int64_t>& stride,
                         const std::vector<int64_t>& extent) {
    with_element(x.dtype(), [&]<class E>() {
        const E* src = static_cast<const E*>(x.data());
        E* dst = static_cast<E*>(r.data());
        walk<1>(extent, {first}, {stride}, [&](int64_t i, const std::array<int64_t, 1>& at) { dst[i] = src[at[0]]; });
    });
}

// transpose: out[i] = in[i permuted back], walked in the output's order.
inline BufferRef transpose(const std::vector<BufferRef>& in, const Attrs& a, const TensorType& out) {
    const BufferRef& x = in[0];
    const std::vector<int64_t> perm = topi::transpose_perm(x.shape().size(), a.get_ints("perm", {}));
    BufferRef r = output_of(out);
    const size_t rank = perm.size();
    const std::vector<int64_t> in_strides = BufferRef::compact_strides(x.shape());
    std::vector<int64_t> stride(rank), extent(rank);  // per output dimension: the input's stride
    for (size_t d = 0; d < rank; ++d) {
        stride[d] = in_strides[size_t(perm[d])];
        extent[d] = out.shape[d];
    }
    strided_copy(x, r, 0, stride, extent);
    return r;
}

// slice: out[o] = in[start + o * step] per dimension (topi::slice_ranges' normalized ranges).
inline BufferRef slice(const std::vector<BufferRef>& in, const Attrs& a, const TensorType& out) {
    const BufferRef& x = in[0];
    const std::vector<topi::SliceRange> ranges = topi::slice_ranges(x.shape(), a.get_ints("starts"), a.get_ints("ends"),
                                                                    a.get_ints("axes", {}), a.get_ints("steps", {}));
    BufferRef r = output_of(out);
    const size_t rank = ranges.size();
    const std::vector<int64_t> in_strides = BufferRef::compact_strides(x.shape());
    std::vector<int64_t> stride(rank), extent(rank);
    int64_t first = 0;
    for (size_t d = 0; d < rank; ++d) {
        stride[d] = in_strides[d] * ranges[d].step;
        extent[d] = ranges[d].extent;
        first += in_strides[d] * ranges[d].start;
    }
    strided_copy(x, r, first, stride, extent);
    return r;
}

// pack_matmul_weight: B [K, N] -> its column panels [ceil(N / w), K, w], zeros past N
// (topi::dense_packed's operand).
inline BufferRef pack_matmul_weight(const std::vector<BufferRef>& in, const Attrs&, const TensorType& out) {
    const BufferRef& b = in[0];
    const int64_t K = b.shape()[0], N = b.shape()[1], w = out.shape[2];
    BufferRef r = output_of(out);
    with_element(b.dtype(), [&]<class E>() {
        const E* src = static_cast<const E*>(b.data());
        E* dst = static_cast<E*>(r.data());
        for (int64_t k = 0; k < K; ++k)
            for (int64_t j = 0; j < N; ++j) dst[((j / w) * K + k) * w + j % w] = src[k * N + j];
    });
    return r;
}

// pack_bf16_weight / pack_vnni_weight: B [K, N] -> [N/16, K/step, 16, step], step 2 for
// bfloat16 and 4 for int8 (topi's: what vdpbf16ps / vpdpbusd read).
inline BufferRef pack_dot_weight(const std::vector<BufferRef>& in, const Attrs&, const TensorType& out) {
    const BufferRef& b = in[0];
    const int64_t K = b.shape()[0], N = b.shape()[1], step = out.shape[3];
    BufferRef r = output_of(out);
    with_element(b.dtype(), [&]<class E>() {
        const E* src = static_cast<const E*>(b.data());
        E* dst = static_cast<E*>(r.data());
        for (int64_t k = 0; k < K; ++k)
            for (int64_t j = 0; j < N; ++j)
                dst[(((j / 16) * (K / step) + k / step) * 16 + j % 16) * step + k % step] = src[k * N + j];
    });
    return r;
}

// pack_conv2d_nchwc_bf16_weight / pack_conv2d_nchwc_u8s8_weight: conv2d_nchwc's blocks [O/ob,
// C/wib, KH, KW, wib, ob] -> [O/ob, C/ib, KH, KW, ib/step, ob, step], float32 rounded to
// bfloat16 (step 2) or int8 as it is (step 4) (topi's).
inline BufferRef pack_conv2d_nchwc_dot_weight(const std::vector<BufferRef>& in, const Attrs& a, const TensorType& out) {
    const BufferRef& w = in[0];
    const bool bf16_out = out.dtype == bf16;
    if (w.dtype() != (bf16_out ? f32 : DataType::int_(8))) return {};
    const int64_t OB = out.shape[0], CB = out.shape[1], KH = out.shape[2], KW = out.shape[3], steps = out.shape[4],
                  ob = out.shape[5], step = out.shape[6], ib = a.get_int("ib"), WB = w.shape()[1], wib = w.shape()[4];
    BufferRef r = output_of(out);
    auto pack = [&]<class From, class To>(const From* src, To* dst) {
        for (int64_t o = 0; o < OB; ++o)
            for (int64_t cb = 0; cb < CB; ++cb)
                for (int64_t t = 0; t < KH * KW; ++t)
                    for (int64_t p = 0; p < steps; ++p)
                        for (int64_t oc = 0; oc < ob; ++oc)
                            for (int64_t k = 0; k < step; ++k) {
                                const int64_t c = cb * ib + p * step + k;
                                *dst++ = To(src[(((o * WB + c / wib) * KH * KW + t) * wib + c % wib) * ob + oc]);
                            }
    };
    if (bf16_out) pack(static_cast<const float*>(w.data()), static_cast<bfloat16*>(r.data()));
    else pack(static_cast<const int8_t*>(w.data()), static_cast<int8_t*>(r.data()));
    return r;
}

// pack_conv2d_weight: OIHW -> [O/ob, I/ib, KH, KW, ib, ob] (depthwise: [C/ob, 1, KH, KW, 1,
// ob]), zeros past O and I (topi::pack_conv2d_weight_nchwc, pack_depthwise_weight_nchwc).
inline BufferRef pack_conv2d_weight(const std::vector<BufferRef>& in, const Attrs& a, const TensorType& out) {
    const BufferRef& w = in[0];
    const int64_t O = w.shape()[0], I = w.shape()[1], KH = w.shape()[2], KW = w.shape()[3];
    const int64_t OB = out.shape[0], IB = out.shape[1], ib = out.shape[4], ob = out.shape[5];
    BufferRef r = output_of(out);
    // Block by block (a block of ib x ob channels is a few tens of KiB): each output
    // channel's row of the source is read in order, the block written with a stride of ob.
    with_element(w.dtype(), [&]<class E>() {
        const E* src = static_cast<const E*>(w.data());
        E* dst = static_cast<E*>(r.data());
        const int64_t taps = KH * KW;
        for (int64_t bo = 0; bo < OB; ++bo)
            for (int64_t bi = 0; bi < IB; ++bi) {
                E* block = dst + (bo * IB + bi) * taps * ib * ob;
                for (int64_t o = 0; o < ob && bo * ob + o < O; ++o) {
                    const int64_t oc = bo * ob + o;
                    for (int64_t i = 0; i < ib && bi * ib + i < I; ++i) {
                        const E* row = src + (oc * I + bi * ib + i) * taps;
                        for (int64_t t = 0; t < taps; ++t) block[(t * ib + i) * ob + o] = row[t];
                    }
                }
            }
    });
    return r;
}

// layout_transform: NCHW -> NCHW[b]c (zeros past C) or back (the first `channels`).
inline BufferRef layout_transform(const std::vector<BufferRef>& in, const Attrs& a, const TensorType& out) {
    const BufferRef& x = in[0];
    BufferRef r = output_of(out);
    const bool to_blocked = a.get_string("to") == "NCHWc";
    // The blocked tensor's extents [N, CB, H, W, b] and the plain one's channel count.
    const std::vector<int64_t>& blocked = to_blocked ? out.shape : x.shape();
    const int64_t N = blocked[0], CB = blocked[1], HW = blocked[2] * blocked[3], b = blocked[4];
    const int64_t C = to_blocked ? x.shape()[1] : out.shape[1];
    with_element(x.dtype(), [&]<class E>() {
        const E* src = static_cast<const E*>(x.data());
        E* dst = static_cast<E*>(r.data());
        for (int64_t n = 0; n < N; ++n)
            for (int64_t cb = 0; cb < CB; ++cb)
                for (int64_t p = 0; p < HW; ++p)
                    for (int64_t c = 0; c < b; ++c) {
                        const int64_t ch = cb * b + c;
                        if (ch >= C) continue;
                        const int64_t plain = (n * C + ch) * HW + p, block = ((n * CB + cb) * HW + p) * b + c;
                        if (to_blocked) dst[block] = src[plain];
                        else dst[plain] = src[block];
                    }
    });
    return r;
}

// gather: out[o, j, i] = data[o, wrap(indices[j]), i], an index wrapped once from the end
// and clamped into the axis (topi::gather's wrap_index).
inline BufferRef gather(const std::vector<BufferRef>& in, const Attrs& a, const TensorType& out) {
    const BufferRef &data = in[0], &indices = in[1];
    const std::vector<int64_t>& ds = data.shape();
    const int64_t rank = int64_t(ds.size()), axis = a.get_int("axis", 0) < 0 ? a.get_int("axis", 0) + rank
                                                                               : a.get_int("axis", 0);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= ds[size_t(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= ds[size_t(d)];
    const int64_t n = ds[size_t(axis)], count = indices.size();
    std::vector<int64_t> k(static_cast<size_t>(count));
    for (int64_t j = 0; j < count; ++j) {
        int64_t v = indices.dtype() == DataType::int_(32) ? static_cast<const int32_t*>(indices.data())[j]
                                                           : static_cast<const int64_t*>(indices.data())[j];
        if (v < 0) v += n;
        k[size_t(j)] = std::clamp<int64_t>(v, 0, n - 1);
    }
    BufferRef r = output_of(out);
    const int64_t bytes = data.dtype().bytes() * inner;
    const char* src = static_cast<const char*>(data.data());
    char* dst = static_cast<char*>(r.data());
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < count; ++j)
            std::memcpy(dst + (o * count + j) * bytes, src + (o * n + k[size_t(j)]) * bytes, size_t(bytes));
    return r;
}

// concat: each input's slab of every outer index in turn.
inline BufferRef concat(const std::vector<BufferRef>& in, const Attrs& a, const TensorType& out) {
    const int64_t rank = int64_t(out.shape.size()), axis = a.get_int("axis") < 0 ? a.get_int("axis") + rank
                                                                                 : a.get_int("axis");
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out.shape[size_t(d)];
    BufferRef r = output_of(out);
    char* dst = static_cast<char*>(r.data());
    for (int64_t o = 0; o < outer; ++o)
        for (const BufferRef& x : in) {
            const int64_t slab = x.size_bytes() / std::max<int64_t>(outer, 1);
            std::memcpy(dst, static_cast<const char*>(x.data()) + o * slab, size_t(slab));
            dst += slab;
        }
    return r;
}

// Calls f.template operator()<T>() for the C++ type of an integer or float dtype; false for
// another (bool, float16, ...).
template <class F>
bool with_number(DataType t, F&& f) {
    if (t == DataType::int_(64)) return f.template operator()<int64_t>(), true;
    if (t == DataType::int_(32)) return f.template operator()<int32_t>(), true;
    if (t == DataType::int_(16)) return f.template operator()<int16_t>(), true;
    if (t == DataType::int_(8)) return f.template operator()<int8_t>(), true;
    if (t == DataType::uint(64)) return f.template operator()<uint64_t>(), true;
    if (t == DataType::uint(32)) return f.template operator()<uint32_t>(), true;
    if (t == DataType::uint(16)) return f.template operator()<uint16_t>(), true;
    if (t == DataType::uint(8)) return f.template operator()<uint8_t>(), true;
    if (t == DataType::float_(32)) return f.template operator()<float>(), true;
    if (t == DataType::float_(64)) return f.template operator()<double>(), true;
    return false;
}

// cast between integer dtypes, and from an integer to float32 or float64 (C++'s conversions
// are LLVM's trunc, sext / zext and sitofp / uitofp, rounding alike), and float32 to bfloat16
// (rounded to nearest even as the kernels' cast: weights converted by BuildOptions::precision);
// undefined (compiled instead) otherwise: from a float, to or from bool or a 16-bit float.
inline BufferRef cast(const std::vector<BufferRef>& in, const Attrs&, const TensorType& out) {
    const BufferRef& x = in[0];
    if (x.dtype() == f32 && out.dtype == bf16) {
        BufferRef r = output_of(out);
        const float* src = static_cast<const float*>(x.data());
        bfloat16* dst = static_cast<bfloat16*>(r.data());
        for (int64_t i = 0, n = x.size(); i < n; ++i) dst[i] = bfloat16(src[i]);
        return r;
    }
    const auto integer = [](DataType t) { return t.is_int() || t.is_uint(); };
    if (!integer(x.dtype()) || !(integer(out.dtype) || out.dtype.is_float())) return {};
    BufferRef r = output_of(out);
    bool done = false;
    with_number(x.dtype(), [&]<class From>() {
        done = with_number(out.dtype, [&]<class To>() {
            const From* src = static_cast<const From*>(x.data());
            To* dst = static_cast<To*>(r.data());
            for (int64_t i = 0, n = x.size(); i < n; ++i) dst[i] = static_cast<To>(src[i]);
        });
    });
    return done ? r : BufferRef();
}

// b's stride per dimension of a rank-`rank` result it broadcasts to (numpy's rule, the shapes
// right-aligned; 0 where it broadcasts).
inline std::vector<int64_t> broadcast_strides(const BufferRef& b, size_t rank) {
    std::vector<int64_t> s(rank, 0);
    const std::vector<int64_t> compact = BufferRef::compact_strides(b.shape());
    const size_t skip = rank - b.shape().size();
    for (size_t d = 0; d < b.shape().size(); ++d)
        if (b.shape()[d] != 1) s[skip + d] = compact[d];
    return s;
}

// out[i] = f(u, v) over the broadcast shape, u and v the inputs' elements (one number type T
// for both); the output's elements are what f returns for T's. Undefined for another dtype.
template <class F>
BufferRef broadcast_binary(const BufferRef& x, const BufferRef& y, const TensorType& out, F&& f) {
    const size_t rank = out.shape.size();
    const std::vector<int64_t> sx = broadcast_strides(x, rank), sy = broadcast_strides(y, rank);
    BufferRef r = output_of(out);
    const bool done = with_number(x.dtype(), [&]<class T>() {
        const T* a = static_cast<const T*>(x.data());
        const T* b = static_cast<const T*>(y.data());
        auto* dst = static_cast<decltype(f(T{}, T{}))*>(r.data());
        walk<2>(out.shape, {0, 0}, {sx, sy},
                [&](int64_t i, const std::array<int64_t, 2>& at) { dst[i] = f(a[at[0]], b[at[1]]); });
    });
    return done ? r : BufferRef();
}

// add, sub, mul, div with broadcasting on the integer types and float32 / float64: integers
// wrap around and divide toward zero, a division by zero giving 0 (topi's div_e and codegen's
// guarded truncdiv); floats as IEEE (fast math off).
template <char Op>
BufferRef arithmetic(const std::vector<BufferRef>& in, const Attrs&, const TensorType& out) {
    const BufferRef &x = in[0], &y = in[1];
    if (x.dtype() != y.dtype() || x.dtype() != out.dtype) return {};
    return broadcast_binary(x, y, out, []<class T>(T u, T v) -> T {
        if constexpr (std::is_integral_v<T>) {
            using U = std::make_unsigned_t<T>;
            if constexpr (Op == '+') return T(U(u) + U(v));
            if constexpr (Op == '-') return T(U(u) - U(v));
            if constexpr (Op == '*') return T(U(u) * U(v));
            if constexpr (Op == '/') return v == 0 || (v == -1 && u == std::numeric_limits<T>::min()) ? T(0) : T(u / v);
        } else {
            if constexpr (Op == '+') return u + v;
            if constexpr (Op == '-') return u - v;
            if constexpr (Op == '*') return u * v;
            if constexpr (Op == '/') return u / v;
        }
    });
}

// equal, not_equal, less, less_equal, greater, greater_equal ('=', '!', '<', 'l', '>', 'g')
// with broadcasting on the integer types and float32 / float64, giving bools: floats compare
// as IEEE (a NaN is unequal to everything, ordered comparisons with it false), as the kernels.
template <char Op>
BufferRef compare(const std::vector<BufferRef>& in, const Attrs&, const TensorType& out) {
    const BufferRef &x = in[0], &y = in[1];
    if (x.dtype() != y.dtype() || !out.dtype.is_bool()) return {};
    return broadcast_binary(x, y, out, []<class T>(T u, T v) -> unsigned char {
        if constexpr (Op == '=') return u == v;
        if constexpr (Op == '!') return u != v;
        if constexpr (Op == '<') return u < v;
        if constexpr (Op == 'l') return u <= v;
        if constexpr (Op == '>') return u > v;
        if constexpr (Op == 'g') return u >= v;
    });
}

// pad in constant mode: `value` where the output reads outside the input (pads [begin...,
// end...], negative ones crop); undefined (compiled instead) for the other modes, a dtype
// with no C++ number type, or a value an integer dtype cannot hold.
inline BufferRef pad(const std::vector<BufferRef>& in, const Attrs& a, const TensorType& out) {
    const BufferRef& x = in[0];
    if (topi::pad_mode(a.get_string("mode", "constant")) != topi::PadMode::Constant) return {};
    const double fill = a.get_float("value", 0.0);
    const std::vector<int64_t> pads = a.get_ints("pads");
    const size_t rank = out.shape.size();
    if (pads.size() != 2 * rank || x.shape().size() != rank) return {};
    BufferRef r = output_of(out);
    bool filled = false;
    with_number(out.dtype, [&]<class T>() {
        if constexpr (std::is_integral_v<T>) {
            if (!(fill >= double(std::numeric_limits<T>::min()) && fill <= double(std::numeric_limits<T>::max()))) return;
        }
        std::fill_n(static_cast<T*>(r.data()), r.size(), static_cast<T>(fill));
        filled = true;
    });
    if (!filled) return {};
    // The input's part inside the output: per dimension, input [lo, hi) at output lo + begin.
    std::vector<int64_t> extent(rank);
    int64_t from = 0, to = 0;
    const std::vector<int64_t> xs = BufferRef::compact_strides(x.shape()), os = BufferRef::compact_strides(out.shape);
    for (size_t d = 0; d < rank; ++d) {
        const int64_t begin = pads[d], lo = std::max<int64_t>(0, -begin);
        const int64_t hi = std::min<int64_t>(x.shape()[d], out.shape[d] - begin);
        if (hi <= lo) return r;  // nothing of the input is left
        extent[d] = hi - lo;
        from += lo * xs[d];
        to += (lo + begin) * os[d];
    }
    with_element(x.dtype(), [&]<class E>() {
        const E* src = static_cast<const E*>(x.data());
        E* dst = static_cast<E*>(r.data());
        walk<2>(extent, {from, to}, {xs, os}, [&](int64_t, const std::array<int64_t, 2>& at) { dst[at[1]] = src[at[0]]; });
    });
    return r;
}

}  // namespace weft::graph::ops::host
