// The ONNX importer's converters for index and pattern operators: GatherElements, CumSum,
// Trilu, DepthToSpace, SpaceToDepth, Range, EyeLike, OneHot and Hardmax. Most are
// compositions of the graph's reshape / transpose / where / equal with constant masks; Range
// and EyeLike are constants (their shapes depend on values, which must be known).
#pragma once
#include "weft/frontend/onnx/impl/ops_common.hpp"
#include "weft/topi/resize.hpp"

namespace weft::onnx::detail {

inline std::vector<Value> convert_gather_elements(Ctx& c) {
    return {c.add("gather_elements", {c.in(0), c.in(1)}, {{"axis", c.i("axis", 0)}}, c.out())};
}

// CumSum, CumProd: the axis is a constant input; exclusive and reverse attributes.
inline std::vector<Value> convert_cumulative(Ctx& c, const char* op) {
    std::vector<int64_t> axis = c.const_ints(1, "the axis");
    if (axis.size() != 1) malformed("the axis must hold one value, got " + std::to_string(axis.size()));
    return {c.add(op, {c.in(0)}, {{"axis", axis[0]}, {"exclusive", c.i("exclusive", 0)}, {"reverse", c.i("reverse", 0)}},
                  c.out())};
}

// Trilu: x where the diagonal offset j - i of its last two dimensions is >= k (upper) or <= k
// (lower), else 0; a constant bool mask over those two dimensions.
inline std::vector<Value> convert_trilu(Ctx& c) {
    Value x = c.in(0);
    if (c.rank(x) < 2) malformed("the input must have rank 2 or more, got " + std::to_string(c.rank(x)));
    int64_t k = 0;
    if (c.has(1) && !c.is_empty(1)) {
        std::vector<int64_t> kv = c.const_ints(1, "k");
        if (kv.size() != 1) malformed("k must hold one value, got " + std::to_string(kv.size()));
        k = kv[0];
    }
    const bool upper = c.i("upper", 1) != 0;
    const int64_t n = c.shape(x)[size_t(c.rank(x) - 2)], m = c.shape(x).back();
    BufferRef mask = BufferRef::allocate(DataType::bool_(), {n, m});
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) set_element(mask, i * m + j, upper ? j - i >= k : j - i <= k);
    return {c.g.where(c.constant(mask, "mask"), x, c.scalar(0, c.dtype(x), "zero"), c.out())};
}

// DepthToSpace and SpaceToDepth (mode DCR or CRD): reshape, transpose, reshape.
inline std::vector<Value> convert_depth_to_space(Ctx& c) {
    Value x = c.in(0);
    if (c.rank(x) != 4) malformed("the input must be 4-D [N, C, H, W], got rank " + std::to_string(c.rank(x)));
    const int64_t b = c.i("blocksize");
    const std::vector<int64_t> s = c.shape(x);
    if (b < 1 || s[1] % (b * b) != 0)
        malformed("the channels (" + std::to_string(s[1]) + ") must be a multiple of blocksize^2 (blocksize " +
                  std::to_string(b) + ")");
    const int64_t n = s[0], ch = s[1] / (b * b), h = s[2], w = s[3];
    const std::string mode = c.s("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") malformed("mode must be DCR or CRD, got '" + mode + "'");
    const bool dcr = mode == "DCR";
    Value r = reshape(c, x, dcr ? std::vector<int64_t>{n, b, b, ch, h, w} : std::vector<int64_t>{n, ch, b, b, h, w});
    r = c.g.transpose(r, dcr ? std::vector<int64_t>{0, 3, 4, 1, 5, 2} : std::vector<int64_t>{0, 1, 4, 2, 5, 3},
                      c.fresh("transpose"));
    return {reshape(c, r, {n, ch, h * b, w * b}, c.out())};
}

