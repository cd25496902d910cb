// Definitions for runtime/buffer.hpp.
#pragma once
#include <cstring>
#include <sstream>

#include "weft/runtime/buffer.hpp"
#include "weft/runtime/cuda/memory.hpp"

namespace weft {

std::string detail::shape_string(const std::vector<int64_t>& v) {
    std::ostringstream os;
    os << "{";
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << "}";
    return os.str();
}

namespace {
using detail::shape_string;

// Every extent >= 1 and the element count fits in int64; returns the count.
int64_t checked_size(const std::vector<int64_t>& shape) {
    int64_t size = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
        WEFT_CHECK(shape[d] >= 1, "buffer shape ", shape_string(shape), ": dimension ", d, " has extent ", shape[d],
                   "; every extent must be at least 1");
        WEFT_CHECK(!__builtin_mul_overflow(size, shape[d], &size), "buffer shape ", shape_string(shape),
                   " has more elements than fit in int64");
    }
    return size;
}

}  // namespace

std::string cpp_buffer_type_name(DataType t) {
    const char* name = nullptr;
    if (t == boolean) name = "bool";
    else if (t == f32) name = "float";
    else if (t == f64) name = "double";
    else if (t == bf16) name = "bfloat16";
    else if (t == f16) name = "float16";
    else if (t.is_scalar() && (t.is_int() || t.is_uint())) return "Buffer<" + t.str() + "_t>";
    return name ? std::string("Buffer<") + name + ">" : "buffer of " + t.str();
}

BufferRef::BufferRef(void* data, DataType dtype, std::vector<int64_t> shape, std::vector<int64_t> strides,
                     Device device)
    : data_(data), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)), device_(device) {
    WEFT_CHECK(data != nullptr, "cannot wrap a null pointer in a buffer of shape ", shape_string(shape_),
               "; pass the address of the data, or construct an owning Buffer from the shape alone");
    size_ = checked_size(shape_);
    if (strides_.empty() && !shape_.empty()) strides_ = compact_strides(shape_);
    WEFT_CHECK(strides_.size() == shape_.size(), "buffer of shape ", shape_string(shape_), " was given ",
               strides_.size(), " strides ", shape_string(strides_), "; pass one stride (in elements) per dimension");
}

BufferRef::BufferRef(std::shared_ptr<const void> owner, const BufferRef& of) : BufferRef(of) {
    WEFT_CHECK(owner != nullptr, "BufferRef(owner, view): the owner is null");
    storage_ = std::const_pointer_cast<void>(std::move(owner));
}

BufferRef BufferRef::allocate(DataType dtype, std::vector<int64_t> shape, Device device) {
    return allocate_storage(dtype, std::move(shape), device, true);
}

BufferRef BufferRef::allocate_storage(DataType dtype, std::vector<int64_t> shape, Device device, bool zero) {
    int64_t size = checked_size(shape);
    WEFT_CHECK(size <= INT64_MAX / dtype.bytes(), "buffer shape ", shape_string(shape), " needs more bytes than fit in int64");
    int64_t bytes = size * dtype.bytes();
    if (device.is_cuda()) {
        std::shared_ptr<void> memory = cuda::detail::allocate(
            device, bytes, detail::concat("a ", dtype.str(), " buffer of shape ", shape_string(shape)));
        BufferRef b(memory.get(), dtype, std::move(shape), {}, device);
        b.storage_ = std::move(memory);
        return b;
    }
    void* p = weft_runtime_alloc(bytes);
    if (!p) detail::throw_user_error(detail::concat("out of memory allocating a buffer of ", bytes, " bytes (shape ",
                                                    shape_string(shape), ")"));
    if (zero) std::memset(p, 0, static_cast<size_t>(bytes));
    BufferRef b(p, dtype, std::move(shape));
    b.storage_ = std::shared_ptr<void>(p, weft_runtime_free);
    return b;
}

int64_t BufferRef::dim(int i) const {
    WEFT_CHECK(i >= 0 && i < ndim(), "dim(", i, ") of a buffer with ", ndim(), " dimensions (shape ",
               shape_string(shape_), ")");
    return shape_[i];
}

std::vector<int64_t> BufferRef::compact_strides(const std::vector<int64_t>& shape) {
    std::vector<int64_t> s(shape.size());
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        s[d] = stride;
        stride *= shape[d];
    }
    return s;
}

bool BufferRef::is_compact() const {
    int64_t stride = 1;
    for (size_t d = shape_.size(); d-- > 0;) {
        // A dimension of extent 1 may carry any stride without leaving gaps.
        if (shape_[d] != 1 && strides_[d] != stride) return false;
        stride *= shape_[d];
    }
    return true;
}

