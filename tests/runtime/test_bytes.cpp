// runtime/bytes.hpp: what ByteWriter writes ByteReader reads back, and a reader never reads
// past its data: a take that does not fit returns nothing and leaves the position. A file is
// read up to a limit, a device or a directory not at all.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "weft/runtime/bytes.hpp"

using weft::detail::ByteReader;
using weft::detail::ByteWriter;

TEST_CASE("bytes: values and byte strings round-trip") {
    ByteWriter w;
    w.u8(200);
    w.i64(-5);
    w.str("kernel");
    w.str("");
    w.pod(2.5);
    ByteReader r(w.out());
    CHECK(*r.pod<uint8_t>() == 200);
    CHECK(*r.pod<int64_t>() == -5);
    CHECK(*r.bytes() == "kernel");
    CHECK(r.bytes()->empty());
    CHECK(*r.pod<double>() == 2.5);
    CHECK(r.done());
    CHECK(!r.pod<uint8_t>());
}

TEST_CASE("bytes: a truncated value or string is nothing, and the position stays") {
    ByteWriter w;
    w.str("abcdef");
    for (size_t keep = 0; keep < w.out().size(); ++keep) {
        CAPTURE(keep);
        ByteReader r(std::string_view(w.out()).substr(0, keep));
        CHECK(!r.bytes());
        CHECK(r.position() == 0);
    }
    // A length that claims more than any memory holds.
    ByteWriter huge;
    huge.pod(std::numeric_limits<uint64_t>::max());
    huge.out() += "xyz";
    ByteReader r(huge.out());
    CHECK(!r.bytes());
    CHECK(r.position() == 0);
    CHECK(*r.pod<uint64_t>() == std::numeric_limits<uint64_t>::max());
}

TEST_CASE("bytes: fnv1a64 is the 64-bit FNV-1a hash") {
    // The published test vectors of FNV-1a 64.
    CHECK(weft::detail::fnv1a64("") == 0xcbf29ce484222325ull);
    CHECK(weft::detail::fnv1a64("a") == 0xaf63dc4c8601ec8cull);
    CHECK(weft::detail::fnv1a64("foobar") == 0x85944171f73967e8ull);
}

TEST_CASE("bytes: fnv1a64 with a step hashes every step-th byte") {
    CHECK(weft::detail::fnv1a64("fxoxoxbxaxr", 2) == weft::detail::fnv1a64("foobar"));
    CHECK(weft::detail::fnv1a64("abc", 10) == weft::detail::fnv1a64("a"));
}

