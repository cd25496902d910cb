// A kernel's own entry checks its arguments for callers of the C ABI (ir/abi.hpp), who skip
// Kernel's C++ checks: every mistake returns non-zero with a message naming the kernel, the
// argument and what differs, and the kernel touches no memory. The checks run in the
// runtime (weft_runtime_check_arguments) on a table made from the signature. Kernel::call
// checks the same in C++ and runs the entry without them (KernelModule::unchecked_entry).
#include <doctest/doctest.h>

#include <deque>
#include <random>
#include <string>
#include <vector>

#include "lower/lowered_text.hpp"
#include "weft/runtime/c_runtime.hpp"
#include "weft/weft.hpp"

using namespace weft;
using doctest::Contains;

namespace {

// Arguments in ABI form, with any shape, strides and dtype (also wrong ones).
class RawCall {
public:
    RawCall& tensor(void* data, DataType t, std::vector<int64_t> shape, std::vector<int64_t> strides = {}) {
        Raw& r = tensors_.emplace_back();
        r.shape = std::move(shape);
        r.strides = strides.empty() ? BufferRef::compact_strides(r.shape) : std::move(strides);
        r.arg = WeftTensorArg{data, r.shape.data(), r.strides.data(), int32_t(r.shape.size()), uint8_t(t.code),
                              t.bits, t.lanes};
        WeftValue v;
        v.v_handle = &r.arg;
        return push(v, WEFT_ARG_TENSOR);
    }
    RawCall& null_tensor() {
        WeftValue v;
        v.v_handle = nullptr;
        return push(v, WEFT_ARG_TENSOR);
    }
    RawCall& scalar(int64_t x) {
        WeftValue v;
        v.v_int = x;
        return push(v, WEFT_ARG_INT);
    }
    RawCall& scalar_float(double x) {
        WeftValue v;
        v.v_float = x;
        return push(v, WEFT_ARG_FLOAT);
    }
    // The entry's return code; `message` gets what it reported.
    int32_t call(const Kernel& k, std::string* message = nullptr) { return call(k.module()->entry(), message); }
    int32_t call(WeftKernelFn entry, std::string* message = nullptr) {
        runtime::take_last_error();
        int32_t rc = entry(values_.data(), codes_.data(), int32_t(values_.size()));
        std::string m = runtime::take_last_error();
        if (message) *message = m;
        return rc;
    }

private:
    struct Raw {
        std::vector<int64_t> shape, strides;
        WeftTensorArg arg{};
    };
    RawCall& push(WeftValue v, int32_t code) {
        values_.push_back(v);
        codes_.push_back(code);
        return *this;
    }
    std::deque<Raw> tensors_;  // pointers into it stay valid as it grows
    std::vector<WeftValue> values_;
    std::vector<int32_t> codes_;
};

std::vector<float> random_floats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-2.f, 2.f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

// Out[n, m] = A[n, m] * alpha + B[m], symbolic n and m, optionally with a promised alignment.
struct ScaledRows {
    Var n{"n"}, m{"m"};
    Var alpha{"alpha", f32};
    Tensor A = placeholder({n, m}, f32, "A");
    Tensor B = placeholder({m}, f32, "B");
    Tensor Out = compute({n, m}, [&](Expr i, Expr j) { return A(i, j) * alpha + B(j); }, "Out");
    Kernel build_kernel(int alignment = 0) {
        Schedule s = create_schedule(Out);
        return build(s, {A, alpha, B, Out}, Target::host(), {.name = "scaled", .argument_alignment = alignment});
    }
};

}  // namespace

TEST_CASE("the entry accepts right arguments and computes with them") {
    ScaledRows p;
    Kernel k = p.build_kernel();
    const int64_t n = 5, m = 7;
    auto a = random_floats(size_t(n * m), 1), b = random_floats(size_t(m), 2);
    std::vector<float> out(size_t(n * m), -99.f);
    std::string message;
    REQUIRE(RawCall().tensor(a.data(), f32, {n, m}).scalar_float(1.5).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {n, m}).call(k, &message) == 0);
    CHECK(message.empty());
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j)
            REQUIRE(out[size_t(i * m + j)] == doctest::Approx(a[size_t(i * m + j)] * 1.5f + b[size_t(j)]).epsilon(1e-6));
}

TEST_CASE("the entry's checks are one runtime call, not an assert per argument") {
    ScaledRows p;
    Schedule s = create_schedule(p.Out);
    std::string program = ir::to_string(lower(s, {p.A, p.alpha, p.B, p.Out}, {.name = "scaled"}).body);
    CHECK(program.find("assert(weft.check_arguments())") != std::string::npos);
    CHECK(program.find("assert(weft.arg_") == std::string::npos);
    CHECK(program.find("must be") == std::string::npos);
    std::string llvm_ir = p.build_kernel().llvm_ir();
    CHECK(llvm_ir.find("call i32 @weft_runtime_check_arguments") != std::string::npos);
    CHECK(llvm_ir.find("weft.error") == std::string::npos);  // no message strings of inline checks
}

