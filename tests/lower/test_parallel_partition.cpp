// Loop partitioning of a parallel loop whose last iteration is partial: the loop stays one
// parallel loop (cutting it into a steady loop and a tail loop would run them one after the
// other: a 2-iteration loop on 2 threads became serial), and each iteration branches to a
// guard-free copy of the body or to the guarded tail.
#include <doctest/doctest.h>

#include <string>

#include "lower/lowered_text.hpp"
#include "weft/weft.hpp"

using namespace weft;

using lowered_text::count;

TEST_CASE("a parallel loop with a partial last iteration stays one parallel loop") {
    for (int64_t n : {100, 24}) {  // 7 chunks of 16 with a tail of 4; 2 chunks, the second of 8
        CAPTURE(n);
        Tensor X = placeholder({n}, f32, "X");
        Tensor Y = compute({n}, [&](Expr i) { return X(i) * 2.0f + 1.0f; }, "Y");
        Schedule s = create_schedule(Y);
        auto [outer, inner] = s[Y].split(Y.axis(0), 16);
        s[Y].parallel(outer);
        std::string body = ir::to_string(lower(s, {X, Y}).body);
        CAPTURE(body);
        CHECK(count(body, "parallel for") == 1);
        CHECK(count(body, "for (i.outer") == 1);
        // The steady iterations' copy has no guard: the first statement under the branch
        // is the plain inner loop.
        size_t branch = body.find("if (i.outer < ");
        REQUIRE(branch != std::string::npos);
        std::string steady = body.substr(branch, body.find("else", branch) - branch);
        CHECK(steady.find("Y[") != std::string::npos);
        CHECK(count(steady, "if (") == 1);

        Kernel k = build(s, {X, Y});
        auto x = Buffer<float>::random({n}, -1.f, 1.f, 5);
        Buffer<float> y({n});
        int before = num_threads();
        set_num_threads(2);
        k(x, y);
        set_num_threads(before);
        bool ok = true;
        for (int64_t i = 0; i < n; ++i) ok = ok && y(i) == x(i) * 2.0f + 1.0f;
        CHECK(ok);
    }
}
