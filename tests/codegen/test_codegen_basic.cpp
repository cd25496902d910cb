// The LLVM backend on plain loops: scalar and vector, the assembly it produces, and
// kernels that share a name.
#include <doctest/doctest.h>

#include "random_floats.hpp"

#include <random>
#include <thread>

#include "codegen/kernel_builder.hpp"

using namespace weft;
using weft::test::random_floats;
using namespace weft::ir;
using weft::test::CallArgs;
using weft::test::KernelBuilder;

namespace {

// C[i] = A[i] * 2 + B[i] for i in [0, n), n a scalar argument.
PrimFunc scalar_axpy(const std::string& name) {
    KernelBuilder kb(name);
    Var A = kb.tensor("A", f32), B = kb.tensor("B", f32), C = kb.tensor("C", f32);
    Var n = kb.scalar("n", i64);
    Var i("i");
    Expr value = Load::make(f32, A, i) * 2.0f + Load::make(f32, B, i);
    return kb.finish(For::make(i, make_int(0), n, ForKind::Serial, Store::make(C, value, i)));
}

// C[16*i .. 16*i+15] = A[...] + B[...] as float32x16 vectors.
PrimFunc vector_add(int lanes) {
    KernelBuilder kb("vadd");
    Var A = kb.tensor("A", f32), B = kb.tensor("B", f32), C = kb.tensor("C", f32);
    Var n = kb.scalar("n", i64);
    Var i("i");
    Expr index = Ramp::make(i * make_int(lanes), make_int(1), lanes);
    Expr value = Load::make(f32.with_lanes(lanes), A, index) + Load::make(f32.with_lanes(lanes), B, index);
    return kb.finish(For::make(i, make_int(0), n / make_int(lanes), ForKind::Serial, Store::make(C, value, index)));
}

}  // namespace

TEST_CASE("a scalar loop computes what C++ computes") {
    auto module = codegen::compile_llvm(scalar_axpy("axpy"), Target::host());
    REQUIRE(static_cast<bool>(module->entry()));
    const size_t n = 1003;
    auto a = random_floats(n, 1), b = random_floats(n, 2);
    std::vector<float> c(n, 0);
    CHECK(CallArgs().tensor(a).tensor(b).tensor(c).scalar(int64_t(n)).call(module->entry()) == 0);
    for (size_t i = 0; i < n; ++i) REQUIRE(c[i] == a[i] * 2.0f + b[i]);
    CHECK(module->llvm_ir().find("define") != std::string::npos);
    CHECK(module->compile_ms() > 0);
    MESSAGE("JIT compile time of a scalar loop kernel: " << module->compile_ms() << " ms");
}

TEST_CASE("a vector loop uses contiguous vector loads and, on AVX-512, zmm registers") {
    auto module = codegen::compile_llvm(vector_add(16), Target::host());
    const size_t n = 16 * 37;
    auto a = random_floats(n, 3), b = random_floats(n, 4);
    std::vector<float> c(n, 0);
    CHECK(CallArgs().tensor(a).tensor(b).tensor(c).scalar(int64_t(n)).call(module->entry()) == 0);
    for (size_t i = 0; i < n; ++i) REQUIRE(c[i] == a[i] + b[i]);
    CHECK(module->llvm_ir().find("<16 x float>") != std::string::npos);
    CHECK(module->llvm_ir().find("gather") == std::string::npos);
    std::string assembly = module->assembly();
    CHECK(assembly.find("vadd") != std::string::npos);
    if (weft::test::host_has_avx512()) {
        CHECK(assembly.find("zmm") != std::string::npos);
    } else {
        MESSAGE("host lacks avx512f: not checking for zmm registers");
    }
    MESSAGE("JIT compile time of a float32x16 vector add kernel: " << module->compile_ms() << " ms");
}