inline std::vector<Value> convert_space_to_depth(Ctx& c) {
    Value x = c.in(0);
    if (c.rank(x) != 4) malformed("the input must be 4-D [N, C, H, W], got rank " + std::to_string(c.rank(x)));
    const int64_t b = c.i("blocksize");
    const std::vector<int64_t> s = c.shape(x);
    if (b < 1 || s[2] % b != 0 || s[3] % b != 0)
        malformed("the height and width (" + std::to_string(s[2]) + ", " + std::to_string(s[3]) +
                  ") must be multiples of blocksize " + std::to_string(b));
    const int64_t n = s[0], ch = s[1], h = s[2] / b, w = s[3] / b;
    // mode (opset 28): DCR puts the block offsets before the channel, CRD after it.
    const std::string mode = c.s("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") malformed("mode must be DCR or CRD, got '" + mode + "'");
    Value r = reshape(c, x, {n, ch, h, b, w, b});
    r = c.g.transpose(r, mode == "DCR" ? std::vector<int64_t>{0, 3, 5, 1, 2, 4} : std::vector<int64_t>{0, 1, 3, 5, 2, 4},
                      c.fresh("transpose"));
    return {reshape(c, r, {n, ch * b * b, h, w}, c.out())};
}

// Range: start, limit and delta must be constants (the length is a value).
inline std::vector<Value> convert_range(Ctx& c) {
    const DataType t = c.dtype(c.in(0));
    auto one = [&](size_t k, const char* what) {
        std::vector<double> v = c.const_floats(k, what);
        if (v.size() != 1) malformed(std::string(what) + " must hold one value, got " + std::to_string(v.size()));
        return v[0];
    };
    const double start = one(0, "start"), limit = one(1, "limit"), delta = one(2, "delta");
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
        malformed("Range needs finite start, limit and delta, delta not 0");
    const double count = std::max(std::ceil((limit - start) / delta), 0.0);
    if (count == 0) unsupported("an empty Range (start " + std::to_string(start) + ", limit " + std::to_string(limit) +
                                "): weft's tensors have no empty dimensions");
    checked_elements({int64_t(std::min(count, 9e18))}, c.limit, "the Range");
    BufferRef b = BufferRef::allocate(t, {int64_t(count)});
    for (int64_t i = 0; i < int64_t(count); ++i) set_element(b, i, start + double(i) * delta);
    return {c.named_constant(0, b)};
}

// HannWindow, HammingWindow, BlackmanWindow (opset 17): constants of a constant size, in
// output_datatype; periodic (the default) divides the angle by size, symmetric by size - 1.
enum class Window { Hann, Hamming, Blackman };

inline Converter window(Window kind) {
    return [kind](Ctx& c) -> std::vector<Value> {
        const std::vector<int64_t> size = c.const_ints(0, "the size");
        if (size.size() != 1 || size[0] < 0) malformed("the size must be one value of at least 0");
        if (size[0] == 0) unsupported("a window of size 0 (weft's tensors cannot be empty)");
        const int64_t n = size[0];
        checked_elements({n}, c.limit, "the window");
        const DataType t = to_dtype(int(c.i("output_datatype", pb::TensorProto::FLOAT)), "output_datatype");
        const double span = c.i("periodic", 1) ? double(n) : double(n - 1), pi = M_PI;
        BufferRef b = BufferRef::allocate(t, {n});
        for (int64_t i = 0; i < n; ++i) {
            const double a = 2 * pi * double(i) / span;
            double v;
            if (kind == Window::Hann) v = std::pow(std::sin(pi * double(i) / span), 2);
            else if (kind == Window::Hamming) v = 25.0 / 46.0 - (1 - 25.0 / 46.0) * std::cos(a);
            else v = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
            set_element(b, i, v);
        }
        return {c.named_constant(0, b)};
    };
}

// EyeLike: ones on the k-th diagonal of x's 2-D shape, in `dtype` (default x's).
inline std::vector<Value> convert_eye_like(Ctx& c) {
    Value x = c.in(0);
    if (c.rank(x) != 2) malformed("the input must be 2-D, got rank " + std::to_string(c.rank(x)));
    const DataType t = c.has_attr("dtype") ? to_dtype(int(c.i("dtype")), "the dtype attribute") : c.dtype(x);
    const int64_t n = c.shape(x)[0], m = c.shape(x)[1], k = c.i("k", 0);
    BufferRef b = filled_buffer(t, {n, m}, 0);
    for (int64_t i = 0; i < n; ++i)
        if (i + k >= 0 && i + k < m) set_element(b, i * m + i + k, 1);
    return {c.named_constant(0, b)};
}

