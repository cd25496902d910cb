// Byte strings for weft's files: the kernel cache's files on disk (codegen/llvm/impl/
// disk_cache.hpp) and compiled-module artifacts (graph/artifact.hpp); and read_file_limited,
// how weft reads a whole file it is given (a model, an artifact, an input). Values are written in
// the host's byte order (both files hold code for the host they were made on); byte strings
// are prefixed by their length as 8 bytes. ByteReader never reads past its data: a take that
// does not fit returns nothing, and the caller decides whether that is a miss (the cache) or
// an error naming what was truncated (an artifact).
#pragma once
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
    // A byte string whose data starts at a multiple of `align` counted from `base` bytes
    // before this writer's output (a header written apart): zero bytes pad up to it.
    void aligned_bytes(const void* data, size_t n, size_t align, size_t base) {
        pod(uint64_t(n));
        out_.append((align - (base + out_.size()) % align) % align, '\0');
        out_.append(static_cast<const char*>(data), n);
    }
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
    // What ByteWriter::aligned_bytes wrote with the same `align` and `base`.
    std::optional<std::string_view> aligned_bytes(size_t align, size_t base) {
        const size_t start = pos_;
        std::optional<uint64_t> n = pod<uint64_t>();
        const size_t pad = (align - (base + pos_) % align) % align;
        if (!n || !has(pad) || !has(pad + *n) || pad + *n < pad) {
            pos_ = start;
            return std::nullopt;
        }
        std::string_view v = data_.substr(pos_ + pad, size_t(*n));
        pos_ += pad + size_t(*n);
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

// A 64-bit hash of data at memory speed, for checksums of large files (an artifact's
// weights): four independent lanes of 8-byte words, each multiplied and rotated
// (xxHash64's round), then mixed with the length and the tail. fnv1a64 takes a multiply per
// byte in one dependent chain; this takes one per 8 bytes in four. Not cryptographic.
inline uint64_t hash64(std::string_view data) {
    constexpr uint64_t p1 = 0x9E3779B185EBCA87ull, p2 = 0xC2B2AE3D27D4EB4Full, p3 = 0x165667B19E3779F9ull;
    auto round = [](uint64_t lane, uint64_t word) { return std::rotl(lane + word * p2, 31) * p1; };
    auto word_at = [&](size_t i) {
        uint64_t w;
        std::memcpy(&w, data.data() + i, 8);
        return w;
    };
    const size_t n = data.size();
    uint64_t lanes[4] = {p1 + p2, p2, 0, 0 - p1};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; ++k) lanes[k] = round(lanes[k], word_at(i + 8 * size_t(k)));
    uint64_t h = std::rotl(lanes[0], 1) + std::rotl(lanes[1], 7) + std::rotl(lanes[2], 12) + std::rotl(lanes[3], 18);
    h += uint64_t(n);
    for (; i + 8 <= n; i += 8) h = std::rotl(h ^ round(0, word_at(i)), 27) * p1 + p3;
    for (; i < n; ++i) h = std::rotl(h ^ (static_cast<unsigned char>(data[i]) * p3), 11) * p1;
    h ^= h >> 33;
    h *= p2;
    h ^= h >> 29;
    h *= p3;
    return h ^ (h >> 32);
}

