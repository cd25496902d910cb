// Buffer<T>: an n-dimensional array that kernels read and write, in the manner of
// Halide::Buffer. Either it owns its memory (64-byte aligned, zero-filled, compact
// row-major) or it wraps the user's memory with the user's strides. Copies are shallow:
// they share the storage, like a shared_ptr. Strides are in elements.
//
// A buffer lives on a Device: the host (the default) or a CUDA device, whose memory the
// host cannot touch (element access is a weft::Error there); copy_to / copy_from move the
// contents between devices:
//
//   auto a = Buffer<float>::random({1024}, -1, 1, 7);
//   Buffer<float> d = a.copy_to(Device::cuda(0));      // host -> device
//   kernel(d, ...);                                    // a CUDA kernel
//   a.copy_from(d);                                    // device -> host
//
// BufferRef is the same thing with the element type erased (a DataType at run time). Every
// Buffer<T> is a BufferRef, so Kernel, the graph executor and anything else that handles
// buffers of several types take `const BufferRef&` and never copy shapes to do so.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "weft/ir/abi.hpp"
#include "weft/ir/error.hpp"
#include "weft/ir/half.hpp"
#include "weft/ir/type.hpp"
#include "weft/runtime/device.hpp"

namespace weft {

// Allocations of this many bytes and more are 2 MiB aligned and asked to be backed by
// transparent huge pages (BufferRef::allocate, kernels' heap buffers).
inline constexpr int64_t kHugePageBytes = int64_t(2) << 20;

class BufferRef {
public:
    // An undefined buffer (no data); defined() is false.
    BufferRef() = default;
    // Wraps memory the caller owns and keeps alive. Strides default to compact row-major.
    // `device` says where the memory is (a CUdeviceptr for a CUDA device).
    BufferRef(void* data, DataType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides = {},
              Device device = Device::cpu());
    // A view of `of`'s memory that `owner` keeps alive (a mapped file, an object holding the
    // data): every copy of the view shares `owner`, which is released with the last one.
    BufferRef(std::shared_ptr<const void> owner, const BufferRef& of);
    // Owning, zero-filled, compact storage on `device` (64-byte aligned on the host; from 2 MiB
    // on, 2 MiB aligned and backed by transparent huge pages where the system allows).
    static BufferRef allocate(DataType dtype, std::vector<int64_t> shape, Device device = Device::cpu());

    bool defined() const { return data_ != nullptr; }
    // The memory; on a CUDA device, a device pointer the host must not dereference.
    void* data() const { return data_; }
    Device device() const { return device_; }
    DataType dtype() const { return dtype_; }
    int ndim() const { return static_cast<int>(shape_.size()); }
    const std::vector<int64_t>& shape() const { return shape_; }
    const std::vector<int64_t>& strides() const { return strides_; }
    // Extent of dimension i; throws weft::Error when i is out of range.
    int64_t dim(int i) const;
    // Number of elements.
    int64_t size() const { return size_; }
    int64_t size_bytes() const { return size_ * dtype_.bytes(); }
    // Row-major with no gaps: the strides are those compact_strides(shape()) gives.
    bool is_compact() const;
    // True when this buffer allocated its memory or holds its owner (copies of it share
    // that memory).
    bool owns_memory() const { return storage_ != nullptr; }
    // The kernel-ABI view of this buffer; its pointers stay valid while this buffer lives.
    WeftTensorArg tensor_arg() const;

    // A compact, owning copy of the contents on `device` (host <-> CUDA device, or
    // between devices). Strided host buffers are gathered; a strided device buffer (wrapped
    // device memory) cannot be copied.
    BufferRef copy_to(Device device) const;
    // Overwrites the contents with src's, which must have the same dtype and shape; either
    // may be on any device. Returns when the data is in place (a copy to a device may still
    // be in flight, ordered before the next kernel launch on the device's default stream).
    void copy_from(const BufferRef& src) const;

    static std::vector<int64_t> compact_strides(const std::vector<int64_t>& shape);

protected:
    // allocate(), without the zero fill where `zero` is false (a copy's destination, which
    // the copy fills at once: one pass over new memory instead of two).
    static BufferRef allocate_storage(DataType dtype, std::vector<int64_t> shape, Device device, bool zero);
    // Offset in elements of the element at `index` (one entry per dimension), with
    // bounds checks. Used by Buffer<T>::operator().
    int64_t offset_of(const int64_t* index, int count) const;
    // Throws weft::Error unless the host may touch the elements (`what`: the operation).
    void check_host_access(const char* what) const {
        if (!device_.is_cpu()) throw_not_on_host(what);
    }
    [[noreturn]] void throw_not_on_host(const char* what) const;
    // Calls f(offset) for every element in row-major order (for non-compact buffers).
    template <class F>
    void for_each_offset(F&& f) const;

