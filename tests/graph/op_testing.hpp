// Helpers of the graph operator tests: a dense array of doubles for the naive references,
// running a graph fused and unfused, and comparing its outputs element by element.
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "weft/weft.hpp"

namespace op_testing {

using namespace weft;

// A dense row-major array of doubles: the references' data.
struct Array {
    std::vector<int64_t> shape;
    std::vector<double> v;

    int64_t size() const { return int64_t(v.size()); }
    std::vector<int64_t> strides() const {
        std::vector<int64_t> s(shape.size(), 1);
        for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
        return s;
    }
    double at(const std::vector<int64_t>& idx) const {
        auto s = strides();
        int64_t off = 0;
        for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * s[d];
        return v[size_t(off)];
    }
};

inline int64_t count(const std::vector<int64_t>& shape) {
    return std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<>());
}

// The multi-index of flat position `i` in `shape`.
inline std::vector<int64_t> unravel(int64_t i, const std::vector<int64_t>& shape) {
    std::vector<int64_t> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = i % shape[d];
        i /= shape[d];
    }
    return idx;
}

// out[i] = f(multi-index of i) over `shape`.
template <class F>
Array tabulate(const std::vector<int64_t>& shape, F f) {
    Array a{shape, {}};
    for (int64_t i = 0; i < count(shape); ++i) a.v.push_back(f(unravel(i, shape)));
    return a;
}

inline double element(const BufferRef& b, int64_t i) {
    const void* p = b.data();
    DataType t = b.dtype();
    if (t == f32) return static_cast<const float*>(p)[i];
    if (t == f64) return static_cast<const double*>(p)[i];
    if (t == i32) return static_cast<const int32_t*>(p)[i];
    if (t == i64) return double(static_cast<const int64_t*>(p)[i]);
    if (t == DataType::uint(8)) return static_cast<const uint8_t*>(p)[i];
    if (t == DataType::bool_()) return static_cast<const bool*>(p)[i] ? 1 : 0;
    FAIL("unexpected dtype ", t.str());
    return 0;
}

inline Array to_array(const BufferRef& b) {
    Array a{b.shape(), {}};
    for (int64_t i = 0; i < b.size(); ++i) a.v.push_back(element(b, i));
    return a;
}

// A compact copy that outlives the module it came from.
inline BufferRef copy_of(const BufferRef& b) {
    BufferRef c = BufferRef::allocate(b.dtype(), b.shape());
    std::memcpy(c.data(), b.data(), size_t(b.size_bytes()));
    return c;
}

inline Buffer<float> random_f32(std::vector<int64_t> shape, uint64_t seed) { return Buffer<float>::random(shape, -2.f, 2.f, seed); }

// Builds g (fused or not), feeds `inputs` in order and returns every output.
inline std::vector<BufferRef> run(const graph::Graph& g, const std::vector<BufferRef>& inputs, bool fuse = true) {
    graph::Module m = graph::build(g, Target::host(), {.fuse = fuse});
    REQUIRE(m.num_inputs() == int(inputs.size()));
    for (size_t k = 0; k < inputs.size(); ++k) m.set_input(int(k), inputs[k]);
    m.run();
    std::vector<BufferRef> out;
    for (int k = 0; k < m.num_outputs(); ++k) out.push_back(copy_of(m.get_output(k)));
    return out;
}

inline void check_equal(const BufferRef& got, const Array& want, double tol = 0) {
    REQUIRE(got.shape() == want.shape);
    int bad = 0;
    for (int64_t i = 0; i < want.size() && bad < 5; ++i) {
        double g = element(got, i), w = want.v[size_t(i)];
        // NaN where the reference has NaN, an infinity where it has that infinity.
        const bool wrong = std::isnan(w) || std::isnan(g) ? std::isnan(w) != std::isnan(g)
                           : std::isinf(w) || std::isinf(g) ? g != w
                                                            : std::abs(g - w) > tol * std::max(1.0, std::abs(w));
        if (wrong) {
            ++bad;
            CHECK_MESSAGE(false, "element ", i, ": got ", g, ", want ", w);
        }
    }
}

// One-input graph: x -> f(g, x) -> output; checked fused and unfused against `want`.
template <class F>
void check_unary(const BufferRef& xv, F f, const Array& want, double tol = 0) {
    graph::Graph g;
    graph::Value x = g.input("x", xv.shape(), xv.dtype());
    g.output(f(g, x), "y");
    for (bool fuse : {true, false}) {
        CAPTURE(fuse);
        check_equal(run(g, {xv}, fuse)[0], want, tol);
    }
}


}  // namespace op_testing
