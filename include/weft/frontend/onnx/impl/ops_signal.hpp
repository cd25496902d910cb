// The ONNX importer's signal and geometry operators built on constant maps: DFT (matmuls with
// cosine and sine matrices), STFT (frames gathered, then DFTs), MelWeightMatrix (computed at
// import), AffineGrid (a constant base grid times theta) and Col2Im (a
// scatter-add at constant image positions).
#pragma once
#include "weft/frontend/onnx/impl/ops_nn.hpp"

namespace weft::onnx::detail {

// AffineGrid (opset 20): the sampling grid [N, (D,) H, W, k] of affine maps theta [N, k, k + 1]
// over an output of the constant `size`: the normalized pixel centres (x, y[, z], 1) times theta.
inline std::vector<Value> convert_affine_grid(Ctx& c) {
    Value theta = c.in(0);
    const std::vector<int64_t> size = c.const_ints(1, "the size");
    const int64_t k = int64_t(size.size()) - 2;
    if ((k != 2 && k != 3) || c.shape(theta) != std::vector<int64_t>{size[0], k, k + 1})
        malformed("theta " + graph::shape_str(c.shape(theta)) + " and size " + graph::shape_str(size) +
                  " must be [N, 2, 3] with [N, C, H, W] or [N, 3, 4] with [N, C, D, H, W]");
    const bool align = c.i("align_corners", 0) != 0;
    auto coord = [&](int64_t i, int64_t n) {  // pixel i of n in [-1, 1]
        if (align) return n == 1 ? 0.0 : -1.0 + 2.0 * double(i) / double(n - 1);
        return (2.0 * double(i) + 1.0) / double(n) - 1.0;
    };
    std::vector<int64_t> spatial(size.begin() + 2, size.end());  // (D,) H, W
    const int64_t points = product(spatial);
    checked_elements({points, k + 1}, c.limit, "the affine grid");
    std::vector<double> base;
    std::vector<int64_t> at(size_t(k), 0);
    for (int64_t p = 0; p < points; ++p) {
        for (int64_t d = k - 1, rest = p; d >= 0; --d) at[size_t(d)] = rest % spatial[size_t(d)], rest /= spatial[size_t(d)];
        for (int64_t d = k - 1; d >= 0; --d) base.push_back(coord(at[size_t(d)], spatial[size_t(d)]));  // x first
        base.push_back(1.0);
    }
    BufferRef b = BufferRef::allocate(c.dtype(theta), {1, points, k + 1});
    for (size_t i = 0; i < base.size(); ++i) {
        if (c.dtype(theta) == DataType::float_(64)) static_cast<double*>(b.data())[i] = base[i];
        else static_cast<float*>(b.data())[i] = float(base[i]);
    }
    Value grid = matmul_of(c, c.constant(b, "base_grid"), c.g.transpose(theta, {0, 2, 1}, c.fresh("theta_t")), c.fresh("points"));
    std::vector<int64_t> out{size[0]};
    out.insert(out.end(), spatial.begin(), spatial.end());
    out.push_back(k);
    return {reshape(c, grid, out, c.out())};
}

// DFT (opsets 17 and 20): the discrete Fourier transform along axis of a real ([..., 1]) or
// complex ([..., 2]) signal, as matmuls with constant cosine and sine matrices; dft_length
// pads or cuts the signal, onesided keeps the first N / 2 + 1 frequencies, inverse divides by N.
// The DFT of x [batch, signal..., 1 or 2] along `axis` (normalized, a signal axis) with
// dft_length `length` (0: the signal's, or for an inverse one-sided one 2 (n - 1)), named `name`.
inline Value dft_of(Ctx& c, Value x, int64_t axis, int64_t length, bool inverse, bool onesided, const std::string& name) {
    const std::vector<int64_t> s = c.shape(x);
    const int64_t r = int64_t(s.size());
    const DataType t = c.dtype(x);
    // inverse and onesided: numpy's irfft, the half spectrum of a real signal to the signal.
    const bool half_to_real = inverse && onesided;
    // The signal axis next to the complex one: [..., n, 1|2].
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < r; ++d)
        if (d != axis && d != r - 1) perm.push_back(d);
    perm.push_back(axis);
    perm.push_back(r - 1);
    std::vector<int64_t> back(static_cast<size_t>(r), 0);
    for (int64_t d = 0; d < r; ++d) back[size_t(perm[size_t(d)])] = d;
    Value v = c.g.transpose(x, perm, c.fresh("signal_last"));
    const int64_t n = s[size_t(axis)];
    const int64_t full = length > 0 ? length : half_to_real ? 2 * (n - 1) : n;
    if (full < 1) malformed("dft_length must be positive, got " + std::to_string(full));
    const int64_t len = half_to_real ? full / 2 + 1 : full;  // the input entries used
    std::vector<int64_t> vs = c.shape(v);
    if (len < n) v = c.g.slice(v, {0}, {len}, {r - 2}, {1}, c.fresh("cut"));
    if (len > n) {
        std::vector<int64_t> pads(size_t(2 * r), 0);
        pads[size_t(r + r - 2)] = len - n;
        v = c.g.pad(v, pads, 0.0, c.fresh("padded"));
    }
    vs = c.shape(v);
    const int64_t rows = product(vs) / (len * vs.back());
    const int64_t out_len = half_to_real ? full : onesided ? len / 2 + 1 : len;
    checked_elements({len, out_len}, c.limit, "the DFT matrices");
    auto part = [&](int64_t k) {  // the real (0) or imaginary (1) part as [rows, len]
        return reshape(c, c.g.slice(v, {k}, {k + 1}, {r - 1}, {1}, c.fresh("part")), {rows, len});
    };
    BufferRef cb = BufferRef::allocate(t, {len, out_len}), sb = BufferRef::allocate(t, {len, out_len});
    for (int64_t j = 0; j < len; ++j)
        for (int64_t k = 0; k < out_len; ++k) {
            const double a = 2 * M_PI * double((j * k) % full) / double(full), scale = inverse ? 1.0 / double(full) : 1.0;
            // irfft counts each frequency but 0 and N / 2 twice (its conjugate twin), their imaginary parts never.
            const bool self_twin = j == 0 || 2 * j == full;
            const double twice = half_to_real && !self_twin ? 2.0 : 1.0;
            set_element(cb, j * out_len + k, std::cos(a) * scale * twice);
            set_element(sb, j * out_len + k, half_to_real && self_twin ? 0.0 : std::sin(a) * scale * twice * (inverse ? 1 : -1));
        }
    Value cm = c.constant(cb, "cos"), sm = c.constant(sb, "sin");
    // (re + i im)(cos + i sin): re cos - im sin, re sin + im cos; im is 0 for a real signal.
    const bool complex = vs.back() == 2;
    Value re = part(0), im = complex ? part(1) : Value{};
    Value yr = c.add("matmul", {re, cm});
    if (complex) yr = c.add("sub", {yr, c.add("matmul", {im, sm})});
    std::vector<int64_t> ys = vs;
    ys[size_t(r - 2)] = out_len;
    if (half_to_real) {  // the real signal alone: [..., N, 1]
        ys.back() = 1;
        return c.g.transpose(reshape(c, yr, ys), back, name);
    }
    Value yi = c.add("matmul", {re, sm});
    if (complex) yi = c.add("add", {yi, c.add("matmul", {im, cm})});
    auto lift = [&](Value p) { return c.add("unsqueeze", {p}, {{"axes", std::vector<int64_t>{2}}}); };
    Value y = c.g.concat({lift(yr), lift(yi)}, 2, c.fresh("complex"));
    ys.back() = 2;
    return c.g.transpose(reshape(c, y, ys), back, name);
}

