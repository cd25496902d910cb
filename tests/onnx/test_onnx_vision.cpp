// Vision operators against naive references: MaxPool's Indices (the windows' first maxima in
// row- and column-major order), MaxUnpool (through the pool's windows, a SegNet decoder, and of
// indices from anywhere), RoiAlign (ONNX's reference) and DeformConv.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "onnx/onnx_model.hpp"

using namespace weft;
using namespace onnx_test;

namespace {

struct PoolCase {
    int64_t C, H, W, k, s, pad;
    int storage_order = 0;
    int ceil_mode = 0;
};

// The naive MaxPool over [1, C, H, W]: values and the first maximum's position (ONNX
// Runtime's rule: a later element wins only when greater), row- or column-major.
struct PoolRef {
    int64_t OH = 0, OW = 0;
    std::vector<float> values;
    std::vector<int64_t> indices;
};

int64_t pooled_extent(int64_t n, const PoolCase& p) {
    const int64_t span = n + 2 * p.pad - p.k;
    return (p.ceil_mode ? (span + p.s - 1) / p.s : span / p.s) + 1;
}

PoolRef max_pool_ref(const std::vector<float>& x, const PoolCase& p) {
    PoolRef r;
    r.OH = pooled_extent(p.H, p);
    r.OW = pooled_extent(p.W, p);
    for (int64_t c = 0; c < p.C; ++c)
        for (int64_t oy = 0; oy < r.OH; ++oy)
            for (int64_t ox = 0; ox < r.OW; ++ox) {
                float best = 0;
                int64_t by = -1, bx = -1;
                for (int64_t y = oy * p.s - p.pad; y < oy * p.s - p.pad + p.k; ++y)
                    for (int64_t xx = ox * p.s - p.pad; xx < ox * p.s - p.pad + p.k; ++xx) {
                        if (y < 0 || y >= p.H || xx < 0 || xx >= p.W) continue;
                        const float v = x[size_t((c * p.H + y) * p.W + xx)];
                        if (by < 0 || v > best) best = v, by = y, bx = xx;
                    }
                r.values.push_back(best);
                r.indices.push_back(c * p.H * p.W + (p.storage_order ? bx * p.H + by : by * p.W + bx));
            }
    return r;
}

// Values with many ties (a few levels), so that the first maximum's rule is what decides.
Buffer<float> levels(std::vector<int64_t> shape, uint64_t seed) {
    Buffer<float> b(shape);
    std::mt19937_64 rng(seed);
    for (float& v : b) v = float(rng() % 4);
    return b;
}

bool has_op(const graph::Graph& g, const std::string& op) {
    for (int i = 0; i < g.size(); ++i)
        if (g.node(i).op == op) return true;
    return false;
}

}  // namespace

