// Window and shape parameters a model can hold but that 64 bits cannot count, and pooling
// padding that shape inference once accepted and the compute then refused. Each is a user
// weft::Error naming the problem at the node that has it, never a size that wrapped around
// (undefined behaviour, which UBSan reports) or an internal error at build time. Found by
// the fuzzers; their inputs are in tests/fuzz/regressions/onnx/.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>

#include "weft/weft.hpp"

using namespace weft;
using doctest::Contains;

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
}  // namespace

TEST_CASE("graph pooling refuses padding the window cannot reach past when the node is added") {
    // Before: accepted here, then refused by topi's compute in graph::build, an InternalError.
    graph::Graph g;
    graph::Value x = g.input("x", {1, 3, 28, 28});
    CHECK_THROWS_WITH_AS(g.avg_pool2d(x, {.kernel = 3, .pads = {2, 8, 2, 2}}, "avg"),
                         Contains("node 'avg' (avg_pool2d): pool2d: padding must be smaller than the window (3x3)"), Error);
    CHECK_THROWS_WITH_AS(g.max_pool2d(x, {.kernel = 2, .pads = {1, 1, 1, 1000}}, "max"),
                         Contains("node 'max' (max_pool2d): pool2d: padding must be smaller than the window (2x2)"), Error);
    CHECK_THROWS_WITH_AS(g.conv2d(x, g.input("w", {4, 3, 3, 3}), {.pads = {0, kMax, 0, kMax}}, "conv"),
                         Contains("node 'conv' (conv2d): conv2d: the width window (3 taps, dilation 1) or the padded input "
                                  "(28 + 9223372036854775807 + 9223372036854775807) is too large to count in 64 bits"),
                         Error);
}

TEST_CASE("pooling and conv windows whose span or padded input overflows int64 are refused") {
    Tensor X = placeholder({1, 3, 8, 8}, f32, "X");
    CHECK_THROWS_WITH_AS(topi::max_pool2d(X, {.kernel = {kMax, 2}, .padding = {kMax - 1, 0, kMax - 1, 0}}),
                         Contains("is too large to count in 64 bits"), Error);
    CHECK_THROWS_WITH_AS(topi::conv2d_out_size(8, 8, 3, 3, {.dilation = {kMax, 1}}),
                         Contains("conv2d: the height window (3 taps, dilation 9223372036854775807) or the padded input "
                                  "(8 + 0 + 0) is too large to count in 64 bits"),
                         Error);
    CHECK(topi::pool2d_out_size(8, 8, {.kernel = {2, 2}, .stride = {kMax, 1}}).h == 1);
}

TEST_CASE("reshape, pad and slice count extents up to 2^63 - 1 without wrapping") {
    CHECK_THROWS_WITH_AS(topi::reshape_shape({4, 2}, {kMax, int64_t(1) << 33}),
                         Contains("reshape: the new shape [9223372036854775807, 8589934592] has more elements than 64 "
                                  "bits count but the input [4, 2] has 8"),
                         Error);
    CHECK_THROWS_WITH_AS(topi::pad_shape({5}, {kMax, 0}), Contains("pad: dimension 0 (5) padded by 9223372036854775807 and 0 overflows"),
                         Error);
    CHECK_THROWS_WITH_AS(topi::pad_shape({5}, {kMin, -10}), Contains("overflows"), Error);
    // Steps of +-(2^63 - 1) and -2^63 take one element; before, their ceiling overflowed.
    for (int64_t step : {kMax, kMin, -kMax}) {
        CAPTURE(step);
        std::vector<topi::SliceRange> r = topi::slice_ranges({5}, {step > 0 ? 1 : 3}, {step > 0 ? kMax : kMin}, {}, {step});
        REQUIRE(r.size() == 1);
        CHECK(r[0].start == (step > 0 ? 1 : 3));
        CHECK(r[0].extent == 1);
    }
    CHECK(topi::slice_ranges({5}, {4}, {kMin}, {}, {-2})[0].extent == 3);  // 4, 2, 0
}

TEST_CASE("a kernel's scratch buffer over graph::Limits::max_tensor_bytes is refused at build") {
    // A 160-element conv whose dilation (2^33) and padding would make its padded copy of the
    // input 2.7 TB: before, graph::build accepted it and the kernel asked for the memory when
    // it ran. simplify_operators now cuts the taps that read only that padding (a 1x1 conv
    // reading the input in place); without the pass the scratch buffer is refused.
    graph::Graph g;
    graph::Value x = g.input("x", {1, 4, 8, 4});
    graph::Value w = g.constant("w", Buffer<float>::random({5, 4, 3, 3}, -1.f, 1.f, 1));
    const int64_t d = int64_t(1) << 33;
    g.output(g.conv2d(x, w, {.pads = {1, d, 1, d}, .dilations = {1, d}}, "y"), "y");
    const graph::BuildOptions keep_taps{.simplify_operators = false};
    CHECK_THROWS_WITH_AS(graph::build(g, Target::host(), keep_taps),
                         Contains("node 'y' (conv2d_nchwc): its kernel needs a scratch buffer"), Error);
    CHECK_THROWS_WITH_AS(graph::build(g, Target::host(), keep_taps),
                         Contains("of 2748779070080 bytes, over the limit 17179869184 "
                                  "(graph::Limits::max_tensor_bytes)"),
                         Error);
    graph::Module m = graph::build(g);  // the taps cut: 5 x 8 x 4 outputs from the middle column
    Buffer<float> in = Buffer<float>::random({1, 4, 8, 4}, -1.f, 1.f, 2);
    m.set_input(0, in);
    m.run();
    Buffer<float> wv = Buffer<float>::random({5, 4, 3, 3}, -1.f, 1.f, 1);
    const float* y = static_cast<const float*>(m.get_output(0).data());
    for (int64_t o = 0; o < 5; ++o)
        for (int64_t r = 0; r < 8; ++r)
            for (int64_t c = 0; c < 4; ++c) {
                double want = 0;
                for (int64_t i = 0; i < 4; ++i)
                    for (int64_t kh = 0; kh < 3; ++kh)
                        if (r + kh - 1 >= 0 && r + kh - 1 < 8) want += double(wv(o, i, kh, 1)) * in(0, i, r + kh - 1, c);
                CHECK(std::abs(y[(o * 8 + r) * 4 + c] - want) <= 1e-5 * (1 + std::abs(want)));
            }
}

TEST_CASE("graph conv2d_nchwc, a node artifacts store, checks its window as conv2d does") {
    // Before: a stride of 0 from a corrupt .weft divided by zero in its shape inference
    // (fuzz_artifact; tests/fuzz/regressions/artifact/).
    graph::Graph g;
    graph::Value x = g.input("x", {1, 1, 8, 8, 8}), w = g.input("w", {2, 1, 3, 3, 8, 16});
    CHECK_THROWS_WITH_AS(g.add_node("conv2d_nchwc", {x, w}, {{"strides", std::vector<int64_t>{0, 1}}}, "c"),
                         Contains("node 'c' (conv2d_nchwc): conv2d: stride must be positive, got 0x1"), Error);
    CHECK(g.type(g.add_node("conv2d_nchwc", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})).shape ==
          std::vector<int64_t>{1, 2, 8, 8, 16});
}
