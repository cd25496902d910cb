// Control flow, memory and the runtime interface of LLVM-compiled kernels: parallel loops,
// allocations, assertions, GPU-only loops on a CPU target.
#include <doctest/doctest.h>

#include <atomic>
#include <numeric>

#include "codegen/kernel_builder.hpp"
#include "weft/runtime/c_runtime.hpp"

using namespace weft;
using namespace weft::ir;
using weft::test::CallArgs;
using weft::test::KernelBuilder;

TEST_CASE("a parallel loop computes every row, with a captured scalar and buffers") {
    // for (y parallel in [0, rows)) for (x in [0, cols)) OUT[y*cols + x] = IN[y*cols + x] * scale + y
    KernelBuilder kb("par");
    Var IN = kb.tensor("IN", f32), OUT = kb.tensor("OUT", f32);
    Var rows = kb.scalar("rows", i64), cols = kb.scalar("cols", i64);
    Var scale = kb.scalar("scale", f32);
    Var y("y"), x("x");
    Expr at = y * cols + x;
    Stmt inner = For::make(x, make_int(0), cols, ForKind::Serial,
                           Store::make(OUT, Load::make(f32, IN, at) * scale + cast(f32, y), at));
    auto f = kb.finish(For::make(y, make_int(0), rows, ForKind::Parallel, inner));
    auto module = codegen::compile_llvm(f, Target::host());
    CHECK(module->llvm_ir().find("weft_runtime_parallel_for") != std::string::npos);
    const int64_t R = 97, C = 33;
    std::vector<float> in(static_cast<size_t>(R * C)), out(static_cast<size_t>(R * C), 0.0f);
    std::iota(in.begin(), in.end(), 0.0f);
    REQUIRE(CallArgs().tensor(in).tensor(out).scalar(R).scalar(C).scalar_float(0.5).call(module->entry()) == 0);
    for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < C; ++c) REQUIRE(out[size_t(r * C + c)] == in[size_t(r * C + c)] * 0.5f + float(r));
}

TEST_CASE("a failing assertion inside a parallel loop stops the kernel with its message") {
    KernelBuilder kb("par_assert");
    Var OUT = kb.tensor("OUT", i64);
    Var y("y");
    Stmt body = AssertStmt::make(y != make_int(5), "row 5 is forbidden", Store::make(OUT, y, y));
    auto module = codegen::compile_llvm(kb.finish(For::make(y, make_int(0), make_int(8), ForKind::Parallel, body)),
                                        Target::host());
    std::vector<int64_t> out(8, -1);
    CHECK(CallArgs().tensor(out).call(module->entry()) != 0);
    CHECK(runtime::take_last_error() == "row 5 is forbidden");
}

TEST_CASE("a failing assertion returns non-zero and reports its message") {
    KernelBuilder kb("checked");
    Var A = kb.tensor("A", f32);
    Var n = kb.scalar("n", i64);
    Expr shape0 = Call::make(i64, "weft.arg_shape", {make_int(0), make_int(0)}, Call::CallKind::Intrinsic);
    Stmt body = AssertStmt::make(shape0 >= n, "checked: A has fewer than n elements",
                                 Store::make(A, make_const(f32, 1), n - make_int(1)));
    auto module = codegen::compile_llvm(kb.finish(body), Target::host());
    std::vector<float> a(4, 0);
    CHECK(CallArgs().tensor(a).scalar(4).call(module->entry()) == 0);
    CHECK(a[3] == 1);
    CHECK(CallArgs().tensor(a).scalar(5).call(module->entry()) != 0);
    CHECK(runtime::take_last_error() == "checked: A has fewer than n elements");
    // The argument-count check of the prologue, too.
    CHECK(CallArgs().tensor(a).call(module->entry()) != 0);
    CHECK(runtime::take_last_error() == "checked: wrong number of arguments");
}