// OneHot: values[1] where the (wrapped) index equals the position along the new axis, else
// values[0]. depth must be a constant.
inline std::vector<Value> convert_one_hot(Ctx& c) {
    Value indices = c.in(0), values = c.in(2);
    std::vector<double> dv = c.const_floats(1, "the depth");
    if (dv.size() != 1 || !(dv[0] >= 1)) malformed("the depth must hold one value of at least 1");
    const int64_t depth = int64_t(dv[0]);
    if (c.shape(values) != std::vector<int64_t>{2}) malformed("the values must be [off, on], shape [2]");
    const int64_t rank = c.rank(indices) + 1;
    const int64_t axis = norm_axis(c.i("axis", -1), rank);
    Value idx = c.dtype(indices) == DataType::int_(64) ? indices : c.g.cast(indices, DataType::int_(64), c.fresh("cast"));
    Value zero = c.scalar(0, DataType::int_(64), "zero"), n = c.scalar(double(depth), DataType::int_(64), "depth");
    idx = c.g.where(c.add("less", {idx, zero}), c.add("add", {idx, n}), idx, c.fresh("wrapped"));
    std::vector<int64_t> at = c.shape(indices);
    at.insert(at.begin() + axis, 1);
    idx = reshape(c, idx, at);
    std::vector<int64_t> positions_shape(size_t(rank), 1);
    positions_shape[size_t(axis)] = depth;
    BufferRef positions = BufferRef::allocate(DataType::int_(64), positions_shape);
    for (int64_t i = 0; i < depth; ++i) set_element(positions, i, double(i));
    Value hit = c.add("equal", {idx, c.constant(positions, "positions")});
    Value off = c.add("slice", {values}, {{"starts", std::vector<int64_t>{0}}, {"ends", std::vector<int64_t>{1}}});
    Value on = c.add("slice", {values}, {{"starts", std::vector<int64_t>{1}}, {"ends", std::vector<int64_t>{2}}});
    return {c.g.where(hit, on, off, c.out())};
}

// Hardmax: 1 at the first largest element along the axis, 0 elsewhere. Before opset 13 the
// input is taken as 2-D, [prod(dims before axis), prod(the rest)] (axis default 1).
inline std::vector<Value> convert_hardmax(Ctx& c) {
    Value x = c.in(0);
    const DataType t = c.dtype(x);
    const std::vector<int64_t> shape = c.shape(x);
    const int64_t rank = c.rank(x);
    Value v = x;
    int64_t axis = 0;
    if (c.opset < 13) {
        const int64_t a = norm_axis(c.i("axis", 1), rank + 1);
        v = reshape(c, x, {product(shape, 0, size_t(a)), product(shape, size_t(a))});
        axis = 1;
    } else {
        axis = norm_axis(c.i("axis", -1), rank);
    }
    const std::vector<int64_t> vs = c.shape(v);  // a copy: adding nodes moves the graph's types
    Value best = c.add("argmax", {v}, {{"axis", axis}, {"keepdims", int64_t(1)}});
    std::vector<int64_t> positions_shape(vs.size(), 1);
    positions_shape[size_t(axis)] = vs[size_t(axis)];
    BufferRef positions = BufferRef::allocate(DataType::int_(64), positions_shape);
    for (int64_t i = 0; i < vs[size_t(axis)]; ++i) set_element(positions, i, double(i));
    Value hit = c.add("equal", {best, c.constant(positions, "positions")});
    Value y = c.g.where(hit, c.scalar(1, t, "one"), c.scalar(0, t, "zero"), c.fresh("onehot"));
    return {reshape(c, y, shape, c.out())};
}

// Resize (opsets 10 to 13, 19: X, roi, scales, sizes; 10: X, scales) and Upsample (7: a
// scales attribute, 9: input): the output shape from sizes, or floor(input * scale); scales,
// sizes and roi must be constants. Opset 10's Resize and Upsample map coordinates
// asymmetrically and take the floor for nearest.
// GridSample: opset 16's modes bilinear / bicubic are 20's linear / cubic; 16 takes 4-D input.
inline std::vector<Value> convert_grid_sample(Ctx& c) {
    std::string mode = c.s("mode", c.opset >= 20 ? "linear" : "bilinear");
    if (mode == "bilinear") mode = "linear";
    if (mode == "bicubic") mode = "cubic";
    if (c.opset < 20 && c.rank(c.in(0)) != 4) malformed("GridSample before opset 20 takes a 4-D input");
    return {c.add("grid_sample", {c.in(0), c.in(1)},
                  {{"mode", mode}, {"padding_mode", c.s("padding_mode", "zeros")}, {"align_corners", c.i("align_corners", 0)}},
                  c.out())};
}

