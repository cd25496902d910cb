// int8 GEMM and conv2d: weft's kernels tensorized onto AVX-512 VNNI (topi/x86.hpp) against
// oneDNN's int8 primitives (u8 x s8 -> s32). Weights (and for conv the input) are in each
// library's preferred layout, reordered in the set-up, outside the timing. Rates count
// 2 ops per multiply-add; "% peak" is against the fp32 FMA loop (VNNI's peak is 4x that).

#include <memory>

#include "dot_cases.hpp"
#include "harness.hpp"
#include <weft/weft.hpp>

namespace {

using namespace bench;
using dot::Conv;

// The NCHW4c convolution of topi's first VNNI kernel (conv2d_nchwc_u8s8 with 4-channel blocks
// and packed weights [O/16, C/4, K, K, 16, 4]).
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
    dot::fill_values(x->data(), weft::u8, x->size(), 3);
    dot::fill_values(w->data(), weft::i8, w->size(), 4);
    pack(*w, *wp);
    return [=] { conv(*x, *wp, *y); };
}

const bool registered = [] {
    if (!weft::topi::host_has_vnni()) return false;
    for (int64_t n : {256, 1024}) {
        bench::Case c{"int8_gemm/" + std::to_string(n) + "x" + std::to_string(n) + "x" + std::to_string(n),
                      bench::Unit::Flops, 2.0 * double(n) * n * n};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [n] { return dot::weft_gemm(dot::kInt8, n, n, n); });
            if (weft::topi::has_amx_int8(weft::Target::host()))
                bench::add(c, "weft_amx", t, [n] { return dot::weft_gemm(dot::kInt8, n, n, n, true); });
            bench::add(c, "onednn", t, [n] { return dot::onednn_gemm(dot::kInt8, n, n, n); });
        }
    }
    for (Conv cv : {Conv{"64x56x56_3x3", 64, 64, 56, 3, 1, 1}, Conv{"256x14x14_3x3", 256, 256, 14, 3, 1, 1}}) {
        bench::Case c{std::string("int8_conv2d/") + cv.name, bench::Unit::Flops, cv.ops()};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [cv] { return weft_conv(cv); });
            bench::add(c, "onednn", t, [cv] { return dot::onednn_conv(dot::kInt8, cv); });
        }
    }
    // The blocked convolution networks run, on ResNet-50's 3x3 layers and a 1x1 at 56.
    for (Conv cv : {Conv{"64x56x56_3x3", 64, 64, 56, 3, 1, 1}, Conv{"128x28x28_3x3", 128, 128, 28, 3, 1, 1},
                    Conv{"256x14x14_3x3", 256, 256, 14, 3, 1, 1}, Conv{"512x7x7_3x3", 512, 512, 7, 3, 1, 1},
                    Conv{"256x56x56_1x1_to64", 256, 64, 56, 1, 1, 0}}) {
        bench::Case c{std::string("int8_conv2d_blocked/") + cv.name, bench::Unit::Flops, cv.ops()};
        for (int t : {1, 2}) {
            bench::add(c, "weft", t, [cv] { return dot::weft_blocked_conv(dot::kInt8, cv, true); });
            bench::add(c, "onednn", t, [cv] { return dot::onednn_conv(dot::kInt8, cv); });
        }
    }
    return true;
}();

}  // namespace
