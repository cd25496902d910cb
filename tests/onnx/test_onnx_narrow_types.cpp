// Narrow types. Sub-byte integers (int4, uint4, int2, uint2): ONNX packs them 8 / bits to a
// byte; the importer holds one per byte (int8 / uint8), Cast and CastLike to them wrap to
// their low bits, QuantizeLinear saturates to their range, DequantizeLinear reads them.
// Small floats (float8 E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, float4 E2M1): held as the float32
// values they stand for; Cast rounds to the nearest one (ties to even), checked here against
// a search over every code of the format.
#include <doctest/doctest.h>

#include <cmath>
#include <optional>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

constexpr int kUInt4 = 21, kInt4 = 22, kUInt2 = 25, kInt2 = 26;
constexpr int kE4M3FN = 17, kE4M3FNUZ = 18, kE5M2 = 19, kE5M2FNUZ = 20;

// A small float format written out independently of the importer: every finite code's value.
struct Format {
    int elem, exp_bits, man_bits, bias;
    bool ieee_top;  // E5M2: the top exponent is inf / NaN; E4M3FN: only S.1111.111 is NaN
    bool uz;        // 0x80 is NaN, no negative zero
};

// The value of code b, or nullopt for NaN / infinity codes.
std::optional<double> value_of(const Format& f, unsigned b) {
    const unsigned e = (b >> f.man_bits) & ((1u << f.exp_bits) - 1), m = b & ((1u << f.man_bits) - 1);
    const bool neg = b & 0x80;
    if (f.uz && b == 0x80) return std::nullopt;
    if (e == (1u << f.exp_bits) - 1 && (f.ieee_top || (f.elem == kE4M3FN && m == 7))) return std::nullopt;
    double v = e == 0 ? std::ldexp(double(m), 1 - f.bias - f.man_bits)
                      : std::ldexp(double(m | (1u << f.man_bits)), int(e) - f.bias - f.man_bits);
    return neg ? -v : v;
}

// x rounded to the nearest finite value of f, ties to the even code, clamped to the largest
// (saturate).
double nearest(const Format& f, double x) {
    double best = 0, best_d = INFINITY, largest = 0;
    unsigned best_code = 0;
    for (unsigned b = 0; b < 256; ++b) {
        std::optional<double> v = value_of(f, b);
        if (!v) continue;
        largest = std::max(largest, *v);
        const double d = std::abs(*v - x);
        if (d < best_d || (d == best_d && (b & 1) == 0 && (best_code & 1))) best = *v, best_d = d, best_code = b;
    }
    if (x >= largest) return largest;
    if (x <= -largest) return -largest;
    return best == 0 && f.uz ? 0.0 : best;
}

// Packs values of `bits` bits, the first in the lowest bits of each byte.
std::string pack(const std::vector<int>& v, int bits) {
    std::string bytes(size_t((int64_t(v.size()) * bits + 7) / 8), '\0');
    for (size_t i = 0; i < v.size(); ++i)
        bytes[i * size_t(bits) / 8] = char(uint8_t(bytes[i * size_t(bits) / 8]) |
                                           ((unsigned(v[i]) & ((1u << bits) - 1)) << (i * size_t(bits) % 8)));
    return bytes;
}

// The value ONNX's Cast gives x in a `bits`-bit integer: its low bits, sign-extended if signed.
int wrap(int64_t x, int bits, bool is_signed) {
    int v = int(x & ((1 << bits) - 1));
    if (is_signed && v >= (1 << (bits - 1))) v -= 1 << bits;
    return v;
}

}  // namespace

