// Vectorize: an if_then_else whose condition is the same in every lane (a padded copy,
// vectorized along an axis the guard does not mention) becomes one vector if_then_else,
// not a serial loop; a condition that depends on the lane still keeps the loop serial.
#include <doctest/doctest.h>

#include <string>

#include "weft/weft.hpp"

using namespace weft;

namespace {

// pad[y, c] = X[y - 1, c] inside, 0 on the one padding row on each side; c vectorized.
struct PaddedCopy {
    Tensor X = placeholder({3, 8}, f32, "X");
    Tensor P = compute({5, 8}, [&](Expr y, Expr c) { return if_then_else(y >= 1 && y < 4, X(y - 1, c), 0.0f); }, "P");
};

}  // namespace

TEST_CASE("vectorize: a lane-uniform if_then_else stays vector") {
    PaddedCopy t;
    Schedule s = create_schedule(t.P);
    s[t.P].vectorize(t.P.axis(1));
    std::string body = ir::to_string(lower(s, {t.X, t.P}).body);
    CAPTURE(body);
    CHECK(body.find("X[ramp(") != std::string::npos);   // the guarded load is one vector load
    CHECK(body.find("for (c") == std::string::npos);    // no serial loop over the lanes left

    Kernel k = build(s, {t.X, t.P});
    auto x = Buffer<float>::random({3, 8}, 1.f, 2.f, 3);
    Buffer<float> p({5, 8});
    k(x, p);
    bool ok = true;
    for (int64_t y = 0; y < 5; ++y)
        for (int64_t c = 0; c < 8; ++c) ok = ok && p(y, c) == (y >= 1 && y < 4 ? x(y - 1, c) : 0.f);
    CHECK(ok);
}

TEST_CASE("vectorize: an if_then_else on the lane keeps the loop serial") {
    Tensor X = placeholder({8}, f32, "X");
    Tensor P = compute({10}, [&](Expr i) { return if_then_else(i >= 1 && i < 9, X(i - 1), 0.0f); }, "P");
    Schedule s = create_schedule(P);
    s[P].vectorize(P.axis(0));
    std::string body = ir::to_string(lower(s, {X, P}).body);
    CAPTURE(body);
    CHECK(body.find("ramp(") == std::string::npos);
}
