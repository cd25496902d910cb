// layer_norm with its default schedule against a double reference.
#include "nn_test_util.hpp"

using namespace nn_test;

namespace {

void check_layer_norm(const Shape& shape, int normalized, double eps, unsigned seed) {
    Shape gshape(shape.end() - normalized, shape.end());
    Tensor X = placeholder(exprs(shape), f32, "X");
    Tensor G = placeholder(exprs(gshape), f32, "gamma"), B = placeholder(exprs(gshape), f32, "beta");
    Tensor Y = topi::layer_norm(X, G, B, eps);
    // An offset mean: a one-pass variance would lose digits here.
    auto x = random_buffer(shape, seed, 3, 5);
    auto g = random_buffer(gshape, seed + 1, 0.5, 1.5), b = random_buffer(gshape, seed + 2);
    auto y = run({X, G, B}, Y, [&](Schedule& s) { topi::schedule_layer_norm(s, Y); }, {x, g, b}, shape);
    const int64_t n = numel(gshape), rows = numel(shape) / n;
    std::vector<double> want(size_t(numel(shape)));
    for (int64_t r = 0; r < rows; ++r) {
        const float* row = x.data() + r * n;
        double mean = 0, var = 0;
        for (int64_t k = 0; k < n; ++k) mean += row[k];
        mean /= double(n);
        for (int64_t k = 0; k < n; ++k) var += (row[k] - mean) * (row[k] - mean);
        var /= double(n);
        for (int64_t k = 0; k < n; ++k)
            want[size_t(r * n + k)] = (row[k] - mean) / std::sqrt(var + eps) * g.data()[k] + b.data()[k];
    }
    check_close(y, want, "layer_norm " + str(shape) + " over " + std::to_string(normalized) + " axes", 1e-4, 1e-4);
}

}  // namespace

TEST_CASE("topi layer_norm over trailing axes") {
    check_layer_norm({6, 1024}, 1, 1e-5, 1);   // vectorized rows, rfactor
    check_layer_norm({5, 17}, 1, 1e-5, 2);     // a prime row length
    check_layer_norm({3, 40}, 1, 1e-5, 7);     // 8 partial results per row
    check_layer_norm({3, 5, 32}, 2, 1e-3, 3);  // two normalized axes
    check_layer_norm({13}, 1, 1e-5, 4);        // no row axes
    check_layer_norm({2, 3, 7}, 1, 0.0, 5);
    check_layer_norm({1, 3}, 1, 1e-5, 6);
}

TEST_CASE("topi layer_norm on random shapes") {
    std::mt19937 rng(9);
    for (int rep = 0; rep < 4; ++rep) {
        Shape shape = random_shape(rng, 1, 3, 4096);
        int normalized = std::uniform_int_distribution<int>(1, int(shape.size()))(rng);
        check_layer_norm(shape, normalized, 1e-5, 30 + unsigned(rep));
    }
}

TEST_CASE("topi layer_norm schedule runs rows in parallel with vectorized statistics") {
    Tensor X = placeholder({512, 1024}, f32, "X");
    Tensor G = placeholder({1024}, f32, "gamma"), B = placeholder({1024}, f32, "beta");
    Tensor Y = topi::layer_norm(X, G, B);
    Schedule s = create_schedule(Y);
    topi::schedule_layer_norm(s, Y);
    CHECK(stage_text(s, "layer_norm").find("(parallel)") != std::string::npos);
    for (const char* stat : {"layer_norm.sum.rf", "layer_norm.var_sum.rf"}) {
        std::string text = stage_text(s, stat);
        INFO(text);
        CHECK(text.find("@layer_norm.i") != std::string::npos);
        CHECK(text.find("(vectorized)") != std::string::npos);
    }
    // The variance pass prefetches the next row (4 KiB: one page ahead) for the first pass.
    CHECK(stage_text(s, "layer_norm.var_sum.rf").find("prefetch(X, k0.outer, 64)") != std::string::npos);
    // Rows shorter than 1 KiB are left to the hardware prefetchers.
    Tensor Xs = placeholder({512, 64}, f32, "X");
    Tensor Gs = placeholder({64}, f32, "gamma"), Bs = placeholder({64}, f32, "beta");
    Tensor Ys = topi::layer_norm(Xs, Gs, Bs);
    Schedule t = create_schedule(Ys);
    topi::schedule_layer_norm(t, Ys);
    CHECK(stage_text(t, "layer_norm.var_sum.rf").find("prefetch") == std::string::npos);
}

TEST_CASE("topi layer_norm stores outputs of 16 MiB and more non-temporally") {
    check_layer_norm({4099, 1031}, 1, 1e-5, 40);  // 16.9 MB: rows start at every alignment
    Tensor X = placeholder({4099, 1031}, f32, "X");
    Tensor G = placeholder({1031}, f32, "gamma"), B = placeholder({1031}, f32, "beta");
    Tensor Y = topi::layer_norm(X, G, B);
    Schedule s = create_schedule(Y);
    topi::schedule_layer_norm(s, Y);
    CHECK(stage_text(s, Y.name()).find("store_nontemporal") != std::string::npos);
}
