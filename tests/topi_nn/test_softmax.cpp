// softmax and log_softmax with their default schedules against double references, and the
// inline exp they use.
#include "nn_test_util.hpp"
#include "weft/topi/impl/nn_exp.hpp"

using namespace nn_test;

namespace {

// Softmax (or log-softmax) of x along `axis`, in double.
std::vector<double> ref_softmax(const Buffer<float>& x, const Shape& shape, int axis, bool log_form) {
    const int64_t n = shape[size_t(axis)];
    int64_t inner = 1;
    for (size_t d = size_t(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
    const int64_t outer = numel(shape) / (n * inner);
    std::vector<double> y(size_t(numel(shape)));
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t in = 0; in < inner; ++in) {
            auto at = [&](int64_t k) { return size_t((o * n + k) * inner + in); };
            double mx = -INFINITY, total = 0;
            for (int64_t k = 0; k < n; ++k) mx = std::max(mx, double(x.data()[at(k)]));
            for (int64_t k = 0; k < n; ++k) total += std::exp(double(x.data()[at(k)]) - mx);
            for (int64_t k = 0; k < n; ++k) {
                double v = double(x.data()[at(k)]) - mx;
                y[at(k)] = log_form ? v - std::log(total) : std::exp(v) / total;
            }
        }
    return y;
}

void check_softmax(const Shape& shape, int axis, bool log_form, float lo, float hi, unsigned seed) {
    Tensor X = placeholder(exprs(shape), f32, "X");
    Tensor Y = log_form ? topi::log_softmax(X, axis) : topi::softmax(X, axis);
    auto x = random_buffer(shape, seed, lo, hi);
    auto y = run({X}, Y,
                 [&](Schedule& s) { log_form ? topi::schedule_log_softmax(s, Y) : topi::schedule_softmax(s, Y); },
                 {x}, shape);
    int nd = int(shape.size());
    auto want = ref_softmax(x, shape, axis < 0 ? axis + nd : axis, log_form);
    std::string what = std::string(log_form ? "log_softmax " : "softmax ") + str(shape) + " axis " +
                       std::to_string(axis);
    check_close(y, want, what, 2e-5, log_form ? 2e-5 : 1e-7);
}

}  // namespace

TEST_CASE("topi softmax along the last axis") {
    unsigned seed = 1;
    for (bool log_form : {false, true}) {
        check_softmax({6, 1024}, -1, log_form, -3, 3, seed++);  // vectorized rows, rfactor
        check_softmax({5, 17}, -1, log_form, -3, 3, seed++);    // a prime row length
        check_softmax({4, 40}, -1, log_form, -3, 3, seed++);    // 8 partial results per row
        check_softmax({3, 7}, 1, log_form, -3, 3, seed++);      // shorter than a vector
        check_softmax({1, 1}, -1, log_form, -3, 3, seed++);
        check_softmax({13}, 0, log_form, -3, 3, seed++);        // one row, no row loop
        check_softmax({2, 3, 64}, -1, log_form, -3, 3, seed++);
    }
}

TEST_CASE("topi softmax along other axes") {
    unsigned seed = 20;
    for (bool log_form : {false, true}) {
        check_softmax({4, 9, 16}, 1, log_form, -3, 3, seed++);
        check_softmax({7, 5}, 0, log_form, -3, 3, seed++);
        check_softmax({2, 3, 5, 7}, -3, log_form, -3, 3, seed++);
    }
}

TEST_CASE("topi softmax is stable for large inputs") {
    // exp(200) overflows float32: only the max-subtracted form gets these right.
    check_softmax({4, 64}, -1, false, 150, 200, 7);
    check_softmax({4, 64}, -1, true, -200, -150, 8);
}

TEST_CASE("topi softmax on random shapes") {
    std::mt19937 rng(5);
    for (int rep = 0; rep < 4; ++rep) {
        Shape shape = random_shape(rng, 1, 3, 4096);
        int axis = std::uniform_int_distribution<int>(0, int(shape.size()) - 1)(rng);
        check_softmax(shape, axis, rep % 2 == 1, -4, 4, 40 + unsigned(rep));
    }
}

TEST_CASE("topi softmax schedule with an epilogue") {
    const Shape shape{8, 48};
    Tensor X = placeholder(exprs(shape), f32, "X");
    Tensor P = topi::softmax(X);
    Tensor Y = topi::mul(P, 3.0f);
    auto x = random_buffer(shape, 9);
    auto y = run({X}, Y, [&](Schedule& s) { topi::schedule_softmax(s, P, Y); }, {x}, shape);
    auto want = ref_softmax(x, shape, 1, false);
    for (auto& w : want) w *= 3;
    check_close(y, want, "3 * softmax");
}

TEST_CASE("topi softmax schedule runs rows in parallel with vectorized statistics") {
    Tensor X = placeholder({512, 1024}, f32, "X");
    Tensor Y = topi::softmax(X);
    Schedule s = create_schedule(Y);
    topi::schedule_softmax(s, Y);
    CHECK(stage_text(s, "softmax").find("i(parallel)") != std::string::npos);
    // Each statistic: per-lane partial results (rfactor) in a vector, inside the row loop.
    for (const char* stat : {"softmax.max.rf", "softmax.sum.rf", "softmax.exp"}) {
        std::string text = stage_text(s, stat);
        INFO(text);
        CHECK(text.find("@softmax.i") != std::string::npos);
        CHECK(text.find("(vectorized)") != std::string::npos);
    }
    std::string body = lowered(s, {X, Y});
    // exp inline (nn_exp.hpp), on whole vectors of x: no call.
    CHECK(body.find("X[ramp(") != std::string::npos);
    CHECK(body.find(" exp(") == std::string::npos);
    CHECK(body.find("(exp(") == std::string::npos);
}

TEST_CASE("topi softmax and layer_norm with a symbolic number of rows") {
    Var rows("rows");
    const int64_t n = 48;
    Tensor X = placeholder({rows, make_int(n)}, f32, "X");
    Tensor G = placeholder({make_int(n)}, f32, "gamma"), B = placeholder({make_int(n)}, f32, "beta");
    Tensor P = topi::softmax(X), L = topi::layer_norm(X, G, B);
    Schedule sp = create_schedule(P), sl = create_schedule(L);
    topi::schedule_softmax(sp, P);
    topi::schedule_layer_norm(sl, L);
    Kernel kp = build(sp, {X, P}), kl = build(sl, {X, G, B, L});
    for (int64_t r : {1, 23}) {
        auto x = random_buffer({r, n}, unsigned(r)), g = random_buffer({n}, 2), b = random_buffer({n}, 3);
        Buffer<float> p({r, n}), l({r, n});
        kp(x, p);
        kl(x, g, b, l);
        check_close(p, ref_softmax(x, {r, n}, 1, false), "symbolic softmax", 2e-5, 1e-7);
        std::vector<double> want;
        for (int64_t i = 0; i < r; ++i) {
            double mean = 0, var = 0;
            for (int64_t k = 0; k < n; ++k) mean += x(i, k);
            mean /= double(n);
            for (int64_t k = 0; k < n; ++k) var += (x(i, k) - mean) * (x(i, k) - mean);
            var /= double(n);
            for (int64_t k = 0; k < n; ++k) want.push_back((x(i, k) - mean) / std::sqrt(var + 1e-5) * g(k) + b(k));
        }
        check_close(l, want, "symbolic layer_norm", 1e-4, 1e-4);
    }
}

TEST_CASE("topi softmax over a symbolic row length: vector statistics, one buffer per thread") {
    // Attention's scores [b, heads, S, S], softmax over the symbolic sequence S. The
    // statistics' split by lanes leaves a guard in the factored reduction (rfactor), which
    // loop partitioning now cuts into a steady loop of whole vectors and a tail (they were a
    // scalar loop); the row of exponentials, S floats, is allocated once per parallel
    // iteration, not once per row (a heap allocation and free per row).
    Var b("b"), S("S");
    Tensor X = placeholder({Expr(b), make_int(2), Expr(S), Expr(S)}, f32, "X");
    Tensor Y = topi::softmax(X, -1), L = topi::log_softmax(X, -1);
    Schedule s = create_schedule(Y), sl = create_schedule(L);
    topi::schedule_softmax(s, Y);
    topi::schedule_log_softmax(sl, L);
    const std::string body = lowered(s, {X, Y});
    CAPTURE(body);
    CHECK(body.find("let y0 = X[ramp(") != std::string::npos);  // the max over whole vectors of x
    const size_t parallel = body.find("parallel for"), exp_buffer = body.find("allocate softmax.exp[");
    REQUIRE(exp_buffer != std::string::npos);
    CHECK(parallel < exp_buffer);
    CHECK(body.find("for (", body.find('\n', parallel)) > exp_buffer);  // before the serial row loops
    Kernel k = build(s, {X, Y}), kl = build(sl, {X, L});
    for (auto [batch, len] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 5}, {1, 16}, {3, 17}, {1, 40}}) {
        const Shape shape = {batch, 2, len, len};
        auto x = random_buffer(shape, unsigned(len), -4, 4);
        Buffer<float> y(shape), l(shape);
        k(x, y);
        kl(x, l);
        check_close(y, ref_softmax(x, shape, 3, false), "softmax over S = " + std::to_string(len), 2e-5, 1e-7);
        check_close(l, ref_softmax(x, shape, 3, true), "log_softmax over S = " + std::to_string(len), 2e-5, 2e-5);
    }
}

