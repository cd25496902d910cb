// topi::dense (with and without bias), the pre-packed dense_packed + dense_pack_weight
// pair, and a ReLU epilogue over dense's bias stage, against a double reference.
#include <doctest/doctest.h>

#include "linalg_reference.hpp"
#include "weft/topi/linalg.hpp"

using namespace weft;
using linalg_test::Shape;

namespace {

// y = x W^T (+ bias), in double.
std::vector<double> ref_dense(const Shape& sh, const Buffer<float>& x, const Buffer<float>& w, const float* bias) {
    auto y = linalg_test::ref_gemm(sh.M, sh.N, sh.K, [&](int64_t i, int64_t k) { return x(i, k); },
                                   [&](int64_t k, int64_t j) { return w(j, k); });
    if (bias)
        for (int64_t i = 0; i < sh.M; ++i)
            for (int64_t j = 0; j < sh.N; ++j) y[size_t(i * sh.N + j)] += bias[j];
    return y;
}

void check_dense(const Shape& sh, bool with_bias) {
    CAPTURE(sh.M);
    CAPTURE(sh.N);
    CAPTURE(sh.K);
    CAPTURE(with_bias);
    Tensor X = placeholder({sh.M, sh.K}, f32, "X"), W = placeholder({sh.N, sh.K}, f32, "W");
    Tensor bias = with_bias ? placeholder({sh.N}, f32, "bias") : Tensor();
    Tensor Y = topi::dense(X, W, bias);
    Schedule s = create_schedule(Y);
    topi::schedule_dense(s, Y);
    std::vector<Argument> args = {X, W};
    if (with_bias) args.push_back(bias);
    args.push_back(Y);
    Kernel k = build(s, args);
    auto x = linalg_test::random_buffer({sh.M, sh.K}, 11), w = linalg_test::random_buffer({sh.N, sh.K}, 12);
    auto b = linalg_test::random_buffer({sh.N}, 13);
    Buffer<float> y({sh.M, sh.N});
    if (with_bias) k(x, w, b, y);
    else k(x, w, y);
    linalg_test::check_close(y, ref_dense(sh, x, w, with_bias ? b.data() : nullptr), sh.K);
}

}  // namespace

TEST_CASE("dense with and without bias matches a double reference") {
    linalg_test::with_threads(1, [] {
        auto shapes = linalg_test::gemm_shapes(6, 130, 21);
        for (size_t n = 0; n < shapes.size(); ++n) check_dense(shapes[n], n % 2 == 0);
    });
    linalg_test::with_threads(2, [] {
        for (const Shape& sh : std::vector<Shape>{{1, 300, 37}, {250, 50, 19}, {61, 257, 40}}) check_dense(sh, true);
    });
}

TEST_CASE("dense from a weight packed once by its own kernel") {
    for (const Shape& sh : std::vector<Shape>{{1, 1000, 70}, {8, 33, 5}, {67, 130, 41}, {3, 7, 2}, {128, 64, 64}}) {
        CAPTURE(sh.M);
        CAPTURE(sh.N);
        CAPTURE(sh.K);
        // The packing kernel, run once.
        Tensor W = placeholder({sh.N, sh.K}, f32, "W");
        Tensor Wp = topi::dense_pack_weight(W);
        Schedule sp = create_schedule(Wp);
        topi::schedule_dense_pack_weight(sp, Wp);
        Kernel pack = build(sp, {W, Wp});
        auto w = linalg_test::random_buffer({sh.N, sh.K}, 31);
        std::vector<int64_t> packed_shape;
        for (auto& e : Wp.shape()) packed_shape.push_back(linalg_test::const_extent(e));
        Buffer<float> wp(packed_shape);
        pack(w, wp);
        // The layout promised: wp(p, k, c) = w(p * width + c, k), zero past N.
        const int64_t width = packed_shape[2];
        CHECK(width == topi::dense_pack_width(sh.N));
        for (int64_t p = 0; p < packed_shape[0]; ++p)
            for (int64_t c = 0; c < width; ++c) {
                int64_t j = p * width + c;
                CHECK(wp(p, sh.K - 1, c) == (j < sh.N ? w(j, sh.K - 1) : 0.0f));
            }

        // The dense kernel on the packed weight.
        Tensor X = placeholder({sh.M, sh.K}, f32, "X"), P = placeholder(Wp.shape(), f32, "W_packed_in");
        Tensor bias = placeholder({sh.N}, f32, "bias");
        Tensor Y = topi::dense_packed(X, P, sh.N, bias);
        Schedule s = create_schedule(Y);
        topi::schedule_dense(s, Y);
        Kernel k = build(s, {X, P, bias, Y});
        auto x = linalg_test::random_buffer({sh.M, sh.K}, 32), b = linalg_test::random_buffer({sh.N}, 33);
        Buffer<float> y({sh.M, sh.N});
        k(x, wp, b, y);
        linalg_test::check_close(y, ref_dense(sh, x, w, b.data()), sh.K);
    }
}

TEST_CASE("dense's bias stage with a ReLU epilogue fused after it") {
    const Shape sh{45, 70, 29};
    Tensor X = placeholder({sh.M, sh.K}, f32, "X"), W = placeholder({sh.N, sh.K}, f32, "W");
    Tensor bias = placeholder({sh.N}, f32, "bias");
    Tensor D = topi::dense(X, W, bias);
    Tensor Y = compute({sh.M, sh.N}, [&](Expr i, Expr j) { return max(D(i, j), 0.0f); }, "relu");
    Schedule s = create_schedule(Y);
    topi::schedule_dense(s, D, Y);
    Kernel k = build(s, {X, W, bias, Y});
    auto x = linalg_test::random_buffer({sh.M, sh.K}, 41), w = linalg_test::random_buffer({sh.N, sh.K}, 42);
    auto b = linalg_test::random_buffer({sh.N}, 43);
    Buffer<float> y({sh.M, sh.N});
    k(x, w, b, y);
    auto want = ref_dense(sh, x, w, b.data());
    for (double& v : want) v = std::max(0.0, v);
    linalg_test::check_close(y, want, sh.K);
}