// RoiAlign: opset 10 maps coordinates as output_half_pixel; 16 adds the attribute (default
// half_pixel). With sampling_ratio 0 a bin's samples follow each region's size, up to
// ::weft::topi::roi_align_max_grid: a region that needs more is an error at run time.
inline std::vector<Value> convert_roi_align(Ctx& c) {
    Value x = c.in(0), rois = c.in(1), batch = c.in(2);
    if (c.rank(x) != 4) malformed("X must be [N, C, H, W]");
    if (!c.dtype(x).is_float()) unsupported("RoiAlign on " + c.dtype(x).str());
    if (c.dtype(rois) != c.dtype(x)) malformed("the rois must have X's type");
    const std::string ctm = c.opset >= 16 ? c.s("coordinate_transformation_mode", "half_pixel") : "output_half_pixel";
    if (ctm != "half_pixel" && ctm != "output_half_pixel")
        malformed("unknown coordinate_transformation_mode '" + ctm + "'");
    const std::string mode = c.s("mode", "avg");
    if (mode != "avg" && mode != "max") malformed("unknown mode '" + mode + "'");
    const int64_t ratio = c.i("sampling_ratio", 0);
    if (ratio < 0) malformed("sampling_ratio must not be negative");
    const int64_t oh = c.i("output_height", 1), ow = c.i("output_width", 1);
    if (oh < 1 || ow < 1) malformed("output_height and output_width must be positive");
    graph::Attrs a{{"output_height", oh}, {"output_width", ow}, {"sampling_ratio", ratio},
                   {"spatial_scale", c.f("spatial_scale", 1.0)}, {"mode", mode},
                   {"half_pixel", int64_t(ctm == "half_pixel")}};
    // The samples every output element takes, bounded as a tensor's elements (a sampling_ratio
    // of 2^20 would loop 2^40 times per element).
    const std::vector<int64_t> xs = c.shape(x);
    const int64_t grid_h = ratio > 0 ? ratio : ::weft::topi::roi_align_max_grid(xs[2], oh);
    const int64_t grid_w = ratio > 0 ? ratio : ::weft::topi::roi_align_max_grid(xs[3], ow);
    checked_elements({c.shape(rois).at(0), xs[1], oh, ow, grid_h, grid_w}, c.limit, "RoiAlign's samples");
    if (ratio == 0)
        c.g.check_at_run(c.add("roi_align_exceeds", {x, rois}, a),
                         "RoiAlign '" + c.node.name() + "': a region needs more samples per bin than weft takes " +
                             "(one spanning more than the feature map and a bin; sampling_ratio 0)");
    return {c.add("roi_align", {x, rois, batch}, a, c.out())};
}

