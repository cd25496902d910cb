// Byte strings for weft's files: the kernel cache's files on disk (codegen/llvm/impl/
// disk_cache.hpp) and compiled-module artifacts (graph/artifact.hpp); and read_file_limited,
// how weft reads a whole file it is given (a model, an artifact, an input). Values are written in
// the host's byte order (both files hold code for the host they were made on); byte strings
// are prefixed by their length as 8 bytes. ByteReader never reads past its data: a take that
// does not fit returns nothing, and the caller decides whether that is a miss (the cache) or
// an error naming what was truncated (an artifact).
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "weft/ir/error.hpp"

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

// What a file is when weft cannot read it whole ("a directory", "a character device"), or
// nullptr for one it can: a regular file, or a pipe (bounded by the limit as it is read).
inline const char* unreadable_file_kind(std::filesystem::file_type type) {
    using std::filesystem::file_type;
    switch (type) {
        case file_type::regular:
        case file_type::fifo: return nullptr;
        case file_type::directory: return "a directory";
        case file_type::character: return "a character device";
        case file_type::block: return "a block device";
        case file_type::socket: return "a socket";
        default: return "a special file";
    }
}

// The whole file at `path`, or a weft::Error when it holds more than `max_bytes`. It is read
// in chunks and never more than max_bytes + 1 bytes of it: the size the file system reports
// is only a hint (a /proc file says 0, a pipe has none, a file may grow while it is read). A
// device (/dev/zero never ends), a directory or a socket is an error before anything is read.
// Errors start with `reader` (who reads: "onnx", "graph::load_module"); one for a file over
// the limit names `limit_name`, the setting that raises it.
inline std::string read_file_limited(const std::string& path, int64_t max_bytes, std::string_view reader,
                                     std::string_view limit_name) {
    std::error_code ec;
    const std::filesystem::file_status status = std::filesystem::status(path, ec);
    if (status.type() == std::filesystem::file_type::not_found)
        throw_user_error(concat(reader, ": cannot open '", path, "': no such file"));
    if (ec) throw_user_error(concat(reader, ": cannot open '", path, "': ", ec.message()));
    if (const char* kind = unreadable_file_kind(status.type()))
        throw_user_error(concat(reader, ": cannot read '", path, "': it is ", kind,
                                ", not a regular file (give the path of a file)"));
    WEFT_CHECK(max_bytes >= 0, reader, ": the limit on the size of '", path, "' (", limit_name, ") is negative");
    auto too_large = [&] {
        throw_user_error(concat(reader, ": '", path, "' is larger than the limit of ", max_bytes, " bytes (",
                                limit_name, "); raise the limit to read it"));
    };
    // The size a regular file reports: a refusal before reading, and a hint for one sized read.
    std::optional<uint64_t> reported;
    if (status.type() == std::filesystem::file_type::regular) {
        uint64_t size = std::filesystem::file_size(path, ec);
        if (!ec) reported = size;
    }
    if (reported && *reported > uint64_t(max_bytes)) too_large();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw_user_error(concat(reader, ": cannot open '", path, "': ", std::strerror(errno)));
    // The reported size and a byte more (to see the end) at once; otherwise 1 MiB at a time.
    const size_t chunk = std::max<size_t>(size_t(1) << 20, reported ? size_t(*reported) + 1 : 0);
    std::string bytes;
    while (true) {
        const size_t want = std::min(chunk, size_t(max_bytes) + 1 - bytes.size());
        const size_t at = bytes.size();
        bytes.resize(at + want);
        in.read(bytes.data() + at, std::streamsize(want));
        bytes.resize(at + size_t(in.gcount()));
        if (bytes.size() > size_t(max_bytes)) too_large();
        if (!in) break;  // the end (or an error, told apart below)
    }
    if (in.bad()) throw_user_error(concat(reader, ": cannot read '", path, "': ", std::strerror(errno)));
    return bytes;
}

}  // namespace weft::detail
