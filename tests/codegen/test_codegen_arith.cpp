// Integer and float arithmetic semantics in the LLVM backend: floor division and modulo,
// C's truncating division, float modulo, casts, and if_then_else evaluating one branch.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "codegen/kernel_builder.hpp"

using namespace weft;
using namespace weft::ir;
using weft::test::CallArgs;
using weft::test::KernelBuilder;

namespace {

int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}
int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

// OUT[k * n + i] = op_k(A[i], B[i]) for a list of binary operations.
PrimFunc binary_table(const std::string& name, DataType t, const std::vector<std::function<Expr(Expr, Expr)>>& ops,
                      int64_t n) {
    KernelBuilder kb(name);
    Var A = kb.tensor("A", t), B = kb.tensor("B", t), OUT = kb.tensor("OUT", t);
    Var i("i");
    std::vector<Stmt> stores;
    for (size_t k = 0; k < ops.size(); ++k) {
        Expr a = Load::make(t, A, i), b = Load::make(t, B, i);
        stores.push_back(Store::make(OUT, ops[k](a, b), i + make_int(int64_t(k) * n)));
    }
    return kb.finish(For::make(i, make_int(0), make_int(n), ForKind::Serial, Seq::make(stores)));
}

}  // namespace

TEST_CASE("integer / and % round toward negative infinity, for every kind of divisor") {
    std::vector<int64_t> a, b;
    for (int64_t x = -17; x <= 17; ++x)
        for (int64_t y : {-7, -4, -1, 1, 3, 4, 8}) a.push_back(x), b.push_back(y);
    const int64_t n = int64_t(a.size());
    std::vector<std::function<Expr(Expr, Expr)>> ops = {
        [](Expr x, Expr y) { return x / y; },             // variable divisor
        [](Expr x, Expr y) { return x % y; },
        [](Expr x, Expr) { return x / make_int(4); },     // power of two: shift / and
        [](Expr x, Expr) { return x % make_int(4); },
        [](Expr x, Expr) { return x / make_int(3); },     // other positive constant
        [](Expr x, Expr) { return x % make_int(3); },
        [](Expr x, Expr) { return x / make_int(-3); },    // negative constant
        [](Expr x, Expr) { return x % make_int(-3); },
        [](Expr x, Expr y) { return truncdiv(x, y); },    // C semantics
        [](Expr x, Expr y) { return truncmod(x, y); },
    };
    auto module = codegen::compile_llvm(binary_table("divmod", i64, ops, n), Target::host());
    std::vector<int64_t> out(size_t(n) * ops.size(), 0);
    REQUIRE(CallArgs().tensor(a).tensor(b).tensor(out).call(module->entry()) == 0);
    for (int64_t i = 0; i < n; ++i) {
        int64_t x = a[size_t(i)], y = b[size_t(i)];
        CAPTURE(x);
        CAPTURE(y);
        auto at = [&](int k) { return out[size_t(k * n + i)]; };
        CHECK(at(0) == floor_div(x, y));
        CHECK(at(1) == floor_mod(x, y));
        CHECK(at(2) == floor_div(x, 4));
        CHECK(at(3) == floor_mod(x, 4));
        CHECK(at(4) == floor_div(x, 3));
        CHECK(at(5) == floor_mod(x, 3));
        CHECK(at(6) == floor_div(x, -3));
        CHECK(at(7) == floor_mod(x, -3));
        CHECK(at(8) == x / y);
        CHECK(at(9) == x % y);
    }
    // The power-of-two case is a shift and a mask, not a division.
    CHECK(module->llvm_ir().find("ashr") != std::string::npos);
}

TEST_CASE("floor division on int32 vectors") {
    KernelBuilder kb("vdiv");
    Var A = kb.tensor("A", i32), OUT = kb.tensor("OUT", i32);
    Expr index = Ramp::make(make_int(0), make_int(1), 8);
    Expr a = Load::make(i32.with_lanes(8), A, index);
    auto f = kb.finish(Seq::make({Store::make(OUT, a / make_const(i32.with_lanes(8), 8), index),
                                  Store::make(OUT, a % make_const(i32.with_lanes(8), 5), index + make_int(8, i64.with_lanes(8)))}));
    auto module = codegen::compile_llvm(f, Target::host());
    std::vector<int32_t> a_data{-17, -9, -8, -1, 0, 1, 8, 17}, out(16);
    REQUIRE(CallArgs().tensor(a_data).tensor(out).call(module->entry()) == 0);
    for (size_t i = 0; i < 8; ++i) {
        CHECK(out[i] == floor_div(a_data[i], 8));
        CHECK(out[8 + i] == floor_mod(a_data[i], 5));
    }
}

