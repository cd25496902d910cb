// weftc's .npy / .npz reading and writing (tools/weftc/npy.hpp).
#include <doctest/doctest.h>

#include <cstring>

#include "npy.hpp"

using namespace weft;

namespace {

BufferRef filled(DataType t, std::vector<int64_t> shape, int seed) {
    BufferRef b = BufferRef::allocate(t, shape);
    auto* p = static_cast<uint8_t*>(b.data());
    for (int64_t i = 0; i < b.size_bytes(); ++i) p[i] = uint8_t((i * 37 + seed * 11) & 0xff);
    if (t.is_bool())
        for (int64_t i = 0; i < b.size(); ++i) p[i] &= 1;
    return b;
}

bool same(const BufferRef& a, const BufferRef& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() &&
           std::memcmp(a.data(), b.data(), size_t(a.size_bytes())) == 0;
}

}  // namespace

TEST_CASE("weftc npy round trips every dtype and rank") {
    const std::vector<DataType> types = {DataType::float_(32), DataType::float_(64), DataType::int_(8),
                                         DataType::int_(16),   DataType::int_(32),   DataType::int_(64),
                                         DataType::uint(8),    DataType::uint(16),   DataType::uint(32),
                                         DataType::uint(64),   DataType::bool_()};
    const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {7}, {2, 3}, {1, 3, 4, 5}, {2, 1, 1, 1, 3}};
    int seed = 0;
    for (DataType t : types)
        for (auto& shape : shapes) {
            BufferRef b = filled(t, shape, ++seed);
            std::string bytes = weftc::npy_encode(b);
            CHECK(bytes.rfind("\x93NUMPY\x01\x00", 0) == 0);
            uint16_t header = uint16_t(uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8);
            CHECK((10 + header) % 64 == 0);  // NumPy aligns the data to 64 bytes
            BufferRef back = weftc::npy_decode(bytes, "test");
            CHECK_MESSAGE(same(b, back), t.str(), " ", graph::shape_str(shape));
        }
}

TEST_CASE("weftc npy reads the header NumPy writes") {
    // np.save of np.arange(6, dtype=np.int32).reshape(2, 3), byte for byte.
    std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }";
    header += std::string((64 - (10 + header.size() + 1) % 64) % 64, ' ') + "\n";
    std::string file = std::string("\x93NUMPY\x01\x00", 8) + char(header.size() & 0xff) + char(header.size() >> 8) + header;
    for (int32_t i = 0; i < 6; ++i) file.append(reinterpret_cast<const char*>(&i), 4);
    BufferRef b = weftc::npy_decode(file, "arange.npy");
    CHECK(b.dtype() == DataType::int_(32));
    CHECK(b.shape() == std::vector<int64_t>{2, 3});
    CHECK(static_cast<int32_t*>(b.data())[5] == 5);
    // Version 2 (a 4-byte header length) reads the same.
    std::string v2 = std::string("\x93NUMPY\x02\x00", 8) + char(header.size() + 2) + std::string(3, '\0') + header + "  ";
    for (int32_t i = 0; i < 6; ++i) v2.append(reinterpret_cast<const char*>(&i), 4);
    CHECK(same(weftc::npy_decode(v2, "v2.npy"), b));
}

TEST_CASE("weftc npy refuses what it cannot read with a clear error") {
    BufferRef b = filled(DataType::float_(32), {4, 5}, 1);
    std::string good = weftc::npy_encode(b);
    CHECK_THROWS_WITH_AS(weftc::npy_decode("hello", "x.npy"), doctest::Contains("not a .npy file"), Error);
    CHECK_THROWS_WITH_AS(weftc::npy_decode(good.substr(0, good.size() - 3), "x.npy"), doctest::Contains("truncated"), Error);
    CHECK_THROWS_WITH_AS(weftc::npy_decode(good.substr(0, 40), "x.npy"), doctest::Contains("x.npy"), Error);
    std::string fortran = good;
    fortran.replace(fortran.find("False"), 5, "True ");
    CHECK_THROWS_WITH_AS(weftc::npy_decode(fortran, "x.npy"), doctest::Contains("Fortran"), Error);
    std::string big = good;
    big.replace(big.find("<f4"), 3, ">f4");
    CHECK_THROWS_WITH_AS(weftc::npy_decode(big, "x.npy"), doctest::Contains("big-endian"), Error);
    std::string half = good;
    half.replace(half.find("<f4"), 3, "<f2");
    CHECK_THROWS_WITH_AS(weftc::npy_decode(half, "x.npy"), doctest::Contains("not supported"), Error);
    // Every prefix of a valid file is an error, never a crash.
    for (size_t n = 0; n < good.size(); n += 7) CHECK_THROWS_AS(weftc::npy_decode(good.substr(0, n), "x.npy"), Error);
}

TEST_CASE("weftc npz round trips several arrays in order") {
    weftc::NamedBuffers arrays = {{"input.1", filled(DataType::float_(32), {1, 3, 8, 8}, 1)},
                                  {"ids", filled(DataType::int_(64), {5}, 2)},
                                  {"mask", filled(DataType::bool_(), {2, 2}, 3)}};
    std::string z = weftc::npz_encode(arrays);
    weftc::NamedBuffers back = weftc::npz_decode(z, "t.npz");
    REQUIRE(back.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
        CHECK(back[i].first == arrays[i].first);
        CHECK(same(back[i].second, arrays[i].second));
    }
    CHECK(weftc::crc32("123456789") == 0xCBF43926u);  // the standard check value
}

TEST_CASE("weftc npz refuses truncated and corrupt archives") {
    weftc::NamedBuffers arrays = {{"a", filled(DataType::float_(32), {16}, 1)}, {"b", filled(DataType::int_(32), {3}, 2)}};
    std::string z = weftc::npz_encode(arrays);
    for (size_t n = 0; n < z.size(); n += 5) CHECK_THROWS_AS(weftc::npz_decode(z.substr(0, n), "t.npz"), Error);
    std::string flipped = z;
    flipped[100] = char(flipped[100] ^ 0x10);  // inside a's data: the CRC catches it
    CHECK_THROWS_WITH_AS(weftc::npz_decode(flipped, "t.npz"), doctest::Contains("CRC"), Error);
    // Any single flipped byte: an error or a (possibly different) valid result, never a crash.
    for (size_t i = 0; i < z.size(); ++i) {
        std::string f = z;
        f[i] = char(f[i] ^ 0xA5);
        try {
            (void)weftc::npz_decode(f, "t.npz");
        } catch (const Error&) {
        }
    }
}
