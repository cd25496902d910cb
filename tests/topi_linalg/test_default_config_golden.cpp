// The default Config of linalg's schedule templates reproduces the hand-written schedules
// they replaced: the loop programs of matmul, dense (with and without a bias and an
// epilogue, packed and not) and batch_matmul over shapes that take every path (packed
// panels, B streamed in place, panel- or row-parallel, batch apart or fused, symbolic
// extents) are compared with golden/gemm_avx512_2t.txt, written by the hand-written
// schedules (session 17) for an AVX-512 CPU and 2 threads. The target is written here, not
// read from the host, so the comparison is the same on every machine.
#include <doctest/doctest.h>

#include "golden_programs.hpp"

#include <functional>
#include <map>

#include "weft/topi/linalg.hpp"
#include "weft/topi/nn.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

const char* kGolden = WEFT_TEST_SOURCE_DIR "/topi_linalg/golden/gemm_avx512_2t.txt";

std::string lowered(const Schedule& s, const std::vector<Argument>& args) { return ir::to_string(lower(s, args).body); }

// name -> the loop program of that case.
// The target the golden programs were written for: an AVX-512 CPU, 2 threads.
const Target T = Target::x86_avx512(2);

std::map<std::string, std::string> gemm_programs() {
    std::map<std::string, std::string> out;
    auto matmul = [&](int64_t M, int64_t N, int64_t K) {
        Tensor A = placeholder({M, K}, f32, "A"), B = placeholder({K, N}, f32, "B");
        Tensor C = topi::matmul(A, B, "matmul", T);
        Schedule s = create_schedule(C);
        topi::schedule_matmul(s, C, C, T);
        out["matmul " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K)] = lowered(s, {A, B, C});
    };
    for (auto [M, N, K] : std::vector<std::array<int64_t, 3>>{{1024, 1024, 1024}, {256, 256, 256}, {64, 64, 64},
                                                               {1, 1000, 2048},   {4, 512, 256},    {100, 70, 30},
                                                               {3136, 64, 576},   {128, 3072, 768}, {300, 700, 200},
                                                               {7, 13, 5},        {30, 2304, 768},  {999, 333, 555}})
        matmul(M, N, K);
    {  // a symbolic number of rows
        Var M("M");
        Tensor A = placeholder({Expr(M), make_int(256)}, f32, "A"), B = placeholder({256, 512}, f32, "B");
        Tensor C = topi::matmul(A, B, "matmul", T);
        Schedule s = create_schedule(C);
        topi::schedule_matmul(s, C, C, T);
        out["matmul Mx512x256"] = lowered(s, {A, B, C, M});
    }
    auto dense = [&](int64_t M, int64_t N, int64_t K, bool bias, bool relu) {
        Tensor X = placeholder({M, K}, f32, "X"), W = placeholder({N, K}, f32, "W");
        Tensor b = bias ? placeholder({N}, f32, "b") : Tensor();
        Tensor Y = topi::dense(X, W, b, "dense", T);
        Tensor out_t = relu ? topi::relu(Y) : Y;
        Schedule s = create_schedule(out_t);
        topi::schedule_dense(s, Y, out_t, T);
        std::vector<Argument> args = {X, W};
        if (bias) args.emplace_back(b);
        args.emplace_back(out_t);
        out["dense " + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) + (bias ? " bias" : "") +
            (relu ? " relu" : "")] = lowered(s, args);
    };
    dense(1, 1000, 2048, true, false);
    dense(128, 768, 3072, true, true);
    dense(33, 100, 64, false, false);
    dense(256, 64, 128, false, true);
    {
        const int64_t M = 64, N = 256, K = 128;
        Tensor X = placeholder({M, K}, f32, "X"), W = placeholder({N, K}, f32, "W");
        Tensor P = topi::dense_pack_weight(W, 0, "dense_weight_packed", T);
        Schedule sp = create_schedule(P);
        topi::schedule_dense_pack_weight(sp, P);
        out["dense_pack_weight 256x128"] = lowered(sp, {W, P});
        Tensor Pin = placeholder(P.shape(), f32, "P");
        Tensor Y = topi::dense_packed(X, Pin, N);
        Schedule s = create_schedule(Y);
        topi::schedule_dense(s, Y, Y, T);
        out["dense_packed 64x256x128"] = lowered(s, {X, Pin, Y});
    }
    auto batch = [&](int64_t Bt, int64_t M, int64_t N, int64_t K) {
        Tensor A = placeholder({Bt, M, K}, f32, "A"), B = placeholder({Bt, K, N}, f32, "B");
        Tensor C = topi::batch_matmul(A, B, "batch_matmul", T);
        Schedule s = create_schedule(C);
        topi::schedule_batch_matmul(s, C, C, T);
        out["batch_matmul " + std::to_string(Bt) + "x" + std::to_string(M) + "x" + std::to_string(N) + "x" +
            std::to_string(K)] = lowered(s, {A, B, C});
    };
    batch(4, 256, 80, 256);
    batch(8, 64, 64, 64);
    batch(12, 128, 128, 64);
    batch(2, 3, 50, 7);
    batch(1, 1, 512, 64);
    return out;
}

}  // namespace

TEST_CASE("linalg's default schedules lower to the golden programs (AVX-512, 2 threads)") {
    golden::check_programs(gemm_programs(), kGolden);
}
