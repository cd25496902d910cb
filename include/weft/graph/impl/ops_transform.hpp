// The graph's data movement and type operators: reshape, flatten, transpose, concat, tile,
// slice, pad, squeeze, unsqueeze, gather (injective), where (broadcast), cast and erf (element-wise).
// Type inference calls topi's shape functions (topi/transform.hpp), so the graph and the
// compute check the same things with the same messages.
#pragma once
#include <functional>
#include <limits>

#include "weft/graph/impl/host_evaluate.hpp"
#include "weft/graph/impl/op_helpers.hpp"
#include "weft/ir/arith/simplify.hpp"
#include "weft/topi/topi.hpp"

namespace weft::graph::ops {

// ---- attributes -----------------------------------------------------------------------------
// reshape: shape | flatten: axis (1) | transpose: perm ([]: reverse) | concat: axis
// slice: starts, ends, axes ([]: 0, 1, ...), steps ([]: 1s) | pad: pads (ONNX layout), value (0)
// tile: repeats (one per dimension, each >= 1)
// squeeze: axes ([]: every extent-1 dimension) | unsqueeze: axes | gather: axis (0)
// cast: dtype ("float32", "int64", "bool", ...)

inline DataType cast_dtype(const Attrs& a) {
    std::string name = a.get_string("dtype");
    WEFT_CHECK(!name.empty(), "attribute 'dtype' is missing");
    DataType t;
    try {
        t = DataType::parse(name);
    } catch (const std::exception&) {
        ::weft::detail::throw_user_error("attribute 'dtype' is \"" + name + "\", not a dtype (float32, int64, bool, ...)");
    }
    WEFT_CHECK(t.lanes == 1 && !t.is_handle() && (!t.is_bfloat() || t.bits == 16), "attribute 'dtype' is \"", name,
               "\"; cast needs a scalar number or bool type");
    return t;
}

inline topi::GridSampleParams grid_sample_params(const Attrs& a) {
    return {a.get_string("mode", "linear"), a.get_string("padding_mode", "zeros"), a.get_int("align_corners", 0) != 0};
}

// roi_align's attributes: output_height, output_width (1), sampling_ratio (0), spatial_scale
// (1.0), mode ("avg" or "max"), half_pixel (1).
inline topi::RoiAlignParams roi_align_params(const Attrs& a) {
    const std::string mode = a.get_string("mode", "avg");
    WEFT_CHECK(mode == "avg" || mode == "max", "attribute 'mode' is \"", mode, "\", not avg or max");
    return {.output_height = a.get_int("output_height", 1), .output_width = a.get_int("output_width", 1),
            .sampling_ratio = a.get_int("sampling_ratio", 0), .spatial_scale = a.get_float("spatial_scale", 1.0),
            .half_pixel = a.get_int("half_pixel", 1) != 0, .max = mode == "max"};
}

inline TensorType infer_gather(const std::vector<TensorType>& in, const Attrs& a) {
    const TensorType &data = in[0], &indices = in[1];
    WEFT_CHECK(indices.dtype == DataType::int_(32) || indices.dtype == DataType::int_(64),
               "the indices must be int32 or int64, got ", indices.str());
    return {topi::gather_shape(data.shape, indices.shape, a.get_int("axis", 0)), data.dtype};
}

// resize's attributes: sizes (the output shape), mode, coordinate_transformation_mode,
// nearest_mode, cubic_coeff_a, exclude_outside, antialias, extrapolation_value, scales, roi_start, roi_end.
inline topi::ResizeParams resize_params(const Attrs& a) {
    topi::ResizeParams p;
    p.mode = a.get_string("mode", p.mode);
    p.coordinate_transformation_mode = a.get_string("coordinate_transformation_mode", p.coordinate_transformation_mode);
    p.nearest_mode = a.get_string("nearest_mode", p.nearest_mode);
    p.cubic_coeff_a = a.get_float("cubic_coeff_a", p.cubic_coeff_a);
    p.exclude_outside = a.get_int("exclude_outside", 0) != 0;
    p.antialias = a.get_int("antialias", 0) != 0;
    p.extrapolation_value = a.get_float("extrapolation_value", 0.0);
    p.scales = a.get_floats("scales");
    p.roi_start = a.get_floats("roi_start");
    p.roi_end = a.get_floats("roi_end");
    return p;
}

inline TensorType infer_concat(const std::vector<TensorType>& in, const Attrs& a) {
    std::vector<std::vector<int64_t>> shapes;
    for (size_t k = 0; k < in.size(); ++k) {
        WEFT_CHECK(in[k].dtype == in[0].dtype, "input ", k, " (", in[k].str(), ") and input 0 (", in[0].str(),
                   ") must have the same dtype");
        shapes.push_back(in[k].shape);
    }
    return {topi::concat_shape(shapes, a.get_int("axis")), in[0].dtype};
}

inline TensorType infer_where(const std::vector<TensorType>& in, const Attrs&) {
    const TensorType &cond = in[0], &x = in[1], &y = in[2];
    WEFT_CHECK(cond.dtype == DataType::bool_(), "the condition must be bool, got ", cond.str());
    check_same_dtype(x, y, "the first value", "the second value");
    return {broadcast_shapes(broadcast_shapes(cond.shape, x.shape), y.shape), x.dtype};
}

// Output shapes from the first input's type and the attributes.
inline std::vector<int64_t> reshape_shape(const TensorType& x, const Attrs& a) {
    return topi::reshape_shape(x.shape, a.get_ints("shape"));
}
inline std::vector<int64_t> flatten_shape(const TensorType& x, const Attrs& a) {
    return topi::flatten_shape(x.shape, a.get_int("axis", 1));
}
inline std::vector<int64_t> squeeze_shape(const TensorType& x, const Attrs& a) {
    return topi::squeeze_shape(x.shape, a.get_ints("axes", {}));
}
inline std::vector<int64_t> unsqueeze_shape(const TensorType& x, const Attrs& a) {
    return topi::unsqueeze_shape(x.shape, a.get_ints("axes"));
}
inline std::vector<int64_t> transpose_shape(const TensorType& x, const Attrs& a) {
    std::vector<int64_t> shape;
    for (int64_t d : topi::transpose_perm(x.shape.size(), a.get_ints("perm", {}))) shape.push_back(x.shape[size_t(d)]);
    return shape;
}
inline std::vector<int64_t> slice_shape(const TensorType& x, const Attrs& a) {
    std::vector<int64_t> shape;
    for (auto& r : topi::slice_ranges(x.shape, a.get_ints("starts"), a.get_ints("ends"), a.get_ints("axes", {}),
                                      a.get_ints("steps", {})))
        shape.push_back(r.extent);
    return shape;
}
inline std::vector<int64_t> tile_shape(const TensorType& x, const Attrs& a) {
    return topi::tile_shape(x.shape, a.get_ints("repeats"));
}
inline std::vector<int64_t> pad_shape(const TensorType& x, const Attrs& a) {
    topi::pad_mode(a.get_string("mode", "constant"));  // a known mode
    return topi::pad_shape(x.shape, a.get_ints("pads"));
}

// The inference of an operator whose output has its input's dtype and the shape F gives.
using ShapeFn = std::vector<int64_t> (*)(const TensorType&, const Attrs&);
template <ShapeFn F>
TensorType infer_shaped(const std::vector<TensorType>& in, const Attrs& a) {
    return {F(in[0], a), in[0].dtype};
}

// A slice with symbolic extents or starts (graph::build's symbolic dimensions): steps of 1;
// a start is its fitted expression, a negative constant counting from the end.
inline Tensor slice_to_shape(const std::vector<Tensor>& in, const Attrs& a, const std::vector<Expr>& shape,
                             const OpDef::SymbolicAttrs& symbolic) {
    const Tensor& x = in[0];
    const std::vector<Expr> extent = x.shape();
    const int64_t rank = int64_t(extent.size());
    std::vector<int64_t> starts = a.get_ints("starts"), axes = a.get_ints("axes", {}), steps = a.get_ints("steps", {});
    if (axes.empty())
        for (int64_t d = 0; d < int64_t(starts.size()); ++d) axes.push_back(d);
    auto fitted = symbolic.find("starts");
    std::vector<Expr> offset(size_t(rank), make_int(0));
    for (size_t e = 0; e < axes.size(); ++e) {
        WEFT_CHECK(steps.empty() || steps[e] == 1, "slice: with symbolic dimensions only steps of 1 are supported");
        const size_t d = size_t(axes[e] < 0 ? axes[e] + rank : axes[e]);
        Expr start = fitted != symbolic.end() ? fitted->second.at(e) : make_int(starts[e]);
        int64_t c = 0;
        if (ir::as_const_int(start, &c) && c < 0) start = extent[d] + make_int(c);
        offset[d] = ir::min(ir::max(start, make_int(0)), extent[d]);
    }
    return compute(shape, [&](const std::vector<Expr>& o) {
        std::vector<Expr> idx;
        for (size_t d = 0; d < o.size(); ++d) idx.push_back(o[d] + offset[d]);
        return x.at(idx);
    }, "slice");
}

// A concat with symbolic extents (graph::build's symbolic dimensions): a chain of selects,
// each piece from the positions before its end.
inline Tensor concat_to_shape(const std::vector<Tensor>& xs, const Attrs& attrs, const std::vector<Expr>& shape,
                              const OpDef::SymbolicAttrs&) {
    const int64_t rank = int64_t(shape.size()), axis = attrs.get_int("axis");
    const size_t a = size_t(axis < 0 ? axis + rank : axis);
    std::vector<Expr> begin{make_int(0)};  // piece k covers [begin[k], begin[k + 1]) along a
    for (const Tensor& x : xs) begin.push_back(ir::arith::simplify(begin.back() + x.shape().at(a)));
    return compute(shape, [&](const std::vector<Expr>& o) {
        Expr value;
        for (size_t k = xs.size(); k-- > 0;) {
            std::vector<Expr> idx = o;
            idx[a] = ir::min(ir::max(o[a] - begin[k], make_int(0)), xs[k].shape()[a] - make_int(1));
            Expr v = xs[k].at(idx);
            value = value.defined() ? ir::select(o[a] < begin[k + 1], v, value) : v;
        }
        return value;
    }, "concat");
}

// A gather with symbolic extents (graph::build's symbolic dimensions): indices wrapped and
// clamped into the axis as topi::gather does.
inline Tensor gather_to_shape(const std::vector<Tensor>& in, const Attrs& attrs, const std::vector<Expr>& shape,
                              const OpDef::SymbolicAttrs&) {
    const Tensor &data = in[0], &indices = in[1];
    const int64_t rank = int64_t(data.shape().size()), axis = attrs.get_int("axis", 0);
    const size_t a = size_t(axis < 0 ? axis + rank : axis), ni = indices.shape().size();
    const Expr n = data.shape()[a];
    return compute(shape, [&](const std::vector<Expr>& o) {
        Expr k = ir::cast(DataType::int_(64), indices.at(std::vector<Expr>(o.begin() + int64_t(a), o.begin() + int64_t(a + ni))));
        k = ir::min(ir::max(ir::select(k < make_int(0), k + n, k), make_int(0)), n - make_int(1));
        std::vector<Expr> idx(o.begin(), o.begin() + int64_t(a));
        idx.push_back(k);
        idx.insert(idx.end(), o.begin() + int64_t(a + ni), o.end());
        return data.at(idx);
    }, "gather");
}

inline void register_transform_ops() {
    using P = OpPattern;
    using In = const std::vector<Tensor>&;
    // Each only rearranges its input: with symbolic dimensions, a reshape to the output's shape.
    auto to_shape = [](In in, const Attrs&, const std::vector<Expr>& shape, const OpDef::SymbolicAttrs&) {
        return topi::reshape_to(in[0], shape);
    };
    register_op({.name = "reshape", .pattern = P::Injective, .infer = infer_shaped<reshape_shape>,
                 .compute = [](In in, const Attrs& a) { return topi::reshape(in[0], a.get_ints("shape")); },
                 .compute_to_shape = to_shape, .evaluate = host::same_elements});
    register_op({.name = "flatten", .pattern = P::Injective, .infer = infer_shaped<flatten_shape>,
                 .compute = [](In in, const Attrs& a) { return topi::flatten(in[0], a.get_int("axis", 1)); },
                 .compute_to_shape = to_shape, .evaluate = host::same_elements});
    register_op({.name = "squeeze", .pattern = P::Injective, .infer = infer_shaped<squeeze_shape>,
                 .compute = [](In in, const Attrs& a) { return topi::squeeze(in[0], a.get_ints("axes", {})); },
                 .compute_to_shape = to_shape, .evaluate = host::same_elements});
    register_op({.name = "unsqueeze", .pattern = P::Injective, .infer = infer_shaped<unsqueeze_shape>,
                 .compute = [](In in, const Attrs& a) { return topi::unsqueeze(in[0], a.get_ints("axes")); },
                 .compute_to_shape = to_shape, .evaluate = host::same_elements});
    register_op({.name = "transpose", .pattern = P::Injective, .infer = infer_shaped<transpose_shape>,
                 .compute = [](In in, const Attrs& a) { return topi::transpose(in[0], a.get_ints("perm", {})); },
                 .evaluate = host::transpose});
    register_op({.name = "slice", .pattern = P::Injective, .infer = infer_shaped<slice_shape>,
                 .compute = [](In in, const Attrs& a) {
                     return topi::slice(in[0], a.get_ints("starts"), a.get_ints("ends"), a.get_ints("axes", {}),
                                        a.get_ints("steps", {}));
                 },
                 .compute_to_shape = slice_to_shape, .evaluate = host::slice});
    register_op({.name = "pad", .pattern = P::Injective, .infer = infer_shaped<pad_shape>,
                 .compute = [](In in, const Attrs& a) {
                     return topi::pad(in[0], a.get_ints("pads"), a.get_float("value", 0.0),
                                      topi::pad_mode(a.get_string("mode", "constant")));
                 },
                 .evaluate = host::pad});
    register_op({.name = "concat", .pattern = P::Injective, .min_inputs = 1,
                 .max_inputs = std::numeric_limits<int>::max(), .infer = infer_concat,
                 .compute = [](In in, const Attrs& a) { return topi::concat(in, a.get_int("axis")); },
                 .compute_to_shape = concat_to_shape, .evaluate = host::concat});
    register_op({.name = "tile", .pattern = P::Injective, .infer = infer_shaped<tile_shape>,
                 .compute = [](In in, const Attrs& a) { return topi::tile(in[0], a.get_ints("repeats")); }});
    register_op({.name = "gather", .pattern = P::Injective, .min_inputs = 2, .max_inputs = 2, .infer = infer_gather,
                 .compute = [](In in, const Attrs& a) { return topi::gather(in[0], in[1], a.get_int("axis", 0)); },
                 .compute_to_shape = gather_to_shape, .evaluate = host::gather});
    register_op({.name = "gather_elements", .pattern = P::Injective, .min_inputs = 2, .max_inputs = 2,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         const TensorType &data = in[0], &indices = in[1];
                         WEFT_CHECK(indices.dtype == DataType::int_(32) || indices.dtype == DataType::int_(64),
                                    "the indices must be int32 or int64, got ", indices.str());
                         WEFT_CHECK(indices.shape.size() == data.shape.size(), "the indices ", indices.str(),
                                    " must have the data's rank (", data.str(), ")");
                         const int64_t axis = normalize_axis(a.get_int("axis", 0), data.shape.size());
                         for (size_t d = 0; d < data.shape.size(); ++d)
                             WEFT_CHECK(int64_t(d) == axis || indices.shape[d] <= data.shape[d], "the indices ",
                                        indices.str(), " exceed the data ", data.str(), " in dimension ", d);
                         return TensorType{indices.shape, data.dtype};
                     },
                 .compute = [](In in, const Attrs& a) {
                     return topi::gather_elements(in[0], in[1], a.get_int("axis", 0));
                 }});
    register_op({.name = "gather_nd", .pattern = P::Injective, .min_inputs = 2, .max_inputs = 2,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         WEFT_CHECK(in[1].dtype == DataType::int_(32) || in[1].dtype == DataType::int_(64),
                                    "the indices must be int32 or int64, got ", in[1].str());
                         return TensorType{topi::gather_nd_shape(in[0].shape, in[1].shape, a.get_int("batch_dims", 0)),
                                           in[0].dtype};
                     },
                 .compute = [](In in, const Attrs& a) {
                     return topi::gather_nd(in[0], in[1], a.get_int("batch_dims", 0));
                 }});
    register_op({.name = "scatter_elements", .pattern = P::Opaque, .min_inputs = 3, .max_inputs = 3,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         return traced_type(in, [&](const std::vector<Tensor>& t) {
                             return topi::scatter_elements(t[0], t[1], t[2], a.get_int("axis", 0),
                                                           a.get_string("reduction", "none"));
                         });
                     },
                 .compute = [](In in, const Attrs& a) {
                     return topi::scatter_elements(in[0], in[1], in[2], a.get_int("axis", 0),
                                                   a.get_string("reduction", "none"));
                 }});
    register_op({.name = "scatter_nd", .pattern = P::Opaque, .min_inputs = 3, .max_inputs = 3,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         return traced_type(in, [&](const std::vector<Tensor>& t) {
                             return topi::scatter_nd(t[0], t[1], t[2], a.get_string("reduction", "none"));
                         });
                     },
                 .compute = [](In in, const Attrs& a) {
                     return topi::scatter_nd(in[0], in[1], in[2], a.get_string("reduction", "none"));
                 }});
    // past, update[, write_indices]; `axis` (-2), `circular` (0): ONNX TensorScatter.
    auto tensor_scatter = [](const std::vector<Tensor>& t, const Attrs& a) {
        return topi::tensor_scatter(t[0], t[1], t.size() > 2 ? t[2] : Tensor(), a.get_int("axis", -2),
                                    a.get_int("circular", 0) != 0);
    };
    register_op({.name = "tensor_scatter", .pattern = P::Injective, .min_inputs = 2, .max_inputs = 3,
                 .infer =
                     [tensor_scatter](const std::vector<TensorType>& in, const Attrs& a) {
                         return traced_type(in, [&](const std::vector<Tensor>& t) { return tensor_scatter(t, a); });
                     },
                 .compute = [tensor_scatter](In in, const Attrs& a) { return tensor_scatter(in, a); }});
    for (auto [name, f] : {std::pair{"cumsum", &topi::cumsum}, std::pair{"cumprod", &topi::cumprod}})
        register_op({.name = name, .pattern = P::Opaque,
                     .infer =
                         [](const std::vector<TensorType>& in, const Attrs& a) {
                             WEFT_CHECK(!in[0].dtype.is_bool(), "a running sum or product needs numbers, got bool");
                             normalize_axis(a.get_int("axis", 0), in[0].shape.size());
                             return in[0];
                         },
                     .compute = [f](In in, const Attrs& a) {
                         return f(in[0], a.get_int("axis", 0), a.get_int("exclusive", 0) != 0, a.get_int("reverse", 0) != 0);
                     }});
    register_op({.name = "einsum", .pattern = P::Opaque, .min_inputs = 1,
                 .max_inputs = std::numeric_limits<int>::max(),
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         std::vector<std::vector<int64_t>> shapes;
                         for (const TensorType& t : in) {
                             WEFT_CHECK(t.dtype == in[0].dtype, "the operands must share a dtype: ", t.str(), " and ",
                                        in[0].str());
                             shapes.push_back(t.shape);
                         }
                         return TensorType{topi::einsum_shape(a.get_string("equation"), shapes), in[0].dtype};
                     },
                 .compute = [](In in, const Attrs& a) { return topi::einsum(a.get_string("equation"), in); }});
    register_op({.name = "grid_sample", .pattern = P::Injective, .min_inputs = 2, .max_inputs = 2,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         return traced_type(in, [&](const std::vector<Tensor>& t) {
                             return topi::grid_sample(t[0], t[1], grid_sample_params(a));
                         });
                     },
                 .compute = [](In in, const Attrs& a) { return topi::grid_sample(in[0], in[1], grid_sample_params(a)); }});
    // x, rois, batch_indices -> [R, C, output_height, output_width]; roi_align_exceeds (x,
    // rois -> bool [1]) is its run-time check for sampling_ratio 0.
    register_op({.name = "roi_align", .pattern = P::Opaque, .min_inputs = 3, .max_inputs = 3,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         return traced_type(in, [&](const std::vector<Tensor>& t) {
                             return topi::roi_align(t[0], t[1], t[2], roi_align_params(a));
                         });
                     },
                 .compute = [](In in, const Attrs& a) { return topi::roi_align(in[0], in[1], in[2], roi_align_params(a)); },
                 .schedule = schedule_of<topi::schedule_roi_align>});
    register_op({.name = "roi_align_exceeds", .pattern = P::Opaque, .min_inputs = 2, .max_inputs = 2,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         return traced_type(in, [&](const std::vector<Tensor>& t) {
                             return topi::roi_align_exceeds(t[0], t[1], roi_align_params(a));
                         });
                     },
                 .compute = [](In in, const Attrs& a) { return topi::roi_align_exceeds(in[0], in[1], roi_align_params(a)); }});
    register_op({.name = "resize", .pattern = P::Injective,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         check_float(in[0], "the input");
                         std::vector<int64_t> sizes = a.get_ints("sizes");
                         WEFT_CHECK(sizes.size() == in[0].shape.size(), "sizes has ", sizes.size(),
                                    " entries for an input of rank ", in[0].shape.size());
                         for (int64_t e : sizes) WEFT_CHECK(e >= 1, "every size must be at least 1, got ", e);
                         topi::check_resize_params(resize_params(a));
                         topi::check_resize_shapes(in[0].shape, sizes, resize_params(a));
                         return TensorType{sizes, in[0].dtype};
                     },
                 .compute = [](In in, const Attrs& a) { return topi::resize(in[0], a.get_ints("sizes"), resize_params(a)); }});
    register_op({.name = "where", .pattern = P::Broadcast, .min_inputs = 3, .max_inputs = 3, .infer = infer_where,
                 .compute = [](In in, const Attrs&) { return topi::where(in[0], in[1], in[2]); }});
    register_op({.name = "cast", .pattern = P::ElemWise,
                 .infer = [](const std::vector<TensorType>& in,
                             const Attrs& a) { return TensorType{in[0].shape, cast_dtype(a)}; },
                 .compute = [](In in, const Attrs& a) { return topi::cast(in[0], cast_dtype(a)); },
                 .evaluate = host::cast});
    register_op({.name = "bitcast", .pattern = P::ElemWise,
                 .infer =
                     [](const std::vector<TensorType>& in, const Attrs& a) {
                         return traced_type(in, [&](const std::vector<Tensor>& t) { return topi::bitcast(t[0], cast_dtype(a)); });
                     },
                 .compute = [](In in, const Attrs& a) { return topi::bitcast(in[0], cast_dtype(a)); }});
}

}  // namespace weft::graph::ops
