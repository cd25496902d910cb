// NumPy's .npy and .npz files as weft buffers, for weftc (inputs and outputs of `weftc run`).
//
//   BufferRef x = weftc::load_npy("x.npy");
//   weftc::save_npz("out.npz", {{"y", y}});            // np.load("out.npz")["y"]
//   for (auto& [name, b] : weftc::load_npz("in.npz")) ...
//
// .npy: format versions 1, 2 and 3; little-endian (or byte-order-free) bool, int8..64,
// uint8..64, float32 and float64; C order (a Fortran-order array is refused). A rank-0
// array reads as shape [] (weft's modules take it as [1]).
// .npz: a zip archive of NAME.npy members. save_npz writes them stored (uncompressed, like
// np.savez); load_npz reads stored members, and deflated ones (np.savez_compressed) when
// weftc is built with zlib (WEFTC_HAVE_ZLIB; Debian's zlib1g-dev). ZIP64 records (numpy
// writes them) are understood. Every malformed file is a weft::Error naming the file; so
// is one larger than the limit load_npy / load_npz are given (by default an artifact's,
// graph::kDefaultMaxArtifactBytes), or a device or directory.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <weft/runtime/bytes.hpp>
#include <weft/weft.hpp>

#ifdef WEFTC_HAVE_ZLIB
#include <zlib.h>
#endif