TEST_CASE("onnx: MaxPool's Indices: the first maximum, row- and column-major, padded, overlapping, 1-D") {
    const std::vector<PoolCase> cases = {
        {3, 7, 9, 3, 2, 1, 0, 0}, {3, 7, 9, 3, 2, 1, 1, 0}, {2, 8, 6, 2, 2, 0, 0, 0},
        {2, 8, 6, 2, 2, 0, 1, 0}, {2, 7, 7, 2, 2, 0, 0, 1}, {4, 5, 11, 3, 1, 1, 0, 0}};
    uint64_t seed = 1;
    for (const PoolCase& p : cases) {
        CAPTURE(p.H);
        CAPTURE(p.k);
        CAPTURE(p.storage_order);
        CAPTURE(p.ceil_mode);
        Model m(12);
        m.input("x", {1, p.C, p.H, p.W});
        auto& n = m.node("MaxPool", {"x"}, {"y", "i"});
        set_ints(n, "kernel_shape", {p.k, p.k});
        set_ints(n, "strides", {p.s, p.s});
        set_ints(n, "pads", {p.pad, p.pad, p.pad, p.pad});
        set_int(n, "storage_order", p.storage_order);
        set_int(n, "ceil_mode", p.ceil_mode);
        m.output("y");
        m.output("i", pb::TensorProto::INT64);
        graph::Module mod = graph::build(m.load());
        for (bool ties : {false, true}) {
            Buffer<float> x = ties ? levels({1, p.C, p.H, p.W}, seed++)
                                   : Buffer<float>::random({1, p.C, p.H, p.W}, -1.f, 1.f, seed++);
            const PoolRef want = max_pool_ref(std::vector<float>(x.begin(), x.end()), p);
            run_on(mod, {x});
            CHECK(mod.get_output(0).shape() == std::vector<int64_t>{1, p.C, want.OH, want.OW});
            CHECK(values_of<float>(mod.get_output(0)) == want.values);
            CHECK(values_of<int64_t>(mod.get_output(1)) == want.indices);
        }
    }

    // 1-D: [N, C, W] pooled as one row.
    Model m1(12);
    m1.input("x", {1, 2, 13});
    auto& n1 = m1.node("MaxPool", {"x"}, {"y", "i"});
    set_ints(n1, "kernel_shape", {3});
    set_ints(n1, "strides", {2});
    set_ints(n1, "pads", {1, 1});
    m1.output("y");
    m1.output("i", pb::TensorProto::INT64);
    graph::Module mod1 = graph::build(m1.load());
    Buffer<float> x1 = levels({1, 2, 13}, 99);
    run_on(mod1, {x1});
    const PoolRef want1 = max_pool_ref(std::vector<float>(x1.begin(), x1.end()), {2, 1, 13, 3, 2, 1});
    CHECK(mod1.get_output(1).shape() == std::vector<int64_t>{1, 2, 7});
    // (The reference pools the one row with a padded 3x3 window: only row 0 is inside.)
    CHECK(values_of<int64_t>(mod1.get_output(1)) == want1.indices);
    CHECK(values_of<float>(mod1.get_output(0)) == want1.values);

    // 3-D pools run as two 2-D ones: their Indices are refused, naming what.
    Model m3(12);
    m3.input("x", {1, 1, 4, 4, 4});
    auto& n3 = m3.node("MaxPool", {"x"}, {"y", "i"});
    set_ints(n3, "kernel_shape", {2, 2, 2});
    m3.output("y");
    m3.output("i", pb::TensorProto::INT64);
    CHECK(error_of([&] { m3.load(); }).find("MaxPool's Indices over 3 spatial dimensions") != std::string::npos);
}

namespace {

// Zeros of [1, C, H, W], values[i] at position indices[i] in order (the last wins), then
// zeros at the end of each axis up to [1, C, OH2, OW2].
std::vector<float> unpool_ref(const std::vector<float>& values, const std::vector<int64_t>& indices, int64_t C,
                              int64_t H, int64_t W, int64_t H2, int64_t W2) {
    std::vector<float> y(size_t(C * H * W), 0.f), out(size_t(C * H2 * W2), 0.f);
    for (size_t i = 0; i < values.size(); ++i) y[size_t(indices[i])] = values[i];
    for (int64_t c = 0; c < C; ++c)
        for (int64_t r = 0; r < H; ++r)
            for (int64_t q = 0; q < W; ++q) out[size_t((c * H2 + r) * W2 + q)] = y[size_t((c * H + r) * W + q)];
    return out;
}

}  // namespace

