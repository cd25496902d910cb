// The blocked layout: layout transforms (round trip, zero-filled padding channels), weight
// packing, conv2d_nchwc and depthwise_conv2d_nchwc with their default schedules against the
// NCHW reference, with channels that do not fill a block and the fused epilogue.
#include <sstream>

#include "conv_reference.hpp"
#include "lower/lowered_text.hpp"

using namespace weft;
using namespace conv_test;

namespace {

// Runs a one-output computation with the given inputs into a new buffer of out's shape.
template <class... In>
Buffer<float> run(Schedule& s, const std::vector<Argument>& args, const Tensor& out, const In&... in) {
    Kernel k = build(s, args);
    Buffer<float> y(shape_of(out));
    k(in..., y);
    return y;
}

Buffer<float> transform(const Tensor& in_t, const Tensor& out, const Buffer<float>& in) {
    Schedule s = create_schedule(out);
    topi::schedule_layout_transform(s, out);
    return run(s, {in_t, out}, out, in);
}

struct BlockedCase {
    int64_t N, C, H, W, O, KH, KW, ic_bn, oc_bn;
    Conv2dParams p;
    int threads = 0;           // 0: the pool's current count
    int64_t weight_ic_bn = 0;  // the weights' input channel block; 0: ic_bn
    bool nan_filler = false;   // the data's zero channels that fill up its last block made NaN
};

// NCHW data and OIHW weights go through the transforms (outside the checked kernel, as a
// caller would), the blocked conv runs with its default schedule, the result comes back
// to NCHW and is compared with the reference.
void check_conv2d_nchwc(const BlockedCase& k, bool epilogue, uint64_t seed, int64_t infinite_tap = -1) {
    CAPTURE(k.N); CAPTURE(k.C); CAPTURE(k.H); CAPTURE(k.W); CAPTURE(k.O); CAPTURE(k.KH); CAPTURE(k.KW);
    CAPTURE(k.ic_bn); CAPTURE(k.oc_bn); CAPTURE(k.weight_ic_bn); CAPTURE(k.p.stride.h); CAPTURE(k.p.stride.w);
    CAPTURE(k.p.dilation.h); CAPTURE(k.p.dilation.w); CAPTURE(k.threads); CAPTURE(infinite_tap);
    CAPTURE(k.p.padding.top); CAPTURE(k.p.padding.left); CAPTURE(k.p.padding.bottom); CAPTURE(k.p.padding.right);
    auto x = random_buffer({k.N, k.C, k.H, k.W}, seed), w = random_buffer({k.O, k.C, k.KH, k.KW}, seed + 1);
    // One weight of output channel 0, input channel 0 (tap `infinite_tap`, row-major in the
    // window) made infinite: the outputs whose only uses of that tap lie in the padding must
    // stay finite, as in the reference, which leaves such taps out (0 * inf would be NaN).
    if (infinite_tap >= 0) w.data()[infinite_tap] = std::numeric_limits<float>::infinity();
    auto bias = random_buffer({k.O}, seed + 2);

    Tensor X = placeholder({k.N, k.C, k.H, k.W}, f32, "X"), Wt = placeholder({k.O, k.C, k.KH, k.KW}, f32, "W");
    Tensor Xc = topi::layout_transform_nchw_to_nchwc(X, k.ic_bn);
    Tensor Wc = topi::pack_conv2d_weight_nchwc(Wt, k.weight_ic_bn > 0 ? k.weight_ic_bn : k.ic_bn, k.oc_bn);
    Buffer<float> xc = transform(X, Xc, x), wc = transform(Wt, Wc, w);
    // A sum over the real channels only never reads the filler: NaN there must not reach
    // the output (a sum over the whole block would multiply it by zero weights into NaN).
    if (k.nan_filler)
        for (int64_t i = 0; i < xc.size(); ++i)
            if (i % k.ic_bn >= k.C) xc.data()[i] = std::numeric_limits<float>::quiet_NaN();

    const int64_t OB = (k.O + k.oc_bn - 1) / k.oc_bn;
    Buffer<float> bc({OB, k.oc_bn});  // bias in blocks; the padding channels get a bias too
    for (int64_t o = 0; o < OB * k.oc_bn; ++o) bc.data()[o] = o < k.O ? bias.data()[o] : 0.25f;

    Tensor XcIn = placeholder({k.N, (k.C + k.ic_bn - 1) / k.ic_bn, k.H, k.W, k.ic_bn}, f32, "Xc");
    Tensor WcIn = placeholder(Wc.shape(), f32, "Wc"), B = placeholder({OB, k.oc_bn}, f32, "B");
    Tensor conv = topi::conv2d_nchwc(XcIn, WcIn, k.p);
    Tensor out = epilogue ? topi::bias_add_nchwc(conv, B, true) : conv;
    Schedule s = create_schedule(out);
    const int before = num_threads();
    if (k.threads > 0) set_num_threads(k.threads);  // the schedule sizes its tasks for the pool
    topi::schedule_conv2d_nchwc(s, conv, out);
    Buffer<float> yc = epilogue ? run(s, {XcIn, WcIn, B, out}, out, xc, wc, bc) : run(s, {XcIn, WcIn, out}, out, xc, wc);
    set_num_threads(before);

    Tensor YcIn = placeholder(out.shape(), f32, "Yc");
    Buffer<float> y = transform(YcIn, topi::layout_transform_nchwc_to_nchw(YcIn, k.O), yc);
    std::vector<double> want = ref_conv2d(x, w, k.p, epilogue ? bias.data() : nullptr, epilogue);
    if (infinite_tap < 0) {
        CHECK(max_rel_error(y.data(), want) < 1e-4);
        return;
    }
    // Finite where the reference is (close to it), the same infinity where it is not.
    int64_t finite = 0, wrong = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        const double got = y.data()[i];
        if (std::isfinite(want[i])) {
            ++finite;
            wrong += !(std::abs(got - want[i]) <= 1e-4 * std::max(1.0, std::abs(want[i])));
        } else {
            wrong += got != want[i];
        }
    }
    CHECK(wrong == 0);
    CHECK(finite < int64_t(want.size()));  // the infinite weight reached some outputs
}

