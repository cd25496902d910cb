// Byte strings for weft's files: the kernel cache's files on disk (codegen/llvm/impl/
// disk_cache.hpp) and compiled-module artifacts (graph/artifact.hpp). Values are written in
// the host's byte order (both files hold code for the host they were made on); byte strings
// are prefixed by their length as 8 bytes. ByteReader never reads past its data: a take that
// does not fit returns nothing, and the caller decides whether that is a miss (the cache) or
// an error naming what was truncated (an artifact).
#pragma once
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace weft::detail {

class ByteWriter {
public:
    template <class T>
    void pod(T v) {
        static_assert(std::is_trivially_copyable_v<T>);
        out_.append(reinterpret_cast<const char*>(&v), sizeof(T));
    }
    void u8(uint8_t v) { pod(v); }
    void u32(uint32_t v) { pod(v); }
    void i32(int32_t v) { pod(v); }
    void i64(int64_t v) { pod(v); }
    void bytes(const void* data, size_t n) {
        pod(uint64_t(n));
        out_.append(static_cast<const char*>(data), n);
    }
    void str(std::string_view s) { bytes(s.data(), s.size()); }
    std::string& out() { return out_; }

private:
    std::string out_;
};

class ByteReader {
public:
    explicit ByteReader(std::string_view data) : data_(data) {}
    // Whether n more bytes are there.
    bool has(size_t n) const { return n <= data_.size() - pos_; }
    template <class T>
    std::optional<T> pod() {
        static_assert(std::is_trivially_copyable_v<T>);
        if (!has(sizeof(T))) return std::nullopt;
        T v;
        std::memcpy(&v, data_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    // A length-prefixed byte string, viewing the reader's data.
    std::optional<std::string_view> bytes() {
        std::optional<uint64_t> n = pod<uint64_t>();
        if (!n) return std::nullopt;
        if (!has(*n)) {
            pos_ -= sizeof(uint64_t);  // stays at the length that does not fit
            return std::nullopt;
        }
        std::string_view v = data_.substr(pos_, size_t(*n));
        pos_ += size_t(*n);
        return v;
    }
    size_t position() const { return pos_; }
    size_t size() const { return data_.size(); }
    bool done() const { return pos_ == data_.size(); }

private:
    std::string_view data_;
    size_t pos_ = 0;
};

// FNV-1a, 64 bits, of every `step`-th byte of data (all of them by default): a checksum, a
// file name or a fingerprint, not a cryptographic hash.
inline uint64_t fnv1a64(std::string_view data, size_t step = 1) {
    uint64_t h = 0xcbf29ce484222325ull;  // the FNV-64 offset basis
    for (size_t i = 0; i < data.size(); i += step)
        h = (h ^ static_cast<unsigned char>(data[i])) * 0x100000001b3ull;  // the FNV-64 prime
    return h;
}

}  // namespace weft::detail
