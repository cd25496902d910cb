// schedule_conv2d_nchwc and schedule_depthwise_conv2d_nchwc as templates: their knobs, and
// random points of their spaces computing what the default schedule computes (conv2d: on
// layers that take either loop order by default; depthwise: rows that no chunk divides).
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "weft/weft.hpp"

using namespace weft;

namespace {

struct Layer {
    int64_t C, O, H, K, pad;
};

struct Blocked {
    Tensor X, W, conv;
    Schedule s;
};

Blocked blocked_conv(const Layer& l, const Target& target, const Config& config) {
    const int64_t OW = l.H + 2 * l.pad - l.K + 1;
    topi::Conv2dParams p{.padding = {l.pad, l.pad, l.pad, l.pad}};
    topi::Conv2dBlocking b = topi::conv2d_nchwc_blocking(l.C, l.O, OW, p.padding, l.K, target);
    Blocked out;
    out.X = placeholder({1, (l.C + b.ic_bn - 1) / b.ic_bn, l.H, l.H, b.ic_bn}, f32, "X");
    Tensor Wt = placeholder({l.O, l.C, l.K, l.K}, f32, "Wt");
    out.W = placeholder(topi::pack_conv2d_weight_nchwc(Wt, b.weight_ic_bn, b.oc_bn).shape(), f32, "W");
    out.conv = topi::conv2d_nchwc(out.X, out.W, p);
    out.s = create_schedule(out.conv);
    topi::schedule_conv2d_nchwc(out.s, out.conv, out.conv, target, config);
    return out;
}

std::vector<int64_t> shape_of(const Tensor& t) {
    std::vector<int64_t> out;
    for (const Expr& e : t.shape()) {
        int64_t v = 0;
        ir::as_const_int(e, &v);
        out.push_back(v);
    }
    return out;
}

Blocked blocked_depthwise(int64_t C, int64_t H, const Target& target, const Config& config) {
    const int64_t bn = topi::depthwise_conv2d_nchwc_block(C, target);
    Blocked out;
    out.X = placeholder({1, C / bn, H, H, bn}, f32, "X");
    out.W = placeholder({C / bn, 1, 3, 3, 1, bn}, f32, "W");
    out.conv = topi::depthwise_conv2d_nchwc(out.X, out.W, {.padding = {1, 1, 1, 1}});
    out.s = create_schedule(out.conv);
    topi::schedule_depthwise_conv2d_nchwc(out.s, out.conv, out.conv, target, config);
    return out;
}

Buffer<float> run(const Blocked& b, const Buffer<float>& x, const Buffer<float>& w) {
    Kernel k = build(b.s, {b.X, b.W, b.conv});
    Buffer<float> y(shape_of(b.conv));
    k(x, w, y);
    return y;
}

// Any point's answer agrees with the default's to rounding (both sum the taps in one order).
void check_same(const Buffer<float>& got, const Buffer<float>& want) {
    int bad = 0;
    for (int64_t i = 0; i < got.size(); ++i)
        bad += !(std::abs(got.data()[i] - want.data()[i]) <= 1e-4f * (1 + std::abs(want.data()[i])));
    CHECK(bad == 0);
}


}  // namespace

TEST_CASE("random points of conv2d_nchwc's space compute what the default computes") {
    Target target = Target::host();
    target.num_threads = 2;
    std::mt19937_64 rng(11);
    // 3x3 padded at 7x7 (taps left out: input-channel-outer by default) and 1x1 (rows).
    for (Layer l : std::vector<Layer>{{64, 64, 7, 3, 1}, {64, 32, 9, 1, 0}}) {
        CAPTURE(l.C);
        CAPTURE(l.K);
        ConfigSpace space;
        Blocked def = blocked_conv(l, target, Config::recording(&space));
        std::vector<std::string> names;
        for (const Knob& k : space.knobs()) names.push_back(k.name);
        CHECK(names == std::vector<std::string>{"conv.tile", "conv.rows_per_task", "conv.blocks_per_row", "conv.ic_outer",
                                                "conv.ic_unroll", "conv.unroll_kw"});
        CHECK(space.find("conv.ic_outer")->default_value == (l.K == 3 ? 1 : 0));
        auto x = Buffer<float>::random(shape_of(def.X), -1, 1, 1), w = Buffer<float>::random(shape_of(def.W), -1, 1, 2);
        Buffer<float> want = run(blocked_conv(l, target, Config{}), x, w);
        for (int trial = 0; trial < 5; ++trial) {
            Config c = space.at(rng() % space.size());
            CAPTURE(c.str());
            check_same(run(blocked_conv(l, target, c), x, w), want);
        }
    }
}

