// runtime/bytes.hpp: what ByteWriter writes ByteReader reads back, and a reader never reads
// past its data: a take that does not fit returns nothing and leaves the position.
#include <doctest/doctest.h>

#include <limits>
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