// Each layer at 1 thread, and at 2 with the bias + relu epilogue; then the first one with an
// infinite weight in the left column of its window.
void check_layers_at_1_and_2_threads(const std::vector<BlockedCase>& layers, uint64_t seed) {
    for (int threads : {1, 2})
        for (BlockedCase k : layers) {
            k.threads = threads;
            check_conv2d_nchwc(k, threads == 2, seed++);
        }
    check_conv2d_nchwc(layers[0], false, seed++, 3);
}

}  // namespace

TEST_CASE("layout transforms: NCHW to NCHWc and back with a partial last block") {
    for (int64_t bn : {1, 4, 16}) {
        CAPTURE(bn);
        const int64_t N = 2, C = 7, H = 3, W = 5;
        auto x = random_buffer({N, C, H, W}, 3);
        Tensor X = placeholder({N, C, H, W}, f32, "X");
        Tensor Xc = topi::layout_transform_nchw_to_nchwc(X, bn);
        Buffer<float> xc = transform(X, Xc, x);
        // Element (n, c, y, x) sits at block c / bn, lane c % bn; the rest of the last block is 0.
        const int64_t CB = (C + bn - 1) / bn;
        bool placed = true;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t c = 0; c < CB * bn; ++c)
                for (int64_t i = 0; i < H; ++i)
                    for (int64_t j = 0; j < W; ++j)
                        placed = placed && xc(n, c / bn, i, j, c % bn) == (c < C ? x(n, c, i, j) : 0.f);
        CHECK(placed);
        Tensor XcIn = placeholder(Xc.shape(), f32, "Xc");
        Buffer<float> back = transform(XcIn, topi::layout_transform_nchwc_to_nchw(XcIn, C), xc);
        CHECK(std::equal(back.data(), back.data() + back.size(), x.data()));
    }
}

TEST_CASE("pack_conv2d_weight_nchwc: blocks of input and output channels") {
    const int64_t O = 5, I = 3, KH = 2, KW = 3, ic_bn = 2, oc_bn = 4;
    auto w = random_buffer({O, I, KH, KW}, 5);
    Tensor Wt = placeholder({O, I, KH, KW}, f32, "W");
    Buffer<float> wc = transform(Wt, topi::pack_conv2d_weight_nchwc(Wt, ic_bn, oc_bn), w);
    bool placed = true;
    for (int64_t o = 0; o < 2 * oc_bn; ++o)
        for (int64_t i = 0; i < 2 * ic_bn; ++i)
            for (int64_t a = 0; a < KH; ++a)
                for (int64_t b = 0; b < KW; ++b)
                    placed = placed && wc(o / oc_bn, i / ic_bn, a, b, i % ic_bn, o % oc_bn) ==
                                           (o < O && i < I ? w(o, i, a, b) : 0.f);
    CHECK(placed);
}

TEST_CASE("conv2d_nchwc: ResNet-like layers in miniature") {
    auto pad1 = Conv2dParams{.padding = topi::Pad2d::all(1)};
    check_conv2d_nchwc({1, 32, 14, 14, 32, 3, 3, 16, 16, pad1}, false, 1);   // 3x3 pad 1
    check_conv2d_nchwc({1, 32, 9, 9, 64, 1, 1, 16, 16, {}}, true, 2);        // 1x1, epilogue
    check_conv2d_nchwc({1, 16, 7, 7, 64, 3, 3, 16, 32, pad1}, true, 3);      // narrow rows, oc_bn 32
    check_conv2d_nchwc({1, 3, 23, 23, 16, 7, 7, 3, 16, {.stride = {2, 2}, .padding = topi::Pad2d::all(3)}}, false, 4);
}

