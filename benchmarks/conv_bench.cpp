// conv2d on the ResNet-50 layers (batch 1) and a MobileNet-style depthwise layer: weft's
// blocked NCHW[x]c conv with its default schedule against oneDNN (its preferred blocked
// layouts via format_tag::any, and forced plain NCHW) and Halide 14 (channels-innermost
// layout, a hand-written register-tiled schedule). Every peer gets its input and weights
// in its own layout, transformed in the set-up, outside the timing (as oneDNN's reorders).
#include <Halide.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <weft/topi/conv.hpp>
#include <weft/weft.hpp>

#include "harness.hpp"
#include "onednn_util.hpp"

namespace {

struct Layer {
    const char* name;
    int64_t C, H, W, O, K, stride, pad;
    bool depthwise = false;
    int64_t OH() const { return (H + 2 * pad - K) / stride + 1; }
    int64_t OW() const { return (W + 2 * pad - K) / stride + 1; }
    int64_t groups() const { return depthwise ? C : 1; }
    double flops() const { return 2.0 * double(O * OH() * OW() * (C / groups()) * K * K); }
};

const Layer kLayers[] = {
    {"conv2d/resnet50_3x3_64_56", 64, 56, 56, 64, 3, 1, 1},
    {"conv2d/resnet50_1x1_256to64_56", 256, 56, 56, 64, 1, 1, 0},
    {"conv2d/resnet50_3x3_128_28", 128, 28, 28, 128, 3, 1, 1},
    {"conv2d/resnet50_3x3_256_14", 256, 14, 14, 256, 3, 1, 1},
    {"conv2d/resnet50_3x3_512_7", 512, 7, 7, 512, 3, 1, 1},
    {"conv2d/resnet50_7x7s2_3to64_224", 3, 224, 224, 64, 7, 2, 3},
    {"depthwise/3x3_32_112", 32, 112, 112, 32, 3, 1, 1, true},
    // Diagnostics: the 14x14 and 7x7 layers' work without padding (a 16x16 or 9x9 input, no
    // pad, the same output size and FLOPs). oneDNN skips the taps that fall into padding and
    // weft computes them (with zeros), so the padded layers' ratios mix two things; these
    // two compare the kernels alone.
    {"conv2d/valid_3x3_256_16", 256, 16, 16, 256, 3, 1, 0},
    {"conv2d/valid_3x3_512_9", 512, 9, 9, 512, 3, 1, 0},
};

std::vector<float> random_vector(size_t n, unsigned seed) {
    std::vector<float> v(n);
    bench::fill_random(v.data(), n, -1.f, 1.f, seed);
    return v;
}

// ---- weft ----------------------------------------------------------------------------

// Runs a one-input layout transform once (set-up only).
weft::Buffer<float> weft_transform(const weft::Tensor& in, const weft::Tensor& out, const weft::Buffer<float>& x) {
    weft::Schedule s = weft::create_schedule(out);
    weft::topi::schedule_layout_transform(s, out);
    std::vector<int64_t> shape;
    for (auto& e : out.shape()) {
        int64_t v = 0;
        weft::ir::as_const_int(e, &v);
        shape.push_back(v);
    }
    weft::Buffer<float> y(shape);
    weft::build(s, {in, out})(x, y);
    return y;
}

bench::Runner weft_conv(const Layer& l) {
    using namespace weft;
    auto xb = Buffer<float>::random({1, l.C, l.H, l.W}, -1.f, 1.f, 1);
    auto wb = Buffer<float>::random({l.O, l.C / l.groups(), l.K, l.K}, -1.f, 1.f, 2);
    Tensor X = placeholder({1, l.C, l.H, l.W}, f32, "X");
    Tensor Wt = placeholder({l.O, l.C / l.groups(), l.K, l.K}, f32, "W");
    topi::Conv2dParams p{.stride = {l.stride, l.stride}, .padding = topi::Pad2d::all(l.pad)};
    Tensor Xc, Wc, out;
    Schedule s;
    if (l.depthwise) {
        const int64_t bn = std::min<int64_t>(l.C, 16);
        Xc = topi::layout_transform_nchw_to_nchwc(X, bn);
        Wc = topi::pack_depthwise_weight_nchwc(Wt, bn);
    } else {
        topi::Conv2dBlocking b = topi::conv2d_nchwc_blocking(l.C, l.O, l.OW(), p.padding, l.K);
        Xc = topi::layout_transform_nchw_to_nchwc(X, b.ic_bn);
        Wc = topi::pack_conv2d_weight_nchwc(Wt, b.weight_ic_bn, b.oc_bn);
    }
    auto xc = std::make_shared<Buffer<float>>(weft_transform(X, Xc, xb));
    auto wc = std::make_shared<Buffer<float>>(weft_transform(Wt, Wc, wb));
    Tensor XcIn = placeholder(Xc.shape(), f32, "Xc"), WcIn = placeholder(Wc.shape(), f32, "Wc");
    if (l.depthwise) {
        out = topi::depthwise_conv2d_nchwc(XcIn, WcIn, p);
        s = create_schedule(out);
        topi::schedule_depthwise_conv2d_nchwc(s, out);
    } else {
        out = topi::conv2d_nchwc(XcIn, WcIn, p);
        s = create_schedule(out);
        topi::schedule_conv2d_nchwc(s, out);
    }
    std::vector<int64_t> yshape;
    for (auto& e : out.shape()) {
        int64_t v = 0;
        ir::as_const_int(e, &v);
        yshape.push_back(v);
    }
    auto yc = std::make_shared<Buffer<float>>(yshape);
    Kernel k = build(s, {XcIn, WcIn, out});
    return [k, xc, wc, yc] { k(*xc, *wc, *yc); };
}

// ---- oneDNN --------------------------------------------------------------------------

// plain: src and dst forced to NCHW; otherwise every layout is oneDNN's choice (any).
bench::Runner onednn_conv(const Layer& l, bool plain) {
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    auto ctx = std::make_shared<bench::OneDnn>();
    memory::dims src_dims{1, l.C, l.H, l.W}, dst_dims{1, l.O, l.OH(), l.OW()};
    memory::dims w_dims = l.depthwise ? memory::dims{l.C, 1, 1, l.K, l.K} : memory::dims{l.O, l.C, l.K, l.K};
    const tag w_plain = l.depthwise ? tag::goihw : tag::oihw;
    memory::desc src_any(src_dims, dt::f32, plain ? tag::nchw : tag::any);
    memory::desc dst_any(dst_dims, dt::f32, plain ? tag::nchw : tag::any);
    memory::desc w_any(w_dims, dt::f32, tag::any);
    convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct, src_any, w_any, dst_any,
                                {l.stride, l.stride}, {l.pad, l.pad}, {l.pad, l.pad});
    convolution_forward::primitive_desc pd(d, ctx->engine);

