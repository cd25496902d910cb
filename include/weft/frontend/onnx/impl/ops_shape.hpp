// The ONNX importer's converters: shapes and data movement (Reshape, Squeeze, Split, Slice,
// Pad, Concat, Expand, Tile, Constant, Shape, Gather, ...).
#pragma once
#include "weft/frontend/onnx/impl/ops_common.hpp"

namespace weft::onnx::detail {

// ---- shapes and data movement ---------------------------------------------------------------------

// Reshape's target shape: the attribute before opset 5, then input 1, an int64 tensor. A
// floating-point one is refused rather than read as integers: truncated (2.7 -> 2), it
// would reshape to something the model never meant.
inline std::vector<int64_t> reshape_target(const Ctx& c) {
    if (c.opset < 5) return c.ints("shape");
    BufferRef shape = c.const_value(1, "the shape");
    if (shape.defined() && shape.dtype().is_float())
        malformed("the shape (input 1, '" + c.node.input(1) + "') is a " + shape.dtype().str() +
                  " tensor; Reshape's shape must be int64 (cast it, or export the model again)");
    return buffer_ints(shape);
}

inline std::vector<Value> convert_reshape(Ctx& c) {
    Value x = c.in(0);
    std::vector<int64_t> shape = reshape_target(c);
    if (c.i("allowzero", 0))
        for (int64_t d : shape)
            if (d == 0) unsupported("Reshape with allowzero = 1 and a 0 in the shape");
    if (shape.empty()) return {c.mark_scalar(c.add("reshape", {x}, {{"shape", std::vector<int64_t>{1}}}, c.out()))};
    return {c.add("reshape", {x}, {{"shape", shape}}, c.out())};
}

inline std::vector<Value> convert_squeeze(Ctx& c, bool un) {
    Value x = c.in(0);
    std::vector<int64_t> axes;
    if (c.opset >= 13) {
        if (c.has(1)) axes = c.const_ints(1, "axes");
    } else {
        axes = c.ints("axes");
    }
    if (un && axes.empty()) malformed("Unsqueeze needs axes");
    if (un && c.is_scalar(x)) return {reshape(c, x, std::vector<int64_t>(axes.size(), 1), c.out())};
    if (!un) {
        // Squeezing every dimension leaves a scalar: [1].
        std::vector<int64_t> s = c.shape(x), out;
        for (int64_t& a : axes) a = norm_axis(a, int64_t(s.size()));
        for (size_t d = 0; d < s.size(); ++d) {
            bool listed = std::find(axes.begin(), axes.end(), int64_t(d)) != axes.end();
            if (!(axes.empty() ? s[d] == 1 : listed)) out.push_back(s[d]);
        }
        if (out.empty()) return {c.mark_scalar(reshape(c, x, {1}, c.out()))};
    }
    return {c.add(un ? "unsqueeze" : "squeeze", {x}, {{"axes", axes}}, c.out())};
}

inline std::vector<Value> convert_split(Ctx& c) {
    Value x = c.in(0);
    int64_t axis = norm_axis(c.i("axis", 0), c.rank(x));
    std::vector<int64_t> sizes = c.opset >= 13 ? (c.has(1) ? c.const_ints(1, "split") : std::vector<int64_t>{})
                                               : c.ints("split");
    int64_t n = c.node.output_size(), extent = c.shape(x)[size_t(axis)];
    if (sizes.empty() && c.opset >= 18 && c.has_attr("num_outputs")) {
        // num_outputs pieces of ceil(extent / n), the last one what is left.
        if (c.i("num_outputs") != n)
            malformed("num_outputs " + std::to_string(c.i("num_outputs")) + " but " + std::to_string(n) + " outputs");
        const int64_t piece = n > 0 ? (extent + n - 1) / n : 0;
        for (int64_t k = 0; k < n; ++k) sizes.push_back(std::min(piece, extent - k * piece));
    }
    if (sizes.empty()) {
        if (n <= 0 || extent % n) malformed("cannot split " + std::to_string(extent) + " into " + std::to_string(n) + " equal parts");
        sizes.assign(size_t(n), extent / n);
    }
    if (int64_t(sizes.size()) != n) malformed("'split' has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n) + " outputs");
    std::vector<Value> r;
    int64_t start = 0;
    for (int64_t k = 0; k < n; ++k) {
        int64_t len = sizes[size_t(k)];
        if (len < 0 || start + len > extent) malformed("split sizes exceed the extent " + std::to_string(extent));
        if (len == 0) {
            // An empty piece (a rotary embedding over the whole head leaves nothing to pass
            // through): an empty value of the importer, which a Concat then leaves out.
            std::vector<int64_t> shape = c.shape(x);
            shape[size_t(axis)] = 0;
            c.empty_outs.resize(size_t(n), 0);
            c.empty_outs[size_t(k)] = 1;
            c.empty_out_types[size_t(k)] = graph::TensorType{shape, c.dtype(x)};
            r.push_back(Value{});
            continue;
        }
        r.push_back(c.add("slice", {x},
                          {{"starts", std::vector<int64_t>{start}},
                           {"ends", std::vector<int64_t>{start + len}},
                           {"axes", std::vector<int64_t>{axis}}},
                          c.out(int(k))));
        start += len;
    }
    return r;
}

inline std::vector<Value> convert_slice(Ctx& c) {
    Value x = c.in(0);
    std::vector<int64_t> starts, ends, axes, steps;
    if (c.opset < 10) {
        starts = c.ints("starts");
        ends = c.ints("ends");
        axes = c.ints("axes");
    } else {
        starts = c.const_ints(1, "starts");
        ends = c.const_ints(2, "ends");
        if (c.has(3)) axes = c.const_ints(3, "axes");
        if (c.has(4)) steps = c.const_ints(4, "steps");
    }
    // ONNX allows an empty result; weft's tensors cannot be empty, but a constant one is
    // kept aside (shape computations slice shapes to nothing, then concatenate).
    std::vector<int64_t> s = c.shape(x);
    std::vector<int64_t> empty_shape = s;  // (with a 0 where the result is empty)
    bool empty = false;
    for (size_t k = 0; k < starts.size() && k < ends.size(); ++k) {
        int64_t axis = norm_axis(k < axes.size() ? axes[k] : int64_t(k), int64_t(s.size()));
        int64_t step = k < steps.size() ? steps[k] : 1, n = s[size_t(axis)];
        if (step == 0) malformed("a slice step is 0");
        int64_t b = starts[k], e = ends[k];
        if (b < 0) b += n;
        if (e < 0 && e > std::numeric_limits<int64_t>::min() + n) e += n;
        bool none = false;
        if (step > 0) {
            b = std::clamp<int64_t>(b, 0, n);
            e = std::clamp<int64_t>(e, 0, n);
            none = e <= b;
        } else {
            b = std::clamp<int64_t>(b, -1, n - 1);
            e = std::clamp<int64_t>(e, -1, n - 1);
            none = e >= b;
        }
        if (none) empty_shape[size_t(axis)] = 0;
        empty = empty || none;
    }
    if (empty) {  // an empty value of the importer (what reads it decides whether it may)
        c.empty_outs = {1};
        c.empty_out_types[0] = graph::TensorType{empty_shape, c.dtype(x)};
        return {Value{}};
    }
    return {c.g.slice(x, starts, ends, axes, steps, c.out())};
}

inline std::vector<Value> convert_pad(Ctx& c) {
    Value x = c.in(0);
    std::string mode = c.s("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge" && (mode != "wrap" || c.opset < 19))
        unsupported("Pad mode '" + mode + "'");
    std::vector<int64_t> pads;
    double value = 0;
    if (c.opset < 11) {
        pads = c.ints(c.opset < 2 ? "paddings" : "pads");
        value = c.f("value", 0.0);
    } else {
        pads = c.const_ints(1, "pads");
        if (c.has(2)) value = c.const_floats(2, "constant_value").at(0);
        if (c.has(3)) {  // opset 18: pads for these axes only
            const int64_t r = c.rank(x);
            std::vector<int64_t> axes = c.const_ints(3, "axes");
            if (pads.size() != 2 * axes.size())
                malformed(std::to_string(pads.size()) + " pads for " + std::to_string(axes.size()) + " axes; it needs " +
                          std::to_string(2 * axes.size()));
            std::vector<int64_t> full(size_t(2 * r), 0);
            for (size_t k = 0; k < axes.size(); ++k) {
                const int64_t d = norm_axis(axes[k], r);
                full[size_t(d)] = pads[k];
                full[size_t(r + d)] = pads[axes.size() + k];
            }
            pads = full;
        }
    }
    if (mode != "constant") {
        const std::vector<int64_t> s = c.shape(x);
        if (pads.size() != 2 * s.size())
            malformed(std::to_string(pads.size()) + " pads for an input of rank " + std::to_string(s.size()) + "; it needs " +
                      std::to_string(2 * s.size()));
        for (size_t d = 0; d < s.size(); ++d)
            if (s[d] == 1 && mode == "reflect" && (pads[d] > 0 || pads[d + s.size()] > 0))
                malformed("Pad mode 'reflect' of dimension " + std::to_string(d) + " of extent 1");
        return {c.add("pad", {x}, {{"pads", pads}, {"value", value}, {"mode", mode}}, c.out())};
    }
    return {c.g.pad(x, pads, value, c.out())};
}

// CenterCropPad (opset 18): each listed axis cropped or zero-padded to the constant shape,
// centred (the odd one out at the end).
inline std::vector<Value> convert_center_crop_pad(Ctx& c) {
    Value x = c.in(0);
    const int64_t r = c.rank(x);
    const std::vector<int64_t> shape = c.const_ints(1, "the shape");
    std::vector<int64_t> axes = c.ints("axes", iota_vec(0, r));
    if (shape.size() != axes.size()) malformed(std::to_string(shape.size()) + " sizes for " + std::to_string(axes.size()) + " axes");
    std::vector<int64_t> starts, ends, cut, pads(size_t(2 * r), 0);
    for (size_t k = 0; k < axes.size(); ++k) {
        const int64_t a = norm_axis(axes[k], r), dim = c.shape(x)[size_t(a)], want = shape[k];
        if (want < 1) unsupported("a CenterCropPad to " + std::to_string(want) + " (weft's tensors cannot be empty)");
        if (want < dim) {
            starts.push_back((dim - want) / 2);
            ends.push_back((dim - want) / 2 + want);
            cut.push_back(a);
        } else if (want > dim) {
            pads[size_t(a)] = (want - dim) / 2;
            pads[size_t(r + a)] = want - dim - (want - dim) / 2;
        }
    }
    Value y = cut.empty() ? x : c.g.slice(x, starts, ends, cut, std::vector<int64_t>(cut.size(), 1), c.fresh("cropped"));
    return {c.g.pad(y, pads, 0.0, c.out())};
}

inline std::vector<Value> convert_concat(Ctx& c) {
    std::vector<Value> xs;
    for (size_t k = 0; k < c.n_in(); ++k)
        if (!c.is_empty(k)) xs.push_back(c.in(k));  // empty values add nothing
    int64_t axis = c.opset < 4 ? c.i("axis", 1) : c.i("axis");
    if (xs.empty()) {
        // Empty values only: an empty value, their extents along the axis summed.
        const graph::TensorType* first = c.n_in() ? c.empty_type(0) : nullptr;
        if (!first) malformed("Concat needs at least one input whose shape is known");
        graph::TensorType t = *first;
        const int64_t a = norm_axis(axis, int64_t(t.shape.size()));
        for (size_t k = 1; k < c.n_in(); ++k)
            if (const graph::TensorType* e = c.empty_type(k); e && e->shape.size() == t.shape.size())
                t.shape[size_t(a)] += e->shape[size_t(a)];
        c.empty_outs = {1};
        c.empty_out_types[0] = t;
        return {Value{}};
    }
    if (xs.size() == 1) {
        norm_axis(axis, c.rank(xs[0]));
        return {reshape(c, xs[0], c.shape(xs[0]), c.out())};
    }
    return {c.g.concat(xs, axis, c.out())};
}

inline std::vector<Value> convert_expand(Ctx& c) {
    Value x = c.in(0);
    std::vector<int64_t> shape = c.const_ints(1, "the shape");
    return {expand_to(c, x, graph::ops::broadcast_shapes(c.shape(x), shape), c.out())};
}

inline std::vector<Value> convert_tile(Ctx& c) {
    Value x = c.in(0);
    std::vector<int64_t> reps = c.const_ints(1, "repeats");
    if (int64_t(reps.size()) != c.rank(x)) malformed("Tile: one repeat per dimension");
    std::vector<int64_t> tiled = c.shape(x);  // its product is the output's element count
    tiled.insert(tiled.end(), reps.begin(), reps.end());
    checked_elements(tiled, c.limit, "Tile's output (the shape, then the repeats)");
    for (int64_t r : reps)
        if (r < 1) unsupported("Tile with a repeat below 1");
    return {c.add("tile", {x}, {{"repeats", reps}}, c.out())};
}

inline std::vector<Value> convert_constant(Ctx& c) {
    const std::string what = "Constant's value";
    BufferRef b;
    if (c.has_attr("value")) {
        b = tensor_to_buffer(c.typed("value", pb::AttributeProto::TENSOR).t(), c.limit, what);
    } else if (c.has_attr("value_float")) {
        b = filled_buffer(DataType::float_(32), {}, c.f("value_float", 0));
    } else if (c.has_attr("value_int")) {
        b = int64_buffer({c.i("value_int")}, {});
    } else if (c.has_attr("value_floats")) {
        std::vector<double> v = c.floats("value_floats");
        b = BufferRef::allocate(DataType::float_(32), {int64_t(v.size())});
        for (size_t k = 0; k < v.size(); ++k) static_cast<float*>(b.data())[k] = float(v[k]);
    } else if (c.has_attr("value_ints")) {
        std::vector<int64_t> v = c.ints("value_ints");
        b = int64_buffer(v, {int64_t(v.size())});
    } else {
        unsupported("Constant without a numeric value (sparse_value, strings)");
    }
    if (b.size() == 0) {
        c.empty_outs = {1};
        return {Value{}};
    }
    return {c.named_constant(0, b)};
}

inline std::vector<Value> convert_constant_of_shape(Ctx& c) {
    std::vector<int64_t> shape = c.const_ints(0, "the shape");
    if (checked_elements(shape, c.limit, "ConstantOfShape's output") == 0) {
        c.empty_outs = {1};
        return {Value{}};
    }
    BufferRef b;
    if (c.has_attr("value")) {
        BufferRef v = tensor_to_buffer(c.typed("value", pb::AttributeProto::TENSOR).t(), c.limit, "the value");
        if (v.size() != 1) malformed("ConstantOfShape's value must have one element");
        b = filled_buffer(v.dtype(), shape, buffer_floats(v)[0]);
        if (v.dtype() == DataType::int_(64)) b = int64_buffer(std::vector<int64_t>(size_t(b.size()), buffer_ints(v)[0]), shape);
    } else {
        b = filled_buffer(DataType::float_(32), shape, 0);
    }
    return {c.named_constant(0, b)};
}

inline std::vector<Value> convert_shape(Ctx& c) {
    std::vector<int64_t> s = c.shape(c.in(0));
    int64_t r = int64_t(s.size());
    int64_t start = c.i("start", 0), end = c.i("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, start, r);
    if (c.is_scalar(c.in(0)) || start >= end) unsupported("a Shape with no entries (weft's tensors cannot be empty)");
    std::vector<int64_t> v(s.begin() + start, s.begin() + end);
    return {c.named_constant(0, int64_buffer(v, {int64_t(v.size())}))};
}

inline std::vector<Value> convert_identity(Ctx& c) {
    std::vector<Value> r{c.in(0)};
    if (c.node.op_type() == "Dropout") {  // the identity in inference: ratio and seed change nothing
        c.ignore({"ratio", "seed", "is_test"});
        c.ignore_input(1);
    }
    // Training mode drops at random, but a ratio of 0 drops nothing and scales by 1 (torch
    // exports Swin's attention dropout so): the identity all the same.
    if (c.node.op_type() == "Dropout" && c.opset >= 12 && c.has(2) &&
        c.const_ints(2, "training_mode").at(0) != 0 &&
        !(c.has(1) && c.g.node(c.in(1)).is_constant() && c.const_floats(1, "ratio").at(0) == 0.0))
        unsupported("Dropout in training mode");
    if (c.wants(1)) {  // Dropout's mask: all true in inference
        checked_elements(c.shape(c.in(0)), c.limit, "Dropout's mask");
        r.push_back(c.named_constant(1, filled_buffer(DataType::bool_(), c.shape(c.in(0)), 1)));
    }
    return r;
}

inline std::vector<Value> convert_gather(Ctx& c) {
    Value data = c.in(0), idx = c.in(1);
    int64_t axis = norm_axis(c.i("axis", 0), c.rank(data));
    if (!c.is_scalar(idx)) return {c.g.gather(data, idx, axis, c.out())};
    // A scalar index drops the axis.
    Value y = c.g.gather(data, idx, axis, c.fresh("gather"));
    std::vector<int64_t> s = c.shape(y);
    s.erase(s.begin() + axis);
    if (s.empty()) return {c.mark_scalar(reshape(c, y, {1}, c.out()))};
    return {reshape(c, y, s, c.out())};
}

}  // namespace weft::onnx::detail