WeftTensorArg BufferRef::tensor_arg() const {
    return WeftTensorArg{data_,
                         shape_.data(),
                         strides_.data(),
                         static_cast<int32_t>(shape_.size()),
                         static_cast<uint8_t>(dtype_.code),
                         dtype_.bits,
                         dtype_.lanes};
}

void BufferRef::throw_not_on_host(const char* what) const {
    detail::throw_user_error(detail::concat(what, " on a buffer of shape ", shape_string(shape_), " on ", device_.str(),
                                            ": the host cannot access device memory; copy it to the host with "
                                            "copy_to(Device::cpu()) (or copy_from it into a host buffer)"));
}

int64_t BufferRef::offset_of(const int64_t* index, int count) const {
    WEFT_CHECK(defined(), "indexing an undefined (default-constructed) buffer; give it a shape first");
    check_host_access("element access");
    WEFT_CHECK(count == ndim(), "a buffer of shape ", shape_string(shape_), " takes ", ndim(), " indices but ", count,
               " were given");
    int64_t offset = 0;
    for (int d = 0; d < count; ++d) {
        WEFT_CHECK(index[d] >= 0 && index[d] < shape_[d], "index ", index[d], " is out of range for dimension ", d,
                   " (extent ", shape_[d], ") of a buffer of shape ", shape_string(shape_));
        offset += index[d] * strides_[d];
    }
    return offset;
}

}  // namespace weft

namespace weft {

namespace {

// Copies between two host buffers of one shape and element size, through their strides.
void copy_host_strided(const BufferRef& dst, const BufferRef& src) {
    const int64_t bytes = src.dtype().bytes();
    auto* d = static_cast<char*>(dst.data());
    const auto* s = static_cast<const char*>(src.data());
    const int n = src.ndim();
    std::vector<int64_t> index(static_cast<size_t>(n), 0);
    int64_t doff = 0, soff = 0;
    for (int64_t count = 0; count < src.size(); ++count) {
        std::memcpy(d + doff * bytes, s + soff * bytes, static_cast<size_t>(bytes));
        for (int k = n - 1; k >= 0; --k) {
            doff += dst.strides()[k];
            soff += src.strides()[k];
            if (++index[k] < src.shape()[k]) break;
            doff -= dst.strides()[k] * src.shape()[k];
            soff -= src.strides()[k] * src.shape()[k];
            index[k] = 0;
        }
    }
}

}  // namespace

BufferRef BufferRef::copy_to(Device device) const {
    WEFT_CHECK(defined(), "copy_to(Device::", device.str(), ") of an undefined (default-constructed) buffer");
    BufferRef out = allocate_storage(dtype_, shape_, device, false);
    out.copy_from(*this);
    return out;
}

void BufferRef::copy_from(const BufferRef& src) const {
    WEFT_CHECK(defined() && src.defined(), "copy_from with an undefined (default-constructed) buffer",
               defined() ? " as the source" : " as the destination");
    WEFT_CHECK(src.dtype() == dtype_, "copy_from: the source is a ", cpp_buffer_type_name(src.dtype()),
               " but the destination a ", cpp_buffer_type_name(dtype_), "; copies do not convert element types");
    WEFT_CHECK(src.shape() == shape_, "copy_from: the source has shape ", shape_string(src.shape()),
               " but the destination ", shape_string(shape_), "; the shapes must be equal");
    if (src.data() == data_ && src.device() == device_ && src.strides() == strides_) return;
    if (device_.is_cpu() && src.device().is_cpu()) {
        if (is_compact() && src.is_compact())
            std::memmove(data_, src.data(), static_cast<size_t>(size_bytes()));
        else
            copy_host_strided(*this, src);
        return;
    }
    for (const BufferRef* b : {this, &src})
        WEFT_CHECK(b->device().is_cpu() || b->is_compact(), "copy_from: the ", b == this ? "destination" : "source",
                   " on ", b->device().str(), " has strides ", shape_string(b->strides()), " for shape ",
                   shape_string(shape_), "; only compact device buffers can be copied");
    // A strided host side goes through a compact host staging buffer.
    if (device_.is_cpu() && !is_compact()) {
        BufferRef staging = allocate(dtype_, shape_);
        staging.copy_from(src);
        copy_host_strided(*this, staging);
        return;
    }
    if (src.device().is_cpu() && !src.is_compact()) {
        copy_from(src.copy_to(Device::cpu()));
        return;
    }
    cuda::detail::copy(data_, device_, src.data(), src.device(), size_bytes());
}

}  // namespace weft
