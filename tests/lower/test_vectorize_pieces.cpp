// A vectorized loop wider than a vector register whose lane count is not a power of two
// (48 floats on AVX-512) runs as pieces of powers of two (32 + 16): LLVM's x86 backend takes
// such vectors apart lane by lane where they live across a loop (a conv tile of 48 output
// channels ran at 5 GFLOP/s, 100 with 32 or 16). Narrower ones stay whole.
#include <doctest/doctest.h>

#include "lowered_text.hpp"

#include <string>

#include "weft/topi/conv.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

// Y[i, j] = A[i, j] + j (one rounding, so exactly as in C++), j vectorized over `lanes`.
std::string lowered(int64_t lanes, int vector_bits, Kernel* kernel = nullptr) {
    Tensor A = placeholder({5, lanes}, f32, "A");
    Tensor Y = compute({5, lanes}, [&](Expr i, Expr j) { return A(i, j) + cast(f32, j); }, "Y");
    Schedule s = create_schedule(Y);
    s[Y].vectorize(Y.axis(1));
    LowerOptions options;
    options.target = Target::host();
    options.target.vector_bits = vector_bits;
    if (kernel) *kernel = build(s, {A, Y}, options.target);
    return ir::to_string(lower(s, {A, Y}, options).body);
}

std::string ramp_of(int64_t lanes) { return ", 1, " + std::to_string(lanes) + ")"; }

}  // namespace

TEST_CASE("vectorize: a lane count that is not a power of two and overflows a register runs in pieces") {
    std::string text = lowered(48, 512);
    CAPTURE(text);
    CHECK(lowered_text::count(text, ramp_of(32)) > 0);
    CHECK(lowered_text::count(text, ramp_of(16)) > 0);
    CHECK(lowered_text::count(text, ramp_of(48)) == 0);
    text = lowered(24, 256);  // AVX2: 16 + 8
    CHECK(lowered_text::count(text, ramp_of(16)) > 0);
    CHECK(lowered_text::count(text, ramp_of(8)) > 0);
    CHECK(lowered_text::count(text, ramp_of(24)) == 0);
    text = lowered(7, 128);  // 4 + 2 + a scalar lane
    CHECK(lowered_text::count(text, ramp_of(4)) > 0);
    CHECK(lowered_text::count(text, ramp_of(2)) > 0);
    CHECK(lowered_text::count(text, ramp_of(7)) == 0);
    // One register's worth, or a power of two, stays one vector.
    CHECK(lowered_text::count(lowered(12, 512), ramp_of(12)) > 0);
    CHECK(lowered_text::count(lowered(64, 512), ramp_of(64)) > 0);
}

TEST_CASE("vectorize: the pieces compute what the whole vector does") {
    for (int64_t lanes : {7, 12, 24, 40, 48, 80}) {
        CAPTURE(lanes);
        Kernel k;
        lowered(lanes, Target::host().vector_bits, &k);
        auto a = Buffer<float>::random({5, lanes}, -2.f, 2.f, 17);
        Buffer<float> y({5, lanes});
        k(a, y);
        bool same = true;
        for (int64_t i = 0; i < 5; ++i)
            for (int64_t j = 0; j < lanes; ++j) same = same && y(i, j) == a(i, j) + float(j);
        CHECK(same);
    }
}

TEST_CASE("vectorize: a conv tile of 48 output channels is whole registers in the assembly") {
    // conv2d_nchwc with oc_bn = 48: each pixel's accumulator is 48 floats across the loop
    // over input channels. Before the pieces, LLVM built every accumulator lane by lane.
    const int64_t C = 32, O = 96, H = 6;
    Tensor X = placeholder({1, C / 16, H, H, 16}, f32, "X");
    auto conv = [&](int64_t oc_bn, Kernel* k) {
        Tensor W = placeholder({O / oc_bn, C / 16, 1, 1, 16, oc_bn}, f32, "W");
        Tensor Y = topi::conv2d_nchwc(X, W, {});
        Schedule s = create_schedule(Y);
        topi::schedule_conv2d_nchwc(s, Y);
        *k = build(s, {X, W, Y});
        return W;
    };
    Kernel k48, k16;
    conv(48, &k48);
    conv(16, &k16);
    const std::string assembly = k48.assembly();
    CHECK(lowered_text::count(assembly, "vinsertps") == 0);
    CHECK(lowered_text::count(assembly, "vfmadd") > 0);
    // The same weights in both blockings give the same output channels.
    auto x = Buffer<float>::random({1, C / 16, H, H, 16}, -1.f, 1.f, 3);
    Buffer<float> w48({O / 48, C / 16, 1, 1, 16, 48}), w16({O / 16, C / 16, 1, 1, 16, 16});
    for (int64_t o = 0; o < O; ++o)
        for (int64_t c = 0; c < C; ++c) {
            const float v = float((o * 7 + c * 3) % 11) / 11.0f - 0.5f;
            w48(o / 48, c / 16, 0, 0, c % 16, o % 48) = v;
            w16(o / 16, c / 16, 0, 0, c % 16, o % 16) = v;
        }
    Buffer<float> y48({1, O / 48, H, H, 48}), y16({1, O / 16, H, H, 16});
    k48(x, w48, y48);
    k16(x, w16, y16);
    double worst = 0;
    for (int64_t o = 0; o < O; ++o)
        for (int64_t i = 0; i < H; ++i)
            for (int64_t j = 0; j < H; ++j)
                worst = std::max(worst, double(std::abs(y48(0, o / 48, i, j, o % 48) - y16(0, o / 16, i, j, o % 16))));
    CHECK(worst < 1e-5);
}
