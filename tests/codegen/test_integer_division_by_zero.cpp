// Integer division and remainder by zero, and MIN / -1, trap on x86 (SIGFPE): weft defines
// x / 0 and x % 0 as 0 and MIN / -1 as MIN, so no input data can crash a kernel (the ONNX
// fuzzer found a Div of uint8 tensors with zeros that killed the process). Floor and
// truncating forms, signed and unsigned, scalar and vectorized.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

#include "weft/weft.hpp"

using namespace weft;

namespace {

template <class T>
void check_division(DataType dtype, bool vectorize) {
    CAPTURE(dtype.str());
    CAPTURE(vectorize);
    const int64_t n = 16;
    Tensor A = placeholder({n}, dtype, "a"), B = placeholder({n}, dtype, "b");
    Tensor D = compute({n}, [&](Expr i) { return A(i) / B(i); }, "d");
    Tensor M = compute({n}, [&](Expr i) { return A(i) % B(i); }, "m");
    Tensor TD = compute({n}, [&](Expr i) { return truncdiv(A(i), B(i)); }, "td");
    Tensor TM = compute({n}, [&](Expr i) { return truncmod(A(i), B(i)); }, "tm");
    Buffer<T> a({n}), b({n});
    const T lo = std::numeric_limits<T>::min();
    for (int64_t i = 0; i < n; ++i) {
        a(i) = T(7 + i);
        b(i) = T(i % 3 == 0 ? 0 : (i % 3 == 1 ? 2 : 3));
    }
    if constexpr (std::numeric_limits<T>::is_signed) {
        a(5) = lo;
        b(5) = T(-1);
    }
    for (const Tensor& out : {D, M, TD, TM}) {
        Schedule s = create_schedule(out);
        if (vectorize) s[out].vectorize(out.axis(0));
        Kernel k = build(s, {A, B, out});
        Buffer<T> y({n});
        k(a, b, y);
        for (int64_t i = 0; i < n; ++i) {
            CAPTURE(out.name());
            CAPTURE(i);
            const bool is_div = out.same_as(D) || out.same_as(TD);
            if (b(i) == 0) {
                CHECK(y(i) == T(0));
            } else if (std::numeric_limits<T>::is_signed && a(i) == lo && b(i) == T(-1)) {
                CHECK(y(i) == (is_div ? lo : T(0)));
            } else {
                // Positive operands: floor and truncating forms agree with C.
                CHECK(y(i) == (is_div ? T(a(i) / b(i)) : T(a(i) % b(i))));
            }
        }
    }
}

}  // namespace

TEST_CASE("integer division and remainder by zero give 0, and MIN / -1 gives MIN, never a trap") {
    for (bool vectorize : {false, true}) {
        check_division<int32_t>(i32, vectorize);
        check_division<int64_t>(i64, vectorize);
        check_division<uint8_t>(u8, vectorize);
        check_division<int8_t>(i8, vectorize);
    }
}