TEST_CASE("conv2d_nchwc: blocks of 64 output channels, tiles with a partial last one, a stem of 3 channels") {
    auto pad1 = Conv2dParams{.padding = topi::Pad2d::all(1)};
    for (int threads : {1, 2}) {
        CAPTURE(threads);
        // Rows of 20 and 17 pixels: tiles of 6 with a last one of 2 or 5 (16 lanes).
        check_conv2d_nchwc({1, 32, 20, 20, 64, 3, 3, 16, 64, pad1, threads}, threads == 2, 30);
        check_conv2d_nchwc({1, 16, 17, 17, 128, 3, 3, 16, 64, pad1, threads}, false, 31);
        // Input channels in blocks of 64, unrolled in steps of a vector; 1x1 read in place.
        check_conv2d_nchwc({1, 64, 9, 19, 64, 1, 1, 64, 64, {}, threads}, true, 32);
        // A 64-channel block over 3 input channels (the stem): one loop over (kw, channel).
        check_conv2d_nchwc({1, 3, 45, 45, 64, 7, 7, 3, 64, {.stride = {2, 2}, .padding = topi::Pad2d::all(3)}, threads},
                           threads == 2, 33);
        // 48 channels of 64: a partial block, zero channels in the weights and the output.
        check_conv2d_nchwc({1, 16, 18, 18, 48, 3, 3, 16, 64, pad1, threads}, false, 34);
    }
}

TEST_CASE("conv2d_nchwc: the stem reduces over kw and channel in one loop and copies its padding a vector at a time") {
    const int64_t lanes = Target::host().natural_lanes(32);
    const topi::Conv2dBlocking stem = topi::conv2d_nchwc_blocking(3, 64, 112, topi::Pad2d::all(3), 7);
    Tensor XcIn = placeholder({1, 1, 224, 224, 3}, f32, "Xc"), WcIn = placeholder({1, 1, 7, 7, 3, stem.oc_bn}, f32, "Wc");
    Tensor out = topi::conv2d_nchwc(XcIn, WcIn, {.stride = {2, 2}, .padding = topi::Pad2d::all(3)});
    Schedule s = create_schedule(out);
    topi::schedule_conv2d_nchwc(s, out);
    std::string body = ir::to_string(lower(s, {XcIn, WcIn, out}).body);
    CAPTURE(body);
    // The taps of a row, 7 columns x 3 channels, are one loop of 21 (in each kind of tile);
    // there is no loop over kw or the channels on their own.
    CHECK(lowered_text::count(body, "for (kw.ic.inner.fused, 0, 21)") >= 1);
    CHECK(lowered_text::count(body, "for (kw, ") == 0);
    CHECK(lowered_text::count(body, "for (ic.inner") == 0);
    // The whole block is one tile: no loop over parts of its channels.
    CHECK(lowered_text::count(body, "i4.c.outer") == 0);
    // The padded copy loads a row's interior as contiguous vectors, with no gather.
    CHECK(lowered_text::count(body, "Xc[ramp(") >= 1);
    CHECK(lowered_text::count(body, "Xc[x") == 0);
    if (lanes < 16) return;
    // 112 pixels: 18 tiles of 6 and one of 4, each step of the reduction 64 channels wide.
    CHECK(lowered_text::count(body, "for (i3.outer, 0, 18)") == 1);
    CHECK(lowered_text::count(body, "for (kw.ic.inner.fused, 0, 21)") == 2);
    CHECK(lowered_text::count(body, "x64(conv2d_nchwc.pad[") == 6 + 4);
    CHECK(lowered_text::count(body, ", 1, 16)]") >= 1);
}