namespace weftc {

using weft::BufferRef;
using weft::DataType;
using NamedBuffers = std::vector<std::pair<std::string, BufferRef>>;

[[noreturn]] inline void npy_fail(const std::string& what, const std::string& why) {
    weft::detail::throw_user_error(what + ": " + why);
}

// "<f4" etc. for a dtype; throws for a type NumPy files do not carry here.
inline std::string npy_descr(DataType t) {
    if (t.is_bool()) return "|b1";
    if (t.lanes != 1) weft::detail::throw_user_error("npy: vector dtype " + t.str());
    char kind = t.is_float() && !t.is_bfloat() ? 'f' : t.is_int() ? 'i' : t.is_uint() ? 'u' : '?';
    if (kind == '?' || (kind == 'f' && t.bits != 32 && t.bits != 64))
        weft::detail::throw_user_error("npy: no NumPy dtype for " + t.str());
    return std::string(t.bits == 8 ? "|" : "<") + kind + std::to_string(t.bits / 8);
}

inline DataType npy_dtype(const std::string& descr, const std::string& what) {
    if (descr.size() < 3) npy_fail(what, "unknown dtype '" + descr + "'");
    char order = descr[0], kind = descr[1];
    int bytes = 0;
    for (size_t i = 2; i < descr.size(); ++i) {
        if (descr[i] < '0' || descr[i] > '9' || bytes > 100) npy_fail(what, "unknown dtype '" + descr + "'");
        bytes = bytes * 10 + (descr[i] - '0');
    }
    if (order == '>' && bytes > 1) npy_fail(what, "big-endian dtype '" + descr + "' (convert it with astype('<...'))");
    if (order != '<' && order != '|' && order != '=' && order != '>') npy_fail(what, "unknown dtype '" + descr + "'");
    if (kind == 'b' && bytes == 1) return DataType::bool_();
    if (kind == 'f' && (bytes == 4 || bytes == 8)) return DataType::float_(bytes * 8);
    if (kind == 'i' && (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8)) return DataType::int_(bytes * 8);
    if (kind == 'u' && (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8)) return DataType::uint(bytes * 8);
    npy_fail(what, "dtype '" + descr + "' is not supported (bool, int8..64, uint8..64, float32, float64 are)");
}

// The bytes of a .npy file holding b (copied compactly).
inline std::string npy_encode(const BufferRef& b) {
    WEFT_CHECK(b.defined(), "npy: an undefined buffer");
    std::string shape = "(";  // "(2, 3)", "(5,)", "()"
    for (int i = 0; i < b.ndim(); ++i) shape += (i ? ", " : "") + std::to_string(b.shape()[size_t(i)]);
    shape += b.ndim() == 1 ? ",)" : ")";
    std::string header = "{'descr': '" + npy_descr(b.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
    size_t total = 10 + header.size() + 1;
    header += std::string((64 - total % 64) % 64, ' ') + "\n";
    WEFT_CHECK(header.size() <= 65535, "npy: header too long");
    std::string out = "\x93NUMPY";
    out += char(1);
    out += char(0);
    out += char(header.size() & 0xff);
    out += char(header.size() >> 8);
    out += header;
    size_t start = out.size();
    out.resize(start + size_t(b.size_bytes()));
    if (b.is_compact()) {
        if (b.size_bytes()) std::memcpy(out.data() + start, b.data(), size_t(b.size_bytes()));
    } else {
        const int64_t eb = b.dtype().bytes();  // gather a strided view element by element
        std::vector<int64_t> index(size_t(b.ndim()), 0);
        for (int64_t i = 0; i < b.size(); ++i) {
            int64_t off = 0;
            for (int d = 0; d < b.ndim(); ++d) off += index[size_t(d)] * b.strides()[size_t(d)];
            std::memcpy(out.data() + start + i * eb, static_cast<const char*>(b.data()) + off * eb, size_t(eb));
            for (int d = b.ndim() - 1; d >= 0 && ++index[size_t(d)] == b.shape()[size_t(d)]; --d) index[size_t(d)] = 0;
        }
    }
    return out;
}

// A .npy file's bytes as an owning, compact buffer. `what` names the source in errors.
inline BufferRef npy_decode(std::string_view bytes, const std::string& what) {
    if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6))
        npy_fail(what, "not a .npy file (no \\x93NUMPY magic)");
    int major = uint8_t(bytes[6]);
    size_t header_len, pos;
    if (major == 1) {
        header_len = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
        pos = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) npy_fail(what, "truncated header");
        header_len = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8 | size_t(uint8_t(bytes[10])) << 16 |
                     size_t(uint8_t(bytes[11])) << 24;
        pos = 12;
    } else {
        npy_fail(what, "unknown .npy format version " + std::to_string(major));
    }
    if (header_len > bytes.size() - pos) npy_fail(what, "truncated header");
    std::string h(bytes.substr(pos, header_len));
    pos += header_len;
    // The header is a Python dict literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
    auto value_of = [&](const std::string& key) -> std::string {
        size_t k = h.find("'" + key + "'");
        if (k == std::string::npos) k = h.find("\"" + key + "\"");
        if (k == std::string::npos) npy_fail(what, "the header has no '" + key + "'");
        size_t colon = h.find(':', k + key.size() + 2);
        if (colon == std::string::npos) npy_fail(what, "malformed header");
        size_t v = h.find_first_not_of(' ', colon + 1);
        if (v == std::string::npos) npy_fail(what, "malformed header");
        if (h[v] == '\'' || h[v] == '"') {
            size_t end = h.find(h[v], v + 1);
            if (end == std::string::npos) npy_fail(what, "malformed header");
            return h.substr(v + 1, end - v - 1);
        }
        if (h[v] == '(') {
            size_t end = h.find(')', v);
            if (end == std::string::npos) npy_fail(what, "malformed header");
            return h.substr(v, end - v + 1);
        }
        size_t end = h.find_first_of(",}", v);
        if (end == std::string::npos) npy_fail(what, "malformed header");
        return h.substr(v, end - v);
    };
    DataType dtype = npy_dtype(value_of("descr"), what);
    std::string fortran = value_of("fortran_order");
    if (fortran.rfind("True", 0) == 0) npy_fail(what, "Fortran-order arrays are not supported (save a C-order copy)");
    std::string shape_text = value_of("shape");
    std::vector<int64_t> shape;
    int64_t elements = 1;
    for (size_t i = 1; i + 1 < shape_text.size();) {
        if (shape_text[i] == ' ' || shape_text[i] == ',') {
            ++i;
            continue;
        }
        if (shape_text[i] < '0' || shape_text[i] > '9') npy_fail(what, "malformed shape " + shape_text);
        int64_t d = 0;
        while (i + 1 < shape_text.size() && shape_text[i] >= '0' && shape_text[i] <= '9') {
            if (d > (int64_t(1) << 40)) npy_fail(what, "shape " + shape_text + " is too large");
            d = d * 10 + (shape_text[i++] - '0');
        }
        if (d != 0 && elements > (int64_t(1) << 40) / d) npy_fail(what, "shape " + shape_text + " is too large");
        elements *= d;
        shape.push_back(d);
    }
    if (elements == 0) npy_fail(what, "empty arrays (shape " + shape_text + ") are not supported");
    uint64_t data_bytes = uint64_t(elements) * uint64_t(dtype.bytes());
    if (data_bytes > bytes.size() - pos)
        npy_fail(what, "truncated data (" + std::to_string(bytes.size() - pos) + " of " + std::to_string(data_bytes) +
                           " bytes)");
    BufferRef b = BufferRef::allocate(dtype, shape);
    std::memcpy(b.data(), bytes.data() + pos, size_t(data_bytes));
    if (dtype.is_bool()) {  // NumPy's bools are bytes 0/1; anything else is 1
        auto* p = static_cast<uint8_t*>(b.data());
        for (int64_t i = 0; i < elements; ++i) p[i] = p[i] ? 1 : 0;
    }
    return b;
}

