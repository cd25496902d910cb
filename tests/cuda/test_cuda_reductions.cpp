// Reductions for CUDA: a row sum and a row softmax, one block per row. The reduction over a
// row is split across the block's threads with rfactor: each thread keeps a partial result
// in a shared array (bound to threadIdx.x), then thread 0 combines them. Checks the CUDA C
// compiles with NVRTC for sm_90 and where the barriers and the threadIdx.x == 0 guards go.
#include "cuda_emulator.hpp"
#include "cuda_schedules.hpp"
#include "cuda_test_util.hpp"

using namespace weft;
using namespace weft_cuda_test;

TEST_CASE("cuda row sum split over the threads of a block compiles for sm_90") {
    if (!have_nvrtc()) return;
    const int64_t rows = 64, cols = 1024, threads = 128;
    auto [A, B, s] = row_sum_schedule(rows, cols, threads);
    Kernel kern;
    const DeviceCode& dc = build_cuda(kern, s, {A, B});
    const std::string& src = dc.source;
    CHECK(contains(src, "__launch_bounds__(128)"));
    CHECK(contains(src, "__shared__ __align__(16) float B_rf[128]"));
    // The partial sums are written by all threads, then read by thread 0: one barrier.
    CHECK(count(src, "__syncthreads();") == 1);
    CHECK(contains(src, "(((int)threadIdx.x) == 0)"));
    CHECK(src.find("__syncthreads();") < src.find("for (int k_inner_v"));
    CHECK(const_of(dc.grid[0]) == rows);
    CHECK(const_of(dc.block[0]) == threads);
}

TEST_CASE("cuda row softmax with block-wide max and sum compiles for sm_90") {
    if (!have_nvrtc()) return;
    const int64_t rows = 32, cols = 512, threads = 128;
    auto [X, Y, s] = softmax_schedule(rows, cols, threads);
    Kernel kern;
    LowerOptions fast;
    fast.fast_math = true;
    const DeviceCode& dc = build_cuda(kern, s, {X, Y}, fast);
    const std::string& src = dc.source;
    // S's partial sums reuse M's partial maxima buffer (storage rewrite), after a barrier.
    for (const char* buffer : {"M_rf[128]", "M[1]", "S[1]"})
        CHECK(contains(src, std::string("__shared__ __align__(16) float ") + buffer));
    // max partials | thread 0 combines | sum partials read M | thread 0 combines | Y reads M and S.
    CHECK(count(src, "__syncthreads();") == 4);
    CHECK(count(src, "(((int)threadIdx.x) == 0)") == 2);  // around M's nest and around S's
    CHECK(contains(src, "__expf("));                        // fast math
    CHECK(contains(src, "fmaxf("));
    CHECK(contains(src, "__int_as_float(0xff800000)"));     // max's identity, -inf
}

TEST_CASE("cuda row sum and softmax compute their results on the CPU emulation of CUDA threads") {
    if (!have_nvrtc()) return;
    const int64_t rows = 6, cols = 96, threads = 32;  // 3 partial results per thread
    auto x = Buffer<float>::random({rows, cols}, -4, 4, 31);
    {
        auto [A, B, s] = row_sum_schedule(rows, cols, threads);
        Kernel kern;
        build_cuda(kern, s, {A, B});
        auto emu = emulate(kern);
        if (!emu) return;
        Buffer<float> b({rows});
        emu->run({x.data(), b.data()});
        for (int64_t i = 0; i < rows; ++i) {
            double want = 0;
            for (int64_t k = 0; k < cols; ++k) want += x.data()[i * cols + k];
            CHECK(std::abs(b.data()[i] - want) < 1e-4);
        }
    }
    {
        auto [X, Y, s] = softmax_schedule(rows, cols, threads);
        Kernel kern;
        build_cuda(kern, s, {X, Y});
        auto emu = emulate(kern);
        if (!emu) return;
        Buffer<float> y({rows, cols});
        emu->run({x.data(), y.data()});
        double worst = 0;
        for (int64_t i = 0; i < rows; ++i) {
            double m = -INFINITY, sum = 0;
            for (int64_t k = 0; k < cols; ++k) m = std::max(m, double(x.data()[i * cols + k]));
            for (int64_t k = 0; k < cols; ++k) sum += std::exp(x.data()[i * cols + k] - m);
            for (int64_t k = 0; k < cols; ++k)
                worst = std::max(worst, std::abs(y.data()[i * cols + k] - std::exp(x.data()[i * cols + k] - m) / sum));
        }
        CHECK(worst < 1e-6);
    }
}

TEST_CASE("cuda a vectorized reduce axis combines its lanes as a tree in each thread") {
    if (!have_nvrtc()) return;
    // S[i] = sum over k < 4 of A[i, k] - M[i], M the row's maximum; one row per thread, both
    // reductions' k vectorized.
    const int64_t rows = 64, lanes = 4;
    Tensor A = placeholder({rows, lanes}, f32, "A");
    IterVar km = reduce_axis(0, lanes, "km"), ks = reduce_axis(0, lanes, "ks");
    Tensor M = compute({rows}, [&](Expr i) { return max(A(i, km), {km}); }, "M");
    Tensor S = compute({rows}, [&](Expr i) { return sum(A(i, ks) - M(i), {ks}); }, "S");
    Schedule s = create_schedule(S);
    auto [bo, bi] = s[S].split(S.axis(0), 32);
    s[S].bind(bo, block_x());
    s[S].bind(bi, thread_x());
    s[S].vectorize(ks);
    s[M].compute_at(s[S], bi);
    s[M].set_scope("local");
    s[M].vectorize(km);
    Kernel kern;
    const DeviceCode& dc = build_cuda(kern, s, {A, S});
    const std::string& src = dc.source;
    CHECK_FALSE(contains(src, "for (int km"));
    CHECK_FALSE(contains(src, "for (int ks"));
    CHECK(contains(src, "fmaxf(fmaxf("));  // max(max(a0, a2), max(a1, a3)): two levels
    auto emu = emulate(kern);
    if (!emu) return;
    auto a = Buffer<float>::random({rows, lanes}, -4, 4, 17);
    Buffer<float> out({rows});
    emu->run({a.data(), out.data()});
    for (int64_t i = 0; i < rows; ++i) {
        float m = a(i, 0);
        double sum = 0;
        for (int64_t k = 0; k < lanes; ++k) m = std::max(m, a(i, k)), sum += a(i, k);
        CHECK(std::abs(out(i) - (sum - double(lanes) * m)) < 1e-5);
    }
}