TEST_CASE("conv2d_nchwc: wide rows get four vectors per pixel, tiles of 6 and the input channels unrolled") {
    const int64_t lanes = Target::host().natural_lanes(32);
    const topi::Conv2dBlocking wide = topi::conv2d_nchwc_blocking(64, 64, 56);
    const topi::Conv2dBlocking narrow = topi::conv2d_nchwc_blocking(256, 256, 14);
    const topi::Conv2dBlocking stem = topi::conv2d_nchwc_blocking(3, 64, 112, topi::Pad2d::all(3));
    CHECK(narrow.oc_bn == 2 * lanes);
    CHECK(stem.ic_bn == 3);
    if (lanes < 16) {  // 16 vector registers: four vectors per pixel would leave tiles of 2
        CHECK(wide.oc_bn == 2 * lanes);
        return;
    }
    CHECK(wide.oc_bn == 4 * lanes);
    CHECK(stem.oc_bn == 4 * lanes);
    CHECK(topi::conv2d_nchwc_blocking(64, 96, 56).oc_bn == 2 * lanes);  // 96 is no multiple of 64
    Tensor XcIn = placeholder({1, 4, 58, 58, 16}, f32, "Xc"), WcIn = placeholder({1, 4, 3, 3, 16, 64}, f32, "Wc");
    Tensor out = topi::conv2d_nchwc(XcIn, WcIn, {});
    Schedule s = create_schedule(out);
    topi::schedule_conv2d_nchwc(s, out);
    std::string body = ir::to_string(lower(s, {XcIn, WcIn, out}).body);
    CAPTURE(body);
    // 56 pixels: 9 tiles of 6 and one of 2; the 16 input channels of a block unrolled 8 at a
    // time (conv.ic_unroll's default), a loop of 2 around them in each of the two tiles.
    CHECK(lowered_text::count(body, "for (i3.outer, 0, 9)") == 1);
    CHECK(lowered_text::count(body, "for (ic.inner.outer, 0, 2)") == 2);
    CHECK(lowered_text::count(body, "for (kw, 0, 3)") == 2);
    // Per step of the unrolled reduction, 6 broadcast input values (2 in the last tile), each
    // times one 64-lane weight vector.
    CHECK(lowered_text::count(body, "x64(Xc[") == 8 * (6 + 2));
}

TEST_CASE("conv2d_nchwc: a fused epilogue reads the register tile at constant positions") {
    // The epilogue's pixel loop is unrolled: with a loop over the tile's pixels, the
    // accumulator is indexed by a variable and LLVM cannot keep it in registers (it stayed a
    // stack array: ResNet-18's fused 14x14 convs spilled 1586 times per kernel and ran 15-25%
    // slower than the same conv without the epilogue).
    Tensor XcIn = placeholder({1, 2, 16, 16, 16}, f32, "Xc"), WcIn = placeholder({1, 2, 3, 3, 16, 32}, f32, "Wc");
    Tensor B = placeholder({1, 32}, f32, "B");
    Tensor conv = topi::conv2d_nchwc(XcIn, WcIn, {});
    Tensor out = topi::bias_add_nchwc(conv, B, true);
    Schedule s = create_schedule(out);
    topi::schedule_conv2d_nchwc(s, conv, out);
    std::string body = ir::to_string(lower(s, {XcIn, WcIn, B, out}).body);
    CAPTURE(body);
    CHECK(lowered_text::count(body, "for (i3.inner") == 0);
    CHECK(lowered_text::count(body, "max(conv2d_nchwc[ramp(0, 1, ") >= 1);  // a tile's first pixel
    CHECK(lowered_text::count(body, "max(conv2d_nchwc[ramp(i") == 0);      // no variable position
}

TEST_CASE("conv2d_nchwc: both schedules, padding taps left out, 1 to 3 threads") {
    auto pad1 = Conv2dParams{.padding = topi::Pad2d::all(1)};
    const std::vector<BlockedCase> layers = {
        {1, 16, 7, 7, 64, 3, 3, 16, 32, pad1},    // a few KiB per block: input channels outermost
        {1, 512, 7, 7, 32, 3, 3, 16, 32, pad1},   // 576 KiB of weights a block
        {1, 16, 14, 14, 48, 3, 3, 16, 16, pad1},  // 3 blocks: rows in chunks on 2 threads
        {1, 16, 28, 28, 16, 3, 3, 16, 16, pad1},  // 50 KiB per block: the row schedule
        {1, 8, 56, 56, 16, 3, 3, 8, 16, pad1},    // padding taps 2.4% of all: computed
        {1, 3, 29, 29, 16, 7, 7, 3, 16, {.stride = {2, 2}, .padding = {3, 2, 1, 3}}},
    };
    uint64_t seed = 600;
    for (int threads : {1, 2, 3})
        for (BlockedCase k : layers) {
            k.threads = threads;
            check_conv2d_nchwc(k, threads == 2, seed++);
        }
    // An infinite weight at tap (0, 1) (top row of the window) and at (1, 0) (left column).
    for (size_t l : {0, 3})
        for (int64_t tap : {1, 3}) check_conv2d_nchwc(layers[l], false, seed++, tap);
}

