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

// x broadcast to `shape` (numpy rules): where(true, x, x) broadcasts for every dtype.
inline Value expand_to(Ctx& c, Value x, const std::vector<int64_t>& shape, std::string name = "") {
    checked_elements(shape, c.limit, "the broadcast shape");
    Value t = c.constant(filled_buffer(DataType::bool_(), shape, 1), "true");
    return c.add("where", {t, x, x}, {}, std::move(name));
}

}  // namespace weft::onnx::detail