inline std::vector<Value> convert_dft(Ctx& c) {
    Value x = c.in(0);
    const std::vector<int64_t> s = c.shape(x);
    const int64_t r = int64_t(s.size());
    if (r < 3 || (s.back() != 1 && s.back() != 2) || !c.dtype(x).is_float())
        malformed("the input must be a float [batch, signal..., 1 or 2], got " + graph::shape_str(s));
    int64_t axis = 1;
    if (c.opset >= 20) axis = c.has(2) ? c.const_ints(2, "the axis").at(0) : -2;
    else axis = c.i("axis", 1);
    axis = norm_axis(axis, r);
    if (axis == 0 || axis == r - 1) malformed("the axis must be a signal axis, got " + std::to_string(axis));
    const int64_t length = c.has(1) ? c.const_ints(1, "dft_length").at(0) : 0;
    if (c.has(1) && length < 1) malformed("dft_length must be positive, got " + std::to_string(length));
    return {dft_of(c, x, axis, length, c.i("inverse", 0) != 0, c.i("onesided", 0) != 0, c.out())};
}

// STFT (opset 17): frames of frame_length every frame_step along the signal [batch, length, 1 or
// 2] (a constant gather of positions), times the window, then their DFTs:
// [batch, frames, bins, 2], bins frame_length / 2 + 1 when onesided (default) else all.
inline std::vector<Value> convert_stft(Ctx& c) {
    Value x = c.in(0);
    const std::vector<int64_t> s = c.shape(x);
    if (s.size() != 3 || (s[2] != 1 && s[2] != 2) || !c.dtype(x).is_float())
        malformed("the signal must be a float [batch, length, 1 or 2], got " + graph::shape_str(s));
    const int64_t step = c.const_ints(1, "frame_step").at(0);
    const int64_t window = c.has(2) ? c.shape(c.in(2)).at(0) : 0;
    const int64_t length = c.has(3) ? c.const_ints(3, "frame_length").at(0) : window > 0 ? window : s[1];
    if (step < 1 || length < 1 || length > s[1])
        malformed("frame_step " + std::to_string(step) + " and frame_length " + std::to_string(length) +
                  " must be positive, the frame no longer than the signal's " + std::to_string(s[1]));
    if (c.has(2) && (c.rank(c.in(2)) != 1 || window != length))
        malformed("the window must be [frame_length] = [" + std::to_string(length) + "]");
    const int64_t frames = 1 + (s[1] - length) / step;
    checked_elements({s[0], frames, length, s[2]}, c.limit, "STFT's frames");
    std::vector<int64_t> positions;
    for (int64_t f = 0; f < frames; ++f)
        for (int64_t j = 0; j < length; ++j) positions.push_back(f * step + j);
    Value framed = c.add("gather", {x, c.constant(int64_buffer(positions, {frames, length}), "frame_positions")},
                         {{"axis", int64_t(1)}});  // [batch, frames, length, 1|2]
    if (c.has(2)) framed = c.add("mul", {framed, reshape(c, c.in(2), {1, 1, length, 1})});
    return {dft_of(c, framed, 2, length, false, c.i("onesided", 1) != 0, c.out())};
}

