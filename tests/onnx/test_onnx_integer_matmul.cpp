// MatMulInteger and QLinearMatMul with a constant 8-bit B run on the 8-bit kernels
// (matmul_u8s8: VNNI's vpdpbusd, or int32 multiply-adds on a CPU without it), exactly: every
// combination of uint8 / int8 A and B, zero points absent, per tensor, per column, and known
// only at run time, against a loop in int64; shapes the kernels do not take keep the float64
// composition, exact too.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "onnx_model.hpp"
#include "host_without.hpp"
#include "weft/weft.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

struct Case {
    bool a_signed = false, b_signed = true;
    int b_zero_points = 0;  // 0: none, 1: per tensor, N: per column
    bool a_zero_point = true;
    int64_t K = 32, N = 48;
};

int elem_of(bool is_signed) { return is_signed ? pb::TensorProto::INT8 : pb::TensorProto::UINT8; }

std::vector<int> draw(size_t n, bool is_signed, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> d(is_signed ? -128 : 0, is_signed ? 127 : 255);
    std::vector<int> v(n);
    for (int& x : v) x = d(rng);
    return v;
}

// Y = MatMulInteger(A [2, 5, K], B [K, N] constant, a_zp (an input), b_zp (constant)), or with
// `qlinear` QLinearMatMul with scales to uint8.
struct IntegerMatmul {
    Case k;
    bool qlinear = false;
    std::vector<int> b = draw(size_t(k.K * k.N), k.b_signed, 7), zb = draw(size_t(std::max(k.b_zero_points, 1)), k.b_signed, 8);

    Model model() const {
        Model m(13);
        m.input("a", {2, 5, k.K}, elem_of(k.a_signed));
        m.input("a_zp", {}, elem_of(k.a_signed));
        m.initializer_8bit("b", {k.K, k.N}, elem_of(k.b_signed), b);
        std::string bzp;
        if (k.b_zero_points) {
            m.initializer_8bit("b_zp", k.b_zero_points == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{k.N},
                            elem_of(k.b_signed), zb);
            bzp = "b_zp";
        }
        if (!qlinear) {
            m.node("MatMulInteger", {"a", "b", k.a_zero_point ? "a_zp" : "", bzp}, {"y"});
            m.output("y", pb::TensorProto::INT32);
            return m;
        }
        m.initializer("a_scale", {}, {0.02f});
        m.initializer("b_scale", {}, {0.01f});
        m.initializer("y_scale", {}, {0.5f});
        m.initializer_8bit("y_zp", {}, pb::TensorProto::UINT8, {100});
        m.node("QLinearMatMul", {"a", "a_scale", "a_zp", "b", "b_scale", bzp.empty() ? "" : bzp, "y_scale", "y_zp"}, {"y"});
        m.output("y", pb::TensorProto::UINT8);
        return m;
    }

    // The int64 products, then for QLinearMatMul the requantized uint8.
    std::vector<int64_t> reference(const std::vector<int>& a, int za) const {
        std::vector<int64_t> y(size_t(10 * k.N));
        for (int64_t m = 0; m < 10; ++m)
            for (int64_t n = 0; n < k.N; ++n) {
                int64_t acc = 0;
                const int64_t zbn = k.b_zero_points == 0 ? 0 : zb[size_t(k.b_zero_points == 1 ? 0 : n)];
                for (int64_t i = 0; i < k.K; ++i)
                    acc += int64_t(a[size_t(m * k.K + i)] - (k.a_zero_point || qlinear ? za : 0)) *
                           (b[size_t(i * k.N + n)] - zbn);
                if (qlinear) acc = int64_t(std::clamp(std::nearbyint(double(acc) * (double(0.02f) * double(0.01f) / double(0.5f))) + 100.0, 0.0, 255.0));
                y[size_t(m * k.N + n)] = acc;
            }
        return y;
    }

    void check(const Target& target, bool expect_8bit_kernel) const {
        graph::Graph g = model().load();
        bool eight_bit = false;
        for (const graph::Node& n : g.nodes()) eight_bit |= n.op == "matmul_u8s8";
        CHECK(eight_bit == expect_8bit_kernel);
        graph::Module mod = graph::build(g, target);
        const std::vector<int> a = draw(size_t(10 * k.K), k.a_signed, 3);
        const int za = k.a_signed ? -7 : 131;
        BufferRef av = BufferRef::allocate(k.a_signed ? DataType::int_(8) : DataType::uint(8), {2, 5, k.K});
        BufferRef zv = BufferRef::allocate(av.dtype(), {1});  // (an ONNX scalar is [1] in weft)
        for (size_t i = 0; i < a.size(); ++i) static_cast<int8_t*>(av.data())[i] = int8_t(a[i]);
        *static_cast<int8_t*>(zv.data()) = int8_t(za);
        mod.set_input("a", av);
        if (mod.num_inputs() > 1) mod.set_input("a_zp", zv);
        mod.run();
        const std::vector<int64_t> want = reference(a, za);
        const BufferRef& y = mod.get_output(0);
        REQUIRE(y.shape() == std::vector<int64_t>{2, 5, k.N});
        int wrong = 0;
        for (size_t i = 0; i < want.size(); ++i) {
            const int64_t got = qlinear ? int64_t(static_cast<const uint8_t*>(y.data())[i])
                                        : int64_t(static_cast<const int32_t*>(y.data())[i]);
            wrong += got != want[i];
        }
        CHECK(wrong == 0);
        // vpdpbusd where the target has VNNI, int32 multiply-adds elsewhere.
        bool vpdpbusd = false;
        for (const Kernel& kernel : mod.compiled_kernels()) vpdpbusd |= kernel.assembly().find("vpdpbusd") != std::string::npos;
        CHECK(vpdpbusd == (expect_8bit_kernel && target.has_feature("avx512vnni")));
    }
};

}  // namespace