TEST_CASE("float modulo is x - floor(x / y) * y; float division is ordinary") {
    std::vector<float> a{-7.5f, 7.5f, -1.0f, 3.25f}, b{2.0f, -2.0f, 3.0f, 0.5f};
    std::vector<std::function<Expr(Expr, Expr)>> ops = {[](Expr x, Expr y) { return x % y; },
                                                        [](Expr x, Expr y) { return x / y; }};
    auto module = codegen::compile_llvm(binary_table("fmod", f32, ops, 4), Target::host());
    std::vector<float> out(8);
    REQUIRE(CallArgs().tensor(a).tensor(b).tensor(out).call(module->entry()) == 0);
    for (size_t i = 0; i < 4; ++i) {
        CHECK(out[i] == a[i] - std::floor(a[i] / b[i]) * b[i]);
        CHECK(out[4 + i] == a[i] / b[i]);
    }
}

TEST_CASE("casts, min, max and select") {
    KernelBuilder kb("casts");
    Var A = kb.tensor("A", f32), I = kb.tensor("I", i32), U = kb.tensor("U", u8), BOOL = kb.tensor("BOOL", boolean);
    Var i("i");
    Expr a = Load::make(f32, A, i);
    Stmt body = Seq::make({
        Store::make(I, cast(i32, a), i),                              // truncates toward zero
        Store::make(U, cast(u8, max(min(a, 255.0f), 0.0f)), i),
        Store::make(BOOL, a > 0.0f, i),
        Store::make(A, select(a > 0.0f, a, cast(f32, cast(i32, a)) * 2.0f), i),
    });
    auto module = codegen::compile_llvm(kb.finish(For::make(i, make_int(0), make_int(4), ForKind::Serial, body)),
                                        Target::host());
    std::vector<float> a_data{-3.7f, 2.5f, 300.0f, -0.5f};
    std::vector<int32_t> ints(4);
    std::vector<uint8_t> bytes(4);
    std::vector<uint8_t> bools(4, 7);
    CallArgs args;
    args.tensor(a_data).tensor(ints).tensor(bytes).tensor(bools);
    REQUIRE(args.call(module->entry()) == 0);
    CHECK(ints == std::vector<int32_t>{-3, 2, 300, 0});
    CHECK(bytes == std::vector<uint8_t>{0, 2, 255, 0});
    CHECK(bools == std::vector<uint8_t>{0, 1, 1, 0});
    CHECK(a_data == std::vector<float>{-6.0f, 2.5f, 300.0f, 0.0f});
}

TEST_CASE("if_then_else evaluates only the branch it picks") {
    // OUT[i] = i < n ? A[i] : -1 over i in [0, 2^40): the load of A[i] for i >= n would fault.
    KernelBuilder kb("guarded");
    Var A = kb.tensor("A", f32), OUT = kb.tensor("OUT", f32);
    Var n = kb.scalar("n", i64);
    Var i("i");
    Expr far = make_int(int64_t(1) << 40);
    Expr guarded = if_then_else(i < n, Load::make(f32, A, i), make_const(f32, -1));
    Stmt body = Seq::make({Store::make(OUT, guarded, i),
                           Store::make(OUT, if_then_else(far < n, Load::make(f32, A, far), make_const(f32, 5)), make_int(3))});
    auto module = codegen::compile_llvm(kb.finish(For::make(i, make_int(0), make_int(3), ForKind::Serial, body)),
                                        Target::host());
    std::vector<float> a{1, 2}, out(4, 0);
    REQUIRE(CallArgs().tensor(a).tensor(out).scalar(2).call(module->entry()) == 0);
    CHECK(out == std::vector<float>{1, 2, -1, 5});
}