TEST_CASE("topi inline exp is within a few ulp of exp, both ways of scaling by 2^n") {
    const int64_t n = 4096;
    Tensor X = placeholder({n}, f32, "x");
    // AVX-512's way (ldexp) and the others' (2^n from exponent bits); both run here.
    for (const Target& planned : {Target::x86_avx512(), Target::x86_avx2()}) {
    CAPTURE(planned.str());
    Tensor Y = compute({n}, [&](Expr i) { return topi::nn_detail::inline_exp(X(i), planned); }, "e");
    Buffer<float> x({n});
    for (int64_t i = 0; i < n; ++i) x(i) = -88.0f + 176.0f * float(i) / float(n);  // [-88, 88)
    x(0) = -120.0f;  // below float32's range, subnormals included: 0
    x(1) = 0.0f;
    x(2) = -INFINITY;
    for (bool vector : {false, true}) {
        auto y = run({X}, Y, [&](Schedule& s) {
            if (vector) topi::schedule_injective(s, Y);
        }, {x}, {n});
        CHECK(y(0) == 0.0f);
        CHECK(y(1) == 1.0f);
        CHECK(y(2) == 0.0f);
        std::vector<double> want;
        for (int64_t i = 0; i < n; ++i) want.push_back(std::exp(double(x(i))));
        // 4 ulp of float32, relative; exp(-88) is near the smallest normal float.
        check_close(y, want, vector ? "vector inline exp" : "scalar inline exp", 4.8e-7, 1e-37);
    }
    }
}