TEST_CASE("onnx MatMulInteger with a constant B runs on the 8-bit kernels, exactly") {
    for (bool a_signed : {false, true})
        for (bool b_signed : {true, false})
            for (int zps : {0, 1, 48})
                for (bool a_zp : {true, false}) {
                    CAPTURE(a_signed);
                    CAPTURE(b_signed);
                    CAPTURE(zps);
                    CAPTURE(a_zp);
                    IntegerMatmul m{{a_signed, b_signed, zps, a_zp}};
                    m.check(Target::host(), true);
                }
}

TEST_CASE("onnx MatMulInteger on the 8-bit kernels is exact without VNNI too") {
    IntegerMatmul m{{false, true, 48, true}};
    m.check(weft::test::host_without("avx512vnni"), true);
    IntegerMatmul s{{true, false, 1, true}};
    s.check(weft::test::host_without("avx512vnni"), true);
}

TEST_CASE("onnx QLinearMatMul with a constant B runs on the 8-bit kernels and requantizes exactly") {
    for (int zps : {0, 1, 48}) {
        CAPTURE(zps);
        IntegerMatmul m{{false, true, zps, true}, true};
        m.check(Target::host(), true);
    }
}

TEST_CASE("onnx MatMulInteger of shapes the 8-bit kernels do not take keeps the float64 composition") {
    IntegerMatmul odd_k{{false, true, 1, true, 30, 48}};  // K not a multiple of 4
    odd_k.check(Target::host(), false);
    IntegerMatmul odd_n{{true, true, 0, true, 32, 40}};  // N not a multiple of 16
    odd_n.check(Target::host(), false);
}

TEST_CASE("onnx MatMul of DequantizeLinear outputs (a QDQ model) runs on the 8-bit kernels") {
    // A weight's scale per column or per tensor takes the 8-bit kernels; one per row (axis 0)
    // of a square weight, as many values as columns, keeps the float matmul.
    enum Scales { per_column, per_tensor, per_row };
    for (Scales scales : {per_column, per_tensor, per_row}) {
        CAPTURE(int(scales));
        const int64_t K = 32, N = scales == per_row ? 32 : 48;
        Model m(13);
        m.input("x", {2, 5, K});
        m.initializer("sx", {}, {0.02f});
        m.initializer_8bit("zx", {}, pb::TensorProto::UINT8, {128});
        const std::vector<int> w = draw(size_t(K * N), true, 5);
        m.initializer_8bit("w", {K, N}, pb::TensorProto::INT8, w);
        std::vector<float> sw(scales == per_tensor ? 1 : size_t(N));
        for (size_t n = 0; n < sw.size(); ++n) sw[n] = 0.001f * float(n + 1);
        const std::vector<int64_t> dims = scales == per_tensor ? std::vector<int64_t>{} : std::vector<int64_t>{N};
        m.initializer("sw", dims, sw);
        m.initializer_8bit("zw", dims, pb::TensorProto::INT8, std::vector<int>(sw.size(), 0));
        m.node("QuantizeLinear", {"x", "sx", "zx"}, {"xq"});
        m.node("DequantizeLinear", {"xq", "sx", "zx"}, {"xd"});
        set_int(m.node("DequantizeLinear", {"w", "sw", "zw"}, {"wd"}), "axis", scales == per_row ? 0 : 1);
        m.node("MatMul", {"xd", "wd"}, {"y"});
        m.output("y");
        graph::Graph g = m.load();
        int eight_bit = 0, floats = 0;
        for (const graph::Node& n : g.nodes()) eight_bit += n.op == "matmul_u8s8", floats += n.op == "matmul";
        CHECK(eight_bit == (scales == per_row ? 0 : 1));
        CHECK(floats == (scales == per_row ? 1 : 0));
        graph::Module mod = graph::build(g);
        auto x = Buffer<float>::random({2, 5, K}, -2.f, 2.f, 9);
        mod.set_input("x", x);
        mod.run();
        Buffer<float> y(mod.get_output(0));
        int wrong = 0;
        for (int64_t r = 0; r < 10; ++r)
            for (int64_t n = 0; n < N; ++n) {
                double acc = 0;
                for (int64_t k = 0; k < K; ++k) {
                    const float q = std::clamp(std::nearbyint(x.data()[r * K + k] / 0.02f) + 128.0f, 0.0f, 255.0f);
                    const double wk = double(w[size_t(k * N + n)]) * (scales == per_row ? double(sw[size_t(k)]) : 1.0);
                    acc += double(q - 128.0f) * wk;
                }
                const double want = acc * double(0.02f) * (scales == per_column ? double(sw[size_t(n)])
                                                          : scales == per_tensor ? double(sw[0]) : 1.0);
                wrong += std::abs(double(y.data()[r * N + n]) - want) > 1e-5 * std::max(1.0, std::abs(want));
            }
        CHECK(wrong == 0);
    }
}