// v as 16 lowercase hex digits (a hash in a file name or a key).
inline std::string hex64(uint64_t v) {
    static const char* digits = "0123456789abcdef";
    std::string s(16, '0');
    for (int i = 15; i >= 0; --i, v >>= 4) s[size_t(i)] = digits[v & 15];
    return s;
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

[[noreturn]] inline void throw_file_too_large(const std::string& path, int64_t max_bytes, std::string_view reader,
                                              std::string_view limit_name) {
    throw_user_error(concat(reader, ": '", path, "' is larger than the limit of ", max_bytes, " bytes (", limit_name,
                            "); raise the limit to read it"));
}

// The checks before weft reads the file at `path` whole: it exists, it is a regular file or
// a pipe (a device, a directory or a socket is an error before anything is read), and a
// regular file reports at most `max_bytes` (its size is returned: a hint, as a file may
// change). Errors start with `reader` (who reads: "onnx", "graph::load_module"); one for a
// file over the limit names `limit_name`, the setting that raises it.
inline std::optional<uint64_t> check_readable_file(const std::string& path, int64_t max_bytes, std::string_view reader,
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
    std::optional<uint64_t> reported;
    if (status.type() == std::filesystem::file_type::regular) {
        uint64_t size = std::filesystem::file_size(path, ec);
        if (!ec) reported = size;
    }
    if (reported && *reported > uint64_t(max_bytes)) throw_file_too_large(path, max_bytes, reader, limit_name);
    return reported;
}

// The whole file at `path`, or a weft::Error when it holds more than `max_bytes`. It is read
// in chunks and never more than max_bytes + 1 bytes of it: the size the file system reports
// is only a hint (a /proc file says 0, a pipe has none, a file may grow while it is read).
// The checks and errors are check_readable_file's.
inline std::string read_file_limited(const std::string& path, int64_t max_bytes, std::string_view reader,
                                     std::string_view limit_name) {
    const std::optional<uint64_t> reported = check_readable_file(path, max_bytes, reader, limit_name);
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
        if (bytes.size() > size_t(max_bytes)) throw_file_too_large(path, max_bytes, reader, limit_name);
        if (!in) break;  // the end (or an error, told apart below)
    }
    if (in.bad()) throw_user_error(concat(reader, ": cannot read '", path, "': ", std::strerror(errno)));
    return bytes;
}

// A whole file's bytes, mapped read-only where it is a non-empty regular file (no copy and
// no zeroed pages: they are the file system's cache), else read with read_file_limited (a
// pipe); the same checks and errors. What views bytes() keeps the object alive (shared_ptr):
// graph::load_module's constants view a mapped artifact. A file replaced by rename (as weft
// writes its files: write_file_replacing) leaves the mapping intact.
class FileBytes {
public:
    static std::shared_ptr<const FileBytes> open(const std::string& path, int64_t max_bytes, std::string_view reader,
                                                 std::string_view limit_name) {
        auto f = std::shared_ptr<FileBytes>(new FileBytes());
        const std::optional<uint64_t> reported = check_readable_file(path, max_bytes, reader, limit_name);
        if (reported && *reported > 0) {
            const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            struct stat st {};
            if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
                if (st.st_size > max_bytes) {
                    ::close(fd);
                    throw_file_too_large(path, max_bytes, reader, limit_name);
                }
                void* p = ::mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
                if (p != MAP_FAILED) {
                    f->map_ = p;
                    f->data_ = static_cast<const char*>(p);
                    f->size_ = size_t(st.st_size);
                }
            }
            if (fd >= 0) ::close(fd);
            if (f->map_) return f;
        }
        f->read_ = read_file_limited(path, max_bytes, reader, limit_name);
        f->data_ = f->read_.data();
        f->size_ = f->read_.size();
        return f;
    }
    FileBytes(const FileBytes&) = delete;
    FileBytes& operator=(const FileBytes&) = delete;
    ~FileBytes() {
        if (map_) ::munmap(map_, size_);
    }
    std::string_view bytes() const { return {data_, size_}; }

private:
    FileBytes() = default;
    std::string read_;     // the bytes, where not mapped
    void* map_ = nullptr;  // the mapping, where mapped
    const char* data_ = nullptr;
    size_t size_ = 0;
};

// Writes `bytes` to `path` under a temporary name in the same directory, then renames it over
// `path`: a reader sees the old file or the new one whole, and a process that mapped the old
// one keeps it. Returns "" or what failed.
inline std::string write_file_replacing(const std::filesystem::path& path, std::string_view bytes) {
    std::filesystem::path temporary = path;
    temporary += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(std::random_device{}());
    std::error_code ec;
    {
        std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
        if (!file) return concat("cannot open '", temporary.string(), "' for writing");
        file.write(bytes.data(), std::streamsize(bytes.size()));
        file.close();
        if (!file) {
            std::filesystem::remove(temporary, ec);
            return concat("writing '", temporary.string(), "' failed");
        }
    }
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::filesystem::remove(temporary, ec);
        return concat("cannot rename '", temporary.string(), "' to '", path.string(), "'");
    }
    return "";
}

}  // namespace weft::detail