TEST_CASE("onnx: MaxUnpool through the pool's windows (a SegNet decoder) and of indices from anywhere") {
    // x -> 1x1 Conv (16 channels: the blocked layout) -> MaxPool with Indices; other values
    // (a graph input) unpooled at those indices, to the pool's input shape and to a larger
    // output_shape. Overlapping windows (3x3, stride 2) name some positions twice: the later
    // window's value wins.
    // (Sizes whose unpooled shape, (pooled - 1) * stride + kernel - pads, is the pool's input.)
    const int64_t C = 16;
    for (const PoolCase& p : {PoolCase{C, 8, 10, 2, 2, 0}, PoolCase{C, 9, 11, 3, 2, 1}}) {
        CAPTURE(p.k);
        const int64_t H = p.H, W = p.W;
        for (bool larger : {false, true}) {
            CAPTURE(larger);
            const int64_t OH = pooled_extent(H, p), OW = pooled_extent(W, p);
            const int64_t H2 = larger ? H + 2 : H, W2 = larger ? W + 1 : W;
            Model m(11);
            m.input("x", {1, C, H, W});
            m.input("v", {1, C, OH, OW});
            Buffer<float> w = Buffer<float>::random({C, C, 1, 1}, -1.f, 1.f, 3);
            m.initializer("w", w.shape(), std::vector<float>(w.begin(), w.end()));
            m.node("Conv", {"x", "w"}, {"c"});
            auto& pool = m.node("MaxPool", {"c"}, {"p", "i"});
            set_ints(pool, "kernel_shape", {p.k, p.k});
            set_ints(pool, "strides", {p.s, p.s});
            set_ints(pool, "pads", {p.pad, p.pad, p.pad, p.pad});
            std::vector<std::string> ins = {"v", "i"};
            if (larger) {
                m.initializer_i64("shape", {4}, {1, C, H2, W2});
                ins.push_back("shape");
            }
            auto& un = m.node("MaxUnpool", ins, {"y"});
            set_ints(un, "kernel_shape", {p.k, p.k});
            set_ints(un, "strides", {p.s, p.s});
            set_ints(un, "pads", {p.pad, p.pad, p.pad, p.pad});
            m.output("y");
            m.output("i", pb::TensorProto::INT64);
            graph::Graph g = m.load();
            CHECK(has_op(g, "max_unpool2d"));  // the windows' search, not every index's
            graph::Module mod = graph::build(g);
            Buffer<float> x = Buffer<float>::random({1, C, H, W}, -1.f, 1.f, 4);
            Buffer<float> v = Buffer<float>::random({1, C, OH, OW}, -1.f, 1.f, 5);
            run_on(mod, {x, v});
            // The reference unpools at the indices weft computed (checked against the naive
            // pool in the test above); here the conv's rounding could move a tie.
            const std::vector<int64_t> idx = values_of<int64_t>(mod.get_output(1));
            const std::vector<float> want = unpool_ref(std::vector<float>(v.begin(), v.end()), idx, C, H, W, H2, W2);
            CHECK(mod.get_output(0).shape() == std::vector<int64_t>{1, C, H2, W2});
            CHECK(values_of<float>(mod.get_output(0)) == want);
            // Every index lies in its own plane and window: the windows' search found them all.
            for (size_t k = 0; k < idx.size(); ++k) CHECK(idx[k] / (H * W) == int64_t(k) / (OH * OW));
        }
    }

    // Indices from a graph input: any position (a permutation's first elements, so no two
    // alike), through the search of every index.
    const int64_t c = 2, h = 3, w = 4;
    Model m(11);
    m.input("v", {1, c, h, w});
    m.input("i", {1, c, h, w}, pb::TensorProto::INT64);
    auto& un = m.node("MaxUnpool", {"v", "i"}, {"y"});
    set_ints(un, "kernel_shape", {3, 3});
    set_ints(un, "strides", {2, 2});
    set_ints(un, "pads", {0, 0, 1, 0});
    m.output("y");
    graph::Graph g = m.load();
    CHECK(!has_op(g, "max_unpool2d"));
    graph::Module mod = graph::build(g);
    // (in - 1) * stride + kernel - pads: 6 rows (a pad of 1 at the bottom), 9 columns.
    const int64_t H2 = (h - 1) * 2 + 3 - 1, W2 = (w - 1) * 2 + 3;
    CHECK(mod.get_output(0).shape() == std::vector<int64_t>{1, c, H2, W2});
    std::vector<int64_t> perm(size_t(c * H2 * W2));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(7));
    perm.resize(size_t(c * h * w));
    Buffer<int64_t> ib({1, c, h, w});
    std::copy(perm.begin(), perm.end(), ib.begin());
    Buffer<float> v = Buffer<float>::random({1, c, h, w}, -1.f, 1.f, 8);
    run_on(mod, {v, ib});
    CHECK(values_of<float>(mod.get_output(0)) == unpool_ref(std::vector<float>(v.begin(), v.end()), perm, c, H2, W2, H2, W2));

    // The zeros it scatters into are no constant of the output's size: X and I of one element
    // unpooled by a 4096x4096 window import without a 16M-element constant (and compute).
    Model wide(11);
    wide.input("v", {1, 1, 1, 1});
    wide.input("i", {1, 1, 1, 1}, pb::TensorProto::INT64);
    set_ints(wide.node("MaxUnpool", {"v", "i"}, {"y"}), "kernel_shape", {4096, 4096});
    wide.output("y");
    graph::Graph wg = wide.load();
    for (const graph::Node& n : wg.nodes())
        if (n.is_constant()) CHECK(n.type.size() < 1024);
    graph::Module wm = graph::build(wg);
    Buffer<float> wv({1, 1, 1, 1});
    wv(0, 0, 0, 0) = 5.f;
    Buffer<int64_t> wi({1, 1, 1, 1});
    wi(0, 0, 0, 0) = 4096 * 7 + 3;
    run_on(wm, {wv, wi});
    const std::vector<float> wy = values_of<float>(wm.get_output(0));
    REQUIRE(wy.size() == size_t(4096 * 4096));
    for (size_t k = 0; k < wy.size(); ++k)
        if (wy[k] != (k == size_t(4096 * 7 + 3) ? 5.f : 0.f)) FAIL("element ", k, " is ", wy[k]);

    // Too large for that search: refused, naming why.
    Model big(11);
    big.input("v", {1, 64, 128, 128});
    big.input("i", {1, 64, 128, 128}, pb::TensorProto::INT64);
    auto& bn = big.node("MaxUnpool", {"v", "i"}, {"y"});
    set_ints(bn, "kernel_shape", {2, 2});
    set_ints(bn, "strides", {2, 2});
    big.output("y");
    CHECK(error_of([&] { big.load(); }).find("not the Indices of a 2-D MaxPool in this model") != std::string::npos);
    // An output_shape smaller than the pool's input is malformed.
    Model small(11);
    small.input("v", {1, 1, 2, 2});
    small.input("i", {1, 1, 2, 2}, pb::TensorProto::INT64);
    small.initializer_i64("shape", {4}, {1, 1, 3, 3});
    auto& sn = small.node("MaxUnpool", {"v", "i", "shape"}, {"y"});
    set_ints(sn, "kernel_shape", {2, 2});
    set_ints(sn, "strides", {2, 2});
    small.output("y");
    const std::string small_error = error_of([&] { small.load(); });
    CHECK_MESSAGE(small_error.find("must hold {1, 1, 4, 4}") != std::string::npos, small_error);
}