TEST_CASE("conv2d_nchwc: padding taps are tested once per row of taps and computed only in a copy below 3%") {
    auto lowered = [](int64_t C, int64_t H, int64_t oc_bn, int64_t weight_ic_bn) {
        Tensor XcIn = placeholder({1, C / 16, H, H, 16}, f32, "Xc");
        Tensor WcIn = placeholder({C / oc_bn, C / weight_ic_bn, 3, 3, weight_ic_bn, oc_bn}, f32, "Wc");
        Tensor out = topi::conv2d_nchwc(XcIn, WcIn, {.padding = topi::Pad2d::all(1)});
        Schedule s = create_schedule(out);
        topi::schedule_conv2d_nchwc(s, out);
        return ir::to_string(lower(s, {XcIn, WcIn, out}).body);
    };
    // 7x7 (18% of the taps in the padding): every test sits outside the loops over the
    // input channels of a block, so the multiply-adds run without one. (Weights in blocks of
    // 64 input channels: a loop over them in unrolled steps of 16 remains.)
    // The tests inside the loops over the input channels of a block, and how many such loops.
    auto tests_in_channel_loops = [](const std::string& program, size_t* loops) {
        // The lines of each ic.inner loop's body: those indented more than the loop's own line.
        std::istringstream lines(program);
        std::string line;
        size_t loop_indent = std::string::npos, tests_inside = 0;
        *loops = 0;
        while (std::getline(lines, line)) {
            const size_t indent = line.find_first_not_of(' ');
            if (loop_indent != std::string::npos && indent <= loop_indent) loop_indent = std::string::npos;
            if (loop_indent != std::string::npos) tests_inside += lowered_text::count(line, "if (");
            else if (line.find("for (ic.inner") != std::string::npos) loop_indent = indent, ++(*loops);
        }
        return tests_inside;
    };
    std::string small = lowered(64, 7, 32, 64);
    CAPTURE(small);
    CHECK(lowered_text::count(small, "if (") > 0);
    size_t loops = 0;
    CHECK(tests_in_channel_loops(small, &loops) == 0);
    CHECK(loops > 0);
    // 56x56 (2.4% of the taps), the weights in the data's channel block: the input is read
    // in place, no padded copy, and the padding taps are skipped by tests of the tap's row
    // alone (in the kh loop; the columns by loop partitioning, with no test).
    std::string in_place = lowered(16, 56, 16, 16);
    CAPTURE(in_place);
    CHECK(lowered_text::count(in_place, "allocate conv2d_nchwc.pad") == 0);
    CHECK(lowered_text::count(in_place, "if (") > 0);
    CHECK(lowered_text::count(in_place, "if (") == lowered_text::count(in_place, "if (i0.i1.outer.fused.i2.fused + kh >= 1"));
    // Weights in blocks of 32 over data in blocks of 16: a copy re-blocks the input, padded,
    // and at 2.4% the padding taps are computed (no test at all).
    std::string copied = lowered(32, 56, 16, 32);
    CHECK(lowered_text::count(copied, "allocate conv2d_nchwc.pad") == 1);
    CHECK(lowered_text::count(copied, "if (") == 0);
    // Weights in blocks of all 512 input channels over data in blocks of 16: the padded copy
    // re-blocks the input with contiguous 16-lane loads (no gather), and each tap's reduction
    // is one loop over the 512 channels (in 64 unrolled steps of 8), with no loop over
    // input-channel blocks around it.
    std::string reblocked = lowered(512, 7, 32, 512);
    CAPTURE(reblocked);
    CHECK(lowered_text::count(reblocked, "Xc[ramp(") > 0);
    CHECK(lowered_text::count(reblocked, "Xc[x16(") == 0);
    CHECK(lowered_text::count(reblocked, "for (ic.inner.outer, 0, 64)") > 0);
    CHECK(lowered_text::count(reblocked, "for (ic.outer") == 0);
}

