// Calling a kernel wrongly: each mistake is a weft::Error whose message names the argument.
#include <doctest/doctest.h>

#include "weft/weft.hpp"

using namespace weft;

namespace {

// C = A * B (element-wise), 2-D, float32, constant shape 4 x 6.
struct Mul2D {
    Tensor A = placeholder({4, 6}, f32, "A");
    Tensor B = placeholder({4, 6}, f32, "B");
    Tensor C = compute({4, 6}, [&](Expr i, Expr j) { return A(i, j) * B(i, j); }, "C");
    Kernel build_kernel() {
        Schedule s = create_schedule(C);
        return build(s, {A, B, C});
    }
};

}  // namespace

TEST_CASE("a buffer of the wrong shape names the argument and the dimension") {
    Mul2D m;
    Kernel k = m.build_kernel();
    Buffer<float> a({4, 6}), b({4, 7}), c({4, 6});
    CHECK_THROWS_WITH_AS(k(a, b, c), doctest::Contains("argument 'B' dimension 1 must be 6"), weft::Error);
    Buffer<float> a2({5, 6});
    CHECK_THROWS_WITH_AS(k(a2, b, c), doctest::Contains("argument 'A' dimension 0 must be 4"), weft::Error);
}

TEST_CASE("a buffer of the wrong dtype names the argument and the buffer type to use") {
    Mul2D m;
    Kernel k = m.build_kernel();
    Buffer<float> a({4, 6}), c({4, 6});
    Buffer<double> b({4, 6});
    CHECK_THROWS_WITH_AS(k(a, b, c), doctest::Contains("argument 'B' has dtype float32 but a Buffer<double>"),
                         weft::Error);
    Buffer<int32_t> ci({4, 6});
    CHECK_THROWS_WITH_AS(k(a, a, ci), doctest::Contains("argument 'C'"), weft::Error);
}

TEST_CASE("the wrong number of arguments lists the kernel's parameters") {
    Mul2D m;
    Kernel k = m.build_kernel();
    Buffer<float> a({4, 6}), b({4, 6}), c({4, 6});
    CHECK_THROWS_WITH_AS(k(a, b), doctest::Contains("takes 3 arguments (A, B, C) but 2 were passed"), weft::Error);
    CHECK_THROWS_WITH_AS(k(a, b, c, c), doctest::Contains("(A, B, C) but 4 were passed"), weft::Error);
}