TEST_CASE("a strided vector index becomes a gather") {
    KernelBuilder kb("gather");
    Var A = kb.tensor("A", f32), C = kb.tensor("C", f32);
    Var i("i");
    Expr src = Ramp::make(i * make_int(16), make_int(2), 8);   // every other element
    Expr dst = Ramp::make(i * make_int(8), make_int(1), 8);
    auto f = kb.finish(For::make(i, make_int(0), make_int(4), ForKind::Serial,
                                 Store::make(C, Load::make(f32.with_lanes(8), A, src), dst)));
    auto module = codegen::compile_llvm(f, Target::host());
    auto a = random_floats(64, 5);
    std::vector<float> c(32, 0);
    CHECK(CallArgs().tensor(a).tensor(c).call(module->entry()) == 0);
    for (size_t j = 0; j < 32; ++j) REQUIRE(c[j] == a[2 * j]);
}

TEST_CASE("an index b + ramp(0, 1, n) / c repeats a contiguous load instead of gathering") {
    // C[n i + k] = A[(n / c) i + k / c]: a nearest upsampling's read, both index orders.
    for (int c : {2, 4, 8}) {
        for (bool broadcast_first : {true, false}) {
            CAPTURE(c);
            CAPTURE(broadcast_first);
            const int n = 16;
            KernelBuilder kb("repeat");
            Var A = kb.tensor("A", f32), C = kb.tensor("C", f32);
            Var i("i");
            Expr first = Broadcast::make(i * make_int(n / c), n);
            Expr part = Div::make(Ramp::make(make_int(0), make_int(1), n), Broadcast::make(make_int(c), n));
            Expr src = broadcast_first ? Add::make(first, part) : Add::make(part, first);
            Expr dst = Ramp::make(i * make_int(n), make_int(1), n);
            auto f = kb.finish(For::make(i, make_int(0), make_int(5), ForKind::Serial,
                                         Store::make(C, Load::make(f32.with_lanes(n), A, src), dst)));
            auto module = codegen::compile_llvm(f, Target::host());
            auto a = random_floats(size_t(5 * n / c), 6);
            std::vector<float> out(size_t(5 * n), 0);
            CHECK(CallArgs().tensor(a).tensor(out).call(module->entry()) == 0);
            for (size_t j = 0; j < out.size(); ++j) REQUIRE(out[j] == a[j / size_t(c)]);
            CHECK(module->llvm_ir().find("gather") == std::string::npos);
            CHECK(module->llvm_ir().find("shufflevector") != std::string::npos);
        }
    }
}

TEST_CASE("b + ramp / c with broadcasts added and subtracted around it still loads and shuffles") {
    // C[n i + k] = A[(n / c) i + k / c + 1 - 2 + 3]: a linear upsampling's taps at m - 1 and
    // m + 1, the offsets as broadcasts on either side of the repeated ramp.
    for (int c : {2, 8}) {
        CAPTURE(c);
        const int n = 16;
        KernelBuilder kb("repeat_offset");
        Var A = kb.tensor("A", f32), C = kb.tensor("C", f32);
        Var i("i");
        auto splat = [&](Expr v) { return Broadcast::make(v, n); };
        Expr part = Div::make(Ramp::make(make_int(0), make_int(1), n), splat(make_int(c)));
        Expr src = Add::make(Sub::make(Add::make(splat(make_int(1)), Add::make(splat(i * make_int(n / c)), part)),
                                       splat(make_int(2))),
                             splat(make_int(3)));
        Expr dst = Ramp::make(i * make_int(n), make_int(1), n);
        auto f = kb.finish(For::make(i, make_int(0), make_int(5), ForKind::Serial,
                                     Store::make(C, Load::make(f32.with_lanes(n), A, src), dst)));
        auto module = codegen::compile_llvm(f, Target::host());
        auto a = random_floats(size_t(5 * n / c + 2), 7);
        std::vector<float> out(size_t(5 * n), 0);
        CHECK(CallArgs().tensor(a).tensor(out).call(module->entry()) == 0);
        for (size_t j = 0; j < out.size(); ++j) REQUIRE(out[j] == a[j / size_t(c) + 2]);
        CHECK(module->llvm_ir().find("gather") == std::string::npos);
    }
    // A ramp subtracted is no repeated read: gathered (and right).
    const int n = 16;
    KernelBuilder kb("repeat_minus");
    Var A = kb.tensor("A", f32), C = kb.tensor("C", f32);
    Var i("i");
    Expr part = Div::make(Ramp::make(make_int(0), make_int(1), n), Broadcast::make(make_int(4), n));
    Expr src = Sub::make(Broadcast::make(make_int(3), n), part);
    auto f = kb.finish(For::make(i, make_int(0), make_int(1), ForKind::Serial,
                                 Store::make(C, Load::make(f32.with_lanes(n), A, src), Ramp::make(make_int(0), make_int(1), n))));
    auto module = codegen::compile_llvm(f, Target::host());
    auto a = random_floats(4, 8);
    std::vector<float> out(size_t(n), 0);
    CHECK(CallArgs().tensor(a).tensor(out).call(module->entry()) == 0);
    for (size_t j = 0; j < out.size(); ++j) REQUIRE(out[j] == a[3 - j / 4]);
}