TEST_CASE("bytes: read_file_limited reads a file up to its limit and no further") {
    using weft::detail::read_file_limited;
    auto refused = [](const std::string& path, int64_t limit, const std::string& why) {
        CHECK_THROWS_WITH_AS(read_file_limited(path, limit, "test", "TestOptions::max"), doctest::Contains(why.c_str()),
                             weft::Error);
    };
    const std::string dir = std::filesystem::temp_directory_path() / ("weft_bytes_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string file = dir + "/ten.bin";
    { std::ofstream(file, std::ios::binary) << "0123456789"; }
    CHECK(read_file_limited(file, 10, "test", "") == "0123456789");
    refused(file, 9, "weft: test: '" + file + "' is larger than the limit of 9 bytes (TestOptions::max)");
    refused(dir + "/missing", 10, "cannot open '" + dir + "/missing'");
    refused(dir, 10, "cannot read '" + dir + "': it is a directory");
    // A device is refused before a byte is read: /dev/zero would never end.
    refused("/dev/zero", 1 << 20, "'/dev/zero': it is a character device, not a regular file");
    // A /proc file is regular but says it holds 0 bytes: the limit still holds as it is read.
    CHECK(std::filesystem::file_size("/proc/self/maps") == 0);
    CHECK(!read_file_limited("/proc/self/maps", 1 << 30, "test", "").empty());
    refused("/proc/self/maps", 16, "larger than the limit of 16 bytes");
    std::filesystem::remove_all(dir);
}

TEST_CASE("bytes: hash64 changes with every bit and every length") {
    using weft::detail::hash64;
    std::string s(100, '\0');
    for (size_t i = 0; i < s.size(); ++i) s[i] = char(i * 37 + 11);
    const uint64_t h = hash64(s);
    CHECK(hash64(std::string(s)) == h);
    std::set<uint64_t> seen{h};
    for (size_t i = 0; i < s.size(); ++i)
        for (int bit = 0; bit < 8; ++bit) {
            std::string t = s;
            t[i] = char(t[i] ^ (1 << bit));
            seen.insert(hash64(t));
        }
    CHECK(seen.size() == 1 + s.size() * 8);  // every flip gives its own hash
    std::set<uint64_t> prefixes;
    for (size_t n = 0; n <= s.size(); ++n) prefixes.insert(hash64(std::string_view(s).substr(0, n)));
    CHECK(prefixes.size() == s.size() + 1);
    // Zeros of different lengths differ too (the length is mixed in).
    CHECK(hash64(std::string(64, '\0')) != hash64(std::string(65, '\0')));
}

TEST_CASE("bytes: aligned byte strings start at the alignment from the base, and truncation is nothing") {
    weft::detail::ByteWriter w;
    w.u8(7);
    w.aligned_bytes("abcdef", 6, 64, 32);
    w.u8(9);
    w.aligned_bytes("xyz", 3, 16, 32);
    const std::string out = w.out();
    CHECK((32 + out.find("abcdef")) % 64 == 0);
    CHECK((32 + out.find("xyz")) % 16 == 0);
    weft::detail::ByteReader r(out);
    CHECK(r.pod<uint8_t>() == 7);
    CHECK(r.aligned_bytes(64, 32) == std::string_view("abcdef"));
    CHECK(r.pod<uint8_t>() == 9);
    CHECK(r.aligned_bytes(16, 32) == std::string_view("xyz"));
    CHECK(r.done());
    for (size_t cut = 1; cut < out.size(); ++cut) {  // every truncation: nothing, never a read past the end
        weft::detail::ByteReader t(std::string_view(out).substr(0, cut));
        t.pod<uint8_t>();
        std::optional<std::string_view> a = t.aligned_bytes(64, 32);
        if (!a) {
            CHECK(t.position() == 1);
            continue;
        }
        t.pod<uint8_t>();
        CHECK(!t.aligned_bytes(16, 32));
    }
}

TEST_CASE("bytes: FileBytes maps a regular file, reads a /proc file, and refuses what read_file_limited refuses") {
    using weft::detail::FileBytes;
    const std::string dir = std::filesystem::temp_directory_path() / ("weft_filebytes_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string file = dir + "/ten.bin";
    { std::ofstream(file, std::ios::binary) << "0123456789"; }
    std::shared_ptr<const FileBytes> f = FileBytes::open(file, 10, "test", "");
    CHECK(f->bytes() == "0123456789");
    // Replaced by rename and removed: the bytes stay what they were.
    CHECK(weft::detail::write_file_replacing(file, "abc").empty());
    std::filesystem::remove(file);
    CHECK(f->bytes() == "0123456789");
    { std::ofstream(file, std::ios::binary) << "0123456789"; }
    CHECK_THROWS_WITH_AS(FileBytes::open(file, 9, "test", "TestOptions::max"),
                         doctest::Contains("larger than the limit of 9 bytes (TestOptions::max)"), weft::Error);
    CHECK_THROWS_WITH_AS(FileBytes::open(dir, 10, "test", ""), doctest::Contains("it is a directory"), weft::Error);
    CHECK_THROWS_WITH_AS(FileBytes::open("/dev/zero", 10, "test", ""), doctest::Contains("a character device"),
                         weft::Error);
    CHECK(!FileBytes::open("/proc/self/maps", 1 << 30, "test", "")->bytes().empty());
    { std::ofstream(dir + "/empty.bin", std::ios::binary); }
    CHECK(FileBytes::open(dir + "/empty.bin", 10, "test", "")->bytes().empty());
    std::filesystem::remove_all(dir);
}