namespace {

struct RoiCase {
    int64_t oh, ow, ratio;
    float scale;
    bool half_pixel, max;
};

// ONNX's reference RoiAlign (onnx/reference/ops/op_roi_align.py), in double.
std::vector<float> roi_align_ref(const Buffer<float>& x, const std::vector<float>& rois, const std::vector<int64_t>& batch,
                                 const RoiCase& p) {
    const int64_t C = x.shape()[1], H = x.shape()[2], W = x.shape()[3], R = int64_t(batch.size());
    std::vector<float> out;
    for (int64_t r = 0; r < R; ++r) {
        const double off = p.half_pixel ? 0.5 : 0.0;
        const double sw = rois[size_t(r * 4)] * double(p.scale) - off, sh = rois[size_t(r * 4 + 1)] * double(p.scale) - off;
        double rw = rois[size_t(r * 4 + 2)] * double(p.scale) - off - sw, rh = rois[size_t(r * 4 + 3)] * double(p.scale) - off - sh;
        if (!p.half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
        const double bh = rh / double(p.oh), bw = rw / double(p.ow);
        const int64_t gh = p.ratio > 0 ? p.ratio : int64_t(std::ceil(rh / double(p.oh)));
        const int64_t gw = p.ratio > 0 ? p.ratio : int64_t(std::ceil(rw / double(p.ow)));
        const int64_t count = std::max<int64_t>(gh * gw, 1);
        for (int64_t c = 0; c < C; ++c)
            for (int64_t ph = 0; ph < p.oh; ++ph)
                for (int64_t pw = 0; pw < p.ow; ++pw) {
                    double acc = 0;
                    bool first = true;
                    for (int64_t iy = 0; iy < gh; ++iy)
                        for (int64_t ix = 0; ix < gw; ++ix) {
                            double y = sh + double(ph) * bh + (double(iy) + 0.5) * bh / double(gh);
                            double xx = sw + double(pw) * bw + (double(ix) + 0.5) * bw / double(gw);
                            double w[4] = {0, 0, 0, 0};
                            int64_t pos[4][2] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
                            if (!(y < -1.0 || y > double(H) || xx < -1.0 || xx > double(W))) {
                                y = std::max(y, 0.0), xx = std::max(xx, 0.0);
                                int64_t yl = int64_t(y), xl = int64_t(xx), yh, xh;
                                if (yl >= H - 1) yh = yl = H - 1, y = double(yl);
                                else yh = yl + 1;
                                if (xl >= W - 1) xh = xl = W - 1, xx = double(xl);
                                else xh = xl + 1;
                                const double ly = y - double(yl), lx = xx - double(xl), hy = 1 - ly, hx = 1 - lx;
                                w[0] = hy * hx, w[1] = hy * lx, w[2] = ly * hx, w[3] = ly * lx;
                                int64_t q[4][2] = {{yl, xl}, {yl, xh}, {yh, xl}, {yh, xh}};
                                std::memcpy(pos, q, sizeof q);
                            }
                            double v[4];
                            for (int k = 0; k < 4; ++k) v[k] = w[k] * double(x(batch[size_t(r)], c, pos[k][0], pos[k][1]));
                            if (p.max) {
                                const double m = std::max(std::max(v[0], v[1]), std::max(v[2], v[3]));
                                acc = first ? m : std::max(acc, m);
                                first = false;
                            } else {
                                acc += v[0] + v[1] + v[2] + v[3];
                            }
                        }
                    out.push_back(float(p.max ? acc : acc / double(count)));
                }
    }
    return out;
}

graph::Graph roi_align_model(const RoiCase& p, int64_t N, int64_t C, int64_t H, int64_t W, int64_t R, int opset) {
    Model m(opset);
    m.input("x", {N, C, H, W});
    m.input("rois", {R, 4});
    m.input("batch", {R}, pb::TensorProto::INT64);
    auto& n = m.node("RoiAlign", {"x", "rois", "batch"}, {"y"});
    set_int(n, "output_height", p.oh);
    set_int(n, "output_width", p.ow);
    set_int(n, "sampling_ratio", p.ratio);
    set_float(n, "spatial_scale", p.scale);
    set_string(n, "mode", p.max ? "max" : "avg");
    if (opset >= 16) set_string(n, "coordinate_transformation_mode", p.half_pixel ? "half_pixel" : "output_half_pixel");
    m.output("y");
    return m.load();
}

}  // namespace

TEST_CASE("onnx: RoiAlign: avg and max, both coordinate modes, sample grids from the regions' sizes") {
    const int64_t N = 2, C = 3, H = 11, W = 13, R = 6;
    Buffer<float> x = Buffer<float>::random({N, C, H, W}, -1.f, 1.f, 21);
    // Regions in image coordinates (spatial_scale 0.5): small, large, past the border, empty,
    // inverted, and one the whole map.
    const std::vector<float> rois = {2, 3, 9, 8, 0, 0, 25, 21, 18, 15, 27, 24, 4, 4, 4, 4, 10, 12, 3, 2, 0, 0, 26, 22};
    const std::vector<int64_t> batch = {0, 1, 1, 0, 1, 0};
    Buffer<float> rb({R, 4});
    std::copy(rois.begin(), rois.end(), rb.begin());
    Buffer<int64_t> bb({R});
    std::copy(batch.begin(), batch.end(), bb.begin());
    for (const RoiCase& p : {RoiCase{3, 4, 0, 0.5f, true, false}, RoiCase{3, 4, 0, 0.5f, false, false},
                             RoiCase{2, 2, 2, 0.5f, true, true}, RoiCase{5, 3, 0, 0.5f, true, true},
                             RoiCase{1, 1, 3, 0.5f, false, false}}) {
        CAPTURE(p.oh);
        CAPTURE(p.ratio);
        CAPTURE(p.half_pixel);
        CAPTURE(p.max);
        for (int opset : {10, 16}) {
            if (opset == 10 && p.half_pixel) continue;  // opset 10 maps as output_half_pixel
            graph::Module mod = graph::build(roi_align_model(p, N, C, H, W, R, opset));
            run_on(mod, {x, rb, bb});
            CHECK(mod.get_output(0).shape() == std::vector<int64_t>{R, C, p.oh, p.ow});
            const std::vector<float> got = values_of<float>(mod.get_output(0)), want = roi_align_ref(x, rois, batch, p);
            REQUIRE(got.size() == want.size());
            for (size_t k = 0; k < want.size(); ++k) CHECK(std::abs(got[k] - want[k]) <= 1e-5f + 1e-4f * std::abs(want[k]));
        }
    }

    // sampling_ratio 0: a region far larger than the map is an error at run time; NaN
    // coordinates sample nothing (the loops' extents come from the data) and never read
    // outside the map.
    const RoiCase p{2, 2, 0, 1.0f, true, false};
    graph::Module mod = graph::build(roi_align_model(p, N, C, H, W, 2, 16));
    Buffer<float> huge({2, 4});
    const float far[8] = {0, 0, 5, 5, -1e9f, -1e9f, 1e9f, 1e9f};
    std::copy(far, far + 8, huge.begin());
    Buffer<int64_t> b2({2});
    b2(0) = 0, b2(1) = 1;
    mod.set_input(0, x);
    mod.set_input(1, huge);
    mod.set_input(2, b2);
    const std::string err = error_of([&] { mod.run(); });
    CHECK_MESSAGE(err.find("a region needs more samples per bin than weft takes") != std::string::npos, err);
    Buffer<float> nan({2, 4});
    const float odd[8] = {0, 0, 5, 5, std::nanf(""), 1, 4, std::nanf("")};
    std::copy(odd, odd + 8, nan.begin());
    mod.set_input(1, nan);
    mod.run();
    const std::vector<float> got = values_of<float>(mod.get_output(0));
    const std::vector<float> want = roi_align_ref(x, {0, 0, 5, 5}, {0}, p);
    for (size_t k = 0; k < want.size(); ++k) CHECK(std::abs(got[k] - want[k]) <= 1e-5f + 1e-4f * std::abs(want[k]));
}

namespace {

// A deformable convolution, naively: each tap sampled bilinearly (zeros outside) where the
// offsets move it, times the mask, times the weight; plus the bias.
std::vector<float> deform_conv_ref(const Buffer<float>& x, const Buffer<float>& w, const Buffer<float>& off,
                                   const Buffer<float>* mask, const Buffer<float>& b, int64_t group, int64_t og,
                                   int64_t stride, int64_t pad, int64_t dil) {
    const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
    const int64_t O = w.shape()[0], Cg = w.shape()[1], kh = w.shape()[2], kw = w.shape()[3];
    const int64_t OH = off.shape()[2], OW = off.shape()[3];
    auto at = [&](int64_t n, int64_t c, double y, double xx) {
        if (!(y > -1 && y < double(H) && xx > -1 && xx < double(W))) return 0.0;
        const double fy = std::floor(y), fx = std::floor(xx);
        double s = 0;
        for (int a = 0; a < 2; ++a)
            for (int q = 0; q < 2; ++q) {
                const int64_t yy = int64_t(fy) + a, xq = int64_t(fx) + q;
                if (yy < 0 || yy >= H || xq < 0 || xq >= W) continue;
                s += (a ? y - fy : 1 - (y - fy)) * (q ? xx - fx : 1 - (xx - fx)) * double(x(n, c, yy, xq));
            }
        return s;
    };
    std::vector<float> out;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t o = 0; o < O; ++o)
            for (int64_t y = 0; y < OH; ++y)
                for (int64_t xo = 0; xo < OW; ++xo) {
                    double s = b(o);
                    const int64_t g = o / (O / group);
                    for (int64_t ci = 0; ci < Cg; ++ci) {
                        const int64_t c = g * Cg + ci, k = c / (C / og);
                        for (int64_t ky = 0; ky < kh; ++ky)
                            for (int64_t kx = 0; kx < kw; ++kx) {
                                const int64_t tap = ky * kw + kx;
                                const double py = double(y * stride - pad + ky * dil) + off(n, k * 2 * kh * kw + 2 * tap, y, xo);
                                const double px = double(xo * stride - pad + kx * dil) + off(n, k * 2 * kh * kw + 2 * tap + 1, y, xo);
                                const double m = mask ? double((*mask)(n, k * kh * kw + tap, y, xo)) : 1.0;
                                s += double(w(o, ci, ky, kx)) * m * at(n, c, py, px);
                            }
                    }
                    out.push_back(float(s));
                }
    return out;
}

}  // namespace