inline std::vector<Value> convert_resize(Ctx& c, bool upsample) {
    Value x = c.in(0);
    const std::vector<int64_t> in = c.shape(x);
    const size_t r = in.size();
    graph::Attrs a;
    std::string mode = c.s("mode", "nearest");
    if (upsample && mode == "bilinear") mode = "linear";  // opset 7's alias
    a.set("mode", mode);
    std::vector<double> scales, roi;
    std::vector<int64_t> sizes;
    if (upsample && c.opset < 9) {
        scales = c.floats("scales");
    } else if (upsample || c.opset < 11) {
        scales = c.const_floats(1, "the scales");
    } else {
        if (c.has(1) && !c.is_empty(1)) roi = c.const_floats(1, "the roi");
        if (c.has(2) && !c.is_empty(2)) scales = c.const_floats(2, "the scales");
        if (c.has(3) && !c.is_empty(3)) sizes = c.const_ints(3, "the sizes");
        a.set("antialias", c.i("antialias", 0));
        a.set("coordinate_transformation_mode", c.s("coordinate_transformation_mode", "half_pixel"));
        a.set("nearest_mode", c.s("nearest_mode", "round_prefer_floor"));
        a.set("cubic_coeff_a", c.f("cubic_coeff_a", -0.75));
        a.set("exclude_outside", c.i("exclude_outside", 0));
        a.set("extrapolation_value", c.f("extrapolation_value", 0.0));
    }
    if (upsample || c.opset < 11) {
        a.set("coordinate_transformation_mode", std::string("asymmetric"));
        a.set("nearest_mode", std::string("floor"));
    }
    // Opset 18: scales, sizes and roi for `axes` only (the others keep their extent).
    std::vector<int64_t> axes;
    if (!upsample && c.opset >= 18) axes = c.ints("axes");
    for (int64_t& d : axes) d = norm_axis(d, int64_t(r));
    if (!axes.empty()) {
        auto spread = [&](auto& v, auto keep, const char* what) {
            if (v.empty()) return;
            if (v.size() != axes.size()) malformed(std::string(what) + " has " + std::to_string(v.size()) + " entries for " + std::to_string(axes.size()) + " axes");
            std::decay_t<decltype(v)> full(r);
            for (size_t d = 0; d < r; ++d) full[d] = keep(d);
            for (size_t k = 0; k < axes.size(); ++k) full[size_t(axes[k])] = v[k];
            v = full;
        };
        spread(scales, [](size_t) { return 1.0; }, "scales");
        spread(sizes, [&](size_t d) { return in[d]; }, "sizes");
        if (!roi.empty()) {
            if (roi.size() != 2 * axes.size()) malformed("roi has " + std::to_string(roi.size()) + " entries for " + std::to_string(axes.size()) + " axes");
            std::vector<double> full(2 * r);
            for (size_t d = 0; d < r; ++d) full[d] = 0, full[r + d] = 1;
            for (size_t k = 0; k < axes.size(); ++k) {
                full[size_t(axes[k])] = roi[k];
                full[r + size_t(axes[k])] = roi[axes.size() + k];
            }
            roi = full;
        }
    }
    if (!sizes.empty()) {
        if (sizes.size() != r) malformed("sizes has " + std::to_string(sizes.size()) + " entries for rank " + std::to_string(r));
        scales.clear();
        for (size_t d = 0; d < r; ++d) scales.push_back(double(sizes[d]) / double(in[d]));
        const std::string policy = c.opset >= 18 ? c.s("keep_aspect_ratio_policy", "stretch") : "stretch";
        if (policy == "not_larger" || policy == "not_smaller") {
            // One scale for the resized axes (the smallest or largest), sizes rounded half up.
            std::vector<size_t> moved;
            for (size_t d = 0; d < r; ++d)
                if (axes.empty() || std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end()) moved.push_back(d);
            double s = scales[moved[0]];
            for (size_t d : moved) s = policy == "not_larger" ? std::min(s, scales[d]) : std::max(s, scales[d]);
            for (size_t d : moved) {
                scales[d] = s;
                sizes[d] = int64_t(s * double(in[d]) + 0.5);
                if (sizes[d] < 1) unsupported("a Resize to an empty dimension: weft's tensors have no empty dimensions");
            }
        } else if (policy != "stretch") {
            malformed("keep_aspect_ratio_policy '" + policy + "' is none of stretch, not_larger, not_smaller");
        }
    } else {
        if (scales.size() != r) malformed("scales has " + std::to_string(scales.size()) + " entries for rank " + std::to_string(r));
        for (size_t d = 0; d < r; ++d) {
            if (!(scales[d] > 0) || !std::isfinite(scales[d])) malformed("scale " + std::to_string(scales[d]) + " is not positive");
            const double e = std::floor(double(in[d]) * scales[d]);
            if (e < 1) unsupported("a Resize to an empty dimension: weft's tensors have no empty dimensions");
            if (e > 9e15) malformed("scale " + std::to_string(scales[d]) + " makes dimension " + std::to_string(d) + " too large");
            sizes.push_back(int64_t(e));
        }
    }
    checked_elements(sizes, c.limit, "the resized tensor");
    a.set("sizes", sizes);
    a.set("scales", scales);
    if (!roi.empty()) {
        if (roi.size() != 2 * r) malformed("roi has " + std::to_string(roi.size()) + " entries for rank " + std::to_string(r));
        a.set("roi_start", std::vector<double>(roi.begin(), roi.begin() + std::ptrdiff_t(r)));
        a.set("roi_end", std::vector<double>(roi.begin() + std::ptrdiff_t(r), roi.end()));
    }
    return {c.add("resize", {x}, std::move(a), c.out())};
}


// ScatterElements (reduction none, add, mul from 16, max, min from 18) and the opset-9
// Scatter it replaced.
inline std::vector<Value> convert_scatter_elements(Ctx& c) {
    const std::string reduction = c.opset >= 16 ? c.s("reduction", "none") : "none";
    return {c.add("scatter_elements", {c.in(0), c.in(1), c.in(2)}, {{"axis", c.i("axis", 0)}, {"reduction", reduction}},
                  c.out())};
}

