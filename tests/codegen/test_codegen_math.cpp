// Math intrinsics in the LLVM backend: vector exp through libmvec, and every intrinsic on
// scalars and vectors against <cmath>.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <tuple>

#include "codegen/kernel_builder.hpp"

using namespace weft;
using namespace weft::ir;
using weft::test::CallArgs;
using weft::test::KernelBuilder;

namespace {

// Y[i] = f(X[i]) over n elements (a multiple of `lanes`), `lanes` at a time.
PrimFunc unary_kernel(const std::string& name, int lanes, DataType element, const std::function<Expr(Expr)>& f) {
    KernelBuilder kb(name);
    Var X = kb.tensor("X", element), Y = kb.tensor("Y", element);
    Var n = kb.scalar("n", i64);
    Var i("i");
    DataType t = element.with_lanes(lanes);
    Expr index = lanes == 1 ? Expr(i) : Ramp::make(i * make_int(lanes), make_int(1), lanes);
    return kb.finish(For::make(i, make_int(0), n / make_int(lanes), ForKind::Serial,
                               Store::make(Y, f(Load::make(t, X, index)), index)));
}

template <class T>
std::vector<T> random_values(size_t n, unsigned seed, double lo, double hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<T> v(n);
    for (auto& x : v) x = T(dist(rng));
    return v;
}

template <class T>
void check_unary(const std::string& name, int lanes, const std::function<Expr(Expr)>& f, T (*reference)(T), double lo,
                 double hi, double rtol) {
    CAPTURE(name);
    CAPTURE(lanes);
    auto module = codegen::compile_llvm(unary_kernel(name, lanes, dtype_of<T>::value, f), Target::host());
    const size_t n = 64;
    auto x = random_values<T>(n, 7, lo, hi);
    std::vector<T> y(n, T(0));
    REQUIRE(CallArgs().tensor(x).tensor(y).scalar(int64_t(n)).call(module->entry()) == 0);
    for (size_t i = 0; i < n; ++i) {
        T want = reference(x[i]);
        CAPTURE(x[i]);
        // relative, with as much absolute slack near zero (log near 1, tanh near 0)
        REQUIRE(std::abs(double(y[i]) - double(want)) <= rtol * (std::abs(double(want)) + 1));
    }
}

float ref_sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float ref_rsqrt(float x) { return 1.0f / std::sqrt(x); }
double ref_sigmoid_d(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

TEST_CASE("a float32x16 exp calls libmvec's _ZGVeN16v_expf, not expf 16 times") {
    auto f = unary_kernel("vexp", 16, f32, [](Expr x) { return exp(x); });
    auto module = codegen::compile_llvm(f, Target::host());
    std::string assembly = module->assembly();
    if (weft::test::host_has_avx512()) {
        CHECK(assembly.find("_ZGVeN16v_expf") != std::string::npos);
    } else {
        MESSAGE("host lacks avx512f: the 16 lanes go through the 8-lane variant");
        CHECK(assembly.find("_ZGVdN8v_expf") != std::string::npos);
    }
    CHECK(weft::test::count_calls_to(assembly, "_ZGVeN16v_expf") + weft::test::count_calls_to(assembly, "_ZGVdN8v_expf") >= 1);
    CHECK(weft::test::count_calls_to(assembly, "expf") == 0);  // no scalar calls
    const size_t n = 16 * 64;
    auto x = random_values<float>(n, 11, -20, 20);
    std::vector<float> y(n, 0);
    REQUIRE(CallArgs().tensor(x).tensor(y).scalar(int64_t(n)).call(module->entry()) == 0);
    for (size_t i = 0; i < n; ++i) {
        CAPTURE(x[i]);
        REQUIRE(std::abs(y[i] - std::exp(x[i])) <= 1e-6 * std::abs(std::exp(x[i])));
    }
}

TEST_CASE("math intrinsics match <cmath> on scalars and vectors") {
    for (int lanes : {1, 4, 8, 16, 32}) {
        check_unary<float>("exp", lanes, [](Expr x) { return exp(x); }, std::exp, -10, 10, 1e-6);
        check_unary<float>("log", lanes, [](Expr x) { return log(x); }, std::log, 0.01, 100, 1e-6);
        check_unary<float>("tanh", lanes, [](Expr x) { return tanh(x); }, std::tanh, -5, 5, 1e-6);
        check_unary<float>("erf", lanes, [](Expr x) { return erf(x); }, std::erf, -3, 3, 1e-6);
        check_unary<float>("sigmoid", lanes, [](Expr x) { return sigmoid(x); }, ref_sigmoid, -10, 10, 1e-6);
        check_unary<float>("sqrt", lanes, [](Expr x) { return sqrt(x); }, std::sqrt, 0, 100, 0);
        check_unary<float>("rsqrt", lanes, [](Expr x) { return rsqrt(x); }, ref_rsqrt, 0.01, 100, 0);
        check_unary<float>("floor", lanes, [](Expr x) { return floor(x); }, std::floor, -10, 10, 0);
        check_unary<float>("ceil", lanes, [](Expr x) { return ceil(x); }, std::ceil, -10, 10, 0);
        check_unary<float>("abs", lanes, [](Expr x) { return abs(x); }, std::fabs, -10, 10, 0);
        check_unary<float>("pow", lanes, [](Expr x) { return pow(x, x); }, [](float v) { return std::pow(v, v); }, 0.1,
                           4, 1e-6);
        check_unary<double>("exp_f64", lanes, [](Expr x) { return exp(x); }, std::exp, -10, 10, 1e-14);
        check_unary<double>("tanh_f64", lanes, [](Expr x) { return tanh(x); }, std::tanh, -5, 5, 1e-14);
        check_unary<double>("sigmoid_f64", lanes, [](Expr x) { return sigmoid(x); }, ref_sigmoid_d, -10, 10, 1e-14);
    }
}

TEST_CASE("round is half away from zero, like std::round") {
    KernelBuilder kb("round");
    Var X = kb.tensor("X", f32), Y = kb.tensor("Y", f32);
    Var i("i");
    Expr index = Ramp::make(make_int(0), make_int(1), 8);
    auto f = kb.finish(Store::make(Y, round(Load::make(f32.with_lanes(8), X, index)), index));
    auto module = codegen::compile_llvm(f, Target::host());
    std::vector<float> x{-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 0.49f, -3.7f}, y(8);
    REQUIRE(CallArgs().tensor(x).tensor(y).call(module->entry()) == 0);
    for (size_t j = 0; j < 8; ++j) CHECK(y[j] == std::round(x[j]));
}

TEST_CASE("abs works on integers, including vectors") {
    KernelBuilder kb("iabs");
    Var X = kb.tensor("X", i32), Y = kb.tensor("Y", i32);
    Expr index = Ramp::make(make_int(0), make_int(1), 4);
    auto f = kb.finish(Store::make(Y, abs(Load::make(i32.with_lanes(4), X, index)), index));
    auto module = codegen::compile_llvm(f, Target::host());
    std::vector<int32_t> x{-3, 0, 7, -2147483647}, y(4);
    REQUIRE(CallArgs().tensor(x).tensor(y).call(module->entry()) == 0);
    CHECK(y == std::vector<int32_t>{3, 0, 7, 2147483647});
}

TEST_CASE("math on float16 is rejected with an error naming the type") {
    auto f = unary_kernel("hexp", 1, f16, [](Expr x) { return exp(x); });
    CHECK_THROWS_WITH_AS(codegen::compile_llvm(f, Target::host()), doctest::Contains("float16"), weft::Error);
}

namespace {

// Y[i] = ldexp(X[i], N[i]) over n elements, `lanes` at a time.
template <class T>
std::vector<T> run_ldexp(const Target& target, int lanes, std::vector<T> x, std::vector<T> e,
                         std::string* assembly) {
    KernelBuilder kb("ldexp");
    DataType element = dtype_of<T>::value;
    Var X = kb.tensor("X", element), N = kb.tensor("N", element), Y = kb.tensor("Y", element);
    Var n = kb.scalar("n", i64);
    Var i("i");
    DataType t = element.with_lanes(lanes);
    Expr index = lanes == 1 ? Expr(i) : Ramp::make(i * make_int(lanes), make_int(1), lanes);
    auto f = kb.finish(For::make(i, make_int(0), n / make_int(lanes), ForKind::Serial,
                                 Store::make(Y, ldexp(Load::make(t, X, index), Load::make(t, N, index)), index)));
    auto module = codegen::compile_llvm(f, target);
    *assembly = module->assembly();
    std::vector<T> y(x.size(), T(0));
    REQUIRE(CallArgs().tensor(x).tensor(e).tensor(y).scalar(int64_t(x.size())).call(module->entry()) == 0);
    return y;
}

// x * 2^floor(n) as std::ldexp computes it, NaN for a NaN exponent.
template <class T>
T ref_ldexp(T x, T n) {
    if (std::isnan(n)) return std::numeric_limits<T>::quiet_NaN();
    return std::ldexp(x, int(std::clamp<T>(std::floor(n), -2200, 2200)));
}

template <class T>
void check_ldexp(const Target& target, const char* path) {
    CAPTURE(path);
    const T inf = std::numeric_limits<T>::infinity();
    // Random values and exponents (non-integers too), then the edges: products that overflow,
    // land in the subnormals or underflow to 0, a subnormal x scaled back up, infinite and NaN
    // exponents, a zero x.
    std::vector<T> x = random_values<T>(96, 5, -100, 100), e = random_values<T>(96, 6, -40.5, 40.5);
    const T tiny = std::numeric_limits<T>::denorm_min() * 3, big = std::numeric_limits<T>::max() / 2;
    const int max_exp = std::numeric_limits<T>::max_exponent;
    const std::vector<std::pair<T, T>> edges = {
        {1.5, T(max_exp)},      {-3, T(max_exp - 1)}, {big, 1.0},  {big, -3000},  {1.25, T(-max_exp - 10)},
        {-1.75, T(-max_exp - 30)}, {tiny, 40.0},   {tiny, -1.0}, {2.0, inf},    {-2.0, -inf},
        {3.0, std::numeric_limits<T>::quiet_NaN()}, {0.0, 7.9}, {-0.0, -7.9}, {1.0, -0.5}, {1.0, 0.999}, {5.0, 3000},
    };
    for (size_t k = 0; k < edges.size(); ++k) std::tie(x[k], e[k]) = edges[k];
    for (int lanes : {1, 3, 8, 16, 32}) {
        CAPTURE(lanes);
        std::string assembly;
        std::vector<T> y = run_ldexp(target, lanes, x, e, &assembly);
        for (size_t k = 0; k < x.size(); ++k) {
            CAPTURE(x[k]);
            CAPTURE(e[k]);
            const T want = ref_ldexp(x[k], e[k]);
            if (std::isnan(want)) CHECK(std::isnan(y[k]));
            else CHECK(y[k] == want);  // exact, with the sign of a zero
            if (want == 0) CHECK(std::signbit(y[k]) == std::signbit(want));
        }
    }
}

}  // namespace

TEST_CASE("ldexp is x times 2 to the floor of n, exactly, with VSCALEF on AVX-512 and exponent bits elsewhere") {
    Target avx512 = Target::host(), narrow = Target::host();
    narrow.vector_bits = 256;  // no 512-bit code: the general path
    std::string assembly;
    run_ldexp<float>(avx512, 16, std::vector<float>(16, 1.f), std::vector<float>(16, 2.f), &assembly);
    if (weft::test::host_has_avx512()) {
        CHECK(assembly.find("vscalefps") != std::string::npos);
        check_ldexp<float>(avx512, "vscalefps");
        check_ldexp<double>(avx512, "vscalefpd");
    } else {
        MESSAGE("host lacks avx512f: only the general path runs");
        CHECK(assembly.find("vscalef") == std::string::npos);
    }
    run_ldexp<float>(narrow, 16, std::vector<float>(16, 1.f), std::vector<float>(16, 2.f), &assembly);
    CHECK(assembly.find("vscalef") == std::string::npos);
    // No libm call per lane (what llvm.ldexp gave); the one call is the argument check's.
    auto calls = [](const std::string& text) {
        std::vector<std::string> called;
        for (size_t at = text.find("call"); at != std::string::npos; at = text.find("call", at + 4))
            called.push_back(text.substr(at, text.find('\n', at) - at));
        return called;
    };
    for (const std::string& c : calls(assembly)) CHECK(c.find("weft_runtime_set_error") != std::string::npos);
    run_ldexp<double>(narrow, 8, std::vector<double>(8, 1.0), std::vector<double>(8, 2.0), &assembly);
    for (const std::string& c : calls(assembly)) CHECK(c.find("weft_runtime_set_error") != std::string::npos);
    check_ldexp<float>(narrow, "exponent bits");
    check_ldexp<double>(narrow, "exponent bits");
}

TEST_CASE("ldexp needs float arguments") {
    Var a("a", i32);
    CHECK_THROWS_WITH_AS(ldexp(a, a), doctest::Contains("ldexp is only defined on float types"), weft::Error);
}