TEST_CASE("conv2d_nchwc_weight_ic_bn: up to 512 channels for a small output unless a 1x1 window reads its input in place") {
    const auto pad1 = topi::Pad2d::all(1);
    CHECK(topi::conv2d_nchwc_weight_ic_bn(512, 16, 7, pad1) == 512);
    CHECK(topi::conv2d_nchwc_weight_ic_bn(256, 16, 14, pad1) == 256);
    CHECK(topi::conv2d_nchwc_weight_ic_bn(1024, 32, 7, pad1) == 512);
    CHECK(topi::conv2d_nchwc_weight_ic_bn(48, 16, 7, pad1) == 48);
    CHECK(topi::conv2d_nchwc_weight_ic_bn(20, 8, 7, pad1) == 24);   // 3 blocks of 8, the last part zeros
    CHECK(topi::conv2d_nchwc_weight_ic_bn(80, 16, 7, pad1) == 80);  // 5 blocks
    CHECK(topi::conv2d_nchwc_weight_ic_bn(3, 3, 112, topi::Pad2d::all(3)) == 3);
    CHECK(topi::conv2d_nchwc_weight_ic_bn(128, 16, 28, pad1) == 16);  // the row schedule: no gain measured
    CHECK(topi::conv2d_nchwc_weight_ic_bn(512, 16, 7, {}) == 16);     // 1x1, no padding: read in place
    CHECK(topi::conv2d_nchwc_weight_ic_bn(512, 16, 7, {}, 3) == 512);  // valid 3x3: re-blocked in a copy
    CHECK(topi::conv2d_nchwc_weight_ic_bn(256, 16, 14, {}, 3) == 256);
    CHECK(topi::conv2d_nchwc_weight_ic_bn(256, 16, 16, {}, 3) == 16);  // wider than 14: the row schedule
    topi::Conv2dBlocking b = topi::conv2d_nchwc_blocking(512, 512, 7, pad1);
    CHECK(b.weight_ic_bn % b.ic_bn == 0);
    CHECK(b.weight_ic_bn == topi::conv2d_nchwc_weight_ic_bn(512, b.ic_bn, 7, pad1));
    CHECK(topi::conv2d_nchwc_blocking(512, 512, 7).weight_ic_bn == topi::conv2d_nchwc_blocking(512, 512, 7).ic_bn);
    CHECK(topi::conv2d_nchwc_blocking(512, 512, 7, {}, 3).weight_ic_bn == 512);
}

TEST_CASE("conv2d_nchwc: weights in a larger input channel block than the data's") {
    auto pad1 = Conv2dParams{.padding = topi::Pad2d::all(1)};
    const std::vector<BlockedCase> layers = {
        {1, 64, 7, 7, 64, 3, 3, 16, 32, pad1, 0, 64},     // one block of all channels
        {1, 48, 14, 14, 32, 3, 3, 16, 16, pad1, 0, 48},   // 3 data blocks per weight block
        {1, 64, 9, 9, 16, 3, 3, 16, 16, pad1, 0, 32},     // two weight blocks of two data blocks
        {1, 20, 6, 6, 8, 3, 3, 8, 8, pad1, 0, 24},        // 20 channels: the last 4 are zeros
        {1, 32, 8, 8, 16, 1, 1, 16, 16, {}, 0, 32},       // no padding: a copy that only re-blocks
        {1, 32, 9, 9, 16, 3, 3, 16, 16, {}, 0, 32},       // a valid 3x3 window, re-blocked
        {2, 32, 7, 9, 16, 3, 3, 8, 16, {.stride = {2, 1}, .padding = {1, 2, 0, 1}}, 0, 16},
    };
    check_layers_at_1_and_2_threads(layers, 900);
}

TEST_CASE("conv2d_nchwc: data holding all its channels in one block filled up sums over the real ones") {
    // The layout pass's blocks for 72, 120 and 200 channels: one block of whole vectors (80,
    // 128, 208), weights over the real input channels, padding read in place or none.
    auto pad1 = Conv2dParams{.padding = topi::Pad2d::all(1)};
    const std::vector<BlockedCase> layers = {
        {1, 72, 11, 11, 72, 3, 3, 80, 80, pad1, 0, 72, true},      // 5 vectors, one tile wide
        {1, 120, 9, 9, 120, 3, 3, 128, 128, pad1, 0, 120, true},   // 8 vectors, tiles of 4
        {1, 200, 5, 7, 200, 1, 1, 208, 208, {}, 0, 200, true},     // 13 vectors, 1x1, no copy
        {1, 120, 9, 9, 200, 3, 3, 128, 208, pad1, 0, 120, true},
        {2, 72, 10, 9, 40, 3, 3, 80, 16, {.stride = {2, 2}, .padding = {1, 0, 1, 2}}, 0, 72, true},
        {1, 30, 8, 8, 24, 3, 3, 32, 8, {}, 0, 30, true},            // a valid window, read in place
    };
    check_layers_at_1_and_2_threads(layers, 950);
}

TEST_CASE("conv2d_nchwc: random shapes, attributes and blocks") {
    Dice dice(11);
    for (int i = 0; i < 6; ++i) {
        BlockedCase k{};
        k.N = dice(1, 2);
        k.C = dice(1, 19);
        k.O = dice(1, 19);
        k.ic_bn = dice(1, 8);
        k.oc_bn = std::vector<int64_t>{1, 3, 8, 16}[size_t(dice(0, 3))];
        k.KH = dice(1, 3);
        k.KW = dice(1, 3);
        k.p.stride = {dice(1, 2), dice(1, 2)};
        k.p.dilation = {dice(1, 2), dice(1, 2)};
        k.p.padding = {dice(0, 2), dice(0, 1), dice(0, 1), dice(0, 2)};
        k.H = dice(1, 9) + (k.KH - 1) * k.p.dilation.h;
        k.W = dice(1, 37) + (k.KW - 1) * k.p.dilation.w;
        check_conv2d_nchwc(k, i % 2 == 1, 200 + uint64_t(i));
    }
}