TEST_CASE("onnx: packed int4 / uint2 initializers unpack, and DequantizeLinear reads them") {
    const std::vector<int> w4 = {-8, 7, 3, -1, 0, 5, -6};  // an odd count: the last byte half used
    Model m(21);
    m.input("s", {1});
    auto* t = m.g->add_initializer();
    t->set_name("w");
    t->set_data_type(kInt4);
    t->add_dims(int64_t(w4.size()));
    t->set_raw_data(pack(w4, 4));
    m.node("DequantizeLinear", {"w", "s"}, {"y"});
    m.output("y");
    graph::Module mod = graph::build(m.load());
    Buffer<float> s({1});
    s(0) = 0.5f;
    mod.set_input("s", s);
    mod.run();
    Buffer<float> y = Buffer<float>(mod.get_output(0)).copy();
    for (size_t i = 0; i < w4.size(); ++i) CHECK(y(int64_t(i)) == 0.5f * float(w4[i]));

    // uint2 data: four to a byte.
    const std::vector<int> u2 = {0, 1, 2, 3, 3, 2};
    Model u(21);
    auto* ut = u.g->add_initializer();
    ut->set_name("w");
    ut->set_data_type(kUInt2);
    ut->add_dims(int64_t(u2.size()));
    ut->set_raw_data(pack(u2, 2));
    u.node("Cast", {"w"}, {"y"});
    set_int(u.g->mutable_node(0)[0], "to", pb::TensorProto::FLOAT);
    u.output("y");
    graph::Module um = graph::build(u.load());
    um.run();
    Buffer<float> uy = Buffer<float>(um.get_output(0)).copy();
    for (size_t i = 0; i < u2.size(); ++i) CHECK(uy(int64_t(i)) == float(u2[i]));

    // Raw data of the wrong size is a malformed model.
    ut->set_raw_data(pack(u2, 2) + "x");
    CHECK(error_of([&] { u.load(); }).find("2 bytes) but 3 bytes of raw data") != std::string::npos);
}

TEST_CASE("onnx: Cast and CastLike to sub-byte integers wrap to their low bits") {
    for (int elem : {kInt4, kUInt4, kInt2, kUInt2}) {
        const int bits = elem == kInt4 || elem == kUInt4 ? 4 : 2;
        const bool is_signed = elem == kInt4 || elem == kInt2;
        CAPTURE(elem);
        for (bool like : {false, true}) {
            Model m(25);
            m.input("x", {11});
            if (like) {
                m.input("like", {1}, elem);
                m.node("CastLike", {"x", "like"}, {"y"});
            } else {
                m.node("Cast", {"x"}, {"y"});
                set_int(m.g->mutable_node(0)[0], "to", elem);
            }
            m.output("y", elem);
            graph::Module mod = graph::build(m.load());
            Buffer<float> x({11});
            for (int64_t i = 0; i < 11; ++i) x(i) = float(i * 3 - 16);  // -16 .. 14
            mod.set_input("x", x);
            if (like) mod.set_input("like", BufferRef::allocate(is_signed ? DataType::int_(8) : DataType::uint(8), {1}));
            mod.run();
            const BufferRef& y = mod.get_output(0);
            REQUIRE(y.dtype() == (is_signed ? DataType::int_(8) : DataType::uint(8)));
            for (int64_t i = 0; i < 11; ++i) {
                const int got = is_signed ? int(static_cast<const int8_t*>(y.data())[i]) : int(static_cast<const uint8_t*>(y.data())[i]);
                CHECK(got == wrap(i * 3 - 16, bits, is_signed));
            }
        }
    }
}

TEST_CASE("onnx: QuantizeLinear to int4 saturates to [-8, 7]") {
    Model m(21);
    m.input("x", {6});
    m.initializer("s", {}, {0.25f});
    auto* zp = m.g->add_initializer();
    zp->set_name("zp");
    zp->set_data_type(kInt4);
    zp->set_raw_data(pack({1}, 4));
    m.node("QuantizeLinear", {"x", "s", "zp"}, {"y"});
    m.output("y", kInt4);
    graph::Module mod = graph::build(m.load());
    Buffer<float> x({6});
    const float xs[] = {-10.f, -2.f, -0.3f, 0.f, 1.4f, 9.f};
    for (int64_t i = 0; i < 6; ++i) x(i) = xs[i];
    mod.set_input("x", x);
    mod.run();
    const int8_t* y = static_cast<const int8_t*>(mod.get_output(0).data());
    for (int64_t i = 0; i < 6; ++i) CHECK(int(y[i]) == int(std::clamp(std::nearbyint(xs[i] / 0.25f) + 1.f, -8.f, 7.f)));
}

