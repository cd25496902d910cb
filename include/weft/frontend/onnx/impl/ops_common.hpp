// The ONNX importer's converters, shared pieces: axis and shape arithmetic and the small
// node patterns (reshape, broadcast to a shape) the converters of ops_*.hpp build on.
#pragma once
#include <algorithm>
#include <cmath>
#include <numeric>

#include "weft/frontend/onnx/impl/context.hpp"
#include "weft/graph/impl/op_helpers.hpp"  // broadcast_shapes

namespace weft::onnx::detail {

using graph::Attrs;

inline std::vector<int64_t> iota_vec(int64_t from, int64_t to) {
    std::vector<int64_t> v;
    for (int64_t k = from; k < to; ++k) v.push_back(k);
    return v;
}

inline int64_t norm_axis(int64_t axis, int64_t rank, const char* what = "axis") {
    if (axis < -rank || axis >= rank)
        malformed(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    return axis < 0 ? axis + rank : axis;
}

inline int64_t product(const std::vector<int64_t>& v, size_t from = 0, size_t to = size_t(-1)) {
    int64_t p = 1;
    for (size_t k = from; k < std::min(to, v.size()); ++k) p *= v[k];
    return p;
}

inline Value reshape(Ctx& c, Value x, std::vector<int64_t> shape, std::string name = "") {
    if (c.shape(x) == shape && name.empty()) return x;
    return c.add("reshape", {x}, {{"shape", shape}}, std::move(name));
}

// v under the name `name` (an ONNX output's): a scalar stays one.
inline Value renamed(Ctx& c, Value v, std::string name) {
    Value r = reshape(c, v, c.shape(v), std::move(name));
    return c.is_scalar(v) ? c.mark_scalar(r) : r;
}

// parts (of one shape) stacked along a new axis `axis` of rank + 1 (an ONNX scalar counts as
// rank 0), named `name`.
inline Value stack(Ctx& c, const std::vector<Value>& parts, int64_t axis, std::string name) {
    const bool scalar = c.is_scalar(parts.at(0));
    const int64_t a = norm_axis(axis, (scalar ? 0 : c.rank(parts[0])) + 1);
    std::vector<Value> rows;
    for (Value p : parts) {
        // (A part of another rank took the new axis past its shape's end: a heap overflow.)
        if (c.is_scalar(p) != scalar || c.shape(p) != c.shape(parts[0]))
            malformed("the tensors stacked along a new axis must have one shape, got " + graph::shape_str(c.shape(parts[0])) +
                      " and " + graph::shape_str(c.shape(p)));
        std::vector<int64_t> s = scalar ? std::vector<int64_t>{} : c.shape(p);
        s.insert(s.begin() + a, 1);
        rows.push_back(reshape(c, p, s));
    }
    return rows.size() == 1 ? reshape(c, rows[0], c.shape(rows[0]), std::move(name)) : c.g.concat(rows, a, std::move(name));
}

// x broadcast to `shape` (numpy rules): where(true, x, x) broadcasts for every dtype.
inline Value expand_to(Ctx& c, Value x, const std::vector<int64_t>& shape, std::string name = "") {
    checked_elements(shape, c.limit, "the broadcast shape");
    Value t = c.constant(filled_buffer(DataType::bool_(), shape, 1), "true");
    return c.add("where", {t, x, x}, {}, std::move(name));
}

}  // namespace weft::onnx::detail