// The bytes of an .npy or .npz file (`kind`), up to max_bytes (weftc's --max-file-size).
inline std::string read_array_file(const std::string& path, int64_t max_bytes, const char* kind) {
    return weft::detail::read_file_limited(path, max_bytes, kind, "--max-file-size");
}

inline void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) weft::detail::throw_user_error("cannot open '" + path + "' for writing");
    out.write(bytes.data(), std::streamsize(bytes.size()));
    out.close();
    if (!out) weft::detail::throw_user_error("writing '" + path + "' failed");
}

inline BufferRef load_npy(const std::string& path, int64_t max_bytes = weft::graph::kDefaultMaxArtifactBytes) {
    return npy_decode(read_array_file(path, max_bytes, "npy"), path);
}
inline void save_npy(const std::string& path, const BufferRef& b) { write_file(path, npy_encode(b)); }

// ---- zip -------------------------------------------------------------------------------

inline uint32_t crc32(std::string_view data) {
    static const std::array<uint32_t, 256> table = [] {
        std::array<uint32_t, 256> t{};
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    uint32_t c = 0xFFFFFFFFu;
    for (unsigned char b : data) c = table[(c ^ b) & 0xff] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

namespace zip_detail {
inline void put16(std::string& s, uint32_t v) {
    s += char(v & 0xff);
    s += char((v >> 8) & 0xff);
}
inline void put32(std::string& s, uint32_t v) {
    put16(s, v & 0xffff);
    put16(s, v >> 16);
}
inline uint64_t get(std::string_view s, size_t at, int bytes) {
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = v << 8 | uint8_t(s[at + size_t(i)]);
    return v;
}
}  // namespace zip_detail

// An .npz archive (members NAME.npy, stored) holding the buffers.
inline std::string npz_encode(const NamedBuffers& arrays) {
    using namespace zip_detail;
    std::string out, central;
    for (auto& [name, b] : arrays) {
        std::string member = name + ".npy", data = npy_encode(b);
        WEFT_CHECK(data.size() < 0xFFFFFFFFu && out.size() < 0xFFFFFFFFu, "npz: '", name,
                   "' is too large for a zip without ZIP64 (4 GB)");
        uint32_t crc = crc32(data), offset = uint32_t(out.size());
        auto header = [&](std::string& s, bool central_entry) {
            put32(s, central_entry ? 0x02014b50 : 0x04034b50);
            if (central_entry) put16(s, 20);  // made by
            put16(s, 20);                     // needed to extract
            put16(s, 0);                      // flags
            put16(s, 0);                      // stored
            put16(s, 0);                      // time
            put16(s, 0x21);                   // date: 1980-01-01
            put32(s, crc);
            put32(s, uint32_t(data.size()));
            put32(s, uint32_t(data.size()));
            put16(s, uint32_t(member.size()));
            put16(s, 0);  // extra
            if (central_entry) {
                put16(s, 0);  // comment
                put16(s, 0);  // disk
                put16(s, 0);  // internal attributes
                put32(s, 0);  // external attributes
                put32(s, offset);
            }
            s += member;
        };
        header(out, false);
        out += data;
        header(central, true);
    }
    uint32_t central_offset = uint32_t(out.size());
    out += central;
    put32(out, 0x06054b50);
    put16(out, 0);
    put16(out, 0);
    put16(out, uint32_t(arrays.size()));
    put16(out, uint32_t(arrays.size()));
    put32(out, uint32_t(central.size()));
    put32(out, central_offset);
    put16(out, 0);
    return out;
}

inline NamedBuffers npz_decode(std::string_view z, const std::string& what) {
    using zip_detail::get;
    // The end of central directory record: the last 22+ bytes (a comment may follow it).
    if (z.size() < 22) npy_fail(what, "not an .npz (zip) file: too short");
    size_t eocd = std::string_view::npos;
    for (size_t i = z.size() - 22 + 1; i-- > 0 && z.size() - i <= 22 + 65535;)
        if (get(z, i, 4) == 0x06054b50) {
            eocd = i;
            break;
        }
    if (eocd == std::string_view::npos) npy_fail(what, "not an .npz (zip) file: no end of central directory");
    uint64_t entries = get(z, eocd + 10, 2), cd_size = get(z, eocd + 12, 4), cd_offset = get(z, eocd + 16, 4);
    if (cd_offset == 0xFFFFFFFFu || entries == 0xFFFF) {  // ZIP64: its locator precedes the record
        if (eocd < 20 || get(z, eocd - 20, 4) != 0x07064b50) npy_fail(what, "a ZIP64 archive without its locator");
        uint64_t rec = get(z, eocd - 20 + 8, 8);
        if (rec > z.size() || z.size() - rec < 56 || get(z, size_t(rec), 4) != 0x06064b50)
            npy_fail(what, "a corrupt ZIP64 end of central directory");
        entries = get(z, size_t(rec) + 32, 8);
        cd_size = get(z, size_t(rec) + 40, 8);
        cd_offset = get(z, size_t(rec) + 48, 8);
    }
    if (cd_offset > z.size() || cd_size > z.size() - cd_offset) npy_fail(what, "the central directory is out of range");
    NamedBuffers result;
    size_t p = size_t(cd_offset);
    for (uint64_t e = 0; e < entries; ++e) {
        if (p + 46 > z.size() || get(z, p, 4) != 0x02014b50) npy_fail(what, "corrupt central directory");
        uint32_t flags = uint32_t(get(z, p + 8, 2)), method = uint32_t(get(z, p + 10, 2)), crc = uint32_t(get(z, p + 16, 4));
        uint64_t csize = get(z, p + 20, 4), usize = get(z, p + 24, 4), offset = get(z, p + 42, 4);
        size_t name_len = size_t(get(z, p + 28, 2)), extra_len = size_t(get(z, p + 30, 2)),
               comment_len = size_t(get(z, p + 32, 2));
        if (p + 46 + name_len + extra_len + comment_len > z.size()) npy_fail(what, "corrupt central directory");
        std::string name(z.substr(p + 46, name_len));
        // ZIP64 extra field: the 0xFFFFFFFF sizes / offset, in that order.
        for (size_t x = p + 46 + name_len; x + 4 <= p + 46 + name_len + extra_len;) {
            size_t id = size_t(get(z, x, 2)), len = size_t(get(z, x + 2, 2)), at = x + 4;
            if (at + len > p + 46 + name_len + extra_len) break;
            if (id == 0x0001) {
                if (usize == 0xFFFFFFFFu && at + 8 <= x + 4 + len) usize = get(z, at, 8), at += 8;
                if (csize == 0xFFFFFFFFu && at + 8 <= x + 4 + len) csize = get(z, at, 8), at += 8;
                if (offset == 0xFFFFFFFFu && at + 8 <= x + 4 + len) offset = get(z, at, 8), at += 8;
            }
            x += 4 + len;
        }
        p += 46 + name_len + extra_len + comment_len;
        const std::string where = what + ": member '" + name + "'";
        if (flags & 1) npy_fail(where, "encrypted");
        if (offset > z.size() || z.size() - offset < 30 || get(z, size_t(offset), 4) != 0x04034b50)
            npy_fail(where, "corrupt local header");
        size_t data_at = size_t(offset) + 30 + size_t(get(z, size_t(offset) + 26, 2)) + size_t(get(z, size_t(offset) + 28, 2));
        if (data_at > z.size() || csize > z.size() - data_at) npy_fail(where, "truncated");
        std::string_view packed = z.substr(data_at, size_t(csize));
        std::string data;
        if (method == 0) {
            data = std::string(packed);
        } else if (method == 8) {
#ifdef WEFTC_HAVE_ZLIB
            if (usize > (uint64_t(1) << 40)) npy_fail(where, "too large");
            data.resize(size_t(usize));
            z_stream s{};
            if (inflateInit2(&s, -15) != Z_OK) npy_fail(where, "zlib failed to start");
            s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
            s.avail_in = uInt(packed.size());
            s.next_out = reinterpret_cast<Bytef*>(data.data());
            s.avail_out = uInt(data.size());
            int rc = inflate(&s, Z_FINISH);
            size_t produced = s.total_out;
            inflateEnd(&s);
            if (rc != Z_STREAM_END || produced != data.size()) npy_fail(where, "corrupt deflate data");
#else
            npy_fail(where, "compressed (np.savez_compressed); this weftc reads stored members only (np.savez)");
#endif
        } else {
            npy_fail(where, "compression method " + std::to_string(method) + " is not supported");
        }
        if (data.size() != usize) npy_fail(where, "size does not match the directory");
        if (crc32(data) != crc) npy_fail(where, "CRC mismatch (corrupt)");
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
        result.emplace_back(name, npy_decode(data, where));
    }
    return result;
}

inline NamedBuffers load_npz(const std::string& path, int64_t max_bytes = weft::graph::kDefaultMaxArtifactBytes) {
    return npz_decode(read_array_file(path, max_bytes, "npz"), path);
}
inline void save_npz(const std::string& path, const NamedBuffers& arrays) { write_file(path, npz_encode(arrays)); }

}  // namespace weftc