TEST_CASE("onnx: Cast to float8 rounds to the nearest value, ties to even, saturating; codes decode") {
    for (Format f : {Format{kE4M3FN, 4, 3, 7, false, false}, Format{kE4M3FNUZ, 4, 3, 8, false, true},
                     Format{kE5M2, 5, 2, 15, true, false}, Format{kE5M2FNUZ, 5, 2, 16, false, true}}) {
        CAPTURE(f.elem);
        // Every code as an initializer, cast to float: the value it stands for.
        Model d(21);
        auto* t = d.g->add_initializer();
        t->set_name("codes");
        t->set_data_type(f.elem);
        t->add_dims(256);
        std::string raw(256, '\0');
        for (int b = 0; b < 256; ++b) raw[size_t(b)] = char(b);
        t->set_raw_data(raw);
        d.node("Cast", {"codes"}, {"y"});
        set_int(d.g->mutable_node(0)[0], "to", pb::TensorProto::FLOAT);
        d.output("y");
        graph::Module dm = graph::build(d.load());
        dm.run();
        Buffer<float> decoded = Buffer<float>(dm.get_output(0)).copy();
        for (unsigned b = 0; b < 256; ++b) {
            std::optional<double> v = value_of(f, b);
            if (v) CHECK(double(decoded(int64_t(b))) == *v);
            else CHECK(!std::isfinite(decoded(int64_t(b))));
        }
        // Random floats over the format's range and past it, exact ties and subnormals.
        Model m(21);
        m.input("x", {400});
        m.node("Cast", {"x"}, {"y"});
        set_int(m.g->mutable_node(0)[0], "to", f.elem);
        m.output("y", f.elem);
        graph::Module mod = graph::build(m.load());
        Buffer<float> x = Buffer<float>::random({400}, -1.f, 1.f, uint64_t(f.elem));
        const double top = f.exp_bits == 4 ? 512 : 65536;
        for (int64_t i = 0; i < 400; ++i) {
            const float u = x(i);
            x(i) = i % 4 == 0 ? float(u * top)                                    // the whole range
                   : i % 4 == 1 ? float(std::ldexp(u, -int(f.bias) - 1))          // subnormals
                   : i % 4 == 2 ? float(decoded(int64_t(i % 128)) + decoded(int64_t(i % 128 + 1))) / 2  // ties
                                : float(u * 4);
            if (!std::isfinite(x(i))) x(i) = 1.f;
        }
        mod.set_input("x", x);
        mod.run();
        Buffer<float> y = Buffer<float>(mod.get_output(0)).copy();
        for (int64_t i = 0; i < 400; ++i) {
            CAPTURE(x(i));
            CHECK(double(y(i)) == nearest(f, double(x(i))));
        }
    }
}

TEST_CASE("onnx: Cast to float8 without saturation: past the largest value is infinity (E5M2) or NaN") {
    for (int elem : {kE4M3FN, kE5M2}) {
        Model m(21);
        m.input("x", {4});
        auto& n = m.node("Cast", {"x"}, {"y"});
        set_int(n, "to", elem);
        set_int(n, "saturate", 0);
        m.output("y", elem);
        graph::Module mod = graph::build(m.load());
        Buffer<float> x({4});
        x(0) = 1e6f, x(1) = -1e6f, x(2) = INFINITY, x(3) = 3.f;
        mod.set_input("x", x);
        mod.run();
        Buffer<float> y = Buffer<float>(mod.get_output(0)).copy();
        if (elem == kE5M2) CHECK((y(0) == INFINITY && y(1) == -INFINITY && y(2) == INFINITY));
        else CHECK((std::isnan(y(0)) && std::isnan(y(1)) && std::isnan(y(2))));
        CHECK(y(3) == 3.f);
    }
}
