// topi's GPU schedules and tensor-core operator given the wrong tensors: each error names
// the schedule or operator, the tensor, and what to pass instead.
#include <doctest/doctest.h>

#include "weft/topi/cuda.hpp"
#include "weft/topi/topi.hpp"
#include "weft/weft.hpp"

using namespace weft;

TEST_CASE("cuda::schedule_injective refuses a reduction and a placeholder") {
    Tensor a = placeholder({8, 8}, f32, "a");
    Tensor r = topi::sum(a, {1});
    Schedule s = create_schedule(r);
    CHECK_THROWS_WITH_AS(topi::cuda::schedule_injective(s, r), doctest::Contains("is a reduction (use cuda::schedule_reduce)"),
                         Error);
    CHECK_THROWS_WITH_AS(topi::cuda::schedule_injective(s, a), doctest::Contains("is a placeholder"), Error);
}

TEST_CASE("cuda row and matmul schedules name the stage they did not find") {
    Tensor a = placeholder({8, 8}, f32, "a");
    Tensor r = topi::relu(a);
    Schedule s = create_schedule(r);
    CHECK_THROWS_WITH_AS(topi::cuda::schedule_softmax(s, r),
                         doctest::Contains("cuda::schedule_softmax: 'relu' does not read a stage named 'softmax.max'"),
                         Error);
    CHECK_THROWS_WITH_AS(topi::cuda::schedule_matmul(s, r),
                         doctest::Contains("cuda::schedule_matmul: 'relu' is not the output of the matching compute"),
                         Error);
    CHECK_THROWS_WITH_AS(topi::cuda::schedule_reduce(s, r), doctest::Contains("'relu' is not a reduction and reads none"),
                         Error);
    CHECK_THROWS_WITH_AS(topi::cuda::schedule(s, a), doctest::Contains("'a' is a placeholder"), Error);
}

TEST_CASE("cuda::matmul_tensorcore refuses shapes that are not whole fragments and float32") {
    Tensor a = placeholder({20, 16}, f16, "A"), b = placeholder({16, 8}, f16, "B");
    CHECK_THROWS_WITH_AS(topi::cuda::matmul_tensorcore(a, b),
                         doctest::Contains("M (20), N (8) and K (16) must be multiples of 16, 8 and 16 (pad the operands)"),
                         Error);
    Tensor x = placeholder({16, 16}, f32, "x"), y = placeholder({16, 8}, f32, "y");
    CHECK_THROWS_WITH_AS(topi::cuda::matmul_tensorcore(x, y),
                         doctest::Contains("must both be float16 or both bfloat16, got float32 and float32"), Error);
    Tensor c = placeholder({16, 16}, f16, "c"), d = placeholder({32, 8}, f16, "d");
    CHECK_THROWS_WITH_AS(topi::cuda::matmul_tensorcore(c, d), doctest::Contains("A is 16 x 16 but B has 32 rows"), Error);
    CHECK_THROWS_WITH_AS(topi::cuda::mma_m16n8k16(f32), doctest::Contains("must be float16 or bfloat16, not float32"),
                         Error);
    Tensor r = topi::relu(x);
    Schedule s = create_schedule(r);
    CHECK_THROWS_WITH_AS(topi::cuda::schedule_matmul_tensorcore(s, r),
                         doctest::Contains("'relu' is not what matmul_tensorcore returned"), Error);
}
