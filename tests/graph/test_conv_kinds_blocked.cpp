// Every kind of convolution (depthwise, grouped, strided, dilated) through the graph layer,
// with the blocked layout on, at channel counts that blocks of 8 or 16 divide and that they
// do not (3, 72, 88, 120, 136: MobileNetV3's widths among them), against a naive NCHW
// convolution written here. The layout pass fills a last block with zero channels; a
// depthwise convolution after it once failed with "groups is the number of channels (96),
// got 88".
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "weft/graph/testing/models.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

struct ConvKind {
    const char* name;
    int64_t stride = 1, dilation = 1;
    bool grouped = false, depthwise = false;
};

const ConvKind kinds[] = {
    {.name = "depthwise", .depthwise = true},
    {.name = "depthwise_s2", .stride = 2, .depthwise = true},
    {.name = "grouped", .grouped = true},
    {.name = "strided", .stride = 2},
    {.name = "dilated", .dilation = 2},
};

// Groups of a grouped convolution over c channels: a small divisor other than 1 and c.
int64_t groups_for(int64_t c) {
    for (int64_t g : {int64_t(2), int64_t(3), int64_t(5)})
        if (c % g == 0 && g < c) return g;
    return 1;
}

// The naive convolution: x [1, C, H, W], w [O, C / groups, K, K], bias [O], padding K / 2 * dilation.
std::vector<float> conv_reference(const std::vector<float>& x, int64_t C, int64_t H, int64_t W,
                                  const std::vector<float>& w, const std::vector<float>& bias, int64_t O,
                                  int64_t K, int64_t stride, int64_t dilation, int64_t groups, int64_t* OH_out,
                                  int64_t* OW_out) {
    const int64_t pad = K / 2 * dilation, cg = C / groups, og = O / groups;
    const int64_t OH = (H + 2 * pad - dilation * (K - 1) - 1) / stride + 1;
    const int64_t OW = (W + 2 * pad - dilation * (K - 1) - 1) / stride + 1;
    std::vector<float> y(size_t(O * OH * OW));
    for (int64_t o = 0; o < O; ++o)
        for (int64_t i = 0; i < OH; ++i)
            for (int64_t j = 0; j < OW; ++j) {
                double acc = bias[size_t(o)];
                const int64_t g = o / og;
                for (int64_t c = 0; c < cg; ++c)
                    for (int64_t kh = 0; kh < K; ++kh)
                        for (int64_t kw = 0; kw < K; ++kw) {
                            const int64_t h = i * stride - pad + kh * dilation, v = j * stride - pad + kw * dilation;
                            if (h < 0 || h >= H || v < 0 || v >= W) continue;
                            acc += double(x[size_t(((g * cg + c) * H + h) * W + v)]) *
                                   double(w[size_t(((o * cg + c) * K + kh) * K + kw)]);
                        }
                y[size_t((o * OH + i) * OW + j)] = float(acc);
            }
    *OH_out = OH;
    *OW_out = OW;
    return y;
}

std::vector<float> values(const BufferRef& b) {
    const float* p = static_cast<const float*>(b.data());
    return {p, p + b.size()};
}

double max_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
    REQUIRE(got.size() == want.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        const double e = std::abs(double(got[i]) - double(want[i])) / std::max(1.0, std::abs(double(want[i])));
        worst = std::max(worst, std::isfinite(e) ? e : 1e30);
    }
    return worst;
}

}  // namespace

TEST_CASE("every conv kind at channel counts blocks do and do not divide matches a naive convolution") {
    const int64_t H = 10, W = 9, K = 3, Cin = 8;
    for (int64_t C : {3, 8, 24, 72, 88, 120, 136}) {
        CAPTURE(C);
        // Two ways in: a 1x1 convolution from 8 channels (its output blocked by the layout
        // pass, a last block filled with zeros where C needs one) and a graph input of C
        // channels (converted to the blocked layout by a transform).
        graph::Graph g;
        graph::testing::Weights wts(g, uint64_t(100 + C));
        graph::Value x = g.input("x", {1, Cin, H, W});
        graph::Value direct = g.input("direct", {1, C, H, W});
        graph::Value expand_w = wts.conv_weight("expand.w", C, Cin, 1);
        graph::Value expand_b = wts.uniform("expand.b", {C}, -0.1f, 0.1f);
        graph::Value expanded = g.relu(g.conv2d(x, expand_w, expand_b, {}, "expand"));
        struct Built {
            graph::Value w, b;
            int64_t O, groups;
        };
        std::vector<Built> built;
        for (const ConvKind& k : kinds) {
            const int64_t groups = k.depthwise ? C : k.grouped ? groups_for(C) : 1;
            const int64_t O = k.depthwise ? C : C % 2 == 0 ? C / 2 : C;
            const int64_t out = groups > 1 && O % groups != 0 ? O * groups : O;
            graph::Value w = wts.conv_weight(std::string(k.name) + ".w", out, C / groups, K);
            graph::Value b = wts.uniform(std::string(k.name) + ".b", {out}, -0.1f, 0.1f);
            graph::Conv2dAttrs a{.stride = k.stride, .pad = K / 2 * k.dilation, .dilation = k.dilation,
                                 .groups = groups};
            g.output(g.conv2d(expanded, w, b, a, std::string(k.name) + "_a"), std::string(k.name) + ".after_conv");
            g.output(g.conv2d(direct, w, b, a, std::string(k.name) + "_b"), std::string(k.name) + ".on_input");
            built.push_back({w, b, out, groups});
        }
        graph::Module m = graph::build(g, Target::host(), {.convert_layout = true});
        // The layout pass took the convolutions it can: at least the non-grouped ones.
        int blocked = 0;
        for (const graph::Node& n : m.graph().nodes()) blocked += n.op == "conv2d_nchwc";
        CHECK(blocked >= 1);

        auto xin = Buffer<float>::random({1, Cin, H, W}, -1.f, 1.f, 3);
        auto din = Buffer<float>::random({1, C, H, W}, -1.f, 1.f, 4);
        m.set_input("x", xin);
        m.set_input("direct", din);
        m.run();

        // The expanded input, by the same naive convolution (1x1) and a ReLU.
        int64_t oh = 0, ow = 0;
        std::vector<float> ex = conv_reference(values(xin), Cin, H, W, values(g.node(expand_w).value),
                                               values(g.node(expand_b).value), C, 1, 1, 1, 1, &oh, &ow);
        for (float& v : ex) v = std::max(v, 0.f);
        for (size_t k = 0; k < built.size(); ++k) {
            CAPTURE(kinds[k].name);
            const std::vector<float> w = values(g.node(built[k].w).value), b = values(g.node(built[k].b).value);
            for (int from = 0; from < 2; ++from) {
                CAPTURE(from);
                const std::vector<float> in = from == 0 ? ex : values(din);
                std::vector<float> want = conv_reference(in, C, H, W, w, b, built[k].O, K, kinds[k].stride,
                                                         kinds[k].dilation, built[k].groups, &oh, &ow);
                const BufferRef& got = m.get_output(std::string(kinds[k].name) + (from == 0 ? ".after_conv" : ".on_input"));
                REQUIRE(got.shape() == std::vector<int64_t>{1, built[k].O, oh, ow});
                CHECK(max_relative_error(values(got), want) < 1e-4);
            }
        }
    }
}
