// The low-precision cases bf16_bench.cpp, int8_bench.cpp and amx_run.cpp share: a GEMM and a
// convolution in the graph's blocked layout, in bfloat16 (float32 sums) or u8 x s8 (int32
// sums), by weft (its dot-product register tiles, or AMX tiles) and by oneDNN. Weights are in
// each library's preferred layout, packed in the set-up, outside the timing.
#pragma once
#include <memory>
#include <random>
#include <string>

#include "onednn_util.hpp"
#include <weft/weft.hpp>

namespace bench::dot {

// `n` random values of type t at p: bfloat16 uniform in [-1, 1), 8-bit integers over their
// whole range.
inline void fill_values(void* p, weft::DataType t, int64_t n, unsigned seed) {
    std::mt19937 rng(seed);
    if (t == weft::bf16) {
        std::uniform_real_distribution<float> d(-1.f, 1.f);
        for (int64_t i = 0; i < n; ++i) static_cast<weft::bfloat16*>(p)[i] = weft::bfloat16(d(rng));
    } else if (t == weft::i8) {
        for (int64_t i = 0; i < n; ++i) static_cast<int8_t*>(p)[i] = int8_t(int(rng() % 256) - 128);
    } else {
        for (int64_t i = 0; i < n; ++i) static_cast<uint8_t*>(p)[i] = uint8_t(rng() % 256);
    }
}

// One precision: its types, weft's packing, computes and schedules, oneDNN's types.
struct Kind {
    weft::DataType a, b, c;  // GEMM: A x B -> C; the convolution's data, packed weight and output alike
    int64_t step;            // K elements one dot-product instruction reduces per lane (2, 4)
    weft::Tensor (*pack)(const weft::Tensor&, std::string);
    weft::Tensor (*matmul)(const weft::Tensor&, const weft::Tensor&, std::string);
    void (*schedule)(weft::Schedule&, const weft::Tensor&);
    void (*schedule_amx)(weft::Schedule&, const weft::Tensor&);
    weft::DataType conv_weight;  // the blocked float32 / int8 weights the convolution's packing takes
    weft::Tensor (*pack_conv)(const weft::Tensor&, int64_t, std::string);
    // (data, packed weight, params, padded_copy: what AMX tiles read)
    weft::Tensor (*conv)(const weft::Tensor&, const weft::Tensor&, const weft::topi::Conv2dParams&, bool);
    void (*schedule_conv)(weft::Schedule&, const weft::Tensor&, const weft::Tensor&, const weft::Target&);
    dnnl::memory::data_type da, db, dc;
};

inline const Kind kBf16{weft::bf16, weft::bf16, weft::f32, 2, weft::topi::pack_bf16_weight, weft::topi::matmul_bf16,
                        weft::topi::schedule_matmul_bf16, weft::topi::schedule_matmul_bf16_amx, weft::f32,
                        weft::topi::pack_conv2d_nchwc_bf16_weight,
                        [](const weft::Tensor& x, const weft::Tensor& w, const weft::topi::Conv2dParams& p, bool copy) {
                            return weft::topi::conv2d_nchwc_bf16(x, w, p, "conv2d_bf16", copy);
                        },
                        weft::topi::schedule_conv2d_nchwc_bf16, dnnl::memory::data_type::bf16,
                        dnnl::memory::data_type::bf16, dnnl::memory::data_type::f32};

inline const Kind kInt8{weft::u8, weft::i8, weft::i32, 4, weft::topi::pack_vnni_weight, weft::topi::matmul_u8s8,
                        weft::topi::schedule_matmul_u8s8, weft::topi::schedule_matmul_u8s8_amx, weft::i8,
                        weft::topi::pack_conv2d_nchwc_u8s8_weight,
                        [](const weft::Tensor& x, const weft::Tensor& w, const weft::topi::Conv2dParams& p, bool copy) {
                            return weft::topi::conv2d_nchwc_u8s8(x, w, p, 0, "conv2d_u8s8", copy);
                        },
                        weft::topi::schedule_conv2d_nchwc_u8s8, dnnl::memory::data_type::u8,
                        dnnl::memory::data_type::s8, dnnl::memory::data_type::s32};

// C [M, N] = A [M, K] x B [K, N] by weft: `amx` on AMX tiles (CPUs with AMX), else its
// dot-product register tile.
inline Runner weft_gemm(const Kind& k, int64_t M, int64_t N, int64_t K, bool amx = false) {
    using namespace weft;
    Tensor A = placeholder({M, K}, k.a, "A"), B = placeholder({K, N}, k.b, "B");
    Tensor Bp = k.pack(B, "b_packed");
    const std::vector<int64_t> packed{N / 16, K / k.step, 16, k.step};
    Tensor Bpi = placeholder({packed[0], packed[1], packed[2], packed[3]}, k.b, "Bp");
    Tensor C = k.matmul(A, Bpi, "c");
    Schedule s = create_schedule(C);
    (amx ? k.schedule_amx : k.schedule)(s, C);
    auto gemm = std::make_shared<Kernel>(build(s, {A, Bpi, C}));
    Kernel pack = build(create_schedule(Bp), {B, Bp});
    auto a = std::make_shared<BufferRef>(BufferRef::allocate(k.a, {M, K}));
    BufferRef b = BufferRef::allocate(k.b, {K, N});
    auto bp = std::make_shared<BufferRef>(BufferRef::allocate(k.b, packed));
    auto c = std::make_shared<BufferRef>(BufferRef::allocate(k.c, {M, N}));
    fill_values(a->data(), k.a, M * K, 1);
    fill_values(b.data(), k.b, K * N, 2);
    pack(b, *bp);  // weights packed once, like oneDNN's reorder
    return [=] { (*gemm)(*a, *bp, *c); };
}

// The same GEMM by oneDNN's matmul (its weights in the layout it chose).
inline Runner onednn_gemm(const Kind& k, int64_t M, int64_t N, int64_t K) {
    using namespace dnnl;
    using tag = memory::format_tag;
    auto ctx = std::make_shared<OneDnn>();
    memory::desc a_md({M, K}, k.da, tag::ab), b_any({K, N}, k.db, tag::any), c_md({M, N}, k.dc, tag::ab);
    matmul::primitive_desc pd(matmul::desc(a_md, b_any, c_md), ctx->engine);
    memory a(a_md, ctx->engine), c(c_md, ctx->engine), b_user({{K, N}, k.db, tag::ab}, ctx->engine);
    fill_values(a.get_data_handle(), k.a, M * K, 1);
    fill_values(b_user.get_data_handle(), k.b, K * N, 2);
    memory b = ctx->reordered(b_user, pd.weights_desc());
    return onednn_runner(ctx, matmul(pd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
}

// A square convolution layer: C -> O channels over H x H, K x K taps.
struct Conv {
    const char* name;
    int64_t C, O, H, K, stride, pad;
    int64_t out() const { return (H + 2 * pad - K) / stride + 1; }
    double ops() const { return 2.0 * double(O) * double(out() * out()) * double(C * K * K); }
};

// In the graph's blocked layout, as BuildOptions::precision bf16 / int8 and QDQ models run
// it: data [1, C/ib, H, W, ib] in the block the previous layer's output has (its
// conv2d_nchwc_blocking output block, these layers' input and output channels alike),
// weights in blocks of as many input channels. `amx`: for this CPU (on AMX tiles where it has
// them and the layer fits), else for it without AMX (AVX-512's dot-product instructions).
inline Runner weft_blocked_conv(const Kind& k, const Conv& cv, bool amx = false) {
    using namespace weft;
    Target target = Target::host();
    if (!amx) target.features += ",-amx-tile,-amx-bf16,-amx-int8";  // (the last entry wins)
    const topi::Pad2d pad = topi::Pad2d::all(cv.pad);
    const topi::Conv2dBlocking bl = topi::conv2d_nchwc_blocking(cv.C, cv.O, cv.out(), pad, cv.K, target);
    const int64_t ib = cv.C % bl.oc_bn == 0 ? bl.oc_bn : bl.ic_bn;
    const std::vector<int64_t> data{1, cv.C / ib, cv.H, cv.H, ib},
        weight{cv.O / bl.oc_bn, cv.C / ib, cv.K, cv.K, ib, bl.oc_bn}, out{1, cv.O / bl.oc_bn, cv.out(), cv.out(), bl.oc_bn};
    Tensor X = placeholder({data[0], data[1], data[2], data[3], data[4]}, k.a, "X");
    Tensor W = placeholder({weight[0], weight[1], weight[2], weight[3], weight[4], weight[5]}, k.conv_weight, "W");
    Tensor Wp = k.pack_conv(W, ib, "weight_packed");
    Tensor Wpi = placeholder(Wp.shape(), k.b, "Wp");
    topi::Conv2dParams p;
    p.stride = {cv.stride, cv.stride};
    p.padding = pad;
    Tensor Y = k.conv(X, Wpi, p, amx && (k.step == 2 ? topi::has_amx_bf16(target) : topi::has_amx_int8(target)));
    Schedule s = create_schedule(Y);
    k.schedule_conv(s, Y, Y, target);
    auto conv = std::make_shared<Kernel>(build(s, {X, Wpi, Y}, target));
    Kernel pack = build(create_schedule(Wp), {W, Wp});
    auto x = std::make_shared<BufferRef>(BufferRef::allocate(k.a, data));
    BufferRef w = k.conv_weight == f32 ? BufferRef(Buffer<float>::random(weight, -1.f, 1.f, 4))
                                       : BufferRef::allocate(k.conv_weight, weight);
    if (k.conv_weight != f32) fill_values(w.data(), k.conv_weight, w.size(), 4);
    std::vector<int64_t> packed(Wp.shape().size());
    for (size_t d = 0; d < packed.size(); ++d) ir::as_const_int(Wp.shape()[d], &packed[d]);
    auto wp = std::make_shared<BufferRef>(BufferRef::allocate(k.b, packed));
    auto y = std::make_shared<BufferRef>(BufferRef::allocate(k.c, out));
    fill_values(x->data(), k.a, x->size(), 3);
    pack(w, *wp);
    return [=] { (*conv)(*x, *wp, *y); };
}

// The same layer by oneDNN's convolution (data and weights reordered to its layouts).
inline Runner onednn_conv(const Kind& k, const Conv& cv) {
    using namespace dnnl;
    using tag = memory::format_tag;
    auto ctx = std::make_shared<OneDnn>();
    memory::dims src{1, cv.C, cv.H, cv.H}, wei{cv.O, cv.C, cv.K, cv.K}, dst{1, cv.O, cv.out(), cv.out()};
    memory::desc src_any(src, k.da, tag::any), wei_any(wei, k.db, tag::any), dst_any(dst, k.dc, tag::any);
    convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct, src_any, wei_any, dst_any,
                                {cv.stride, cv.stride}, {cv.pad, cv.pad}, {cv.pad, cv.pad});
    convolution_forward::primitive_desc pd(d, ctx->engine);
    memory src_user({src, k.da, tag::nchw}, ctx->engine), wei_user({wei, k.db, tag::oihw}, ctx->engine);
    fill_values(src_user.get_data_handle(), k.a, cv.C * cv.H * cv.H, 3);
    fill_values(wei_user.get_data_handle(), k.b, cv.O * cv.C * cv.K * cv.K, 4);
    memory s = ctx->reordered(src_user, pd.src_desc()), w = ctx->reordered(wei_user, pd.weights_desc());
    memory o(pd.dst_desc(), ctx->engine);
    return onednn_runner(ctx, convolution_forward(pd), {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, o}});
}

}  // namespace bench::dot
