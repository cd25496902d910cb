// Shared pieces of the operator definitions: shape checks and conversions between the
// graph's integer shapes and the tensor language's.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "weft/graph/op_registry.hpp"
#include "weft/ir/error.hpp"

namespace weft::graph::ops {

// The numpy broadcast of two shapes.
inline std::vector<int64_t> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    size_t n = std::max(a.size(), b.size());
    std::vector<int64_t> r(n);
    for (size_t i = 0; i < n; ++i) {
        int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
        int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
        WEFT_CHECK(x == y || x == 1 || y == 1, "shapes ", shape_str(a), " and ", shape_str(b),
                   " do not broadcast (dimension ", i, ": ", x, " vs ", y, ")");
        r[i] = x == 1 ? y : x;
    }
    return r;
}

inline void check_rank(const TensorType& t, size_t rank, const char* what) {
    WEFT_CHECK(t.shape.size() == rank, what, " must have ", rank, " dimensions, got ", t.str());
}

inline void check_float(const TensorType& t, const char* what) {
    WEFT_CHECK(t.dtype.is_float(), what, " must be a float tensor, got ", t.str());
}

inline void check_same_dtype(const TensorType& a, const TensorType& b, const char* what_a, const char* what_b) {
    WEFT_CHECK(a.dtype == b.dtype, what_a, " (", a.dtype.str(), ") and ", what_b, " (", b.dtype.str(),
               ") must have the same dtype");
}

// An axis in [-rank, rank) as an index in [0, rank).
inline int64_t normalize_axis(int64_t axis, size_t rank, const char* what = "axis") {
    int64_t r = int64_t(rank);
    WEFT_CHECK(axis >= -r && axis < r, what, " ", axis, " is out of range for ", r, " dimensions");
    return axis < 0 ? axis + r : axis;
}

// A pair attribute {h, w}: the list `key` if given, else the scalar `key`'s single value
// (or `fallback`) twice.
inline std::vector<int64_t> pair_attr(const Attrs& a, const std::string& key, int64_t fallback) {
    std::vector<int64_t> v = a.get_ints(key, {});
    if (v.empty()) v = {fallback, fallback};
    WEFT_CHECK(v.size() == 2, "attribute '", key, "' must have 2 values {h, w}, got ", v.size());
    return v;
}

// Padding {top, left, bottom, right}.
inline std::vector<int64_t> pads_attr(const Attrs& a) {
    std::vector<int64_t> v = a.get_ints("pads", {0, 0, 0, 0});
    WEFT_CHECK(v.size() == 4, "attribute 'pads' must have 4 values {top, left, bottom, right}, got ", v.size());
    for (int64_t p : v) WEFT_CHECK(p >= 0, "attribute 'pads' must not be negative");
    return v;
}

inline std::vector<Expr> to_exprs(const std::vector<int64_t>& v) {
    std::vector<Expr> r;
    for (int64_t x : v) r.push_back(make_int(x));
    return r;
}

// A tensor's shape as integers (the graph's tensors have constant shapes).
inline std::vector<int64_t> const_shape(const Tensor& t) {
    std::vector<int64_t> r;
    for (const Expr& e : t.shape()) {
        int64_t v = 0;
        WEFT_ICHECK(ir::as_const_int(e, &v), "the graph tensor '", t.name(), "' has a symbolic shape");
        r.push_back(v);
    }
    return r;
}

// Dimension i of a tensor whose other dimensions may be symbolic (a batch, an image size).
inline int64_t const_dim(const Tensor& t, size_t i) {
    int64_t v = 0;
    WEFT_ICHECK(i < t.shape().size() && ir::as_const_int(t.shape()[i], &v), "dimension ", i, " of the graph tensor '",
                t.name(), "' is symbolic");
    return v;
}

inline std::vector<int> to_ints(const std::vector<int64_t>& v) { return std::vector<int>(v.begin(), v.end()); }

// The type of op's result on placeholders of the input types: an op whose shape rules and
// checks live in topi runs them there instead of repeating them here.
inline TensorType traced_type(const std::vector<TensorType>& in,
                              const std::function<Tensor(const std::vector<Tensor>&)>& op) {
    std::vector<Tensor> t;
    for (size_t k = 0; k < in.size(); ++k) {
        std::vector<Expr> shape;
        for (int64_t d : in[k].shape) shape.push_back(ir::make_int(d));
        t.push_back(te::placeholder(shape, in[k].dtype, "in" + std::to_string(k)));
    }
    Tensor y = op(t);
    return {const_shape(y), y.dtype()};
}

// The OpDef schedule (CPU or GPU) of an operator whose topi schedule takes only (s, op, out).
template <void (*F)(Schedule&, const Tensor&, const Tensor&)>
void schedule_of(Schedule& s, const Tensor& op, const Tensor& out, const std::vector<Tensor>&, const Attrs&) {
    F(s, op, out);
}

// The input type of the same output: element-wise ops.
inline TensorType same_type(const std::vector<TensorType>& in, const Attrs&) { return in[0]; }

}  // namespace weft::graph::ops