inline std::vector<Value> convert_scatter_nd(Ctx& c) {
    const std::string reduction = c.opset >= 16 ? c.s("reduction", "none") : "none";
    return {c.add("scatter_nd", {c.in(0), c.in(1), c.in(2)}, {{"reduction", reduction}}, c.out())};
}

// TensorScatter (opset 24): a KV cache's update written from write_indices[b] along axis.
inline std::vector<Value> convert_tensor_scatter(Ctx& c) {
    const std::string mode = c.s("mode", "linear");
    if (mode != "linear" && mode != "circular") malformed("unknown mode '" + mode + "'");
    std::vector<Value> ins{c.in(0), c.in(1)};
    if (c.has(2)) ins.push_back(c.in(2));
    return {c.add("tensor_scatter", ins, {{"axis", c.i("axis", -2)}, {"circular", int64_t(mode == "circular")}},
                  c.out())};
}

// TopK: the k largest (or smallest) along axis, in order, and their int64 indices; equal
// values in index order. Each element's rank is the count of elements ahead of it, from a
// pairwise comparison along the axis ([..., n, n]: fine for the lengths TopK sees in models,
// a few thousand scores); the element of rank p is the p-th output.
inline std::vector<Value> convert_topk(Ctx& c) {
    const DataType i64 = DataType::int_(64);
    Value x = c.in(0);
    const int64_t r = c.rank(x), axis = norm_axis(c.i("axis", -1), r), n = c.shape(x)[size_t(axis)];
    const int64_t k = c.opset >= 10 ? c.const_ints(1, "K").at(0) : c.i("k");
    if (k < 0 || k > n) malformed("K = " + std::to_string(k) + " for an axis of " + std::to_string(n));
    if (k == 0) unsupported("TopK with K = 0 (an empty result)");
    const bool largest = c.i("largest", 1) != 0;
    c.ignore({"sorted"});  // weft's results are always sorted, which sorted = 0 allows too
    std::vector<int64_t> perm = iota_vec(0, r);
    perm.erase(perm.begin() + axis);
    perm.push_back(axis);
    std::vector<int64_t> back(static_cast<size_t>(r), 0);
    for (int64_t d = 0; d < r; ++d) back[size_t(perm[size_t(d)])] = d;
    Value xt = axis == r - 1 ? x : c.g.transpose(x, perm, c.fresh("last"));
    std::vector<int64_t> pairs = c.shape(xt);
    pairs.push_back(n);
    checked_elements(pairs, c.limit, "TopK's pairwise comparison");
    auto along = [&](int64_t len, int64_t at) {  // 0..len-1 as int64 in dimension `at` of a rank r + 1 shape
        std::vector<int64_t> v, s(size_t(r + 1), 1);
        for (int64_t j = 0; j < len; ++j) v.push_back(j);
        s[size_t(at)] = len;
        return c.constant(int64_buffer(v, s), "position");
    };
    Value mine = c.add("unsqueeze", {xt}, {{"axes", std::vector<int64_t>{r}}});       // [..., n (i), 1]
    Value other = c.add("unsqueeze", {xt}, {{"axes", std::vector<int64_t>{r - 1}}});  // [..., 1, n (j)]
    Value before = c.add(largest ? "greater" : "less", {other, mine});
    Value tie = c.add("logical_and", {c.add("equal", {other, mine}), c.add("less", {along(n, r), along(n, r - 1)})});
    Value ahead = c.g.cast(c.add("logical_or", {before, tie}), i64, c.fresh("ahead"));
    Value rank = c.add("sum", {ahead}, {{"axes", std::vector<int64_t>{r}}, {"keepdims", int64_t(1)}});  // [..., n, 1]
    Value picked = c.add("equal", {rank, along(k, r)});                                                 // [..., n, k]
    Value idx = c.add("sum", {c.g.where(picked, along(n, r - 1), c.scalar(0, i64, "zero"), c.fresh("index_of"))},
                      {{"axes", std::vector<int64_t>{r - 1}}, {"keepdims", int64_t(0)}});  // [..., k]
    Value vals = c.add("gather_elements", {xt, idx}, {{"axis", r - 1}});
    if (axis == r - 1) return {reshape(c, vals, c.shape(vals), c.out(0)), reshape(c, idx, c.shape(idx), c.out(1))};
    return {c.g.transpose(vals, back, c.out(0)), c.g.transpose(idx, back, c.out(1))};
}