TEST_CASE("topi softmax gives masked entries (minus infinity) 0 and scales by 2^n with VSCALEF on AVX-512") {
    const Shape shape{5, 1024};
    Tensor X = placeholder(exprs(shape), f32, "X");
    Tensor Y = topi::softmax(X);
    auto x = random_buffer(shape, 71, -30, 30);
    for (int64_t i = 0; i < numel(shape); i += 3) x.data()[i] = -INFINITY;  // an attention mask
    auto y = run({X}, Y, [&](Schedule& s) { topi::schedule_softmax(s, Y); }, {x}, shape);
    check_close(y, ref_softmax(x, shape, 1, false), "masked softmax", 2e-5, 1e-7);
    bool zeros = true;
    for (int64_t i = 0; i < numel(shape); i += 3) zeros = zeros && y.data()[i] == 0.0f;
    CHECK(zeros);
    Schedule s = create_schedule(Y);
    topi::schedule_softmax(s, Y);
    const std::string assembly = build(s, {X, Y}).assembly();
    CHECK((assembly.find("vscalefps") != std::string::npos) == topi::nn_detail::exp_scales_with_ldexp(Target::host()));
    // Built for 256-bit vectors (an AVX2 machine, say) the same compute has no VSCALEF: its
    // ldexp is vector code too, not a libm call per lane, and the results are the same.
    Target narrow = Target::host();
    narrow.vector_bits = 256;
    Kernel k = build(s, {X, Y}, narrow);
    CHECK(k.assembly().find("vscalef") == std::string::npos);
    CHECK(k.assembly().find("ldexpf") == std::string::npos);
    Buffer<float> y256(std::vector<int64_t>(shape.begin(), shape.end()));
    k(x, y256);
    check_close(y256, ref_softmax(x, shape, 1, false), "masked softmax, 256-bit vectors", 2e-5, 1e-7);
}

TEST_CASE("topi softmax and log_softmax store outputs of 16 MiB and more non-temporally") {
    // 4099 x 1031 floats = 16.9 MB: rows start at every alignment.
    for (bool log_form : {false, true}) {
        check_softmax({4099, 1031}, -1, log_form, -4, 4, 60 + unsigned(log_form));
        for (const Shape& shape : {Shape{4099, 1031}, Shape{512, 1024}}) {
            Tensor X = placeholder(exprs(shape), f32, "X");
            Tensor Y = log_form ? topi::log_softmax(X) : topi::softmax(X);
            Schedule s = create_schedule(Y);
            log_form ? topi::schedule_log_softmax(s, Y) : topi::schedule_softmax(s, Y);
            CHECK((stage_text(s, Y.name()).find("store_nontemporal") != std::string::npos) == (shape[0] == 4099));
        }
    }
}