TEST_CASE("two kernels with the same name coexist") {
    // Same name, different code: y = 2x + z versus y = x - z.
    KernelBuilder kb("same_name");
    Var A = kb.tensor("A", f32), B = kb.tensor("B", f32), C = kb.tensor("C", f32);
    Var n = kb.scalar("n", i64);
    Var i("i");
    auto minus = kb.finish(For::make(i, make_int(0), n, ForKind::Serial,
                                     Store::make(C, Load::make(f32, A, i) - Load::make(f32, B, i), i)));
    auto first = codegen::compile_llvm(scalar_axpy("same_name"), Target::host());
    auto second = codegen::compile_llvm(minus, Target::host());
    std::vector<float> a{1, 2, 3}, b{10, 20, 30}, c(3);
    CHECK(CallArgs().tensor(a).tensor(b).tensor(c).scalar(3).call(first->entry()) == 0);
    CHECK(c == std::vector<float>{12, 24, 36});
    CHECK(CallArgs().tensor(a).tensor(b).tensor(c).scalar(3).call(second->entry()) == 0);
    CHECK(c == std::vector<float>{-9, -18, -27});
    // Releasing one leaves the other working.
    first.reset();
    CHECK(CallArgs().tensor(a).tensor(b).tensor(c).scalar(3).call(second->entry()) == 0);
}

TEST_CASE("kernels compile concurrently from several threads") {
    std::vector<std::thread> threads;
    std::vector<int> failures(4, 0);
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([t, &failures] {
            for (int k = 0; k < 3; ++k) {
                auto module = codegen::compile_llvm(scalar_axpy("concurrent"), Target::host());
                std::vector<float> a{float(t), 1}, b{1, float(k)}, c(2);
                if (CallArgs().tensor(a).tensor(b).tensor(c).scalar(2).call(module->entry()) != 0 ||
                    c != std::vector<float>{2.0f * float(t) + 1, 2.0f + float(k)})
                    ++failures[size_t(t)];
            }
        });
    for (auto& th : threads) th.join();
    CHECK(failures == std::vector<int>(4, 0));
}

TEST_CASE("Target::host describes this machine") {
    Target t = Target::host();
    CHECK(t.is_cpu());
    CHECK(!t.triple.empty());
    CHECK(!t.cpu.empty());
    CHECK((t.vector_bits == 128 || t.vector_bits == 256 || t.vector_bits == 512));
    CHECK((t.vector_bits == 512) == weft::test::host_has_avx512());
    CHECK(t.uses_avx512() == weft::test::host_has_avx512());
}

TEST_CASE("Target::has_feature matches whole entries of the feature string") {
    Target t;
    t.triple = "x86_64-pc-linux-gnu";
    t.vector_bits = 512;
    t.features = "+avx2,+avx512fp16,-avx512vnni,+fma";
    CHECK(t.has_feature("avx2"));
    CHECK(t.has_feature("fma"));
    CHECK(!t.has_feature("avx512f"));  // only a prefix of avx512fp16
    CHECK(!t.has_feature("avx512vnni"));  // disabled
    CHECK(!t.has_feature("avx"));
    CHECK(!t.uses_avx512());
    t.features += ",+avx512f";
    CHECK(t.has_feature("avx512f"));
    CHECK(t.uses_avx512());
    t.vector_bits = 256;  // AVX-512 present, but the code keeps to 256-bit vectors
    CHECK(!t.uses_avx512());
}