TEST_CASE("the argument intrinsics read WeftTensorArg and the type codes") {
    KernelBuilder kb("introspect");
    Var OUT = kb.tensor("OUT", i64);
    auto arg = [](const char* name, std::vector<Expr> args) {
        return Call::make(i32, name, std::move(args), Call::CallKind::Intrinsic);
    };
    std::vector<Expr> facts = {
        arg("weft.num_args", {}),
        arg("weft.arg_type_code", {make_int(0)}),
        arg("weft.arg_type_code", {make_int(1)}),
        arg("weft.arg_ndim", {make_int(0)}),
        arg("weft.arg_dtype_code", {make_int(0)}),
        arg("weft.arg_dtype_bits", {make_int(0)}),
        arg("weft.arg_dtype_lanes", {make_int(0)}),
        cast(i32, Call::make(i64, "weft.arg_stride", {make_int(0), make_int(0)}, Call::CallKind::Intrinsic)),
        cast(i32, Call::make(i64, "weft.arg_int", {make_int(1)}, Call::CallKind::Intrinsic)),
    };
    std::vector<Stmt> stores;
    for (size_t k = 0; k < facts.size(); ++k) stores.push_back(Store::make(OUT, cast(i64, facts[k]), make_int(int64_t(k))));
    Var unused = kb.scalar("k", i64);
    auto module = codegen::compile_llvm(kb.finish(Seq::make(stores)), Target::host());
    std::vector<int64_t> out(9, -1);
    REQUIRE(CallArgs().tensor(out).scalar(42).call(module->entry()) == 0);
    CHECK(out == std::vector<int64_t>{2, WEFT_ARG_TENSOR, WEFT_ARG_INT, 1, int64_t(DataType::Code::Int), 64, 1, 1, 42});
}

TEST_CASE("local and global allocations hold intermediate results") {
    // tmp[j] = A[j] * A[j] (local, 64 floats, inside a loop); big[j] = tmp[j] + 1 (global,
    // n floats, symbolic); OUT[j] = big[j] * 2.
    KernelBuilder kb("alloc");
    Var A = kb.tensor("A", f32), OUT = kb.tensor("OUT", f32);
    Var n = kb.scalar("n", i64);
    Var tmp("tmp", DataType::handle()), big("big", DataType::handle());
    Var r("r"), j("j");
    Stmt fill_tmp = For::make(j, make_int(0), make_int(64), ForKind::Serial,
                              Store::make(tmp, Load::make(f32, A, r * make_int(64) + j) * Load::make(f32, A, r * make_int(64) + j), j));
    Stmt fill_big = For::make(j, make_int(0), make_int(64), ForKind::Serial,
                              Store::make(big, Load::make(f32, tmp, j) + 1.0f, r * make_int(64) + j));
    Stmt rows = For::make(r, make_int(0), n / make_int(64), ForKind::Serial,
                          Allocate::make(tmp, f32, {make_int(64)}, "local", Seq::make({fill_tmp, fill_big})));
    Var k("k");
    Stmt out = For::make(k, make_int(0), n, ForKind::Serial, Store::make(OUT, Load::make(f32, big, k) * 2.0f, k));
    auto f = kb.finish(Allocate::make(big, f32, {n}, "global", Seq::make({rows, out})));
    auto module = codegen::compile_llvm(f, Target::host());
    CHECK(module->llvm_ir().find("weft_runtime_alloc") != std::string::npos);
    CHECK(module->llvm_ir().find("weft_runtime_free") != std::string::npos);
    const int64_t N = 64 * 5;
    std::vector<float> a(static_cast<size_t>(N)), o(static_cast<size_t>(N));
    for (int64_t q = 0; q < N; ++q) a[size_t(q)] = float(q % 17) - 8;
    REQUIRE(CallArgs().tensor(a).tensor(o).scalar(N).call(module->entry()) == 0);
    for (int64_t q = 0; q < N; ++q) REQUIRE(o[size_t(q)] == (a[size_t(q)] * a[size_t(q)] + 1) * 2);
}

TEST_CASE("an allocation inside a parallel loop belongs to each task") {
    KernelBuilder kb("par_alloc");
    Var OUT = kb.tensor("OUT", i64);
    Var row("row", DataType::handle()), heap("heap", DataType::handle());
    Var y("y"), x("x");
    Stmt fill = For::make(x, make_int(0), make_int(16), ForKind::Serial, Store::make(row, y * make_int(100) + x, x));
    Stmt copy = For::make(x, make_int(0), make_int(16), ForKind::Serial, Store::make(heap, Load::make(i64, row, x), x));
    Stmt sum = For::make(x, make_int(0), make_int(16), ForKind::Serial,
                         Store::make(OUT, Load::make(i64, OUT, y) + Load::make(i64, heap, x), y));
    Stmt body = Allocate::make(row, i64, {make_int(16)}, "local",
                               Allocate::make(heap, i64, {make_int(16)}, "global", Seq::make({fill, copy, sum})));
    auto module = codegen::compile_llvm(kb.finish(For::make(y, make_int(0), make_int(64), ForKind::Parallel, body)),
                                        Target::host());
    std::vector<int64_t> out(64, 0);
    REQUIRE(CallArgs().tensor(out).call(module->entry()) == 0);
    for (int64_t y0 = 0; y0 < 64; ++y0) REQUIRE(out[size_t(y0)] == 16 * 100 * y0 + 120);
}