// MelWeightMatrix (opset 17): the [dft_length / 2 + 1, num_mel_bins] triangular filters of a
// mel filter bank, computed at import from its constant inputs as ONNX's reference does
// (bin edges on the mel scale, floored to DFT bins).
inline std::vector<Value> convert_mel_weight_matrix(Ctx& c) {
    const int64_t mel_bins = c.const_ints(0, "num_mel_bins").at(0), dft = c.const_ints(1, "dft_length").at(0);
    const int64_t rate = c.const_ints(2, "sample_rate").at(0);
    const double low = c.const_floats(3, "lower_edge_hertz").at(0), high = c.const_floats(4, "upper_edge_hertz").at(0);
    // (Edges at or below -700 Hz have no mel value: log1p of -1 or less.)
    if (mel_bins < 1 || dft < 1 || rate < 1 || !std::isfinite(low) || !std::isfinite(high) || low <= -700 ||
        high <= -700)
        malformed("num_mel_bins, dft_length and sample_rate must be positive, the edges finite and above -700 Hz");
    const int64_t spectrum = dft / 2 + 1;
    checked_elements({spectrum, mel_bins}, c.limit, "the mel weight matrix");
    const double low_mel = 2595 * std::log1p(low / 700) / std::log(10.0);
    const double high_mel = 2595 * std::log1p(high / 700) / std::log(10.0);
    const double step = (high_mel - low_mel) / double(mel_bins + 2);
    std::vector<int64_t> edge;
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
        const double hz = 700 * std::expm1((double(i) * step + low_mel) / 2595 * std::log(10.0));
        const double bin = std::floor(double(dft + 1) * hz / double(rate));
        if (!(std::abs(bin) < 4e18)) malformed("a filter's edge lies past any DFT bin (" + std::to_string(hz) + " Hz)");
        edge.push_back(int64_t(bin));
    }
    DataType t = to_dtype(int(c.i("output_datatype", pb::TensorProto::FLOAT)), "output_datatype");
    if (t.is_float() && t.bits < 32) t = DataType::float_(32);  // (weft holds 16-bit floats as float32)
    if (t.is_bool() || t.is_bfloat()) unsupported("MelWeightMatrix of " + t.str());
    BufferRef m = filled_buffer(t, {spectrum, mel_bins}, 0);
    auto set = [&](int64_t j, int64_t i, double v) {
        if (j < 0 || j >= spectrum) malformed("a filter's edge " + std::to_string(j) + " lies past the spectrum's bins");
        set_element(m, j * mel_bins + i, v);
    };
    for (int64_t i = 0; i < mel_bins; ++i) {
        const int64_t left = edge[size_t(i)], centre = edge[size_t(i + 1)], right = edge[size_t(i + 2)];
        if (centre == left) set(centre, i, 1);
        else
            for (int64_t j = left; j <= centre; ++j) set(j, i, double(j - left) / double(centre - left));
        for (int64_t j = centre; j < right; ++j) set(j, i, double(right - j) / double(right - centre));
    }
    return {c.named_constant(0, m)};
}

