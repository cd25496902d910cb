// topi::batch_matmul with its default schedule against a double reference, including a
// batch of 1 broadcast on either side and a fused epilogue.
#include <doctest/doctest.h>

#include "linalg_reference.hpp"
#include "lower/lowered_text.hpp"
#include "weft/topi/linalg.hpp"

using namespace weft;

namespace {

struct BatchShape {
    int64_t batch_a, batch_b, M, N, K;
};

void check_batch_matmul(const BatchShape& sh, bool relu_epilogue) {
    CAPTURE(sh.batch_a);
    CAPTURE(sh.batch_b);
    CAPTURE(sh.M);
    CAPTURE(sh.N);
    CAPTURE(sh.K);
    const int64_t batch = std::max(sh.batch_a, sh.batch_b);
    Tensor A = placeholder({sh.batch_a, sh.M, sh.K}, f32, "A"), B = placeholder({sh.batch_b, sh.K, sh.N}, f32, "B");
    Tensor C = topi::batch_matmul(A, B);
    Tensor Y = relu_epilogue
                   ? compute(C.shape(), [&](Expr b, Expr i, Expr j) { return max(C(b, i, j), 0.0f); }, "relu")
                   : C;
    Schedule s = create_schedule(Y);
    topi::schedule_batch_matmul(s, C, Y);
    Kernel k = build(s, {A, B, Y});
    auto a = linalg_test::random_buffer({sh.batch_a, sh.M, sh.K}, 51);
    auto b = linalg_test::random_buffer({sh.batch_b, sh.K, sh.N}, 52);
    Buffer<float> y({batch, sh.M, sh.N});
    k(a, b, y);
    std::vector<double> want;
    for (int64_t n = 0; n < batch; ++n) {
        int64_t na = sh.batch_a == 1 ? 0 : n, nb = sh.batch_b == 1 ? 0 : n;
        auto c = linalg_test::ref_gemm(sh.M, sh.N, sh.K, [&](int64_t i, int64_t x) { return a(na, i, x); },
                                       [&](int64_t x, int64_t j) { return b(nb, x, j); });
        for (double v : c) want.push_back(relu_epilogue ? std::max(0.0, v) : v);
    }
    linalg_test::check_close(y, want, sh.K);
}

}  // namespace

TEST_CASE("batch_matmul matches a double reference incl. broadcast batches") {
    const std::vector<BatchShape> shapes = {{1, 1, 1, 1, 1},  {3, 3, 5, 7, 2},    {2, 2, 64, 64, 64}, {4, 1, 13, 67, 31},
                                            {1, 5, 29, 3, 17}, {2, 2, 1, 130, 9}, {3, 3, 100, 40, 23}};
    for (int threads : {1, 2}) {
        CAPTURE(threads);
        linalg_test::with_threads(threads, [&] {
            for (size_t n = 0; n < shapes.size(); ++n) check_batch_matmul(shapes[n], n % 3 == 1);
        });
    }
}

TEST_CASE("batch_matmul keeps a constant-size register tile when its panels or chunks do not divide N") {
    // The batch was fused with the column panels (or the streamed chunks) into one parallel
    // loop; where the last panel is partial, the panel index was a remainder of the fused
    // index, and every tile took the partial panel's symbolic width: no register tile, and
    // 4x256x256 @ 256x80 ran 24x slower than with N = 64.
    const std::vector<BatchShape> shapes = {
        {4, 4, 64, 80, 32},   // panels of 64 and one of 16; the batch in parallel
        {2, 2, 64, 200, 32},  // at 2 threads, too few batches: the row blocks in parallel
        {4, 4, 4, 200, 32},   // a few rows stream B in column chunks, the last one partial
        {1, 1, 4, 200, 32},   // one batch: the chunks in parallel
    };
    for (int threads : {1, 2}) {
        CAPTURE(threads);
        linalg_test::with_threads(threads, [&] {
            for (const BatchShape& sh : shapes) {
                CAPTURE(sh.M);
                CAPTURE(sh.N);
                CAPTURE(sh.batch_a);
                Tensor A = placeholder({sh.batch_a, sh.M, sh.K}, f32, "A"), B = placeholder({sh.batch_b, sh.K, sh.N}, f32, "B");
                Tensor C = topi::batch_matmul(A, B);
                Schedule s = create_schedule(C);
                topi::schedule_batch_matmul(s, C);
                std::string program = ir::to_string(lower(s, {A, B, C}).body);
                REQUIRE(lowered_text::count(program, "allocate batch_matmul.local[") >= 1);
                CHECK(lowered_text::symbolic_allocations(program, "batch_matmul.local").empty());
                check_batch_matmul(sh, false);
            }
        });
    }
}
