// Element-wise kernels for CUDA: float4 loads and stores, float16/bfloat16/int8 types, the
// math functions (and their fast-math forms), a symbolic size, and virtual threads. Each
// compiles with NVRTC for sm_90.
#include "cuda_emulator.hpp"
#include "cuda_test_util.hpp"
#include "weft/ir/visitor.hpp"

using namespace weft;
using namespace weft_cuda_test;

namespace {

// out[i] = f(in[i]) over n elements, 256 threads per block, `lanes` consecutive elements
// per thread (vectorized when lanes > 1).
Schedule elementwise_schedule(const Tensor& out, int64_t lanes) {
    Schedule s = create_schedule(out);
    auto [o, v] = s[out].split(out.axis(0), lanes);
    auto [bx, tx] = s[out].split(o, 256);
    s[out].bind(bx, block_x());
    s[out].bind(tx, thread_x());
    if (lanes > 1) s[out].vectorize(v);
    return s;
}

}  // namespace

TEST_CASE("cuda element-wise float32 with float4 accesses and math functions") {
    if (!have_nvrtc()) return;
    const int64_t n = 1 << 16;
    Tensor A = placeholder({n}, f32, "A"), B = placeholder({n}, f32, "B");
    Tensor C = compute({n}, [&](Expr i) {
        return tanh(A(i)) + erf(B(i)) * sqrt(abs(A(i))) + pow(B(i), A(i)) + rsqrt(B(i) * B(i) + 1.0f) +
               max(A(i), B(i)) + sigmoid(log(abs(B(i)) + 1.0f)) + ldexp(A(i), floor(B(i)));
    }, "C");
    Kernel k;
    const DeviceCode& dc = build_cuda(k, elementwise_schedule(C, 4), {A, B, C});
    const std::string& src = dc.source;
    CHECK(count(src, "*(const float4*)") == 2);
    CHECK(count(src, "*(float4*)") == 1);
    for (const char* fn : {"tanhf(", "erff(", "sqrtf(", "fabsf(", "powf(", "rsqrtf(", "fmaxf(", "logf(", "expf(", "ldexpf("})
        CHECK_MESSAGE(contains(src, fn), fn);
    CHECK(const_of(dc.grid[0]) == n / 4 / 256);
    CHECK(!contains(src, "weft_floordiv"));  // index arithmetic on non-negative values: plain / and %
}

TEST_CASE("cuda float16 and bfloat16 kernels use cuda_fp16.h and cuda_bf16.h") {
    if (!have_nvrtc()) return;
    const int64_t n = 4096;
    Tensor A = placeholder({n}, f16, "A");
    Tensor H = compute({n}, [&](Expr i) { return exp(A(i)) * A(i) + A(i); }, "H");
    Kernel kh;
    const std::string& half_src = build_cuda(kh, elementwise_schedule(H, 2), {A, H}).source;
    CHECK(contains(half_src, "#include <cuda_fp16.h>"));
    CHECK(contains(half_src, "__half* __restrict__ A"));
    CHECK(contains(half_src, "__half2float("));
    Tensor Bf = placeholder({n}, bf16, "Bf");
    Tensor F = compute({n}, [&](Expr i) { return cast(f32, Bf(i)) * 2.0f; }, "F");
    Tensor G = compute({n}, [&](Expr i) { return cast(bf16, F(i)); }, "G");
    Schedule s = elementwise_schedule(G, 1);
    s[F].compute_inline();
    Kernel kb;
    const std::string& bf_src = build_cuda(kb, s, {Bf, G}).source;
    CHECK(contains(bf_src, "#include <cuda_bf16.h>"));
    CHECK(contains(bf_src, "__nv_bfloat16* __restrict__ G"));
    CHECK(contains(bf_src, "__float2bfloat16("));
}

TEST_CASE("cuda int8 to int32 widening with int4 stores") {
    if (!have_nvrtc()) return;
    const int64_t n = 8192;
    Tensor A = placeholder({n}, i8, "A");
    Tensor B = compute({n}, [&](Expr i) { return cast(i32, A(i)) * 3 - 7; }, "B");
    Kernel k;
    const std::string& src = build_cuda(k, elementwise_schedule(B, 4), {A, B}).source;
    CHECK(contains(src, "signed char* __restrict__ A"));
    CHECK(contains(src, "*(int4*)"));
}

TEST_CASE("cuda kernel over a symbolic size takes it as a scalar parameter") {
    if (!have_nvrtc()) return;
    Var n("n");
    Tensor A = placeholder({n}, f32, "A");
    Tensor B = compute({n}, [&](Expr i) { return A(i) * 2.0f; }, "B");
    Schedule s = create_schedule(B);
    auto [bx, tx] = s[B].split(B.axis(0), 128);
    s[B].bind(bx, block_x());
    s[B].bind(tx, thread_x());
    Kernel k;
    const DeviceCode& dc = build_cuda(k, s, {A, B, n});
    CHECK(contains(dc.source, "long long n)"));
    CHECK(contains(dc.source, "< n)"));  // the tail guard
    int64_t g;
    CHECK(!ir::as_const_int(dc.grid[0], &g));  // ceil(n / 128), evaluated at launch
    CHECK(ir::uses_var(dc.grid[0], n));
}

