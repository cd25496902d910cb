// linalg's operators reject bad operands and misused schedules with a weft::Error that
// names the operator and the mismatch.
#include <doctest/doctest.h>

#include "weft/weft.hpp"
#include "weft/topi/linalg.hpp"

using namespace weft;

TEST_CASE("matmul names the mismatched inner dimension, ranks and dtypes") {
    Tensor A = placeholder({4, 5}, f32, "A"), B = placeholder({6, 3}, f32, "B");
    CHECK_THROWS_WITH_AS(topi::matmul(A, B), doctest::Contains("matmul: A's columns (K) (5) must equal B's rows (6)"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::matmul(placeholder({4, 5, 1}, f32, "A3"), B),
                         doctest::Contains("matmul: operand A ('A3') must have 2 dimensions, got shape [4, 5, 1]"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::matmul(placeholder({4, 6}, i32, "Ai"), B),
                         doctest::Contains("matmul: operand A ('Ai') must be a float tensor, got int32"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::matmul(placeholder({4, 6}, f64, "Ad"), B),
                         doctest::Contains("matmul: operands A and B must have the same dtype, got float64 and float32"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::matmul(A, Tensor()), doctest::Contains("matmul: operand B is undefined"), weft::Error);
}

TEST_CASE("dense names a mismatched K or bias length") {
    Tensor X = placeholder({4, 5}, f32, "X"), W = placeholder({8, 6}, f32, "W");
    CHECK_THROWS_WITH_AS(topi::dense(X, W), doctest::Contains("dense: X's columns (K) (5) must equal W's columns (6)"),
                         weft::Error);
    Tensor W5 = placeholder({8, 5}, f32, "W5");
    CHECK_THROWS_WITH_AS(topi::dense(X, W5, placeholder({7}, f32, "b")),
                         doctest::Contains("dense: the bias length (7) must equal the number of output features N (8)"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::dense(X, W5, placeholder({8, 1}, f32, "b2")),
                         doctest::Contains("dense: operand bias ('b2') must have 1 dimensions"), weft::Error);
}

TEST_CASE("dense_packed checks the packed weight against N and K") {
    Tensor X = placeholder({4, 5}, f32, "X");
    Tensor Wp = placeholder({2, 5, 16}, f32, "Wp");
    CHECK_NOTHROW(topi::dense_packed(X, Wp, 20));
    CHECK_THROWS_WITH_AS(topi::dense_packed(X, Wp, 40),
                         doctest::Contains("dense_packed: packed_W's panel count (2) must equal ceil(N / width) (3)"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::dense_packed(placeholder({4, 6}, f32, "X6"), Wp, 20),
                         doctest::Contains("dense_packed: X's columns (K) (6) must equal packed_W's K (5)"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::dense_packed(X, Wp, 0), doctest::Contains("N must be positive, got 0"), weft::Error);
    CHECK_THROWS_WITH_AS(topi::dense_pack_weight(placeholder({8, 5}, f32, "W"), -2),
                         doctest::Contains("dense_pack_weight: the panel width must be positive"), weft::Error);
}

TEST_CASE("batch_matmul names mismatched batches and inner dimensions") {
    Tensor A = placeholder({3, 4, 5}, f32, "A");
    CHECK_THROWS_WITH_AS(topi::batch_matmul(A, placeholder({2, 5, 6}, f32, "B")),
                         doctest::Contains("batch_matmul: the batch sizes of A (3) and B (2) must be equal, or one of them 1"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::batch_matmul(A, placeholder({3, 4, 6}, f32, "B")),
                         doctest::Contains("batch_matmul: A's columns (K) (5) must equal B's rows (4)"), weft::Error);
    CHECK_NOTHROW(topi::batch_matmul(A, placeholder({1, 5, 6}, f32, "B1")));
}

TEST_CASE("linalg schedules reject a tensor that is not their operator's output or a non-element-wise out") {
    Tensor A = placeholder({8, 8}, f32, "A"), B = placeholder({8, 8}, f32, "B");
    Tensor E = compute({8, 8}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "E");
    Schedule s = create_schedule(E);
    CHECK_THROWS_WITH_AS(topi::schedule_matmul(s, E), doctest::Contains("schedule_matmul: 'E' is not the output"),
                         weft::Error);
    Tensor C = topi::matmul(A, B);
    Tensor R = compute({8}, [&](Expr i) { return C(i, 0); }, "row");
    Schedule s2 = create_schedule(R);
    CHECK_THROWS_WITH_AS(topi::schedule_matmul(s2, C, R),
                         doctest::Contains("schedule_matmul: the output 'row' must be an element-wise epilogue"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(topi::schedule_batch_matmul(s2, C),
                         doctest::Contains("schedule_batch_matmul: 'matmul' is not the output"), weft::Error);
}
