// The ONNX importer's ConvTranspose, as ordinary convolutions (conv2d, which has the
// blocked layout and tuned schedules). With a stride s and no dilation, by phases: the
// outputs o = s m + r of one phase r take the same kernel taps (those congruent to r plus the
// pad, mod s) at consecutive inputs, so each phase is a small convolution of the input itself
// and the s^2 phases interleave into the output; the work is the transposed convolution's
// own. Otherwise the input is spread out by the strides (zeros between its elements) and
// convolved once with the flipped kernel, s^2 times the work. Constant weights are
// rearranged at build time (fold_constants).
#pragma once
#include "weft/frontend/onnx/impl/ops_nn.hpp"

namespace weft::onnx::detail {

// A 2-D transposed convolution's sizes (a 1-D one as 2-D over one row): per axis {h, w}.
struct TransposedConv {
    int64_t N, C, O, group, in_per_group, out_per_group;
    std::vector<int64_t> strides, kernel, out_pad, pads /* {top, left, bottom, right} */, in;
    int64_t out_extent(size_t i) const {  // (in - 1) s + output_padding + k - pads
        return strides[i] * (in[i] - 1) + out_pad[i] + kernel[i] - pads[i] - pads[i + 2];
    }
};

// The weight [C, O/g, kh, kw] as conv2d's [O, C/g, kh, kw] (the group's input and output
// channels swapped).
inline Value conv_weight_of_transposed(Ctx& c, Value w, const TransposedConv& t) {
    const std::vector<int64_t> k = {c.shape(w)[2], c.shape(w)[3]};
    w = reshape(c, w, {t.group, t.in_per_group, t.out_per_group, k[0], k[1]});
    w = c.g.transpose(w, {0, 2, 1, 3, 4}, c.fresh("weight_t"));
    return reshape(c, w, {t.O, t.in_per_group, k[0], k[1]});
}

// x padded by before {h, w} and after {h, w} for a stride-1 conv2d: what is positive the
// convolution pads (conv_pads {top, left, bottom, right}), a pad node crops the rest.
inline Value pad_or_crop(Ctx& c, Value x, const int64_t before[2], const int64_t after[2], std::vector<int64_t>& conv_pads) {
    conv_pads.assign(4, 0);
    std::vector<int64_t> crop(8, 0);
    bool cropping = false;
    for (size_t i = 0; i < 2; ++i) {
        conv_pads[i] = std::max<int64_t>(before[i], 0);
        conv_pads[i + 2] = std::max<int64_t>(after[i], 0);
        crop[2 + i] = std::min<int64_t>(before[i], 0);
        crop[6 + i] = std::min<int64_t>(after[i], 0);
        cropping |= before[i] < 0 || after[i] < 0;
    }
    return cropping ? c.g.pad(x, crop, 0.0, c.fresh("crop")) : x;
}

// One axis of phase r: output o = s m + r sums x[m + first + t] w[k0 + (taps - 1 - t) s] over
// t < taps, where k0 = (r + pad) mod s and taps counts k0, k0 + s, ... below the kernel size.
struct PhaseAxis {
    int64_t k0, taps, first;
};
inline PhaseAxis phase_axis(int64_t r, int64_t s, int64_t k, int64_t pad) {
    const int64_t k0 = ((r + pad) % s + s) % s;
    const int64_t taps = k0 < k ? (k - k0 + s - 1) / s : 0;
    const int64_t shift = (r + pad - k0) / s;  // exact: r + pad - k0 is a multiple of s
    return {k0, taps, shift - (taps - 1)};
}

inline Value conv_transpose_by_phases(Ctx& c, Value x, Value w, const TransposedConv& t) {
    const int64_t lowest = std::numeric_limits<int64_t>::min();
    std::vector<int64_t> out(2), per_phase(2);  // the output's extent; each phase's (rounded up)
    for (size_t i = 0; i < 2; ++i) {
        out[i] = t.out_extent(i);
        if (out[i] < 1) malformed("the output would have extent " + std::to_string(out[i]) + " in a spatial dimension");
        per_phase[i] = (out[i] + t.strides[i] - 1) / t.strides[i];
    }
    const DataType dt = c.dtype(x);
    std::vector<Value> rows;  // per ry: the phases rx side by side, [N, O, Ny, 1, Nx, sx]
    for (int64_t ry = 0; ry < t.strides[0]; ++ry) {
        std::vector<Value> row;
        for (int64_t rx = 0; rx < t.strides[1]; ++rx) {
            const PhaseAxis py = phase_axis(ry, t.strides[0], t.kernel[0], t.pads[0]);
            const PhaseAxis px = phase_axis(rx, t.strides[1], t.kernel[1], t.pads[1]);
            Value y;
            if (py.taps == 0 || px.taps == 0) {  // no tap reaches this phase (a kernel smaller than the stride)
                y = c.constant(filled_buffer(dt, {t.N, t.O, per_phase[0], per_phase[1]}, 0), "no_taps");
            } else {
                // This phase's taps, last first (the correlation runs the kernel backwards).
                Value wp = c.add("slice", {w},
                                 {{"starts", std::vector<int64_t>{py.k0 + (py.taps - 1) * t.strides[0],
                                                                  px.k0 + (px.taps - 1) * t.strides[1]}},
                                  {"ends", std::vector<int64_t>{lowest, lowest}},
                                  {"axes", std::vector<int64_t>{2, 3}},
                                  {"steps", std::vector<int64_t>{-t.strides[0], -t.strides[1]}}});
                wp = conv_weight_of_transposed(c, wp, t);
                // Pad (or crop, where negative) the input so the convolution starts at `first`
                // and gives per_phase outputs.
                const PhaseAxis axes[2] = {py, px};
                int64_t before[2], after[2];
                for (size_t i = 0; i < 2; ++i) {
                    before[i] = -axes[i].first;
                    after[i] = per_phase[i] + axes[i].taps - 1 - t.in[i] - before[i];
                }
                std::vector<int64_t> conv_pads;
                Value xp = pad_or_crop(c, x, before, after, conv_pads);
                y = c.add("conv2d", {xp, wp},
                          {{"strides", std::vector<int64_t>{1, 1}}, {"pads", conv_pads},
                           {"dilations", std::vector<int64_t>{1, 1}}, {"groups", t.group}});
            }
            row.push_back(reshape(c, y, {t.N, t.O, per_phase[0], 1, per_phase[1], 1}));
        }
        rows.push_back(row.size() == 1 ? row[0] : c.g.concat(row, 5, c.fresh("phases")));
    }
    Value y = rows.size() == 1 ? rows[0] : c.g.concat(rows, 3, c.fresh("phases"));
    y = reshape(c, y, {t.N, t.O, per_phase[0] * t.strides[0], per_phase[1] * t.strides[1]});
    if (per_phase[0] * t.strides[0] != out[0] || per_phase[1] * t.strides[1] != out[1])
        y = c.g.slice(y, {0, 0}, {out[0], out[1]}, {2, 3}, {}, c.fresh("interleaved"));
    return y;
}

// A stride-1 convolution of the input spread out by the strides ([N, C, H, W] -> [N, C, H, 1,
// W, 1] padded to [.., sh, .., sw] -> [N, C, H sh, W sw]), padded by dilation * (kernel - 1)
// less the transposed conv's pads (a negative amount crops), with the kernel flipped.
inline Value conv_transpose_spread(Ctx& c, Value x, Value w, const TransposedConv& t, const std::vector<int64_t>& dil) {
    const std::vector<int64_t>&s2 = t.strides, &k2 = t.kernel, &in2 = t.in, &p2 = t.pads, &op2 = t.out_pad;
    if (s2[0] > 1 || s2[1] > 1) {
        x = reshape(c, x, {t.N, t.C, in2[0], 1, in2[1], 1});
        x = c.g.pad(x, {0, 0, 0, 0, 0, 0, 0, 0, 0, s2[0] - 1, 0, s2[1] - 1}, 0.0, c.fresh("spread"));
        x = reshape(c, x, {t.N, t.C, in2[0] * s2[0], in2[1] * s2[1]});
    }
    // Each side: dilation (k - 1) less the pad; the end also less the stride's trailing zeros
    // and plus output_padding.
    int64_t before[2], after[2];
    for (size_t i = 0; i < 2; ++i) {
        before[i] = dil[i] * (k2[i] - 1) - p2[i];
        after[i] = dil[i] * (k2[i] - 1) - p2[i + 2] + op2[i] - (s2[i] - 1);
    }
    std::vector<int64_t> conv_pads;
    x = pad_or_crop(c, x, before, after, conv_pads);
    w = conv_weight_of_transposed(c, w, t);
    const int64_t lowest = std::numeric_limits<int64_t>::min();
    w = c.add("slice", {w},
              {{"starts", std::vector<int64_t>{-1, -1}}, {"ends", std::vector<int64_t>{lowest, lowest}},
               {"axes", std::vector<int64_t>{2, 3}}, {"steps", std::vector<int64_t>{-1, -1}}});
    Attrs a{{"strides", std::vector<int64_t>{1, 1}}, {"pads", conv_pads}, {"dilations", dil}, {"groups", t.group}};
    return c.add("conv2d", {x, w}, a);
}

// ConvTranspose (1-D and 2-D): the padding comes from pads, or from output_shape / auto_pad
// as ONNX's spec splits it; output_padding adds to the end. Strided without dilation: by
// phases; otherwise as one stride-1 convolution of the spread input.
inline std::vector<Value> convert_conv_transpose(Ctx& c) {
    Value x = c.in(0), w = c.in(1);
    Spatial sp = spatial_of(c, x, "ConvTranspose");
    if (!c.dtype(x).is_float()) unsupported("ConvTranspose on " + c.dtype(x).str() + " (weft convolves floats)");
    if (c.rank(w) != c.rank(x)) malformed("the weight's rank differs from the data's");
    const std::vector<int64_t> xs = c.shape(x), ws = c.shape(w);
    const int64_t group = c.i("group", 1), C = xs[1];
    if (group < 1 || C % group != 0 || ws[0] != C)
        malformed("the weight " + graph::shape_str(ws) + " does not fit " + std::to_string(C) + " input channels in " +
                  std::to_string(group) + " groups");
    const int64_t out_per_group = ws[1], in_per_group = C / group, O = out_per_group * group;
    std::vector<int64_t> kernel(ws.begin() + 2, ws.end()), in(xs.begin() + 2, xs.end());
    if (c.ints("kernel_shape", kernel) != kernel) malformed("kernel_shape differs from the weight's");
    const size_t n = sp.n;
    std::vector<int64_t> strides = c.ints("strides", std::vector<int64_t>(n, 1));
    std::vector<int64_t> dil = c.ints("dilations", std::vector<int64_t>(n, 1));
    std::vector<int64_t> out_pad = c.ints("output_padding", std::vector<int64_t>(n, 0));
    if (strides.size() != n || dil.size() != n || out_pad.size() != n)
        malformed("strides, dilations and output_padding must have one value per spatial axis");
    for (size_t i = 0; i < n; ++i)
        if (strides[i] < 1 || dil[i] < 1 || kernel[i] < 1 || out_pad[i] < 0 || strides[i] > 4096 || dil[i] > 4096)
            malformed("strides, dilations and kernel sizes must be positive (and output_padding not negative)");
    const std::string auto_pad = c.s("auto_pad", "NOTSET");
    std::vector<int64_t> output_shape = c.ints("output_shape", {});
    std::vector<int64_t> pads(2 * n, 0);
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        if (!output_shape.empty() && output_shape.size() < n) malformed("output_shape has too few entries");
        for (size_t i = 0; i < n; ++i) {
            const int64_t full = strides[i] * (in[i] - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1;
            const int64_t want = output_shape.empty() ? in[i] * strides[i] : output_shape[output_shape.size() - n + i];
            const int64_t total = full - want;  // negative: the output is longer, zeros at the end
            const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);  // floor(total / 2)
            const bool upper = auto_pad == "SAME_UPPER";
            pads[i] = upper ? half : total - half;
            pads[i + n] = upper ? total - half : half;
        }
    } else if (auto_pad != "VALID") {
        if (auto_pad != "NOTSET") malformed("auto_pad '" + auto_pad + "' is none of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
        pads = c.ints("pads", pads);
        if (pads.size() != 2 * n) malformed("pads must have two values per spatial axis");
    }
    if (sp.one_d) {
        x = c.add("unsqueeze", {x}, {{"axes", std::vector<int64_t>{2}}});
        w = c.add("unsqueeze", {w}, {{"axes", std::vector<int64_t>{2}}});
    }
    const std::vector<int64_t> s2 = two_d(strides, sp.one_d, 1), d2 = two_d(dil, sp.one_d, 1),
                               k2 = two_d(kernel, sp.one_d, 1), op2 = two_d(out_pad, sp.one_d, 0),
                               p2 = two_d_pads(pads, sp.one_d), in2 = two_d(in, sp.one_d, 1);
    const TransposedConv tc{xs[0], C, O, group, in_per_group, out_per_group, s2, k2, op2, p2, in2};
    Value y;
    if (d2 == std::vector<int64_t>{1, 1} && (s2[0] > 1 || s2[1] > 1)) {
        y = conv_transpose_by_phases(c, x, w, tc);
    } else {
        y = conv_transpose_spread(c, x, w, tc, d2);
    }
    if (c.has(2)) y = c.add("bias_add", {y, c.in(2)}, {{"axis", int64_t(1)}});
    if (sp.one_d) y = c.add("squeeze", {y}, {{"axes", std::vector<int64_t>{2}}});
    return {reshape(c, y, c.shape(y), c.out())};
}

}  // namespace weft::onnx::detail