TEST_CASE("a GPU-bound loop on a CPU target is a user error naming the loop") {
    KernelBuilder kb("bound");
    Var OUT = kb.tensor("OUT", f32);
    Var tx("tx");
    auto f = kb.finish(For::make(tx, make_int(0), make_int(32), ForKind::ThreadBound,
                                 Store::make(OUT, make_const(f32, 0), tx), "threadIdx.x"));
    CHECK_THROWS_WITH_AS(codegen::compile_llvm(f, Target::host()), doctest::Contains("'tx'"), weft::Error);
    CHECK_THROWS_WITH_AS(codegen::compile_llvm(f, Target::host()), doctest::Contains("bind"), weft::Error);
}

TEST_CASE("unrolled, vectorized and annotated loops run as serial loops") {
    KernelBuilder kb("hints");
    Var OUT = kb.tensor("OUT", i64);
    Var i("i"), j("j"), t("t");
    Stmt inner = For::make(j, make_int(0), make_int(4), ForKind::Unrolled,
                           LetStmt::make(t, i * make_int(4) + j, Store::make(OUT, t * make_int(3), t)));
    Stmt outer = For::make(i, make_int(0), make_int(8), ForKind::Vectorized, inner);
    auto f = kb.finish(AttrStmt::make("pragma_unknown", make_int(1), IfThenElse::make(make_int(1) > make_int(0), outer)));
    auto module = codegen::compile_llvm(f, Target::host());
    std::vector<int64_t> out(32, 0);
    REQUIRE(CallArgs().tensor(out).call(module->entry()) == 0);
    for (int64_t q = 0; q < 32; ++q) REQUIRE(out[size_t(q)] == 3 * q);
}

TEST_CASE("a serial loop around copies the schedule unrolled is not unrolled again by LLVM") {
    // for (i in [0, n)) attr unrolled { OUT[2i] = 5i; OUT[2i+1] = 5i + 1 }: what lowering makes
    // of an unrolled loop inside a serial one (lower/impl/vectorize.hpp).
    auto kernel = [](bool unrolled_by_schedule) {
        KernelBuilder kb("tile");
        Var OUT = kb.tensor("OUT", i64);
        Var n = kb.scalar("n", i64);
        Var i("i");
        Stmt copies = Seq::make({Store::make(OUT, i * make_int(5), i * make_int(2)),
                                 Store::make(OUT, i * make_int(5) + make_int(1), i * make_int(2) + make_int(1))});
        if (unrolled_by_schedule) copies = AttrStmt::make(attr::unrolled, make_int(2), copies);
        return codegen::compile_llvm(kb.finish(For::make(i, make_int(0), n, ForKind::Serial, copies)), Target::host());
    };
    auto marked = kernel(true), plain = kernel(false);
    CHECK(marked->llvm_ir().find("llvm.loop.unroll.disable") != std::string::npos);
    CHECK(plain->llvm_ir().find("llvm.loop.unroll.disable") == std::string::npos);
    const int64_t n = 37;
    std::vector<int64_t> out(2 * n, -1);
    REQUIRE(CallArgs().tensor(out).scalar(n).call(marked->entry()) == 0);
    for (int64_t q = 0; q < n; ++q) {
        REQUIRE(out[size_t(2 * q)] == 5 * q);
        REQUIRE(out[size_t(2 * q + 1)] == 5 * q + 1);
    }
}

TEST_CASE("a heap allocation of negative size fails with a message naming the buffer") {
    KernelBuilder kb("negative");
    Var OUT = kb.tensor("OUT", f32);
    Var n = kb.scalar("n", i64);
    Var tmp("tmp", DataType::handle());
    auto f = kb.finish(Allocate::make(tmp, f32, {n}, "global", Store::make(OUT, make_const(f32, 1), make_int(0))));
    auto module = codegen::compile_llvm(f, Target::host());
    std::vector<float> out(1, 0);
    CHECK(CallArgs().tensor(out).scalar(-5).call(module->entry()) != 0);
    CHECK(runtime::take_last_error() == "buffer 'tmp' of kernel negative has a negative size");
    CHECK(CallArgs().tensor(out).scalar(5).call(module->entry()) == 0);
    CHECK(out[0] == 1);
}
