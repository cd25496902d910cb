// Kernel's checked call, with a hand-written entry in place of generated code:
// C(n, 5) = alpha * A(n, 3) @ B(3, 5), n symbolic, alpha a float32 scalar.
#include <doctest/doctest.h>

#include <cstdlib>
#include <new>
#include <string>

#include "weft/ir/op.hpp"
#include "weft/runtime/c_runtime.hpp"
#include "weft/runtime/kernel.hpp"

using namespace weft;

#include "allocation_counter.hpp"

namespace {

// A KernelModule around any function with the kernel ABI.
class FnModule : public KernelModule {
public:
    explicit FnModule(WeftKernelFn fn) : fn_(fn) {}
    WeftKernelFn entry() const override { return fn_; }
    std::string llvm_ir() const override { return "; hand-written"; }

private:
    WeftKernelFn fn_;
};

int32_t scaled_matmul(const WeftValue* args, const int32_t* codes, int32_t n) {
    if (n != 4 || codes[0] != WEFT_ARG_TENSOR || codes[3] != WEFT_ARG_FLOAT) {
        weft_runtime_set_error("bad arguments");
        return 1;
    }
    auto* A = static_cast<const WeftTensorArg*>(args[0].v_handle);
    auto* B = static_cast<const WeftTensorArg*>(args[1].v_handle);
    auto* C = static_cast<const WeftTensorArg*>(args[2].v_handle);
    const double alpha = args[3].v_float;
    if (alpha < 0) {
        weft_runtime_set_error("weft: alpha must be >= 0");
        return 3;
    }
    auto* a = static_cast<const float*>(A->data);
    auto* b = static_cast<const float*>(B->data);
    auto* c = static_cast<float*>(C->data);
    for (int64_t i = 0; i < A->shape[0]; ++i)
        for (int64_t j = 0; j < 5; ++j) {
            float sum = 0;
            for (int64_t k = 0; k < 3; ++k)
                sum += a[i * A->strides[0] + k * A->strides[1]] * b[k * B->strides[0] + j * B->strides[1]];
            c[i * C->strides[0] + j * C->strides[1]] = float(alpha) * sum;
        }
    return 0;
}

ir::KernelArg tensor(const std::string& name, DataType t, std::vector<ir::Expr> shape) {
    return ir::KernelArg{ir::KernelArg::Kind::Tensor, name, ir::Var(name, DataType::handle()), t, std::move(shape)};
}

Kernel make_scaled_matmul() {
    ir::Var n("n");
    ir::PrimFunc f;
    f.name = "mm";
    f.args = {tensor("A", f32, {n, ir::make_int(3)}), tensor("B", f32, {ir::make_int(3), ir::make_int(5)}),
              tensor("C", f32, {n, ir::make_int(5)}),
              ir::KernelArg{ir::KernelArg::Kind::Scalar, "alpha", ir::Var("alpha", f32), f32, {}}};
    return Kernel(std::make_shared<FnModule>(scaled_matmul), f);
}

}  // namespace

TEST_CASE("a good call computes the right numbers") {
    Kernel mm = make_scaled_matmul();
    CHECK(mm.defined());
    CHECK(mm.name() == "mm");
    CHECK(mm.signature().args.size() == 4);
    CHECK(mm.llvm_ir() == "; hand-written");
    auto a = Buffer<float>::random({7, 3}, -1, 1, 1);
    auto b = Buffer<float>::random({3, 5}, -1, 1, 2);
    Buffer<float> c({7, 5});
    mm(a, b, c, 2.0f);
    for (int64_t i = 0; i < 7; ++i)
        for (int64_t j = 0; j < 5; ++j) {
            float want = 0;
            for (int64_t k = 0; k < 3; ++k) want += a(i, k) * b(k, j);
            CHECK(c(i, j) == doctest::Approx(2 * want));
        }
    // An int converts to a float parameter; a strided B works through its strides.
    std::vector<float> bt(15);
    for (int64_t k = 0; k < 3; ++k)
        for (int64_t j = 0; j < 5; ++j) bt[size_t(j * 3 + k)] = b(k, j);
    Buffer<float> b_view(bt.data(), {3, 5}, {1, 3});
    Buffer<float> c2({7, 5});
    mm(a, b_view, c2, 2);
    for (int64_t i = 0; i < 7; ++i)
        for (int64_t j = 0; j < 5; ++j) CHECK(c2(i, j) == doctest::Approx(c(i, j)));
}

#if WEFT_TEST_COUNT_ALLOCATIONS
TEST_CASE("a checked call allocates nothing on the heap") {
    Kernel mm = make_scaled_matmul();
    Buffer<float> a({4, 3}), b({3, 5}), c({4, 5});
    mm(a, b, c, 1.0f);  // warm up (thread-locals, lazy statics)
    weft_test_alloc::allocations = 0;
    weft_test_alloc::counting = true;
    mm(a, b, c, 1.0f);
    weft_test_alloc::counting = false;
    CHECK(weft_test_alloc::allocations == 0);
    // The counter itself works: a vector and its buffer. (The pointer is volatile, so the
    // compiler cannot elide the two allocations as unobservable: GCC 12 at -O2 removed one.)
    weft_test_alloc::counting = true;
    std::vector<int>* volatile probe = new std::vector<int>(10);
    weft_test_alloc::counting = false;
    delete probe;
    CHECK(weft_test_alloc::allocations == 2);
}
#endif