TEST_CASE("cuda virtual threads become unrolled loops inside each thread") {
    if (!have_nvrtc()) return;
    const int64_t n = 1 << 14;
    Tensor A = placeholder({n}, f32, "A");
    Tensor B = compute({n}, [&](Expr i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule(B);
    auto [bx, rest] = s[B].split(B.axis(0), 512);
    auto [vt, tx] = s[B].split(rest, 128);  // 4 virtual threads of 128 threads each
    s[B].bind(bx, block_x());
    s[B].bind(vt, vthread());
    s[B].bind(tx, thread_x());
    Kernel k;
    const DeviceCode& dc = build_cuda(k, s, {A, B});
    CHECK(contains(dc.source, "#pragma unroll"));
    CHECK(!contains(dc.source, "vthread"));
    CHECK(const_of(dc.block[0]) == 128);
    CHECK(const_of(dc.grid[0]) == n / 512);
}

TEST_CASE("cuda element-wise kernels compute their results on the CPU emulation of CUDA threads") {
    if (!have_nvrtc()) return;
    // float4 accesses with the math functions.
    {
        const int64_t n = 4096;
        Tensor A = placeholder({n}, f32, "A"), B = placeholder({n}, f32, "B");
        Tensor C = compute({n}, [&](Expr i) { return tanh(A(i)) * B(i) + max(A(i), B(i)) + sqrt(abs(B(i))); }, "C");
        Kernel k;
        build_cuda(k, elementwise_schedule(C, 4), {A, B, C});
        auto emu = emulate(k);
        if (!emu) return;
        auto a = Buffer<float>::random({n}, -2, 2, 41), b = Buffer<float>::random({n}, -2, 2, 42);
        Buffer<float> c({n});
        emu->run({a.data(), b.data(), c.data()});
        double worst = 0;
        for (int64_t i = 0; i < n; ++i) {
            float x = a.data()[i], y = b.data()[i];
            worst = std::max(worst, double(std::abs(c.data()[i] - (std::tanh(x) * y + std::max(x, y) + std::sqrt(std::abs(y))))));
        }
        CHECK(worst < 1e-5);
    }
    // A symbolic size with a tail block, and virtual threads.
    {
        Var n("n");
        Tensor A = placeholder({n}, f32, "A");
        Tensor B = compute({n}, [&](Expr i) { return A(i) * 2.0f + 1.0f; }, "B");
        Schedule s = create_schedule(B);
        auto [bx, rest] = s[B].split(B.axis(0), 256);
        auto [vt, tx] = s[B].split(rest, 64);
        s[B].bind(bx, block_x());
        s[B].bind(vt, vthread());
        s[B].bind(tx, thread_x());
        Kernel k;
        build_cuda(k, s, {A, B, n});
        auto emu = emulate(k);
        if (!emu) return;
        int64_t size = 1000;  // 3 full blocks and a tail of 232
        auto a = Buffer<float>::random({size}, -1, 1, 43);
        Buffer<float> b({size + 1});
        b.data()[size] = 12345.0f;  // must stay untouched
        emu->run({a.data(), b.data(), &size}, {{n, size}});
        for (int64_t i = 0; i < size; ++i) CHECK(b.data()[i] == a.data()[i] * 2.0f + 1.0f);
        CHECK(b.data()[size] == 12345.0f);
    }
    // int8 widened to int32, int4 stores.
    {
        const int64_t n = 2048;
        Tensor A = placeholder({n}, i8, "A");
        Tensor B = compute({n}, [&](Expr i) { return cast(i32, A(i)) * 3 - 7; }, "B");
        Kernel k;
        build_cuda(k, elementwise_schedule(B, 4), {A, B});
        auto emu = emulate(k);
        if (!emu) return;
        Buffer<int8_t> a({n});
        for (int64_t i = 0; i < n; ++i) a.data()[i] = int8_t((i * 37) % 256 - 128);
        Buffer<int32_t> b({n});
        emu->run({a.data(), b.data()});
        for (int64_t i = 0; i < n; i += 97) CHECK(b.data()[i] == int32_t(a.data()[i]) * 3 - 7);
    }
}

TEST_CASE("cuda kernels named like a math function compile under another C name") {
    if (!have_nvrtc()) return;
    // A graph kernel is named after its output stage, and an operator's stage is often named
    // like the function it computes: an extern "C" kernel called exp or max does not compile.
    const int64_t n = 1024;
    Tensor A = placeholder({n}, f32, "A");
    for (const char* name : {"exp", "max", "sqrtf", "int", "C"}) {
        CAPTURE(name);
        Tensor out = compute({n}, [&](Expr i) { return exp(A(i)); }, name);
        Kernel k;
        const DeviceCode& dc = build_cuda(k, elementwise_schedule(out, 4), {A, out});
        const bool renamed = std::string(name) != "C";
        CHECK(dc.kernel_name == (renamed ? std::string(name) + "_kernel" : std::string(name)));
        CHECK(dc.source.find("void __launch_bounds__(256) " + dc.kernel_name + "(") != std::string::npos);
        CHECK(dc.ptx.find(".entry " + dc.kernel_name) != std::string::npos);
    }
}
