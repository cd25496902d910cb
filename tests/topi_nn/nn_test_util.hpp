// Shared by the topi nn tests: random inputs, running an operator with its default
// schedule, index arithmetic for the naive references, and float32-fitting comparisons.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "weft/topi/topi.hpp"
#include "weft/weft.hpp"

namespace nn_test {

using namespace weft;
using Shape = std::vector<int64_t>;

inline std::vector<Expr> exprs(const Shape& s) {
    std::vector<Expr> out;
    for (int64_t d : s) out.push_back(make_int(d));
    return out;
}

inline int64_t numel(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

// Uniform in [lo, hi) with no exact zeros (a zero hides sign and scaling mistakes).
inline Buffer<float> random_buffer(const Shape& shape, unsigned seed, float lo = -2.f, float hi = 2.f) {
    Buffer<float> b(shape);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (int64_t i = 0; i < b.size(); ++i) {
        float v = 0;
        while (v == 0) v = dist(rng);
        b.data()[i] = v;
    }
    return b;
}

// Schedules `out` with `sched`, builds the kernel (inputs..., out) and runs it on `bufs`.
inline Buffer<float> run(const std::vector<Tensor>& ins, const Tensor& out, const std::function<void(Schedule&)>& sched,
                         const std::vector<Buffer<float>>& bufs, const std::vector<int64_t>& out_shape) {
    Schedule s = create_schedule(out);
    sched(s);
    std::vector<Argument> args(ins.begin(), ins.end());
    args.push_back(out);
    Kernel k = build(s, args);
    Buffer<float> y(out_shape);
    std::vector<KernelArgValue> values;
    for (auto& b : bufs) values.emplace_back(b);
    values.emplace_back(y);
    k.call(values);
    return y;
}

// Multi-index of flat position `flat` in a row-major `shape`.
inline Shape unravel(int64_t flat, const Shape& shape) {
    Shape idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        idx[d] = flat % shape[d];
        flat /= shape[d];
    }
    return idx;
}

inline int64_t ravel(const Shape& idx, const Shape& shape) {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + idx[d];
    return flat;
}

// The element of `b` (shape `in`) that numpy broadcasting reads for result index `out_idx`.
inline double broadcast_read(const Buffer<float>& b, const Shape& in, const Shape& out_idx) {
    size_t skip = out_idx.size() - in.size();
    Shape idx(in.size());
    for (size_t d = 0; d < in.size(); ++d) idx[d] = in[d] == 1 ? 0 : out_idx[skip + d];
    return b.data()[ravel(idx, in)];
}

// |got - want| <= atol + rtol |want| everywhere; reports the first bad element.
inline void check_close(const Buffer<float>& got, const std::vector<double>& want, const std::string& what,
                        double rtol = 2e-5, double atol = 1e-6) {
    REQUIRE(size_t(got.size()) == want.size());
    for (size_t i = 0; i < want.size(); ++i) {
        double g = got.data()[i], w = want[i];
        bool ok = std::abs(g - w) <= atol + rtol * std::abs(w);
        if (!ok) {
            INFO(what, ": element ", i, " is ", g, ", want ", w);
            CHECK(ok);
            return;
        }
    }
    CHECK(true);
}

// Shapes the tests draw from: primes, 1, sizes below and above the vector width.
inline const std::vector<int64_t>& odd_sizes() {
    static const std::vector<int64_t> v{1, 2, 3, 5, 7, 13, 16, 17, 31, 48, 97};
    return v;
}

inline Shape random_shape(std::mt19937& rng, int min_rank, int max_rank, int64_t max_elems = 1 << 14) {
    std::uniform_int_distribution<int> rank(min_rank, max_rank);
    std::uniform_int_distribution<size_t> pick(0, odd_sizes().size() - 1);
    for (;;) {
        Shape s(size_t(rank(rng)));
        for (auto& d : s) d = odd_sizes()[pick(rng)];
        if (numel(s) <= max_elems) return s;
    }
}

inline std::string str(const Shape& s) {
    std::string out = "{";
    for (size_t d = 0; d < s.size(); ++d) out += (d ? ", " : "") + std::to_string(s[d]);
    return out + "}";
}

// The lowered body of a schedule, for tests that inspect what the default schedules made.
inline std::string lowered(const Schedule& s, const std::vector<Argument>& args) {
    return ir::to_string(lower(s, args).body);
}

// The printed block of one stage of a schedule ("stage <name> ..." up to the next stage).
inline std::string stage_text(const Schedule& s, const std::string& name) {
    std::ostringstream os;
    os << s;
    std::string all = os.str(), head = "stage " + name + " ";
    size_t at = all.find(head);
    if (at == std::string::npos) return "";
    size_t end = all.find("\nstage ", at + 1);
    return all.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

}  // namespace nn_test