TEST_CASE("each wrong argument of the C ABI is reported and nothing is written") {
    ScaledRows p;
    Kernel k = p.build_kernel();
    const int64_t n = 3, m = 4;
    auto a = random_floats(size_t(n * m), 3), b = random_floats(size_t(m + 1), 4);
    std::vector<double> a64(size_t(n * m), 1.0);
    std::vector<float> out(size_t(n * m) + 8, -99.f);
    auto expect = [&](RawCall call, const std::string& part) {
        std::string message;
        CHECK(call.call(k, &message) != 0);
        CHECK_MESSAGE(message.find(part) != std::string::npos, message);
        CHECK(message.rfind("kernel 'scaled': ", 0) == 0);
        for (float x : out) REQUIRE(x == -99.f);
    };
    auto good_a = [&](RawCall c) { return c.tensor(a.data(), f32, {n, m}); };
    expect(good_a(RawCall()).scalar_float(1.0).tensor(b.data(), f32, {m}), "expected 4 arguments, got 3");
    expect(RawCall().scalar(1).scalar_float(1.0).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {n, m}),
           "argument 'A' (#0) must be a tensor");
    expect(RawCall().null_tensor().scalar_float(1.0).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {n, m}),
           "argument 'A' (#0) is a null tensor pointer");
    expect(good_a(RawCall()).scalar(1).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {n, m}),
           "argument 'alpha' (#1) must be a floating-point scalar");
    expect(RawCall().tensor(a.data(), f32, {n * m}).scalar_float(1.0).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {n, m}),
           "argument 'A' (#0) must have 2 dimensions, got 1");
    expect(RawCall().tensor(a64.data(), f64, {n, m}).scalar_float(1.0).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {n, m}),
           "argument 'A' (#0) must have dtype float32, got float64");
    expect(RawCall().tensor(a.data(), f32, {0, m}).scalar_float(1.0).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {0, m}),
           "argument 'A' (#0): dimension 0 must be positive, got 0");
    expect(good_a(RawCall()).scalar_float(1.0).tensor(b.data(), f32, {m + 1}).tensor(out.data(), f32, {n, m}),
           "argument 'B' (#2): dimension 0 must be 4 (the size of argument 'A' dimension 1), got 5");
    expect(good_a(RawCall()).scalar_float(1.0).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {n + 1, m}),
           "argument 'Out' (#3): dimension 0 must be 3 (the size of argument 'A' dimension 0), got 4");
    // A view of every other column: not compact.
    expect(RawCall().tensor(a.data(), f32, {n, 2}, {m, 2}).scalar_float(1.0).tensor(b.data(), f32, {2}).tensor(out.data(), f32, {n, 2}),
           "argument 'A' (#0) must be compact (row-major); its stride 1 must be 1, got 2");
}

TEST_CASE("a stride under an extent of 1 is free, as for a compact buffer") {
    ScaledRows p;
    Kernel k = p.build_kernel();
    const int64_t m = 6;
    auto a = random_floats(size_t(m), 5), b = random_floats(size_t(m), 6);
    std::vector<float> out(size_t(m), -99.f);
    // One row, whose row stride says nothing about its layout.
    REQUIRE(RawCall().tensor(a.data(), f32, {1, m}, {12345, 1}).scalar_float(-0.5).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {1, m}).call(k) == 0);
    for (int64_t j = 0; j < m; ++j) CHECK(out[size_t(j)] == doctest::Approx(a[size_t(j)] * -0.5f + b[size_t(j)]));
}

TEST_CASE("a promised alignment is checked by the entry") {
    ScaledRows p;
    Kernel k = p.build_kernel(64);
    const int64_t n = 2, m = 16;
    Buffer<float> a({n * m + 16}), b({m}), out({n * m});
    std::string message;
    CHECK(RawCall().tensor(a.data() + 1, f32, {n, m}).scalar_float(1.0).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {n, m}).call(k, &message) != 0);
    CHECK_MESSAGE(message.find("argument 'A' (#0)'s data must be aligned to 64 bytes") != std::string::npos, message);
    CHECK(RawCall().tensor(a.data() + 16, f32, {n, m}).scalar_float(1.0).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {n, m}).call(k) == 0);
}