TEST_CASE("the dynamic call takes a run-time argument list") {
    Kernel mm = make_scaled_matmul();
    Buffer<float> a({2, 3}), b({3, 5}), c({2, 5});
    a.fill(1);
    b.fill(2);
    const BufferRef& erased = c;
    std::vector<KernelArgValue> args{a, b, erased, 0.5};
    mm.call(args);
    CHECK(c(1, 4) == doctest::Approx(3.0f));
}

TEST_CASE("every mismatch is a weft::Error that names the kernel and the argument") {
    Kernel mm = make_scaled_matmul();
    Buffer<float> a({4, 3}), b({3, 5}), c({4, 5});
    using doctest::Contains;

    CHECK_THROWS_WITH_AS(mm(a, b, c), Contains("kernel 'mm' takes 4 arguments (A, B, C, alpha) but 3 were passed"),
                         Error);
    CHECK_THROWS_WITH_AS(mm(a, 1.0f, c, 1.0f), Contains("argument 'B' (#2) is a tensor of float32 but a scalar (float)"),
                         Error);
    CHECK_THROWS_WITH_AS(mm(a, b, c, b), Contains("argument 'alpha' (#4) is a scalar of float32 but a Buffer<float>"),
                         Error);
    Buffer<double> bd({3, 5});
    CHECK_THROWS_WITH_AS(mm(a, bd, c, 1.0f),
                         Contains("kernel 'mm': argument 'B' has dtype float32 but a Buffer<double> was passed"), Error);
    Buffer<float> b3({3, 5, 1});
    CHECK_THROWS_WITH_AS(mm(a, b3, c, 1.0f), Contains("argument 'B' has 2 dimensions but the buffer passed has 3"),
                         Error);
    Buffer<float> b_wide({3, 6});
    CHECK_THROWS_WITH_AS(mm(a, b_wide, c, 1.0f), Contains("argument 'B' dimension 1 must be 5 but the buffer passed has 6"),
                         Error);
    Buffer<float> c_short({3, 5});
    CHECK_THROWS_WITH_AS(mm(a, b, c_short, 1.0f),
                         Contains("argument 'C' dimension 0 is 'n', which argument 'A' dimension 0 set to 4, but here "
                                  "it is 3"),
                         Error);
    Buffer<float> undefined;
    CHECK_THROWS_WITH_AS(mm(a, undefined, c, 1.0f), Contains("argument 'B' is an undefined"), Error);
    // A failure inside the kernel comes back with the kernel's message.
    CHECK_THROWS_WITH_AS(mm(a, b, c, -1.0f), Contains("kernel 'mm' failed: alpha must be >= 0"), Error);
    CHECK(runtime::take_last_error().empty());  // consumed by the throw
    // The kernel still works after all that.
    mm(a, b, c, 1.0f);
}

TEST_CASE("integer scalars: exact type and range and consistency with symbolic dimensions") {
    // k(X: int32[n], n: int64, s: int8): an entry that does nothing.
    ir::Var n("n");
    ir::PrimFunc f;
    f.name = "k";
    f.args = {tensor("X", i32, {n}), ir::KernelArg{ir::KernelArg::Kind::Scalar, "n", n, i64, {}},
              ir::KernelArg{ir::KernelArg::Kind::Scalar, "s", ir::Var("s", i8), i8, {}}};
    Kernel k(std::make_shared<FnModule>([](const WeftValue*, const int32_t*, int32_t) -> int32_t { return 0; }), f);
    Buffer<int32_t> x({6});
    k(x, 6, 100);
    k(x, int64_t(6), int8_t(-128));
    using doctest::Contains;
    CHECK_THROWS_WITH_AS(k(x, 5, 0), Contains("scalar argument 'n' is 'n', which argument 'X' dimension 0 set to 6"),
                         Error);
    CHECK_THROWS_WITH_AS(k(x, 6.0, 0), Contains("argument 'n' is a scalar of int64 but a double was passed"), Error);
    CHECK_THROWS_WITH_AS(k(x, 6, 200), Contains("argument 's' is int8 but the value passed, 200, does not fit"), Error);
}

TEST_CASE("an entry that fails without a message still gives a weft::Error") {
    ir::PrimFunc f;
    f.name = "silent";
    Kernel k(std::make_shared<FnModule>([](const WeftValue*, const int32_t*, int32_t) -> int32_t { return 9; }), f);
    CHECK_THROWS_WITH_AS(k(), doctest::Contains("kernel 'silent' failed: error code 9"), Error);
}

TEST_CASE("a default-constructed Kernel cannot be called") {
    Kernel k;
    CHECK(!k.defined());
    CHECK(k.name().empty());
    CHECK(k.llvm_ir().empty());
    Buffer<float> a({1});
    CHECK_THROWS_WITH_AS(k(a), doctest::Contains("empty"), Error);
    CHECK_THROWS_AS(k.signature(), Error);
}