    auto src_user = random_vector(size_t(l.C * l.H * l.W), 1);
    auto w_user = random_vector(size_t(l.O * (l.C / l.groups()) * l.K * l.K), 2);
    memory src_plain({src_dims, dt::f32, tag::nchw}, ctx->engine, src_user.data());
    memory w_plain_mem({w_dims, dt::f32, w_plain}, ctx->engine, w_user.data());
    memory src = ctx->reordered(src_plain, pd.src_desc()), wts = ctx->reordered(w_plain_mem, pd.weights_desc());
    memory dst(pd.dst_desc(), ctx->engine);
    return bench::onednn_runner(ctx, convolution_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wts}, {DNNL_ARG_DST, dst}});
}

// ---- Halide --------------------------------------------------------------------------

// Channels innermost (input c, x, y; weights co, ci, kx, ky), zero padding by a boundary
// condition; tiles of (2 vectors of output channels) x (up to 14 pixels) accumulate in
// registers over the whole reduction, parallel over rows.
bench::Runner halide_conv(const Layer& l, int threads) {
    using namespace Halide;
    const int vec = 16;
    const int C = int(l.C), O = int(l.O), K = int(l.K), S = int(l.stride), P = int(l.pad);
    const int OW = int(l.OW()), OH = int(l.OH());
    auto in = std::make_shared<Buffer<float>>(C, int(l.W), int(l.H));
    auto wts = std::make_shared<Buffer<float>>(O, l.depthwise ? 1 : C, K, K);
    auto out = std::make_shared<Buffer<float>>(O, OW, OH);
    bench::fill_random(in->data(), size_t(in->number_of_elements()), -1.f, 1.f, 1);
    bench::fill_random(wts->data(), size_t(wts->number_of_elements()), -1.f, 1.f, 2);

    Func padded = BoundaryConditions::constant_exterior(*in, 0.f);
    Var co("co"), x("x"), y("y"), coi("coi"), xi("xi");
    Func conv("conv"), result("result");
    int xt = OW;
    for (int cap = std::min(OW, 14); cap >= 1; --cap)
        if (OW % cap == 0) {
            xt = cap;
            break;
        }
    if (xt < 7 && OW > 14) xt = 8;
    if (l.depthwise) {
        RDom r(0, K, 0, K);
        conv(co, x, y) = 0.f;
        conv(co, x, y) += (*wts)(co, 0, r.x, r.y) * padded(co, x * S + r.x - P, y * S + r.y - P);
    } else {
        RDom r(0, C, 0, K, 0, K);
        conv(co, x, y) = 0.f;
        conv(co, x, y) += (*wts)(co, r.x, r.y, r.z) * padded(r.x, x * S + r.y - P, y * S + r.z - P);
    }
    result(co, x, y) = conv(co, x, y);
    const int ct = O % (2 * vec) == 0 && !l.depthwise ? 2 * vec : vec;
    result.split(co, co, coi, ct).split(x, x, xi, xt).reorder(coi, xi, x, co, y).vectorize(coi, vec).unroll(coi)
        .unroll(xi);
    // At 1 thread no parallel loop at all: Halide's JIT thread pool ignores a later thread count.
    if (threads > 1) result.parallel(y);
    conv.compute_at(result, x).vectorize(co, vec).unroll(co).unroll(x);
    std::vector<VarOrRVar> order{co, x};
    for (const RVar& rv : conv.rvars()) order.push_back(rv);
    conv.update().reorder(order).vectorize(co, vec).unroll(co).unroll(x);
    if (l.depthwise) conv.update().unroll(conv.rvars()[0]);
    result.compile_jit(get_jit_target_from_environment());
    bench::set_halide_threads(threads);  // the JIT runtime exists now
    auto fn = std::make_shared<Func>(result);
    return [fn, out] { fn->realize(*out); };
}

void register_layers() {
    for (const Layer& l : kLayers) {
        bench::Case c{l.name, bench::Unit::Flops, l.flops()};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [l] { return weft_conv(l); });
            bench::add(c, "onednn", t, [l] { return onednn_conv(l, false); });
            bench::add(c, "onednn_nchw", t, [l] { return onednn_conv(l, true); });
            bench::add(c, "halide", t, [l, t] { return halide_conv(l, t); });
        }
    }
}

const bool registered = (register_layers(), true);

}  // namespace
