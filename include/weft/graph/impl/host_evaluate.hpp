// OpDef::evaluate for the operators that only move data, so that fold_constants computes a
// network's constant part (weights packed for the blocked layout, transposed, reshaped)
// on the host instead of compiling a kernel for each distinct shape. Each gives exactly
// what the operator's compute gives: the same elements moved, zeros where it pads.
#pragma once
#include <cstring>
#include <numeric>

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

// reshape, flatten, squeeze, unsqueeze: the same elements in the same order.
inline BufferRef same_elements(const std::vector<BufferRef>& in, const Attrs&, const TensorType& out) {
    BufferRef r = output_of(out);
    std::memcpy(r.data(), in[0].data(), size_t(in[0].size_bytes()));
    return r;
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
    with_element(x.dtype(), [&]<class E>() {
        const E* src = static_cast<const E*>(x.data());
        E* dst = static_cast<E*>(r.data());
        std::vector<int64_t> index(rank, 0);
        int64_t offset = 0;
        for (int64_t i = 0, n = r.size(); i < n; ++i) {
            dst[i] = src[offset];
            for (size_t d = rank; d-- > 0;) {  // the next output index, and the input offset with it
                offset += stride[d];
                if (++index[d] < extent[d]) break;
                offset -= stride[d] * extent[d];
                index[d] = 0;
            }
        }
    });
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

}  // namespace weft::graph::ops::host
