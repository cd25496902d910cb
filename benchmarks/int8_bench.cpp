// int8 GEMM and conv2d: weft's kernels tensorized onto AVX-512 VNNI (topi/x86.hpp) against
// oneDNN's int8 primitives (u8 x s8 -> s32). Weights (and for conv the input) are in each
// library's preferred layout, reordered in the set-up, outside the timing. Rates count
// 2 ops per multiply-add; "% peak" is against the fp32 FMA loop (VNNI's peak is 4x that).

#include <memory>
#include <random>

#include "harness.hpp"
#include "onednn_util.hpp"
#include <weft/weft.hpp>

namespace {

template <class T>
void fill_bytes(T* p, int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    for (int64_t i = 0; i < n; ++i) p[i] = T(int(rng() % 256) - (std::is_signed_v<T> ? 128 : 0));
}

// ---- GEMM -----------------------------------------------------------------------------

// `amx`: on AMX tiles (topi::schedule_matmul_u8s8_amx), on CPUs with AMX; else vpdpbusd.
bench::Runner weft_gemm(int64_t M, int64_t N, int64_t K, bool amx = false) {
    using namespace weft;
    Tensor A = placeholder({M, K}, u8, "A"), B = placeholder({K, N}, i8, "B");
    Tensor Bp = topi::pack_vnni_weight(B);
    Tensor Bpi = placeholder({N / 16, K / 4, 16, 4}, i8, "Bp");
    Tensor C = topi::matmul_u8s8(A, Bpi);
    Schedule s = create_schedule(C);
    if (amx) topi::schedule_matmul_u8s8_amx(s, C);
    else topi::schedule_matmul_u8s8(s, C);
    Kernel gemm = build(s, {A, Bpi, C});
    Schedule sp = create_schedule(Bp);
    Kernel pack = build(sp, {B, Bp});
    auto a = std::make_shared<Buffer<uint8_t>>(std::vector<int64_t>{M, K});
    auto b = std::make_shared<Buffer<int8_t>>(std::vector<int64_t>{K, N});
    auto bp = std::make_shared<Buffer<int8_t>>(std::vector<int64_t>{N / 16, K / 4, 16, 4});
    auto c = std::make_shared<Buffer<int32_t>>(std::vector<int64_t>{M, N});
    fill_bytes(a->data(), M * K, 1);
    fill_bytes(b->data(), K * N, 2);
    pack(*b, *bp);  // weights packed once, like oneDNN's reorder
    return [=] { gemm(*a, *bp, *c); };
}

bench::Runner onednn_gemm(int64_t M, int64_t N, int64_t K) {
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    auto ctx = std::make_shared<bench::OneDnn>();
    memory::desc a_md({M, K}, dt::u8, tag::ab), b_any({K, N}, dt::s8, tag::any), c_md({M, N}, dt::s32, tag::ab);
    matmul::primitive_desc pd(matmul::desc(a_md, b_any, c_md), ctx->engine);
    memory a(a_md, ctx->engine), c(c_md, ctx->engine), b_user({{K, N}, dt::s8, tag::ab}, ctx->engine);
    fill_bytes(static_cast<uint8_t*>(a.get_data_handle()), M * K, 1);
    fill_bytes(static_cast<int8_t*>(b_user.get_data_handle()), K * N, 2);
    memory b = ctx->reordered(b_user, pd.weights_desc());
    return bench::onednn_runner(ctx, matmul(pd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
}

// ---- conv2d ---------------------------------------------------------------------------

struct Conv {
    const char* name;
    int64_t C, O, H, K, stride, pad;
    int64_t out() const { return (H + 2 * pad - K) / stride + 1; }
    double ops() const { return 2.0 * double(O) * out() * out() * C * K * K; }
};

bench::Runner weft_conv(const Conv& cv) {
    using namespace weft;
    Tensor X = placeholder({1, cv.C / 4, cv.H, cv.H, 4}, u8, "X");
    Tensor W = placeholder({cv.O, cv.C, cv.K, cv.K}, i8, "W");
    Tensor Wp = topi::pack_conv2d_vnni_weight(W);
    Tensor Wpi = placeholder({cv.O / 16, cv.C / 4, cv.K, cv.K, 16, 4}, i8, "Wp");
    Tensor Y = topi::conv2d_nchwc_u8s8(X, Wpi, cv.stride, cv.pad);
    Schedule s = create_schedule(Y);
    topi::schedule_conv2d_nchwc_u8s8(s, Y);
    Kernel conv = build(s, {X, Wpi, Y});
    Schedule sp = create_schedule(Wp);
    Kernel pack = build(sp, {W, Wp});
    auto x = std::make_shared<Buffer<uint8_t>>(std::vector<int64_t>{1, cv.C / 4, cv.H, cv.H, 4});
    auto w = std::make_shared<Buffer<int8_t>>(std::vector<int64_t>{cv.O, cv.C, cv.K, cv.K});
    auto wp = std::make_shared<Buffer<int8_t>>(std::vector<int64_t>{cv.O / 16, cv.C / 4, cv.K, cv.K, 16, 4});
    auto y = std::make_shared<Buffer<int32_t>>(std::vector<int64_t>{1, cv.O / 16, cv.out(), cv.out(), 16});
    fill_bytes(x->data(), x->size(), 3);
    fill_bytes(w->data(), w->size(), 4);
    pack(*w, *wp);
    return [=] { conv(*x, *wp, *y); };
}

// In the graph's blocked layout (conv2d_nchwc_blocking's blocks for this CPU), as
// BuildOptions::precision = int8 and QDQ models run it: data u8 [1, C/ib, H, W, ib].
bench::Runner weft_blocked_conv(const Conv& cv) {
    using namespace weft;
    const Target target = Target::host();
    const topi::Pad2d pad = topi::Pad2d::all(cv.pad);
    const topi::Conv2dBlocking b = topi::conv2d_nchwc_blocking(cv.C, cv.O, cv.out(), pad, cv.K, target);
    const std::vector<int64_t> wshape{cv.O / b.oc_bn, cv.C / b.weight_ic_bn, cv.K, cv.K, b.weight_ic_bn, b.oc_bn};
    Tensor X = placeholder({1, cv.C / b.ic_bn, cv.H, cv.H, b.ic_bn}, u8, "X");
    Tensor W = placeholder({wshape[0], wshape[1], wshape[2], wshape[3], wshape[4], wshape[5]}, i8, "W");
    Tensor Wp = topi::pack_conv2d_nchwc_u8s8_weight(W, b.ic_bn);
    Tensor Wpi = placeholder(Wp.shape(), i8, "Wp");
    topi::Conv2dParams p;
    p.stride = {cv.stride, cv.stride};
    p.padding = pad;
    Tensor Y = topi::conv2d_nchwc_u8s8(X, Wpi, p);
    Schedule s = create_schedule(Y);
    topi::schedule_conv2d_nchwc_u8s8(s, Y, Y, target);
    Kernel conv = build(s, {X, Wpi, Y});
    Kernel pack = build(create_schedule(Wp), {W, Wp});
    auto x = std::make_shared<Buffer<uint8_t>>(std::vector<int64_t>{1, cv.C / b.ic_bn, cv.H, cv.H, b.ic_bn});
    auto w = std::make_shared<Buffer<int8_t>>(wshape);
    auto wp = std::make_shared<Buffer<int8_t>>(
        std::vector<int64_t>{cv.O / b.oc_bn, cv.C / b.ic_bn, cv.K, cv.K, b.ic_bn / 4, b.oc_bn, 4});
    auto y = std::make_shared<Buffer<int32_t>>(std::vector<int64_t>{1, cv.O / b.oc_bn, cv.out(), cv.out(), b.oc_bn});
    fill_bytes(x->data(), x->size(), 3);
    fill_bytes(w->data(), w->size(), 4);
    pack(*w, *wp);
    return [=] { conv(*x, *wp, *y); };
}

bench::Runner onednn_conv(const Conv& cv) {
    using namespace dnnl;
    using tag = memory::format_tag;
    using dt = memory::data_type;
    auto ctx = std::make_shared<bench::OneDnn>();
    memory::dims src{1, cv.C, cv.H, cv.H}, wei{cv.O, cv.C, cv.K, cv.K}, dst{1, cv.O, cv.out(), cv.out()};
    memory::desc src_any(src, dt::u8, tag::any), wei_any(wei, dt::s8, tag::any), dst_any(dst, dt::s32, tag::any);
    convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct, src_any, wei_any, dst_any,
                                {cv.stride, cv.stride}, {cv.pad, cv.pad}, {cv.pad, cv.pad});
    convolution_forward::primitive_desc pd(d, ctx->engine);
    memory src_user({src, dt::u8, tag::nchw}, ctx->engine), wei_user({wei, dt::s8, tag::oihw}, ctx->engine);
    fill_bytes(static_cast<uint8_t*>(src_user.get_data_handle()), cv.C * cv.H * cv.H, 3);
    fill_bytes(static_cast<int8_t*>(wei_user.get_data_handle()), cv.O * cv.C * cv.K * cv.K, 4);
    memory s = ctx->reordered(src_user, pd.src_desc()), w = ctx->reordered(wei_user, pd.weights_desc());
    memory o(pd.dst_desc(), ctx->engine);
    return bench::onednn_runner(ctx, convolution_forward(pd), {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, o}});
}

const bool registered = [] {
    if (!weft::topi::host_has_vnni()) return false;
    for (int64_t n : {256, 1024}) {
        bench::Case c{"int8_gemm/" + std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n),
                      bench::Unit::Flops, 2.0 * double(n) * n * n};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [n] { return weft_gemm(n, n, n); });
            if (weft::topi::has_amx_int8(weft::Target::host()))
                bench::add(c, "weft_amx", t, [n] { return weft_gemm(n, n, n, true); });
            bench::add(c, "onednn", t, [n] { return onednn_gemm(n, n, n); });
        }
    }
    for (Conv cv : {Conv{"64x56x56_3x3", 64, 64, 56, 3, 1, 1}, Conv{"256x14x14_3x3", 256, 256, 14, 3, 1, 1}}) {
        bench::Case c{std::string("int8_conv2d/") + cv.name, bench::Unit::Flops, cv.ops()};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [cv] { return weft_conv(cv); });
            bench::add(c, "onednn", t, [cv] { return onednn_conv(cv); });
        }
    }
    // The blocked convolution networks run, on ResNet-50's 3x3 layers and a 1x1 at 56.
    for (Conv cv : {Conv{"64x56x56_3x3", 64, 64, 56, 3, 1, 1}, Conv{"128x28x28_3x3", 128, 128, 28, 3, 1, 1},
                    Conv{"256x14x14_3x3", 256, 256, 14, 3, 1, 1}, Conv{"512x7x7_3x3", 512, 512, 7, 3, 1, 1},
                    Conv{"256x56x56_1x1_to64", 256, 64, 56, 1, 1, 0}}) {
        bench::Case c{std::string("int8_conv2d_blocked/") + cv.name, bench::Unit::Flops, cv.ops()};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [cv] { return weft_blocked_conv(cv); });
            bench::add(c, "onednn", t, [cv] { return onednn_conv(cv); });
        }
    }
    return true;
}();

}  // namespace