namespace {

struct DepthwiseCase {
    int64_t N, C, H, W, K, bn;
    Conv2dParams p;
    int threads = 1;
};

// The NCHW data and weights go through the transforms, depthwise_conv2d_nchwc runs with its
// default schedule (optionally with the bias + relu epilogue) on `threads` threads, and the
// result, back in NCHW, is compared with the reference.
void check_depthwise_nchwc(const DepthwiseCase& k, bool epilogue, uint64_t seed) {
    CAPTURE(k.N); CAPTURE(k.C); CAPTURE(k.H); CAPTURE(k.W); CAPTURE(k.K); CAPTURE(k.bn); CAPTURE(k.threads);
    CAPTURE(k.p.stride.h); CAPTURE(k.p.stride.w); CAPTURE(k.p.dilation.h);
    CAPTURE(k.p.padding.top); CAPTURE(k.p.padding.left); CAPTURE(k.p.padding.bottom); CAPTURE(k.p.padding.right);
    auto x = random_buffer({k.N, k.C, k.H, k.W}, seed), w = random_buffer({k.C, 1, k.K, k.K}, seed + 1);
    auto bias = random_buffer({k.C}, seed + 2);
    Tensor X = placeholder({k.N, k.C, k.H, k.W}, f32, "X"), Wt = placeholder({k.C, 1, k.K, k.K}, f32, "W");
    Tensor Xc = topi::layout_transform_nchw_to_nchwc(X, k.bn);
    Tensor Wc = topi::pack_depthwise_weight_nchwc(Wt, k.bn);
    Buffer<float> xc = transform(X, Xc, x), wc = transform(Wt, Wc, w);
    const int64_t CB = (k.C + k.bn - 1) / k.bn;
    Buffer<float> bc({CB, k.bn});
    for (int64_t c = 0; c < CB * k.bn; ++c) bc.data()[c] = c < k.C ? bias.data()[c] : 0.25f;

    Tensor XcIn = placeholder(Xc.shape(), f32, "Xc"), WcIn = placeholder(Wc.shape(), f32, "Wc");
    Tensor B = placeholder({CB, k.bn}, f32, "B");
    Tensor conv = topi::depthwise_conv2d_nchwc(XcIn, WcIn, k.p);
    Tensor out = epilogue ? topi::bias_add_nchwc(conv, B, true) : conv;
    Schedule s = create_schedule(out);
    topi::schedule_depthwise_conv2d_nchwc(s, conv, out);
    const int before = num_threads();
    set_num_threads(k.threads);
    Buffer<float> yc = epilogue ? run(s, {XcIn, WcIn, B, out}, out, xc, wc, bc) : run(s, {XcIn, WcIn, out}, out, xc, wc);
    set_num_threads(before);

    Tensor YcIn = placeholder(out.shape(), f32, "Yc");
    Buffer<float> y = transform(YcIn, topi::layout_transform_nchwc_to_nchw(YcIn, k.C), yc);
    Conv2dParams p = k.p;
    p.groups = k.C;
    CHECK(max_rel_error(y.data(), ref_conv2d(x, w, p, epilogue ? bias.data() : nullptr, epilogue)) < 1e-4);
}

}  // namespace

TEST_CASE("depthwise_conv2d_nchwc: 3x3 with padding, stride 1 and 2, a partial block") {
    for (int64_t stride : {1, 2})
        check_depthwise_nchwc({1, 21, 17, 29, 3, 16, {.stride = {stride, stride}, .padding = {1, 1, 1, 0}}}, false, 21);
}

TEST_CASE("depthwise_conv2d_nchwc: padding 0, 1 and 2, strides 1 and 2, odd sizes, 1 and 2 threads") {
    for (int threads : {1, 2})
        for (int64_t pad : {0, 1, 2})
            for (int64_t stride : {1, 2}) {
                const int64_t K = pad == 2 ? 5 : 3;  // "same" padding for 3x3 and 5x5
                check_depthwise_nchwc({1, 19, 15, 31, K, 16, {.stride = {stride, stride}, .padding = topi::Pad2d::all(pad)},
                                       threads},
                                      threads == 2, 300 + uint64_t(pad * 2 + stride));
            }
    // The benchmark's layer in miniature: 32 channels in 2 blocks, a row of 2 full tiles.
    check_depthwise_nchwc({1, 32, 12, 28, 3, 16, {.padding = topi::Pad2d::all(1)}, 2}, false, 310);
    // One output column and row; padding wider than the kernel reaches.
    check_depthwise_nchwc({1, 5, 1, 1, 3, 8, {.padding = topi::Pad2d::all(1)}, 2}, true, 311);
    check_depthwise_nchwc({2, 5, 3, 4, 3, 4, {.stride = {2, 1}, .padding = {2, 0, 2, 1}}, 1}, false, 312);
    // A block of 64 channels (a wide conv's output block) is done 32 at a time; 40 channels
    // of it are real.
    check_depthwise_nchwc({1, 64, 10, 30, 3, 64, {.padding = topi::Pad2d::all(1)}, 2}, true, 313);
    check_depthwise_nchwc({1, 40, 9, 17, 3, 64, {.stride = {2, 2}, .padding = topi::Pad2d::all(1)}, 1}, false, 314);
}