TEST_CASE("a buffer of the wrong rank names the argument") {
    Mul2D m;
    Kernel k = m.build_kernel();
    Buffer<float> a({4, 6}), b({4, 6, 1}), c({24});
    CHECK_THROWS_WITH_AS(k(a, b, c), doctest::Contains("argument 'B' has 2 dimensions but the buffer passed has 3"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(k(a, a, c), doctest::Contains("argument 'C' has 2 dimensions but the buffer passed has 1"),
                         weft::Error);
}

TEST_CASE("a scalar for a tensor, a tensor for a scalar and an undefined buffer name the argument") {
    Tensor X = placeholder({8}, f32, "X");
    Var alpha("alpha", f32);
    Tensor Y = compute({8}, [&](Expr i) { return X(i) * alpha; }, "Y");
    Schedule s = create_schedule(Y);
    Kernel k = build(s, {X, alpha, Y});
    Buffer<float> x({8}), y({8});
    CHECK_THROWS_WITH_AS(k(1.0f, 2.0f, y), doctest::Contains("argument 'X'"), weft::Error);
    CHECK_THROWS_WITH_AS(k(x, x, y), doctest::Contains("argument 'alpha'"), weft::Error);
    Buffer<float> undefined;
    CHECK_THROWS_WITH_AS(k(x, 2.0f, undefined), doctest::Contains("argument 'Y'"), weft::Error);
}

TEST_CASE("a symbolic dimension whose buffers disagree names both arguments and the variable") {
    Var n("n");
    Tensor X = placeholder({n}, f32, "x");
    Tensor Y = placeholder({n}, f32, "y");
    Tensor Z = compute({n}, [&](Expr i) { return X(i) + Y(i); }, "z");
    Schedule s = create_schedule(Z);
    Kernel k = build(s, {X, Y, Z});
    Buffer<float> x({5}), y({6}), z({5});
    CHECK_THROWS_WITH_AS(k(x, y, z), doctest::Contains("argument 'y' dimension 0 is 'n'"), weft::Error);
    CHECK_THROWS_WITH_AS(k(x, y, z), doctest::Contains("argument 'x' dimension 0 set to 5"), weft::Error);
    Buffer<float> z7({7});
    CHECK_THROWS_WITH_AS(k(x, x, z7), doctest::Contains("argument 'z' dimension 0 is 'n'"), weft::Error);
}

TEST_CASE("calling a default-constructed Kernel is a weft::Error") {
    Kernel k;
    Buffer<float> a({4});
    CHECK_FALSE(k.defined());
    CHECK_THROWS_WITH_AS(k(a), doctest::Contains("default-constructed"), weft::Error);
    CHECK_THROWS_WITH_AS(k(), doctest::Contains("default-constructed"), weft::Error);
}

TEST_CASE("a non-compact (strided) buffer view names the argument") {
    Mul2D m;
    Kernel k = m.build_kernel();
    // A 4 x 6 window of a 4 x 8 array: row stride 8, not 6.
    std::vector<float> storage(4 * 8, 1.0f);
    Buffer<float> view(storage.data(), {4, 6}, {8, 1});
    REQUIRE_FALSE(view.is_compact());
    Buffer<float> a({4, 6}), c({4, 6});
    CHECK_THROWS_WITH_AS(k(a, view, c), doctest::Contains("'B'"), weft::Error);
    CHECK_THROWS_WITH_AS(k(a, a, view), doctest::Contains("'C'"), weft::Error);
    // A transposed view (column-major strides) as well.
    std::vector<float> storage2(4 * 6, 1.0f);
    Buffer<float> transposed(storage2.data(), {4, 6}, {1, 4});
    CHECK_THROWS_WITH_AS(k(transposed, a, c), doctest::Contains("'A'"), weft::Error);
}

TEST_CASE("a buffer that breaks the kernel's argument_alignment promise names the argument and the offset") {
    Mul2D m;
    Schedule s = create_schedule(m.C);
    Kernel k = build(s, {m.A, m.B, m.C}, Target::host(), {.name = "mul_aligned", .argument_alignment = 64});
    Buffer<float> a({4, 6}), c({4, 6});
    CHECK_NOTHROW(k(a, a, c));  // weft's own buffers are 64-byte aligned
    std::vector<float> storage(4 * 6 + 16, 1.0f);
    float* base = storage.data();
    while (reinterpret_cast<uintptr_t>(base) % 64 != 0) ++base;
    Buffer<float> shifted(base + 3, {4, 6});
    CHECK_THROWS_WITH_AS(k(a, shifted, c),
                         doctest::Contains("'B' must be aligned to 64 bytes (the kernel was built with "
                                           "argument_alignment = 64) but its data starts 12 bytes past"),
                         weft::Error);
    // The output as well; nothing was written through the refused call.
    Buffer<float> out(base + 3, {4, 6});
    CHECK_THROWS_WITH_AS(k(a, a, out), doctest::Contains("'C' must be aligned"), weft::Error);
}

TEST_CASE("an argument_alignment that is not a power of two up to 4096 is refused when lowering") {
    Mul2D m;
    Schedule s = create_schedule(m.C);
    for (int bad : {-64, 3, 48, 8192})
        CHECK_THROWS_WITH_AS(build(s, {m.A, m.B, m.C}, Target::host(), {.argument_alignment = bad}),
                             doctest::Contains("argument_alignment must be 0 or a power of two up to 4096"),
                             weft::Error);
}