TEST_CASE("symbols shared between scalars and dimensions must agree") {
    // n first as a scalar, then as X's extent; Y's extent is n * 2, checked in the kernel.
    Var n("n");
    Tensor X = placeholder({n}, f32, "X");
    Tensor Y = compute({n * 2}, [&](Expr i) { return X(i / 2) + 1.f; }, "Y");
    Schedule s = create_schedule(Y);
    Kernel widen = build(s, {n, X, Y}, Target::host(), {.name = "widen"});
    auto x = random_floats(5, 7);
    std::vector<float> y(10, -99.f);
    std::string message;
    CHECK(RawCall().scalar(4).tensor(x.data(), f32, {5}).tensor(y.data(), f32, {10}).call(widen, &message) != 0);
    CHECK_MESSAGE(message.find("kernel 'widen': argument 'X' (#1): dimension 0 must be 4 (scalar argument 'n'), got 5") !=
                      std::string::npos,
                  message);
    CHECK(RawCall().scalar(5).tensor(x.data(), f32, {5}).tensor(y.data(), f32, {9}).call(widen, &message) != 0);
    CHECK_MESSAGE(message.find("kernel 'widen': argument 'Y' (#2): dimension 0 must be n * 2") != std::string::npos, message);
    for (float v : y) REQUIRE(v == -99.f);
    REQUIRE(RawCall().scalar(5).tensor(x.data(), f32, {5}).tensor(y.data(), f32, {10}).call(widen) == 0);
    for (int i = 0; i < 10; ++i) CHECK(y[size_t(i)] == doctest::Approx(x[size_t(i / 2)] + 1.f));

    // n first as X's extent, then as a scalar.
    Tensor Z = compute({n}, [&](Expr i) { return X(i) * 3.f; }, "Z");
    Schedule s2 = create_schedule(Z);
    Kernel triple = build(s2, {X, n, Z}, Target::host(), {.name = "triple"});
    std::vector<float> z(5, -99.f);
    CHECK(RawCall().tensor(x.data(), f32, {5}).scalar(6).tensor(z.data(), f32, {5}).call(triple, &message) != 0);
    CHECK_MESSAGE(message.find("kernel 'triple': argument 'n' (#1) must be 5 (the size of argument 'X' dimension 0), got 6") !=
                      std::string::npos,
                  message);
    for (float v : z) REQUIRE(v == -99.f);
}

TEST_CASE("Kernel runs the entry without the checks, having made them in C++") {
    ScaledRows p;
    Kernel k = p.build_kernel();
    WeftKernelFn unchecked = k.module()->unchecked_entry();
    REQUIRE(bool(unchecked));
    CHECK(bool(unchecked != k.module()->entry()));
    std::string llvm_ir = k.llvm_ir();
    CHECK(llvm_ir.find(".unchecked(") != std::string::npos);
    CHECK(lowered_text::count(llvm_ir, "call i32 @weft_runtime_check_arguments") == 1);  // only in the checked entry
    // The unchecked entry computes the same, given right arguments.
    const int64_t n = 3, m = 5;
    auto a = random_floats(size_t(n * m), 8), b = random_floats(size_t(m), 9);
    std::vector<float> out(size_t(n * m), -99.f);
    REQUIRE(RawCall().tensor(a.data(), f32, {n, m}).scalar_float(0.25).tensor(b.data(), f32, {m}).tensor(out.data(), f32, {n, m}).call(unchecked) == 0);
    for (int64_t i = 0; i < n * m; ++i) CHECK(out[size_t(i)] == doctest::Approx(a[size_t(i)] * 0.25f + b[size_t(i % m)]));

    // What only the entry checked before is checked by the call now: the strides. (Positive
    // sizes: a Buffer has no empty dimension.)
    Buffer<float> wide({n, 2 * m}), bias({m}), y({n, m});
    BufferRef every_other(wide.data(), f32, {n, m}, {2 * m, 2});
    CHECK_THROWS_WITH_AS(k(every_other, 1.0f, bias, y),
                         Contains("argument 'A' (#1) must be compact (row-major); its stride 0 must be 5, got 10"), Error);
    // A size that is an expression of symbols is still the kernel's own assert.
    Var s("s");
    Tensor X = placeholder({s}, f32, "X");
    Tensor Y = compute({s * 2}, [&](Expr i) { return X(i / 2); }, "Y");
    Schedule sched = create_schedule(Y);
    Kernel widen = build(sched, {X, Y}, Target::host(), {.name = "widen"});
    Buffer<float> x5({5}), y9({9}), y10({10});
    CHECK_THROWS_WITH_AS(widen(x5, y9), Contains("kernel 'widen': argument 'Y' (#1): dimension 0 must be s * 2"), Error);
    CHECK_NOTHROW(widen(x5, y10));
}