TEST_CASE("onnx: DeformConv with groups, offset groups, mask, bias, strides and dilations") {
    const int64_t N = 2, C = 4, H = 9, W = 8, O = 6, group = 2, og = 2, k = 3, stride = 2, pad = 1, dil = 2;
    const int64_t OH = (H + 2 * pad - dil * (k - 1) - 1) / stride + 1, OW = (W + 2 * pad - dil * (k - 1) - 1) / stride + 1;
    Buffer<float> x = Buffer<float>::random({N, C, H, W}, -1.f, 1.f, 31);
    Buffer<float> w = Buffer<float>::random({O, C / group, k, k}, -1.f, 1.f, 32);
    Buffer<float> b = Buffer<float>::random({O}, -1.f, 1.f, 33);
    // Offsets up to 3 pixels either way: many taps land between pixels, some outside the map.
    Buffer<float> off = Buffer<float>::random({N, og * 2 * k * k, OH, OW}, -3.f, 3.f, 34);
    Buffer<float> mask = Buffer<float>::random({N, og * k * k, OH, OW}, 0.f, 1.f, 35);
    for (bool with_mask : {false, true}) {
        CAPTURE(with_mask);
        Model m(19);
        m.input("x", {N, C, H, W});
        m.input("offset", {N, og * 2 * k * k, OH, OW});
        m.initializer("w", w.shape(), std::vector<float>(w.begin(), w.end()));
        m.initializer("b", {O}, std::vector<float>(b.begin(), b.end()));
        std::vector<std::string> ins = {"x", "w", "offset", "b"};
        if (with_mask) {
            m.input("mask", {N, og * k * k, OH, OW});
            ins.push_back("mask");
        }
        auto& n = m.node("DeformConv", ins, {"y"});
        set_int(n, "group", group);
        set_int(n, "offset_group", og);
        set_ints(n, "strides", {stride, stride});
        set_ints(n, "pads", {pad, pad, pad, pad});
        set_ints(n, "dilations", {dil, dil});
        m.output("y");
        graph::Module mod = graph::build(m.load());
        std::vector<BufferRef> inputs{x, off};
        if (with_mask) inputs.push_back(mask);
        run_on(mod, inputs);
        CHECK(mod.get_output(0).shape() == std::vector<int64_t>{N, O, OH, OW});
        const std::vector<float> got = values_of<float>(mod.get_output(0));
        const std::vector<float> want = deform_conv_ref(x, w, off, with_mask ? &mask : nullptr, b, group, og, stride, pad, dil);
        REQUIRE(got.size() == want.size());
        for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= 1e-4f * (1 + std::abs(want[i])));
        // NaN and huge offsets read nothing outside the map (zeros), the rest unchanged.
        Buffer<float> odd = off.copy();
        odd(0, 0, 0, 0) = std::nanf("");
        odd(1, 1, 1, 1) = 1e30f;
        odd(1, 2, 0, 1) = -1e30f;
        mod.set_input(1, odd);
        mod.run();
        const std::vector<float> got_odd = values_of<float>(mod.get_output(0));
        const std::vector<float> want_odd = deform_conv_ref(x, w, odd, with_mask ? &mask : nullptr, b, group, og, stride, pad, dil);
        for (size_t i = 0; i < want_odd.size(); ++i)
            if (!std::isnan(want_odd[i])) CHECK(std::abs(got_odd[i] - want_odd[i]) <= 1e-4f * (1 + std::abs(want_odd[i])));
    }
}