// Compress: the slices along axis (of the flattened input without one) where the constant
// condition is true; a condition shorter than the axis leaves the rest out.
inline std::vector<Value> convert_compress(Ctx& c) {
    Value x = c.in(0);
    BufferRef cond = c.const_value(1, "the condition");
    if (!c.has_attr("axis")) x = reshape(c, x, {product(c.shape(x))});
    const int64_t axis = norm_axis(c.i("axis", 0), c.rank(x)), n = c.shape(x)[size_t(axis)];
    std::vector<double> keep = buffer_floats(cond);
    if (int64_t(keep.size()) > n) malformed("the condition has " + std::to_string(keep.size()) + " entries for an axis of " + std::to_string(n));
    std::vector<int64_t> picked;
    for (int64_t k = 0; k < int64_t(keep.size()); ++k)
        if (keep[size_t(k)] != 0) picked.push_back(k);
    if (picked.empty()) unsupported("a Compress that keeps nothing (weft's tensors cannot be empty)");
    Value idx = c.constant(int64_buffer(picked, {int64_t(picked.size())}), "kept");
    return {c.add("gather", {x, idx}, {{"axis", axis}}, c.out())};
}

// ReverseSequence: along time_axis, the first sequence_lens[b] steps of batch entry b
// reversed, the rest as they are: a gather_elements with index len - 1 - t where t < len.
inline std::vector<Value> convert_reverse_sequence(Ctx& c) {
    const DataType i64 = DataType::int_(64);
    Value x = c.in(0);
    const int64_t r = c.rank(x), ta = c.i("time_axis", 0), ba = c.i("batch_axis", 1);
    if (r < 2 || !((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
        malformed("time_axis and batch_axis must be 0 and 1 (either way) of an input of rank 2 or more");
    const int64_t steps = c.shape(x)[size_t(ta)], batch = c.shape(x)[size_t(ba)];
    Value lens = c.in(1);
    if (c.shape(lens) != std::vector<int64_t>{batch}) malformed("sequence_lens must have one entry per batch entry");
    if (c.dtype(lens) != i64) lens = c.g.cast(lens, i64, c.fresh("lens64"));
    std::vector<int64_t> ts, tshape(size_t(r), 1), bshape(size_t(r), 1);
    for (int64_t t = 0; t < steps; ++t) ts.push_back(t);
    tshape[size_t(ta)] = steps;
    bshape[size_t(ba)] = batch;
    Value t = c.constant(int64_buffer(ts, tshape), "step");
    Value len = reshape(c, lens, bshape);
    Value flipped = c.add("sub", {c.add("sub", {len, c.scalar(1, i64, "one")}), t});
    Value idx = c.g.where(c.add("less", {t, len}), flipped, t, c.fresh("source_step"));
    return {c.add("gather_elements", {x, expand_to(c, idx, c.shape(x))}, {{"axis", ta}}, c.out())};
}


// Einsum over n operands; a rank-0 operand is a [1] tensor here, so its empty term gets a
// label of its own (one not in the equation), and an empty result term makes a scalar.
inline std::vector<Value> convert_einsum(Ctx& c) {
    std::vector<Value> in;
    for (size_t k = 0; k < c.n_in(); ++k) in.push_back(c.in(k));
    std::string eq = c.s("equation"), spare;
    for (char l = 'z'; l >= 'a' && spare.empty(); --l)
        if (eq.find(l) == std::string::npos) spare = std::string(1, l);
    const size_t arrow = eq.find("->");
    std::string lhs = eq.substr(0, arrow), fixed;
    size_t k = 0, from = 0;
    for (size_t to = 0; to <= lhs.size(); ++to) {
        if (to < lhs.size() && lhs[to] != ',') continue;
        std::string term = lhs.substr(from, to - from);
        const bool blank = term.find_first_not_of(' ') == std::string::npos;
        fixed += (k ? "," : "") + (blank && k < in.size() && c.is_scalar(in[k]) ? spare : term);
        from = to + 1, ++k;
    }
    if (arrow != std::string::npos) fixed += eq.substr(arrow);
    Value y = c.add("einsum", std::move(in), {{"equation", fixed}}, c.out());
    const bool to_scalar = arrow != std::string::npos && eq.find_first_not_of(' ', arrow + 2) == std::string::npos;
    return {to_scalar ? c.mark_scalar(y) : y};
}

}  // namespace weft::onnx::detail