// Col2Im (opset 18): the blocks of input [N, C * prod(block), L] added back into an image
// [N, C, image...] (im2col's inverse: overlaps sum, padding drops): a scatter-add of every
// block element at its image position, the positions a constant map (those in the padding go
// to one extra slot, cut off after).
inline std::vector<Value> convert_col2im(Ctx& c) {
    Value x = c.in(0);
    const std::vector<int64_t> image = c.const_ints(1, "image_shape"), block = c.const_ints(2, "block_shape");
    const size_t n = image.size();
    const std::vector<int64_t> xs = c.shape(x);
    const std::vector<int64_t> dil = c.ints("dilations", std::vector<int64_t>(n, 1)),
                               strides = c.ints("strides", std::vector<int64_t>(n, 1)),
                               pads = c.ints("pads", std::vector<int64_t>(2 * n, 0));
    if (n < 1 || block.size() != n || dil.size() != n || strides.size() != n || pads.size() != 2 * n || xs.size() != 3)
        malformed("image_shape, block_shape, dilations, strides and pads must agree for an input [N, C * k, L]");
    const int64_t kernel = product(block), pixels = product(image);
    if (kernel < 1 || xs[1] % kernel) malformed("the input's channels are not a multiple of the block's size");
    std::vector<int64_t> blocks(n);
    for (size_t d = 0; d < n; ++d) {
        if (image[d] < 1 || block[d] < 1 || dil[d] < 1 || strides[d] < 1) malformed("shapes, dilations and strides must be positive");
        blocks[d] = (image[d] + pads[d] + pads[n + d] - dil[d] * (block[d] - 1) - 1) / strides[d] + 1;
    }
    const int64_t l = product(blocks);
    if (l != xs[2]) malformed("the input has " + std::to_string(xs[2]) + " blocks, the shapes make " + std::to_string(l));
    checked_elements({kernel, l}, c.limit, "Col2Im's position map");
    std::vector<int64_t> target;
    std::vector<int64_t> k(n), b(n);
    for (int64_t kf = 0; kf < kernel; ++kf)
        for (int64_t bf = 0; bf < l; ++bf) {
            for (int64_t d = int64_t(n) - 1, rk = kf, rb = bf; d >= 0; --d) {
                k[size_t(d)] = rk % block[size_t(d)], rk /= block[size_t(d)];
                b[size_t(d)] = rb % blocks[size_t(d)], rb /= blocks[size_t(d)];
            }
            int64_t flat = 0;
            bool inside = true;
            for (size_t d = 0; d < n; ++d) {
                const int64_t p = b[d] * strides[d] - pads[d] + k[d] * dil[d];
                inside = inside && p >= 0 && p < image[d];
                flat = flat * image[d] + p;
            }
            target.push_back(inside ? flat : pixels);
        }
    const int64_t channels = xs[1] / kernel;
    Value updates = reshape(c, x, {xs[0], channels, kernel * l});
    Value idx = expand_to(c, c.constant(int64_buffer(target, {1, 1, kernel * l}), "image_position"), {xs[0], channels, kernel * l});
    Value zeros = c.constant(filled_buffer(c.dtype(x), {xs[0], channels, pixels + 1}, 0), "canvas");
    Value sum = c.add("scatter_elements", {zeros, idx, updates}, {{"axis", int64_t(2)}, {"reduction", std::string("add")}});
    Value cut = c.g.slice(sum, {0}, {pixels}, {2}, {1}, c.fresh("image"));
    std::vector<int64_t> out{xs[0], channels};
    out.insert(out.end(), image.begin(), image.end());
    return {reshape(c, cut, out, c.out())};
}

}  // namespace weft::onnx::detail