TEST_CASE("onnx: AveragePool with ceil_mode and count_include_pad: the divisor counts the pads, not the ceil's extra") {
    // PyTorch's and ONNX's rule: a window's divisor is its part inside the padded input
    // (explicit pads included), the extra rows and columns ceil_mode adds past them not.
    const int64_t C = 2, H = 7, W = 8, k = 3, s = 2, pad = 1;
    Model m(19);
    m.input("x", {1, C, H, W});
    auto& n = m.node("AveragePool", {"x"}, {"y"});
    set_ints(n, "kernel_shape", {k, k});
    set_ints(n, "strides", {s, s});
    set_ints(n, "pads", {pad, pad, pad, pad});
    set_int(n, "ceil_mode", 1);
    set_int(n, "count_include_pad", 1);
    m.output("y");
    graph::Module mod = graph::build(m.load());
    Buffer<float> x = Buffer<float>::random({1, C, H, W}, -1.f, 1.f, 61);
    run_on(mod, {x});
    auto out = [&](int64_t n_) {  // ceil((n + 2 pad - k) / s) + 1, less one if it starts in the end pad
        int64_t o = (n_ + 2 * pad - k + s - 1) / s + 1;
        if ((o - 1) * s >= n_ + pad) --o;
        return o;
    };
    const int64_t OH = out(H), OW = out(W);
    CHECK(mod.get_output(0).shape() == std::vector<int64_t>{1, C, OH, OW});
    std::vector<float> want;
    for (int64_t c = 0; c < C; ++c)
        for (int64_t oy = 0; oy < OH; ++oy)
            for (int64_t ox = 0; ox < OW; ++ox) {
                const int64_t y0 = oy * s - pad, x0 = ox * s - pad;
                const int64_t y1 = std::min(y0 + k, H + pad), x1 = std::min(x0 + k, W + pad);
                double sum = 0;
                for (int64_t y = std::max<int64_t>(y0, 0); y < std::min(y1, H); ++y)
                    for (int64_t xx = std::max<int64_t>(x0, 0); xx < std::min(x1, W); ++xx) sum += x(0, c, y, xx);
                want.push_back(float(sum / double((y1 - y0) * (x1 - x0))));
            }
    const std::vector<float> got = values_of<float>(mod.get_output(0));
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= 1e-6f);
}

