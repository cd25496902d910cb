// LowerOptions::argument_alignment: a promise that every tensor argument's data is aligned.
// The kernel checks it when called (Kernel's checked call and, for callers of the C entry,
// the generated prologue) and LLVM compiles knowing it: vector accesses carry the alignment
// and streaming stores lose their run-time alignment test. The values must not change.
#include <doctest/doctest.h>

#include "kernel_builder.hpp"
#include "weft/runtime/c_runtime.hpp"
#include "random_floats.hpp"

#include <string>
#include <vector>

#include <weft/weft.hpp>

using namespace weft;
using weft::test::CallArgs;
using weft::test::count_occurrences;
using weft::test::random_floats;

namespace {

// y = 2 x + 1 over n floats, vectorized by 16 (a guarded tail when 16 does not divide n),
// optionally with streaming stores.
Schedule axpb_schedule(int64_t n, Tensor& X, Tensor& Y, bool nontemporal) {
    X = placeholder({n}, f32, "x");
    Y = compute({n}, [&](Expr i) { return X(i) * 2.f + 1.f; }, "y");
    Schedule s = create_schedule(Y);
    auto [outer, lanes] = s[Y].split(Y.axis(0), 16);
    s[Y].vectorize(lanes);
    if (nontemporal) s[Y].store_nontemporal();
    return s;
}

Kernel axpb_kernel(int64_t n, int alignment, bool nontemporal = false) {
    Tensor X, Y;
    Schedule s = axpb_schedule(n, X, Y, nontemporal);
    return build(s, {X, Y}, Target::host(), {.name = "axpb", .argument_alignment = alignment});
}

}  // namespace

TEST_CASE("a kernel built with argument_alignment computes what one without computes") {
    for (int64_t n : {int64_t(1), int64_t(15), int64_t(16), int64_t(17), int64_t(1000), int64_t(4099)}) {
        Buffer<float> x({n}), plain({n}), promised({n});
        std::vector<float> values = random_floats(size_t(n), unsigned(n));
        for (int64_t i = 0; i < n; ++i) x.data()[i] = values[size_t(i)];
        axpb_kernel(n, 0)(x, plain);
        axpb_kernel(n, 64)(x, promised);
        for (int64_t i = 0; i < n; ++i) {
            REQUIRE(plain.data()[i] == 2.f * values[size_t(i)] + 1.f);
            REQUIRE(promised.data()[i] == plain.data()[i]);
        }
    }
}

// The vector loads and stores of the IR, one line each.
std::vector<std::string> vector_accesses(const std::string& ir) {
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < ir.size()) {
        size_t end = ir.find('\n', start);
        if (end == std::string::npos) end = ir.size();
        std::string line = ir.substr(start, end - start);
        if (line.find("load <16 x float>") != std::string::npos || line.find("store <16 x float>") != std::string::npos)
            lines.push_back(line);
        start = end + 1;
    }
    return lines;
}

TEST_CASE("argument_alignment reaches LLVM: aligned vector accesses and no streaming-store test") {
    // Every 16-float vector of the promised kernel starts a 64-byte line of an aligned buffer.
    const std::vector<std::string> plain = vector_accesses(axpb_kernel(1024, 0).llvm_ir());
    const std::vector<std::string> promised = vector_accesses(axpb_kernel(1024, 64).llvm_ir());
    REQUIRE(plain.size() >= 2);
    REQUIRE(promised.size() >= 2);
    for (auto& line : plain) CHECK_MESSAGE(line.find("align 64") == std::string::npos, line);
    for (auto& line : promised) CHECK_MESSAGE(line.find("align 64") != std::string::npos, line);
    if (!Target::host().is_x86()) return;
    // Streaming stores test the address at run time and keep a plain store for the
    // unaligned case; with the promise the test folds away and only MOVNT remains.
    const std::string plain_nt = axpb_kernel(1024, 0, true).assembly();
    const std::string promised_nt = axpb_kernel(1024, 64, true).assembly();
    CHECK(plain_nt.find("vmovntps") != std::string::npos);
    CHECK(promised_nt.find("vmovntps") != std::string::npos);
    CHECK(count_occurrences(plain_nt, "vmovups\t%zmm") > 0);
    CHECK(count_occurrences(promised_nt, "vmovups\t%zmm") == 0);
}

TEST_CASE("the kernel cache keeps kernels with and without the promise apart") {
    Kernel plain = axpb_kernel(512, 0), promised = axpb_kernel(512, 64);
    CHECK(plain.llvm_ir() != promised.llvm_ir());
    // The promised one still checks: an unaligned view is refused, the plain kernel takes it.
    std::vector<float> storage(512 + 16, 1.f);
    Buffer<float> x(storage.data() + 1, {512}), y({512});
    CHECK_NOTHROW(plain(x, y));
    CHECK_THROWS_AS(promised(x, y), weft::Error);
}

TEST_CASE("one schedule object built with and without the promise gives two kernels") {
    // build() remembers the last kernel of a schedule object: the options and the whole
    // target must be in that key.
    Tensor X, Y;
    Schedule s = axpb_schedule(256, X, Y, false);
    Kernel promised = build(s, {X, Y}, Target::host(), {.argument_alignment = 64});
    Kernel plain = build(s, {X, Y}, Target::host(), {});
    Kernel promised_again = build(s, {X, Y}, Target::host(), {.argument_alignment = 64});
    CHECK(plain.llvm_ir() != promised.llvm_ir());
    CHECK(promised_again.llvm_ir() == promised.llvm_ir());
    Target narrow = Target::host();
    narrow.vector_bits = 128;  // the same machine, told to keep to 128-bit vectors
    CHECK(build(s, {X, Y}, narrow, {}).llvm_ir().find("\"prefer-vector-width\"=\"128\"") != std::string::npos);
    std::vector<float> storage(256 + 16, 1.f);
    Buffer<float> x(storage.data() + 1, {256}), y({256});
    CHECK_NOTHROW(plain(x, y));
    CHECK_THROWS_AS(promised(x, y), weft::Error);
}

TEST_CASE("the generated entry checks the promise for callers of the C ABI") {
    Tensor X, Y;
    Schedule s = axpb_schedule(64, X, Y, false);
    ir::PrimFunc f = lower(s, {X, Y}, {.name = "axpb_entry", .argument_alignment = 64});
    auto module = codegen::compile_llvm(f, Target::host());
    // 64-byte aligned storage, and the input at each float offset in it.
    Buffer<float> storage({64 + 16});
    Buffer<float> out({64});
    for (int offset : {0, 1, 4, 8, 15, 16}) {
        for (int i = 0; i < 64; ++i) storage.data()[offset + i] = float(i) * 0.5f - 3.f;
        int32_t code = CallArgs().tensor(storage.data() + offset, 64).tensor(out.data(), 64).call(module->entry());
        if (offset % 16 == 0) {
            REQUIRE(code == 0);
            for (int i = 0; i < 64; ++i) REQUIRE(out.data()[i] == (float(i) * 0.5f - 3.f) * 2.f + 1.f);
        } else {
            REQUIRE(code != 0);
            std::string message = runtime::take_last_error();
            CHECK(message.find("'x'") != std::string::npos);
            CHECK(message.find("aligned to 64 bytes") != std::string::npos);
        }
    }
}