TEST_CASE("a block of more than four vectors gets conv.tile_c; its random points compute what the default computes") {
    Target target = Target::host();
    target.num_threads = 2;
    const int64_t lanes = target.natural_lanes(32);
    std::mt19937_64 rng(12);
    // All channels in one block of whole vectors (the layout pass's 72 -> 80, 120 -> 128):
    // the register tile takes a part of the block that divides it.
    for (int64_t C : {72, 120}) {
        CAPTURE(C);
        const int64_t bn = (C + 15) / 16 * 16;  // graph's blocks are whole 16-lane vectors
        auto make = [&](const Config& config, const Target& t) {
            Blocked b;
            b.X = placeholder({1, 1, 9, 9, bn}, f32, "X");
            b.W = placeholder({1, 1, 3, 3, C, bn}, f32, "W");
            b.conv = topi::conv2d_nchwc(b.X, b.W, {.padding = topi::Pad2d::all(1)});
            b.s = create_schedule(b.conv);
            topi::schedule_conv2d_nchwc(b.s, b.conv, b.conv, t, config);
            return b;
        };
        ConfigSpace space;
        Blocked def = make(Config::recording(&space), target);
        const Knob* tile_c = space.find("conv.tile_c");
        REQUIRE(tile_c != nullptr);
        std::vector<int64_t> want_candidates;
        for (int64_t c = lanes; c <= bn; c += lanes)
            if (bn % c == 0) want_candidates.push_back(c);
        CHECK(tile_c->candidates == want_candidates);
        // With 16 lanes and 32 registers, 80 channels: one tile of 5 vectors x 5 pixels; 128: 4
        // vectors x 6 pixels (8 vectors would leave tiles of 2 pixels).
        ConfigSpace avx512;
        make(Config::recording(&avx512), Target::x86_avx512(2));
        CHECK(avx512.find("conv.tile_c")->default_value == (C == 72 ? 80 : 64));
        CHECK(avx512.find("conv.tile")->default_value == (C == 72 ? 5 : 6));
        auto x = Buffer<float>::random(shape_of(def.X), -1, 1, 3), w = Buffer<float>::random(shape_of(def.W), -1, 1, 4);
        Buffer<float> want = run(make(Config{}, target), x, w);
        for (int64_t c : tile_c->candidates) {
            Config point = space.at(rng() % space.size());
            point.set("conv.tile_c", c);
            CAPTURE(point.str());
            check_same(run(make(point, target), x, w), want);
        }
    }
}

TEST_CASE("random points of depthwise_conv2d_nchwc's space compute what the default computes") {
    Target target = Target::host();
    target.num_threads = 2;
    std::mt19937_64 rng(5);
    for (int64_t H : {19, 14}) {
        CAPTURE(H);
        ConfigSpace space;
        Blocked def = blocked_depthwise(64, H, target, Config::recording(&space));
        std::vector<std::string> names;
        for (const Knob& k : space.knobs()) names.push_back(k.name);
        CHECK(names == std::vector<std::string>{"dwconv.tile_c", "dwconv.rows", "dwconv.tile", "dwconv.unroll_kh"});
        CHECK(space.size() >= 16 * 16 * 2);
        auto x = Buffer<float>::random(shape_of(def.X), -1, 1, 1), w = Buffer<float>::random(shape_of(def.W), -1, 1, 2);
        Buffer<float> want = run(blocked_depthwise(64, H, target, Config{}), x, w);
        for (int trial = 0; trial < 6; ++trial) {
            Config c = space.at(rng() % space.size());
            CAPTURE(c.str());
            check_same(run(blocked_depthwise(64, H, target, c), x, w), want);
        }
    }
}
