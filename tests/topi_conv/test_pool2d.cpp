// max_pool2d, avg_pool2d (with and without count_include_pad) and global_avg_pool2d with
// their default schedules against the naive reference, on odd sizes, strides and
// asymmetric padding; one with a fused epilogue.
#include "conv_reference.hpp"

using namespace weft;
using namespace conv_test;

namespace {

void check_pool(int64_t N, int64_t C, int64_t H, int64_t W, const Pool2dParams& p, bool is_max, uint64_t seed) {
    CAPTURE(N); CAPTURE(C); CAPTURE(H); CAPTURE(W); CAPTURE(p.kernel.h); CAPTURE(p.kernel.w);
    CAPTURE(p.stride.h); CAPTURE(p.stride.w); CAPTURE(p.padding.top); CAPTURE(p.padding.left);
    CAPTURE(p.padding.bottom); CAPTURE(p.padding.right); CAPTURE(p.count_include_pad); CAPTURE(is_max);
    Tensor X = placeholder({N, C, H, W}, f32, "X");
    Tensor out = is_max ? topi::max_pool2d(X, p) : topi::avg_pool2d(X, p);
    Schedule s = create_schedule(out);
    topi::schedule_pool2d(s, out);
    Kernel k = build(s, {X, out});
    auto x = random_buffer({N, C, H, W}, seed);
    Buffer<float> y(shape_of(out));
    k(x, y);
    CHECK(max_rel_error(y.data(), ref_pool2d(x, p, is_max)) < 1e-5);
}

}  // namespace

TEST_CASE("pool2d: 3x3 stride 2 pad 1 and 2x2 stride 2") {
    for (bool is_max : {true, false}) {
        check_pool(1, 4, 13, 17, {.kernel = {3, 3}, .stride = {2, 2}, .padding = topi::Pad2d::all(1)}, is_max, 1);
        check_pool(2, 3, 8, 9, {.kernel = {2, 2}, .stride = {2, 2}}, is_max, 2);
    }
    check_pool(1, 2, 7, 11, {.kernel = {3, 3}, .stride = {2, 2}, .padding = topi::Pad2d::all(1), .count_include_pad = true},
               false, 3);
}

TEST_CASE("pool2d: random windows, strides and asymmetric padding") {
    Dice dice(5);
    for (int i = 0; i < 6; ++i) {
        Pool2dParams p;
        p.kernel = {dice(1, 4), dice(1, 4)};
        p.stride = {dice(1, 3), dice(1, 3)};
        p.padding = {dice(0, p.kernel.h - 1), dice(0, p.kernel.w - 1), dice(0, p.kernel.h - 1), dice(0, p.kernel.w - 1)};
        p.count_include_pad = i % 2 == 0;
        check_pool(dice(1, 2), dice(1, 5), dice(p.kernel.h, 13), dice(p.kernel.w, 19), p, i % 3 == 0, 10 + uint64_t(i));
    }
}

TEST_CASE("pool2d: ceil_mode rounds the output up, the last window partial (max and both averages)") {
    // 14 -> (14 - 3) / 2 + 1 = 6 windows, 7 rounded up; a window that would start in the end
    // padding is dropped (4 rows padded by 2 at the end: 3 windows rounded up, 2 kept).
    for (bool is_max : {true, false})
        for (bool include_pad : {false, true}) {
            if (is_max && include_pad) continue;
            check_pool(1, 3, 13, 12, {.kernel = {3, 3}, .stride = {2, 2}, .count_include_pad = include_pad, .ceil_mode = true},
                       is_max, 41);
            check_pool(1, 2, 12, 9,
                       {.kernel = {3, 2}, .stride = {2, 2}, .padding = topi::Pad2d::all(1), .count_include_pad = include_pad,
                        .ceil_mode = true},
                       is_max, 42);
        }
    for (bool is_max : {true, false})
        check_pool(1, 2, 4, 5, {.kernel = {3, 3}, .stride = {2, 2}, .padding = {0, 0, 2, 2}, .ceil_mode = true}, is_max, 43);
    CHECK(topi::pool2d_out_size(4, 4, {.kernel = {3, 3}, .stride = {2, 2}, .padding = {0, 0, 2, 2}, .ceil_mode = true}).h == 2);
    CHECK(topi::pool2d_out_size(14, 12, {.kernel = {3, 3}, .stride = {2, 2}, .ceil_mode = true}).h == 7);
    CHECK(topi::pool2d_out_size(14, 12, {.kernel = {3, 3}, .stride = {2, 2}}).h == 6);
    CHECK(topi::pool2d_out_size(12, 12, {.kernel = {3, 3}, .stride = {2, 2}, .padding = topi::Pad2d::all(1), .ceil_mode = true}).h == 7);
}