TEST_CASE("onnx: GridSample bilinear against the definition; NaN, infinite and huge coordinates read nothing") {
    const int64_t C = 2, H = 5, W = 7, OH = 3, OW = 4;
    for (const char* padding : {"zeros", "border"}) {
        CAPTURE(padding);
        Model m(16);
        m.input("x", {1, C, H, W});
        m.input("grid", {1, OH, OW, 2});
        set_string(m.node("GridSample", {"x", "grid"}, {"y"}), "padding_mode", padding);
        m.output("y");
        graph::Module mod = graph::build(m.load());
        Buffer<float> x = Buffer<float>::random({1, C, H, W}, -1.f, 1.f, 71);
        Buffer<float> grid = Buffer<float>::random({1, OH, OW, 2}, -1.2f, 1.2f, 72);
        const bool zeros = std::string(padding) == "zeros";
        auto sample = [&](int64_t c, double gx, double gy) {  // align_corners 0
            double px = ((gx + 1) * double(W) - 1) / 2, py = ((gy + 1) * double(H) - 1) / 2;
            if (!zeros) {
                if (px < -0.5 || px > double(W) - 0.5) px = std::clamp(px, 0.0, double(W - 1));
                if (py < -0.5 || py > double(H) - 0.5) py = std::clamp(py, 0.0, double(H - 1));
            }
            const double fx = std::floor(px), fy = std::floor(py);
            double s = 0;
            for (int a = 0; a < 2; ++a)
                for (int b = 0; b < 2; ++b) {
                    int64_t yy = int64_t(fy) + a, xx = int64_t(fx) + b;
                    const double w = (a ? py - fy : 1 - (py - fy)) * (b ? px - fx : 1 - (px - fx));
                    if (zeros && (yy < 0 || yy >= H || xx < 0 || xx >= W)) continue;
                    yy = std::clamp<int64_t>(yy, 0, H - 1), xx = std::clamp<int64_t>(xx, 0, W - 1);
                    s += w * x(0, c, yy, xx);
                }
            return s;
        };
        run_on(mod, {x, grid});
        std::vector<float> got = values_of<float>(mod.get_output(0));
        for (int64_t c = 0; c < C; ++c)
            for (int64_t i = 0; i < OH; ++i)
                for (int64_t j = 0; j < OW; ++j) {
                    const double want = sample(c, grid(0, i, j, 0), grid(0, i, j, 1));
                    CHECK(std::abs(got[size_t((c * OH + i) * OW + j)] - want) <= 1e-5 * (1 + std::abs(want)));
                }
        // Coordinates no input holds: with zeros padding they read nothing; any padding, no
        // read outside the input (ASan's run of this test) and a finite result.
        const float odd[] = {std::nanf(""), INFINITY, -INFINITY, 1e30f, -1e30f, 3e9f};
        for (int64_t i = 0; i < OH * OW * 2; ++i) grid.data()[i] = odd[i % 6];
        mod.set_input(1, grid);
        mod.run();
        got = values_of<float>(mod.get_output(0));
        for (float v : got) {
            CHECK(std::isfinite(v));
            if (zeros) CHECK(v == 0.f);
        }
    }
}
