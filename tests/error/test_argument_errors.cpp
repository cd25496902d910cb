#include <doctest/doctest.h>

#include "weft/weft.hpp"

using namespace weft;

TEST_CASE("an intermediate stage passed as a kernel argument names the tensor") {
    Tensor X = placeholder({8}, f32, "x");
    Tensor T = compute({8}, [&](Expr i) { return X(i) * 2; }, "twice");
    Tensor Y = compute({8}, [&](Expr i) { return T(i) + 1; }, "y");
    Schedule s = create_schedule(Y);
    CHECK_THROWS_WITH_AS(lower(s, {X, T, Y}), doctest::Contains("argument 'twice' is an intermediate stage"),
                         weft::Error);
    // Listed among the outputs, it is written.
    Schedule s2 = create_schedule(std::vector<Tensor>{T, Y});
    Kernel k = build(s2, {X, T, Y});
    auto x = Buffer<float>::random({8}, -1, 1, 3);
    Buffer<float> t({8}), y({8});
    k(x, t, y);
    for (int64_t i = 0; i < 8; ++i) {
        CHECK(t(i) == x(i) * 2);
        CHECK(y(i) == x(i) * 2 + 1);
    }
}