TEST_CASE("pool2d: dilated windows (average counting only the taps inside), and integers for max") {
    Dice dice(8);
    for (int i = 0; i < 8; ++i) {
        Pool2dParams p;
        p.kernel = {dice(1, 3), dice(2, 3)};
        p.dilation = {dice(1, 3), dice(2, 3)};
        p.stride = {dice(1, 2), dice(1, 3)};
        const int64_t span_h = p.dilation.h * (p.kernel.h - 1) + 1, span_w = p.dilation.w * (p.kernel.w - 1) + 1;
        p.padding = {dice(0, span_h - 1), dice(0, span_w - 1), dice(0, span_h - 1), dice(0, span_w - 1)};
        p.count_include_pad = i % 4 == 1;
        CAPTURE(p.dilation.h); CAPTURE(p.dilation.w);
        check_pool(1, dice(1, 3), dice(span_h, 12), dice(span_w, 14), p, i % 2 == 0, 30 + uint64_t(i));
    }
    // max_pool2d of uint8 and int32: padding never wins, even over the type's lowest values.
    Pool2dParams p{.kernel = {3, 3}, .stride = {2, 2}, .padding = topi::Pad2d::all(1), .dilation = {2, 1}};
    Tensor X = placeholder({1, 2, 9, 8}, DataType::uint(8), "X");
    Tensor out = topi::max_pool2d(X, p);
    Schedule s = create_schedule(out);
    topi::schedule_pool2d(s, out);
    Kernel k = build(s, {X, out});
    Buffer<uint8_t> x({1, 2, 9, 8});
    for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = uint8_t((i * 37) % 7);  // zeros among them
    Buffer<uint8_t> y(shape_of(out));
    k(x, y);
    std::vector<double> want = ref_pool2d(x, p, true);
    for (size_t i = 0; i < want.size(); ++i) CHECK(double(y.data()[i]) == want[i]);
    CHECK_THROWS_WITH_AS(topi::avg_pool2d(X, p), doctest::Contains("must have a float dtype"), Error);
}

TEST_CASE("global_avg_pool2d: mean over each plane, with a fused scale epilogue") {
    const int64_t N = 2, C = 5, H = 7, W = 11;
    Tensor X = placeholder({N, C, H, W}, f32, "X");
    Tensor mean = topi::global_avg_pool2d(X);
    Tensor out = compute({N, C, 1, 1}, [&](Expr n, Expr c, Expr y, Expr x) { return mean(n, c, y, x) * 3.0f; }, "scaled");
    Schedule s = create_schedule(out);
    topi::schedule_global_pool2d(s, mean, out);
    Kernel k = build(s, {X, out});
    auto x = random_buffer({N, C, H, W}, 9);
    Buffer<float> y({N, C, 1, 1});
    k(x, y);
    std::vector<double> want;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c) {
            double acc = 0;
            for (int64_t i = 0; i < H; ++i)
                for (int64_t j = 0; j < W; ++j) acc += x(n, c, i, j);
            want.push_back(3.0 * acc / double(H * W));
        }
    CHECK(max_rel_error(y.data(), want) < 1e-5);
}

namespace {

// Pools NCHW[bn]c data (the NCHW data blocked by hand) and compares each element with the
// NCHW reference at the same (n, channel, y, x).
void check_pool_blocked(int64_t C, int64_t bn, int64_t H, int64_t W, const Pool2dParams& p, int kind, uint64_t seed) {
    CAPTURE(C); CAPTURE(bn); CAPTURE(H); CAPTURE(W); CAPTURE(kind);
    const int64_t N = 1, CB = C / bn;
    auto x = random_buffer({N, C, H, W}, seed);
    Buffer<float> xb({N, CB, H, W, bn});
    for (int64_t c = 0; c < C; ++c)
        for (int64_t y = 0; y < H; ++y)
            for (int64_t i = 0; i < W; ++i) xb(0, c / bn, y, i, c % bn) = x(0, c, y, i);
    Tensor X = placeholder({N, CB, H, W, bn}, f32, "X");
    Tensor out = kind == 0 ? topi::max_pool2d(X, p) : kind == 1 ? topi::avg_pool2d(X, p) : topi::global_avg_pool2d(X);
    Schedule s = create_schedule(out);
    if (kind == 2) topi::schedule_global_pool2d(s, out, out);
    else topi::schedule_pool2d(s, out);
    std::string program = ir::to_string(lower(s, {X, out}).body);
    CHECK(program.find("ramp(") != std::string::npos);  // the channel block is a vector
    Kernel k = build(s, {X, out});
    Buffer<float> y(shape_of(out));
    k(xb, y);
    std::vector<double> want;
    if (kind == 2) {
        for (int64_t c = 0; c < C; ++c) {
            double total = 0;
            for (int64_t r = 0; r < H; ++r)
                for (int64_t i = 0; i < W; ++i) total += x(0, c, r, i);
            want.push_back(total / double(H * W));
        }
    } else {
        want = ref_pool2d(x, p, kind == 0);
    }
    const int64_t OH = y.dim(2), OW = y.dim(3);
    double worst = 0;
    for (int64_t c = 0; c < C; ++c)
        for (int64_t r = 0; r < OH; ++r)
            for (int64_t i = 0; i < OW; ++i) {
                double w = want[size_t((c * OH + r) * OW + i)];
                worst = std::max(worst, std::abs(y(0, c / bn, r, i, c % bn) - w) / std::max(1.0, std::abs(w)));
            }
    CHECK(worst < 1e-5);
}

}  // namespace

TEST_CASE("pool2d and global_avg_pool2d on blocked NCHWxc data pool each channel lane") {
    Pool2dParams p{.kernel = {3, 3}, .stride = {2, 2}, .padding = topi::Pad2d::all(1)};
    check_pool_blocked(32, 16, 13, 11, p, 0, 21);
    check_pool_blocked(24, 8, 9, 7, p, 1, 22);
    check_pool_blocked(32, 16, 7, 5, {}, 2, 23);
    check_pool_blocked(16, 16, 6, 6, {.kernel = {2, 2}, .stride = {2, 2}}, 1, 24);
}