TEST_CASE("depthwise_conv2d_nchwc: rows no chunk of 4 to 8 divides keep a constant-size tile") {
    // 13, 19 and 38 rows: the last chunk of rows overlaps the one before. With a guarded
    // tail inside the fused parallel loop, every tile's size was symbolic (7x slower).
    for (int64_t H : {13, 19, 38}) {
        CAPTURE(H);
        Tensor X = placeholder({1, 2, H, H, 16}, f32, "Xc"), W = placeholder({2, 1, 3, 3, 1, 16}, f32, "Wc");
        Tensor out = topi::depthwise_conv2d_nchwc(X, W, {.padding = topi::Pad2d::all(1)});
        Schedule s = create_schedule(out);
        topi::schedule_depthwise_conv2d_nchwc(s, out);
        std::string body = ir::to_string(lower(s, {X, W, out}).body);
        REQUIRE(lowered_text::count(body, "allocate depthwise_conv2d_nchwc.local[") >= 1);
        CHECK(lowered_text::symbolic_allocations(body, "depthwise_conv2d_nchwc.local").empty());
        for (int threads : {1, 2})
            check_depthwise_nchwc({1, 32, H, H, 3, 16, {.padding = topi::Pad2d::all(1)}, threads}, threads == 2,
                                  320 + uint64_t(H));
    }
}

TEST_CASE("depthwise_conv2d_nchwc: random shapes, attributes and blocks") {
    Dice dice(23);
    for (int i = 0; i < 8; ++i) {
        DepthwiseCase k{};
        k.N = dice(1, 2);
        k.C = dice(1, 37);
        k.bn = std::vector<int64_t>{1, 4, 8, 16}[size_t(dice(0, 3))];
        k.K = dice(1, 5);
        k.p.stride = {dice(1, 2), dice(1, 2)};
        k.p.dilation = {dice(1, 2), dice(1, 2)};
        k.p.padding = {dice(0, 2), dice(0, 2), dice(0, 2), dice(0, 2)};
        k.H = dice(1, 11) + (k.K - 1) * k.p.dilation.h;
        k.W = dice(1, 45) + (k.K - 1) * k.p.dilation.w;
        k.threads = int(dice(1, 2));
        check_depthwise_nchwc(k, i % 3 == 2, 400 + uint64_t(i));
    }
}

TEST_CASE("depthwise_conv2d_nchwc: the interior tiles read the input without a test or a padded copy") {
    Tensor XcIn = placeholder({1, 2, 56, 56, 16}, f32, "Xc"), WcIn = placeholder({2, 1, 3, 3, 1, 16}, f32, "Wc");
    Tensor out = topi::depthwise_conv2d_nchwc(XcIn, WcIn, {.padding = topi::Pad2d::all(1)});
    Schedule s = create_schedule(out);
    topi::schedule_depthwise_conv2d_nchwc(s, out);
    std::string body = ir::to_string(lower(s, {XcIn, WcIn, out}).body);
    CAPTURE(body);
    // Taps in the padding are left out of the sum: no padded buffer, no zeros selected.
    CHECK(body.find(".pad") == std::string::npos);
    CHECK(body.find("if_then_else") == std::string::npos);
    // The rows are not copied: one loop over the interior tiles (from tile 1), whose only test
    // is the row of taps', once per kh, around 3 taps of kw x 14 pixels.
    REQUIRE(lowered_text::count(body, "for (i3.outer, 1, ") == 1);
    size_t at = body.find("for (i3.outer, 1, ");
    // The tile ends where its (unrolled) epilogue writes the output.
    std::string tile = body.substr(at, body.find("depthwise_conv2d_nchwc[", at) - at);
    CHECK(lowered_text::count(tile, "if (") == 1);
    CHECK(tile.find("for (kh, 0, 3) {\n        if (") != std::string::npos);
    CHECK(lowered_text::count(tile, "Xc[") == 3 * 14);
    // Three copies of the tile in all (first, interior, last), less the taps the first and
    // last leave out: the JIT compiles 124 loads, not one copy per border row (session 7: 15).
    CHECK(lowered_text::count(body, "Xc[") <= 3 * 3 * 14);
}