    std::shared_ptr<void> storage_;  // null when wrapping user memory
    void* data_ = nullptr;
    DataType dtype_;
    std::vector<int64_t> shape_, strides_;
    int64_t size_ = 0;
    Device device_;
};

// "Buffer<float>" for float32 etc., as a user would spell the C++ type (for messages).
std::string cpp_buffer_type_name(DataType t);

namespace detail {
// "{2, 3, 4}" (for messages).
std::string shape_string(const std::vector<int64_t>& v);
}  // namespace detail

template <class T>
class Buffer : public BufferRef {
    static_assert(requires { dtype_of<T>::value; },
                  "Buffer<T>: T must be a scalar element type weft knows (bool, (u)int8..64_t, float, double, "
                  "bfloat16, float16)");

public:
    using value_type = T;

    Buffer() = default;
    // Owning: Buffer<float> b({1024, 1024}), or on a GPU: Buffer<float> b({1024}, Device::cuda(0)).
    // Zero-filled.
    explicit Buffer(std::vector<int64_t> shape, Device device = Device::cpu())
        : BufferRef(allocate(dtype_of<T>::value, std::move(shape), device)) {}
    // Wrapping memory the caller owns and keeps alive: Buffer<float> b(ptr, {rows, cols}).
    Buffer(T* data, std::vector<int64_t> shape, std::vector<int64_t> strides = {}, Device device = Device::cpu())
        : BufferRef(data, dtype_of<T>::value, std::move(shape), std::move(strides), device) {}
    // A typed view of a type-erased buffer (shares its storage); its dtype must be T's.
    explicit Buffer(const BufferRef& ref) : BufferRef(ref) {
        WEFT_CHECK(!ref.defined() || ref.dtype() == dtype_of<T>::value, "cannot view a buffer of ", ref.dtype().str(),
                   " as a ", cpp_buffer_type_name(dtype_of<T>::value), "; use a Buffer of the matching element type");
    }

    // Uniform random values, reproducible from `seed`: [lo, hi) for floating point,
    // [lo, hi] for integers, fair coin flips for bool.
    static Buffer random(std::vector<int64_t> shape, T lo = T(0), T hi = T(1), uint64_t seed = 0) {
        Buffer b(std::move(shape));
        std::mt19937_64 rng(seed);
        if constexpr (std::is_same_v<T, bool>) {
            std::bernoulli_distribution d(0.5);
            for (T& x : b) x = d(rng);
        } else if constexpr (std::is_floating_point_v<T>) {
            std::uniform_real_distribution<T> d(lo, hi);
            for (T& x : b) x = d(rng);
        } else if constexpr (std::is_same_v<T, bfloat16> || std::is_same_v<T, float16>) {
            std::uniform_real_distribution<float> d{static_cast<float>(lo), static_cast<float>(hi)};  // then rounded
            for (T& x : b) x = T(d(rng));
        } else {
            // uniform_int_distribution is not defined for 8-bit types: draw in 64 bits.
            using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
            std::uniform_int_distribution<Wide> d(static_cast<Wide>(lo), static_cast<Wide>(hi));
            for (T& x : b) x = static_cast<T>(d(rng));
        }
        return b;
    }

    DataType dtype() const { return dtype_of<T>::value; }
    T* data() const { return static_cast<T*>(data_); }

    // b(i, j, ...): one index per dimension, bounds-checked (a user error when out of range).
    template <class... Idx>
        requires(std::is_integral_v<Idx> && ...)
    T& operator()(Idx... idx) const {
        const int64_t index[] = {static_cast<int64_t>(idx)..., 0};
        return data()[offset_of(index, static_cast<int>(sizeof...(Idx)))];
    }

    // Iteration in memory order; only for compact host buffers.
    T* begin() const {
        check_host_access("begin()/end()");
        WEFT_CHECK(!defined() || is_compact(),
                   "begin()/end() need a compact buffer, but this one has strides; use operator() to index it");
        return data();
    }
    T* end() const { return begin() + size_; }

    void fill(T value) const {
        check_host_access("fill()");
        if (is_compact()) {
            std::fill(data(), data() + size_, value);
        } else {
            for_each_offset([&](int64_t off) { data()[off] = value; });
        }
    }

    // A compact, owning copy of the contents on the same device (strided buffers are gathered).
    Buffer copy() const {
        if (!device_.is_cpu()) return copy_to(device_);
        Buffer out(shape_);
        int64_t i = 0;
        for_each_offset([&](int64_t off) { out.data()[i++] = data()[off]; });
        return out;
    }

    // A compact, owning copy on `device` (see BufferRef::copy_to).
    Buffer copy_to(Device device) const { return Buffer(BufferRef::copy_to(device)); }
};

template <class F>
void BufferRef::for_each_offset(F&& f) const {
    if (!defined()) return;
    const int n = ndim();
    std::vector<int64_t> index(n, 0);
    int64_t offset = 0;
    for (int64_t count = 0; count < size_; ++count) {
        f(offset);
        // Odometer increment, innermost dimension fastest.
        for (int d = n - 1; d >= 0; --d) {
            offset += strides_[d];
            if (++index[d] < shape_[d]) break;
            offset -= strides_[d] * shape_[d];
            index[d] = 0;
        }
    }
}

}  // namespace weft
