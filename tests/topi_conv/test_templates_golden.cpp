// The default schedules of the convolutions, pooling, layout transforms, element-wise,
// reduction, softmax and layer_norm operators and the VNNI kernels, planned for an explicit
// Target, lower to the programs the host-reading schedules they replaced gave on an AVX-512
// (VNNI) CPU with 2 threads: golden/templates_avx512_2t.txt, written in session 17 before
// those schedules took a Target.
#include <doctest/doctest.h>

#include "golden_programs.hpp"

#include <map>

#include "weft/weft.hpp"

using namespace weft;

namespace {

const char* kGolden = WEFT_TEST_SOURCE_DIR "/topi_conv/golden/templates_avx512_2t.txt";

Target golden_target() {
    Target t = Target::x86_avx512(2);
    t.features += ",+avx512vnni";
    return t;
}

std::string lowered(const Schedule& s, const std::vector<Argument>& args) { return ir::to_string(lower(s, args).body); }

std::string dims(std::initializer_list<int64_t> d) {
    std::string out;
    for (int64_t v : d) out += (out.empty() ? "" : "x") + std::to_string(v);
    return out;
}

std::map<std::string, std::string> programs() {
    const Target T = golden_target();
    std::map<std::string, std::string> out;
    // NCHW convolutions.
    {
        Tensor X = placeholder({1, 16, 14, 14}, f32, "X"), W = placeholder({32, 16, 3, 3}, f32, "W");
        Tensor Y = topi::conv2d_nchw(X, W, {.padding = {1, 1, 1, 1}});
        Schedule s = create_schedule(Y);
        topi::schedule_conv2d_nchw(s, Y, Y, T);
        out["conv2d_nchw 16->32 3x3 14"] = lowered(s, {X, W, Y});
    }
    {
        Tensor X = placeholder({1, 32, 14, 14}, f32, "X"), W = placeholder({32, 1, 3, 3}, f32, "W");
        Tensor Y = topi::depthwise_conv2d_nchw(X, W, {.stride = {2, 2}, .padding = {1, 1, 1, 1}});
        Schedule s = create_schedule(Y);
        topi::schedule_depthwise_conv2d_nchw(s, Y, Y, T);
        out["depthwise_conv2d_nchw 32 3x3 s2 14"] = lowered(s, {X, W, Y});
    }
    // Blocked convolutions, with the blocking the layout pass would pick and a bias + ReLU.
    struct Layer {
        int64_t C, O, H, K, stride, pad;
    };
    for (Layer l : std::vector<Layer>{{64, 64, 14, 3, 1, 1},
                                      {256, 64, 14, 1, 1, 0},
                                      {3, 64, 56, 7, 2, 3},
                                      {128, 128, 7, 3, 1, 1},
                                      {32, 64, 28, 3, 1, 1},
                                      {72, 120, 10, 1, 1, 0}}) {
        const int64_t OW = (l.H + 2 * l.pad - l.K) / l.stride + 1;
        topi::Conv2dParams p{.stride = {l.stride, l.stride}, .padding = {l.pad, l.pad, l.pad, l.pad}};
        topi::Conv2dBlocking b = topi::conv2d_nchwc_blocking(l.C, l.O, OW, p.padding, l.K, T);
        Tensor X = placeholder({1, (l.C + b.ic_bn - 1) / b.ic_bn, l.H, l.H, b.ic_bn}, f32, "X");
        Tensor Wt = placeholder({l.O, l.C, l.K, l.K}, f32, "W");
        Tensor Wc = topi::pack_conv2d_weight_nchwc(Wt, b.weight_ic_bn, b.oc_bn);
        Tensor WcIn = placeholder(Wc.shape(), f32, "Wc");
        const int64_t OB = (l.O + b.oc_bn - 1) / b.oc_bn;
        Tensor B = placeholder({OB, b.oc_bn}, f32, "B");
        Tensor conv = topi::conv2d_nchwc(X, WcIn, p);
        Tensor Y = topi::bias_add_nchwc(conv, B, true);
        Schedule s = create_schedule(Y);
        topi::schedule_conv2d_nchwc(s, conv, Y, T);
        const std::string name = "conv2d_nchwc " + dims({l.C, l.O}) + " k" + std::to_string(l.K) + " s" +
                                 std::to_string(l.stride) + " " + std::to_string(l.H);
        out[name + " blocks " + dims({b.ic_bn, b.oc_bn, b.weight_ic_bn})] = lowered(s, {X, WcIn, B, Y});
        Schedule sw = create_schedule(Wc);
        topi::schedule_layout_transform(sw, Wc, T);
        out["pack_conv2d_weight_nchwc " + name] = lowered(sw, {Wt, Wc});
    }
    for (auto [C, stride] : std::vector<std::pair<int64_t, int64_t>>{{96, 1}, {72, 2}, {8, 1}}) {
        const int64_t bn = topi::depthwise_conv2d_nchwc_block(C, T);
        Tensor X = placeholder({1, (C + bn - 1) / bn, 14, 14, bn}, f32, "X");
        Tensor Wt = placeholder({C, 1, 3, 3}, f32, "W");
        Tensor Wc = topi::pack_depthwise_weight_nchwc(Wt, bn);
        Tensor WcIn = placeholder(Wc.shape(), f32, "Wc");
        Tensor Y = topi::depthwise_conv2d_nchwc(X, WcIn, {.stride = {stride, stride}, .padding = {1, 1, 1, 1}});
        Schedule s = create_schedule(Y);
        topi::schedule_depthwise_conv2d_nchwc(s, Y, Y, T);
        out["depthwise_conv2d_nchwc " + std::to_string(C) + " s" + std::to_string(stride) + " bn " +
            std::to_string(bn)] = lowered(s, {X, WcIn, Y});
    }
    {
        Tensor X = placeholder({1, 40, 9, 9}, f32, "X");
        Tensor Xc = topi::layout_transform_nchw_to_nchwc(X, 16);
        Schedule s = create_schedule(Xc);
        topi::schedule_layout_transform(s, Xc, T);
        out["layout nchw->nchw16c 40"] = lowered(s, {X, Xc});
        Tensor Yc = placeholder({1, 3, 9, 9, 16}, f32, "Yc");
        Tensor Y = topi::layout_transform_nchwc_to_nchw(Yc, 40);
        Schedule s2 = create_schedule(Y);
        topi::schedule_layout_transform(s2, Y, T);
        out["layout nchw16c->nchw 40"] = lowered(s2, {Yc, Y});
    }
    // Pooling.
    {
        Tensor X = placeholder({1, 64, 28, 28}, f32, "X");
        Tensor Y = topi::max_pool2d(X, {.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1, 1, 1}});
        Schedule s = create_schedule(Y);
        topi::schedule_pool2d(s, Y);
        out["max_pool2d nchw 3x3 s2"] = lowered(s, {X, Y});
        Tensor Xc = placeholder({1, 4, 28, 28, 16}, f32, "Xc");
        Tensor Yc = topi::avg_pool2d(Xc, {.kernel = {2, 2}, .stride = {2, 2}});
        Schedule sc = create_schedule(Yc);
        topi::schedule_pool2d(sc, Yc);
        out["avg_pool2d nchw16c 2x2"] = lowered(sc, {Xc, Yc});
        Tensor G = topi::global_avg_pool2d(Xc);
        Schedule sg = create_schedule(G);
        topi::schedule_global_pool2d(sg, G);
        out["global_avg_pool2d nchw16c"] = lowered(sg, {Xc, G});
    }
    // Element-wise, broadcast, reductions, softmax, layer_norm.
    {
        Tensor X = placeholder({1, 64, 14, 14}, f32, "X"), Bv = placeholder({1, 64, 1, 1}, f32, "B");
        Tensor Y = topi::relu(topi::add(X, Bv));
        Schedule s = create_schedule(Y);
        topi::schedule_injective(s, Y, T);
        out["injective relu(add broadcast)"] = lowered(s, {X, Bv, Y});
        Tensor Z = topi::sigmoid(X);
        Schedule sz = create_schedule(Z);
        topi::schedule_injective(sz, Z, T);
        out["injective sigmoid"] = lowered(sz, {X, Z});
    }
    {
        Tensor X = placeholder({8, 64, 100}, f32, "X");
        for (auto [axes, name] : std::vector<std::pair<std::vector<int>, std::string>>{
                 {{2}, "sum last"}, {{1}, "sum middle"}, {{}, "sum all"}}) {
            Tensor Y = topi::sum(X, axes);
            Schedule s = create_schedule(Y);
            topi::schedule_reduce(s, Y, Y, T);
            out["reduce " + name] = lowered(s, {X, Y});
        }
        Tensor M = topi::max(X, {2}, true);
        Schedule s = create_schedule(M);
        topi::schedule_reduce(s, M, M, T);
        out["reduce max last keepdims"] = lowered(s, {X, M});
    }
    {
        Tensor X = placeholder({64, 1000}, f32, "X");
        Tensor Y = topi::softmax(X, -1, T);
        Schedule s = create_schedule(Y);
        topi::schedule_softmax(s, Y, Y, T);
        out["softmax 64x1000"] = lowered(s, {X, Y});
        Tensor L = topi::log_softmax(X, -1, T);
        Schedule sl = create_schedule(L);
        topi::schedule_log_softmax(sl, L, L, T);
        out["log_softmax 64x1000"] = lowered(sl, {X, L});
        Tensor X3 = placeholder({4, 50, 30}, f32, "X3");
        Tensor Y3 = topi::softmax(X3, 1, T);
        Schedule s3 = create_schedule(Y3);
        topi::schedule_softmax(s3, Y3, Y3, T);
        out["softmax 4x50x30 axis 1"] = lowered(s3, {X3, Y3});
    }
    {
        Tensor X = placeholder({128, 768}, f32, "X"), G = placeholder({768}, f32, "G"), Bt = placeholder({768}, f32, "Bt");
        Tensor Y = topi::layer_norm(X, G, Bt);
        Schedule s = create_schedule(Y);
        topi::schedule_layer_norm(s, Y, Y, T);
        out["layer_norm 128x768"] = lowered(s, {X, G, Bt, Y});
    }
    // VNNI.
    {
        Tensor A = placeholder({256, 256}, u8, "A"), B = placeholder({256, 256}, i8, "B");
        Tensor Bp = topi::pack_vnni_weight(B);
        Tensor BpIn = placeholder(Bp.shape(), i8, "Bp");
        Tensor C = topi::matmul_u8s8(A, BpIn);
        Schedule s = create_schedule(C);
        topi::schedule_matmul_u8s8(s, C);
        out["matmul_u8s8 256"] = lowered(s, {A, BpIn, C});
        Tensor D = placeholder({1, 16, 14, 14, 4}, u8, "D"), Wt = placeholder({64, 64, 3, 3}, i8, "W");
        Tensor Wp = topi::pack_conv2d_vnni_weight(Wt);
        Tensor WpIn = placeholder(Wp.shape(), i8, "Wp");
        Tensor Y = topi::conv2d_nchwc_u8s8(D, WpIn, 1, 1);
        Schedule sc = create_schedule(Y);
        topi::schedule_conv2d_nchwc_u8s8(sc, Y);
        out["conv2d_nchwc_u8s8 64->64 3x3 14"] = lowered(sc, {D, WpIn, Y});
    }
    return out;
}

}  // namespace

TEST_CASE("conv, pooling, nn and VNNI default schedules lower to the golden programs (AVX-512, 2 threads)") {
    golden::check_programs(programs(), kGolden);
}
