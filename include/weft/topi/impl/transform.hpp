// Definitions of topi/transform.hpp: shape functions (constant shapes, checked) and the
// computes built on them. Every read is in bounds by construction: padded and concatenated
// reads load at a clamped position and select. The gathers and cumsum: impl/indexing.hpp.
#pragma once
#include <algorithm>
#include <functional>
#include <numeric>

#include "weft/topi/broadcast.hpp"
#include "weft/topi/impl/nn_detail.hpp"
#include "weft/topi/transform.hpp"

namespace weft::topi {

namespace transform_detail {

// "[2, 3, 4]": how these messages show shapes and integer lists (as the graph layer's do).
inline std::string shape_string(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

// The product of v[from, to) (to clamped to v's size). Over iterators: GCC 12 warned that the
// index loop could overrun (-Waggressive-loop-optimizations) when `to` is SIZE_MAX.
inline int64_t product(const std::vector<int64_t>& v, size_t from = 0, size_t to = SIZE_MAX) {
    const size_t end = std::min(to, v.size());
    if (from >= end) return 1;
    return std::accumulate(v.begin() + std::ptrdiff_t(from), v.begin() + std::ptrdiff_t(end), int64_t(1),
                           std::multiplies<>());
}

// The tensor's shape as integers; a symbolic one is an error naming the operator.
inline std::vector<int64_t> const_shape(const Tensor& x, const std::string& op, const char* what = "input") {
    nn_detail::check_defined(x, op, what);
    std::vector<int64_t> r;
    for (const Expr& e : x.shape()) {
        int64_t v = 0;
        if (!nn_detail::const_extent(e, &v)) {
            std::ostringstream os;
            os << op << ": the " << what << " '" << x.name() << "' has a symbolic shape (dimension " << r.size()
               << " is " << e << "); " << op << " needs constant shapes";
            ::weft::detail::throw_user_error(os.str());
        }
        r.push_back(v);
    }
    return r;
}

// A result shape must be something a compute can produce.
inline void check_result(const std::vector<int64_t>& shape, const std::string& op) {
    WEFT_CHECK(!shape.empty(), op, ": the result would have no dimensions");
    for (size_t d = 0; d < shape.size(); ++d)
        WEFT_CHECK(shape[d] > 0, op, ": the result ", shape_string(shape), " would have extent ", shape[d],
                   " in dimension ", d);
}

// `axis` in [-rank, rank) (or [-rank, rank] with `inclusive`) made non-negative.
inline size_t axis_index(int64_t axis, size_t rank, const std::string& op, bool inclusive = false) {
    int64_t r = int64_t(rank), hi = inclusive ? r : r - 1;
    WEFT_CHECK(axis >= -r && axis <= hi, op, ": axis ", axis, " is out of range for a ", r,
               "-dimensional tensor (use ", -r, "..", hi, ")");
    return size_t(axis < 0 ? axis + r : axis);
}

// Marks each listed axis (normalized) in a rank-sized mask; an axis listed twice is an error.
inline std::vector<bool> axis_mask(const std::vector<int64_t>& axes, size_t rank, const std::string& op) {
    std::vector<bool> mask(rank, false);
    for (int64_t a : axes) {
        size_t d = axis_index(a, rank, op);
        WEFT_CHECK(!mask[d], op, ": axis ", a, " is listed twice (as dimension ", d, ")");
        mask[d] = true;
    }
    return mask;
}

inline std::vector<Expr> exprs(const std::vector<int64_t>& v) {
    std::vector<Expr> r;
    for (int64_t x : v) r.push_back(make_int(x));
    return r;
}

inline Expr clamp(Expr v, int64_t lo, int64_t hi) { return ir::min(ir::max(v, make_int(lo)), make_int(hi)); }

// An extent as reshape's index map compares it: its value where every symbol takes a
// large generic value (for which way a block grows) and modulo 2^64 at two generic points
// (equal products of symbols agree at both, unequal ones practically never do).
struct GenericExtent {
    double magnitude = 1;
    uint64_t at1 = 1, at2 = 1;
    bool is_one() const { return magnitude == 1 && at1 == 1 && at2 == 1; }
    bool operator==(const GenericExtent& o) const { return at1 == o.at1 && at2 == o.at2; }
    GenericExtent& operator*=(const GenericExtent& o) {
        magnitude *= o.magnitude;
        at1 *= o.at1;
        at2 *= o.at2;
        return *this;
    }
};

inline GenericExtent generic_extent(const Expr& e) {
    int64_t c = 0;
    if (ir::as_const_int(e, &c)) return {double(c), uint64_t(c), uint64_t(c)};
    std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq> at1, at2, at_big;
    struct Vars : ir::IRVisitor {
        std::vector<Var> found;
        void visit(const Expr& x) override {
            if (!x.defined()) return;
            if (x.kind() == ir::NodeKind::Var) found.push_back(Var(x.ptr()));
            else IRVisitor::visit(x);
        }
    } vars;
    vars.visit(e);
    for (const Var& v : vars.found) {
        const uint64_t h = std::hash<std::string>{}(v->name);
        at1[v] = make_int(int64_t(1000003 + (h % 4096) * 2));
        at2[v] = make_int(int64_t(2000029 + (h / 4096 % 4096) * 2));
        at_big[v] = make_int(4096);
    }
    auto value = [&](const std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq>& m) {
        int64_t r = 0;
        WEFT_CHECK(ir::as_const_int(ir::arith::simplify(ir::substitute(e, m)), &r),
                   "reshape: an extent is not an integer expression of its symbols");
        return r;
    };
    return {double(value(at_big)), uint64_t(value(at1)), uint64_t(value(at2))};
}

// The reshape's index map. Dimensions of extent 1 are dropped (read at 0); the rest of the
// two shapes is cut into blocks of equal products (the finest such cut), so a dimension that
// only moves is read directly and only merged or split dimensions are flattened and divided
// back. Extents may be expressions of symbols (a graph's symbolic dimensions).
inline std::vector<Expr> reshape_index(const std::vector<Expr>& in, const std::vector<Expr>& out,
                                       const std::vector<Expr>& o) {
    std::vector<Expr> idx(in.size(), make_int(0));
    std::vector<size_t> ii, jj;  // the dimensions of extent other than 1
    std::vector<GenericExtent> gin, gout;
    for (const Expr& e : in) gin.push_back(generic_extent(e));
    for (const Expr& e : out) gout.push_back(generic_extent(e));
    for (size_t d = 0; d < in.size(); ++d)
        if (!gin[d].is_one()) ii.push_back(d);
    for (size_t d = 0; d < out.size(); ++d)
        if (!gout[d].is_one()) jj.push_back(d);
    size_t i = 0, j = 0;
    while (i < ii.size() && j < jj.size()) {  // equal products: both lists end together
        size_t i0 = i, j0 = j;
        GenericExtent pi = gin[ii[i++]], po = gout[jj[j++]];
        while (!(pi == po)) {
            // Products that never meet (extents from different symbols) end in one block.
            if ((pi.magnitude <= po.magnitude && i < ii.size()) || j == jj.size()) {
                WEFT_CHECK(i < ii.size(), "reshape: the input's and the output's extents do not have the same product");
                pi *= gin[ii[i++]];
            } else {
                po *= gout[jj[j++]];
            }
        }
        if (i - i0 == 1 && j - j0 == 1) {
            idx[ii[i0]] = o[jj[j0]];
            continue;
        }
        Expr flat = o[jj[j0]];
        for (size_t k = j0 + 1; k < j; ++k) flat = flat * out[jj[k]] + o[jj[k]];
        for (size_t k = i0; k < i; ++k) {
            Expr stride;  // the product of the block's later input extents
            for (size_t m = k + 1; m < i; ++m) stride = stride.defined() ? stride * in[ii[m]] : in[ii[m]];
            Expr v = stride.defined() ? flat / stride : flat;
            idx[ii[k]] = k == i0 ? v : v % in[ii[k]];
        }
    }
    return idx;
}

}  // namespace transform_detail

using namespace transform_detail;

// ---- reshape, flatten, squeeze, unsqueeze --------------------------------------------------

std::vector<int64_t> reshape_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& shape) {
    std::vector<int64_t> out = shape;
    int inferred = -1;
    int64_t known = 1;
    for (size_t d = 0; d < out.size(); ++d) {
        if (out[d] == -1) {
            WEFT_CHECK(inferred < 0, "reshape: the new shape ", shape_string(shape),
                       " has more than one -1 (at most one extent can be inferred)");
            inferred = int(d);
            continue;
        }
        if (out[d] == 0) {
            WEFT_CHECK(d < in.size(), "reshape: the new shape ", shape_string(shape), " has 0 (copy the input's extent) at ",
                       d, ", but the input ", shape_string(in), " has only ", in.size(), " dimensions");
            out[d] = in[d];
        }
        WEFT_CHECK(out[d] > 0, "reshape: the new shape ", shape_string(shape), " has extent ", out[d], " at ", d,
                   " (extents must be positive, -1 or 0)");
        // A shape from a model can hold extents up to 2^63 - 1: their product must not wrap.
        WEFT_CHECK(!__builtin_mul_overflow(known, out[d], &known), "reshape: the new shape ", shape_string(shape),
                   " has more elements than 64 bits count but the input ", shape_string(in), " has ", product(in));
    }
    const int64_t size = product(in);
    if (inferred >= 0) {
        WEFT_CHECK(size % known == 0, "reshape: cannot infer the -1 in ", shape_string(shape), ": the input ",
                   shape_string(in), " has ", size, " elements, not a multiple of ", known);
        out[size_t(inferred)] = size / known;
    }
    WEFT_CHECK(product(out) == size, "reshape: the new shape ", shape_string(shape), " has ", product(out),
               " elements but the input ", shape_string(in), " has ", size);
    check_result(out, "reshape");
    return out;
}

Tensor reshape(const Tensor& x, const std::vector<int64_t>& shape) {
    std::vector<int64_t> in = const_shape(x, "reshape"), out = reshape_shape(in, shape);
    return reshape_to(x, exprs(out));
}

Tensor reshape_to(const Tensor& x, const std::vector<Expr>& shape) {
    const std::vector<Expr> in = x.shape();
    return nn_detail::compute_nd(
        shape, [&](const std::vector<Expr>& o) { return x.at(reshape_index(in, shape, o)); }, "reshape");
}

std::vector<int64_t> flatten_shape(const std::vector<int64_t>& in, int64_t axis) {
    size_t a = axis_index(axis, in.size(), "flatten", true);
    return {product(in, 0, a), product(in, a)};
}

Tensor flatten(const Tensor& x, int64_t axis) {
    return reshape(x, flatten_shape(const_shape(x, "flatten"), axis));
}

std::vector<int64_t> squeeze_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& axes) {
    std::vector<bool> drop = axis_mask(axes, in.size(), "squeeze");
    std::vector<int64_t> out;
    for (size_t d = 0; d < in.size(); ++d) {
        if (axes.empty()) drop[d] = in[d] == 1;
        else WEFT_CHECK(!drop[d] || in[d] == 1, "squeeze: dimension ", d, " of ", shape_string(in), " has extent ",
                        in[d], ", not 1");
        if (!drop[d]) out.push_back(in[d]);
    }
    check_result(out, "squeeze");
    return out;
}

Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes) {
    return reshape(x, squeeze_shape(const_shape(x, "squeeze"), axes));
}

std::vector<int64_t> unsqueeze_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& axes) {
    WEFT_CHECK(!axes.empty(), "unsqueeze: no axes given");
    std::vector<bool> insert = axis_mask(axes, in.size() + axes.size(), "unsqueeze");
    std::vector<int64_t> out;
    size_t k = 0;
    for (size_t d = 0; d < insert.size(); ++d) out.push_back(insert[d] ? 1 : in[k++]);
    return out;
}

Tensor unsqueeze(const Tensor& x, const std::vector<int64_t>& axes) {
    return reshape(x, unsqueeze_shape(const_shape(x, "unsqueeze"), axes));
}

// ---- transpose ------------------------------------------------------------------------------

std::vector<int64_t> transpose_perm(size_t rank, const std::vector<int64_t>& perm) {
    std::vector<int64_t> p = perm;
    if (p.empty())
        for (size_t d = rank; d-- > 0;) p.push_back(int64_t(d));
    WEFT_CHECK(p.size() == rank, "transpose: perm ", shape_string(perm), " has ", perm.size(),
               " entries; the input has ", rank, " dimensions");
    std::vector<bool> seen(rank, false);
    for (int64_t& a : p) {
        WEFT_CHECK(a >= -int64_t(rank) && a < int64_t(rank), "transpose: perm ", shape_string(perm),
                   " is not a permutation of 0..", rank - 1, " (", a, " is out of range)");
        if (a < 0) a += int64_t(rank);
        WEFT_CHECK(!seen[size_t(a)], "transpose: perm ", shape_string(perm), " is not a permutation of 0..", rank - 1,
                   " (dimension ", a, " appears twice)");
        seen[size_t(a)] = true;
    }
    return p;
}

Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm) {
    nn_detail::check_defined(x, "transpose");
    std::vector<Expr> in = x.shape(), out;
    std::vector<int64_t> p = transpose_perm(in.size(), perm);
    for (int64_t a : p) out.push_back(in[size_t(a)]);
    return nn_detail::compute_nd(
        out,
        [&](const std::vector<Expr>& o) {
            std::vector<Expr> idx(in.size());
            for (size_t d = 0; d < p.size(); ++d) idx[size_t(p[d])] = o[d];
            return x.at(idx);
        },
        "transpose");
}

// ---- concat ---------------------------------------------------------------------------------

std::vector<int64_t> concat_shape(const std::vector<std::vector<int64_t>>& in, int64_t axis) {
    WEFT_CHECK(!in.empty(), "concat: no inputs");
    size_t a = axis_index(axis, in[0].size(), "concat");
    std::vector<int64_t> out = in[0];
    for (size_t k = 1; k < in.size(); ++k) {
        bool fits = in[k].size() == out.size();
        for (size_t d = 0; fits && d < out.size(); ++d) fits = d == a || in[k][d] == out[d];
        WEFT_CHECK(fits, "concat: input ", k, " has shape ", shape_string(in[k]), " but input 0 has ",
                   shape_string(in[0]), "; along axis ", a, " they may differ, elsewhere they must match");
        out[a] += in[k][a];
    }
    return out;
}

namespace transform_detail {
// Pieces one chain of selects reads (each element evaluates every piece's load in it): a
// concat of more is a balanced tree of if_then_else over chunks of this many, so that n
// pieces cost O(n) to build, O(log n) deep, and O(log n) tests per element.
inline constexpr size_t kConcatFanIn = 16;
}  // namespace transform_detail

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
    WEFT_CHECK(!xs.empty(), "concat: no inputs");
    std::vector<std::vector<int64_t>> shapes;
    for (size_t k = 0; k < xs.size(); ++k) {
        shapes.push_back(const_shape(xs[k], "concat"));
        WEFT_CHECK(xs[k].dtype() == xs[0].dtype(), "concat: input ", k, " '", xs[k].name(), "' has dtype ",
                   xs[k].dtype().str(), " but input 0 '", xs[0].name(), "' has ", xs[0].dtype().str());
    }
    std::vector<int64_t> out = concat_shape(shapes, axis);
    size_t a = axis_index(axis, out.size(), "concat");
    if (xs.size() == 1) return nn_detail::compute_nd(exprs(out), [&](const std::vector<Expr>& o) { return xs[0].at(o); }, "concat");
    // One tensor repeated (ONNX models spell Tile so): a tile, one read per element.
    if (std::all_of(xs.begin(), xs.end(), [&](const Tensor& x) { return x.same_as(xs[0]); })) {
        std::vector<int64_t> repeats(out.size(), 1);
        repeats[a] = int64_t(xs.size());
        return tile(xs[0], repeats);
    }
    std::vector<int64_t> begin(xs.size() + 1, 0);  // piece k covers [begin[k], begin[k + 1]) along a
    for (size_t k = 0; k < xs.size(); ++k) begin[k + 1] = begin[k] + shapes[k][a];
    // Pieces [lo, hi): a chain of selects from the last back (each earlier piece takes the
    // positions before its end), or a test that halves the range.
    std::function<Expr(const std::vector<Expr>&, size_t, size_t)> pieces = [&](const std::vector<Expr>& o, size_t lo,
                                                                                size_t hi) -> Expr {
        if (hi - lo > transform_detail::kConcatFanIn) {
            const size_t mid = lo + (hi - lo) / 2;
            return if_then_else(o[a] < make_int(begin[mid]), pieces(o, lo, mid), pieces(o, mid, hi));
        }
        Expr value;
        for (size_t k = hi; k-- > lo;) {
            std::vector<Expr> idx = o;
            idx[a] = clamp(o[a] - make_int(begin[k]), 0, shapes[k][a] - 1);
            Expr v = xs[k].at(idx);
            value = value.defined() ? ir::select(o[a] < make_int(begin[k + 1]), v, value) : v;
        }
        return value;
    };
    return nn_detail::compute_nd(exprs(out), [&](const std::vector<Expr>& o) { return pieces(o, 0, xs.size()); },
                                 "concat");
}

// ---- tile -----------------------------------------------------------------------------------

std::vector<int64_t> tile_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& repeats) {
    WEFT_CHECK(repeats.size() == in.size(), "tile: ", repeats.size(), " repeats for ", in.size(),
               " dimensions; give one per dimension");
    std::vector<int64_t> out;
    for (size_t d = 0; d < in.size(); ++d) {
        WEFT_CHECK(repeats[d] >= 1, "tile: repeat ", d, " is ", repeats[d], "; repeats must be at least 1");
        int64_t extent = 0;
        WEFT_CHECK(!__builtin_mul_overflow(in[d], repeats[d], &extent), "tile: dimension ", d, " (", in[d],
                   ") repeated ", repeats[d], " times overflows");
        out.push_back(extent);
    }
    check_result(out, "tile");
    return out;
}

Tensor tile(const Tensor& x, const std::vector<int64_t>& repeats) {
    std::vector<int64_t> in = const_shape(x, "tile"), out = tile_shape(in, repeats);
    return nn_detail::compute_nd(
        exprs(out),
        [&](const std::vector<Expr>& o) {
            std::vector<Expr> idx;
            for (size_t d = 0; d < o.size(); ++d) idx.push_back(repeats[d] == 1 ? o[d] : o[d] % make_int(in[d]));
            return x.at(idx);
        },
        "tile");
}

// ---- slice ----------------------------------------------------------------------------------

std::vector<SliceRange> slice_ranges(const std::vector<int64_t>& in, const std::vector<int64_t>& starts,
                                     const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                                     const std::vector<int64_t>& steps) {
    WEFT_CHECK(starts.size() == ends.size(), "slice: ", starts.size(), " starts but ", ends.size(), " ends");
    WEFT_CHECK(axes.empty() || axes.size() == starts.size(), "slice: ", axes.size(), " axes for ", starts.size(),
               " starts");
    WEFT_CHECK(steps.empty() || steps.size() == starts.size(), "slice: ", steps.size(), " steps for ", starts.size(),
               " starts");
    WEFT_CHECK(axes.size() || starts.size() <= in.size(), "slice: ", starts.size(), " starts for a ", in.size(),
               "-dimensional input");
    std::vector<int64_t> listed = axes;
    if (listed.empty())
        for (size_t d = 0; d < starts.size(); ++d) listed.push_back(int64_t(d));
    axis_mask(listed, in.size(), "slice");  // checks range and repeats
    std::vector<SliceRange> r;
    for (int64_t n : in) r.push_back({0, 1, n});
    for (size_t k = 0; k < listed.size(); ++k) {
        size_t d = axis_index(listed[k], in.size(), "slice");
        const int64_t n = in[d], step = steps.empty() ? 1 : steps[k];
        WEFT_CHECK(step != 0, "slice: step 0 along axis ", listed[k]);
        int64_t start = starts[k], end = ends[k];
        if (start < 0) start += n;
        if (end < 0) end += n;  // no overflow: n > 0
        if (step > 0) {
            start = std::clamp<int64_t>(start, 0, n);
            end = std::clamp<int64_t>(end, 0, n);
        } else {
            start = std::clamp<int64_t>(start, 0, n - 1);
            end = std::clamp<int64_t>(end, -1, n - 1);
        }
        // ceil(distance / |step|), unsigned: a step from a model may be +-(2^63 - 1) or -2^63,
        // which the signed ceiling (distance + step - 1) and -step would overflow.
        const int64_t distance = step > 0 ? end - start : start - end;
        const uint64_t stride = step > 0 ? uint64_t(step) : 0 - uint64_t(step);
        const int64_t extent = distance > 0 ? int64_t((uint64_t(distance) - 1) / stride + 1) : 0;
        WEFT_CHECK(extent > 0, "slice: along axis ", listed[k], " (extent ", n, ") start ", starts[k], ", end ", ends[k],
                   ", step ", step, " select no element");
        r[d] = {start, step, extent};
    }
    return r;
}

Tensor slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
             const std::vector<int64_t>& axes, const std::vector<int64_t>& steps) {
    std::vector<SliceRange> r = slice_ranges(const_shape(x, "slice"), starts, ends, axes, steps);
    std::vector<int64_t> out;
    for (auto& s : r) out.push_back(s.extent);
    return nn_detail::compute_nd(
        exprs(out),
        [&](const std::vector<Expr>& o) {
            std::vector<Expr> idx;
            for (size_t d = 0; d < r.size(); ++d)
                idx.push_back(r[d].step == 1 && r[d].start == 0 ? o[d]
                                                                : make_int(r[d].start) + o[d] * make_int(r[d].step));
            return x.at(idx);
        },
        "slice");
}

// ---- pad ------------------------------------------------------------------------------------

std::vector<int64_t> pad_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& pads) {
    WEFT_CHECK(pads.size() == 2 * in.size(), "pad: ", pads.size(), " pads for a ", in.size(),
               "-dimensional input; it needs ", 2 * in.size(), " (every dimension's before, then every one's after)");
    std::vector<int64_t> out;
    for (size_t d = 0; d < in.size(); ++d) {
        int64_t extent = 0;  // pads from a model can be anything: a sum int64 cannot hold is refused
        WEFT_CHECK(!__builtin_add_overflow(in[d], pads[d], &extent) &&
                       !__builtin_add_overflow(extent, pads[d + in.size()], &extent),
                   "pad: dimension ", d, " (", in[d], ") padded by ", pads[d], " and ", pads[d + in.size()],
                   " overflows");
        out.push_back(extent);
    }
    check_result(out, "pad");
    return out;
}

PadMode pad_mode(const std::string& name) {
    if (name == "constant") return PadMode::Constant;
    if (name == "reflect") return PadMode::Reflect;
    if (name == "edge") return PadMode::Edge;
    if (name == "wrap") return PadMode::Wrap;
    WEFT_CHECK(false, "pad: mode '", name, "' is none of constant, reflect, edge, wrap");
    return PadMode::Constant;
}

namespace {
// The index of x that output index o (o - before, any integer) reads along a dimension of
// extent n in a mode other than Constant.
Expr pad_source(Expr i, int64_t n, PadMode mode) {
    if (mode == PadMode::Edge || n == 1) return clamp(i, 0, n - 1);
    if (mode == PadMode::Wrap) return i % make_int(n);  // floor semantics: in [0, n)
    const int64_t period = 2 * (n - 1);                   // Reflect: 0 1 .. n-1 .. 1, repeated
    Expr j = i % make_int(period);
    // Within [0, n) already; the clamp (a no-op) lets the read check see it.
    return clamp(ir::select(j < make_int(n), j, make_int(period) - j), 0, n - 1);
}
}  // namespace

Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, double value, PadMode mode) {
    std::vector<int64_t> in = const_shape(x, "pad"), out = pad_shape(in, pads);
    if (mode != PadMode::Constant) {
        const size_t r = in.size();
        return nn_detail::compute_nd(
            exprs(out),
            [&](const std::vector<Expr>& o) {
                std::vector<Expr> idx;
                for (size_t d = 0; d < r; ++d) {
                    const bool moves = pads[d] > 0 || pads[d + r] > 0;
                    Expr i = pads[d] == 0 ? o[d] : o[d] - make_int(pads[d]);
                    idx.push_back(moves ? pad_source(i, in[d], mode) : i);
                }
                return x.at(idx);
            },
            "pad");
    }
    Expr fill = ir::make_const(x.dtype(), value);
    const size_t r = in.size();
    return nn_detail::compute_nd(
        exprs(out),
        [&](const std::vector<Expr>& o) {
            std::vector<Expr> idx;
            Expr inside;
            for (size_t d = 0; d < r; ++d) {
                const int64_t before = pads[d], after = pads[d + r];
                Expr i = before == 0 ? o[d] : o[d] - make_int(before);
                Expr ok;
                if (before > 0) ok = i >= make_int(0);
                if (after > 0) ok = ok.defined() ? (ok && i < make_int(in[d])) : i < make_int(in[d]);
                if (ok.defined()) {
                    inside = inside.defined() ? (inside && ok) : ok;
                    i = clamp(i, 0, in[d] - 1);
                }
                idx.push_back(i);
            }
            return inside.defined() ? ir::select(inside, x.at(idx), fill) : x.at(idx);
        },
        "pad");
}

// ---- where, cast ----------------------------------------------------------------------------

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
    nn_detail::check_defined(cond, "where", "condition");
    nn_detail::check_defined(a, "where", "first value");
    nn_detail::check_defined(b, "where", "second value");
    WEFT_CHECK(cond.dtype() == DataType::bool_(), "where: the condition '", cond.name(), "' has dtype ",
               cond.dtype().str(), "; it must be bool");
    WEFT_CHECK(a.dtype() == b.dtype(), "where: '", a.name(), "' has dtype ", a.dtype().str(), " but '", b.name(),
               "' has ", b.dtype().str(), "; cast one of them first");
    std::vector<Expr> sc = cond.shape(), sa = a.shape(), sb = b.shape();
    std::vector<Expr> shape = broadcast_shape(broadcast_shape(sc, sa, "where"), sb, "where");
    return nn_detail::compute_nd(
        shape,
        [&](const std::vector<Expr>& i) {
            using nn_detail::broadcast_index;
            return ir::select(cond.at(broadcast_index(sc, shape, i)), a.at(broadcast_index(sa, shape, i)),
                              b.at(broadcast_index(sb, shape, i)));
        },
        "where");
}

Tensor cast(const Tensor& x, DataType dtype) {
    nn_detail::check_defined(x, "cast");
    WEFT_CHECK(dtype.lanes == 1 && !dtype.is_handle(), "cast: the target dtype must be a scalar number or bool, got ",
               dtype.str());
    Expr zero = ir::make_zero(x.dtype());
    return nn_detail::compute_nd(
        x.shape(),
        [&](const std::vector<Expr>& i) {
            Expr v = x.at(i);
            if (dtype == x.dtype()) return v;
            return dtype == DataType::bool_() ? Expr(v != zero) : ir::cast(dtype, v);
        },
        "cast");
}

Tensor bitcast(const Tensor& x, DataType dtype) {
    nn_detail::check_defined(x, "bitcast");
    const DataType from = x.dtype();
    auto width = [](DataType t) { return t.is_bool() ? 8 : int(t.bits); };
    WEFT_CHECK(dtype.lanes == 1 && !dtype.is_handle() && width(dtype) == width(from), "bitcast: ", from.str(), " to ",
               dtype.str(), " changes the width; bitcast keeps the bits");
    return nn_detail::compute_nd(
        x.shape(),
        [&](const std::vector<Expr>& i) {
            Expr v = x.at(i);
            if (dtype == from) return v;
            if (from.is_bool() || dtype.is_bool()) return dtype.is_bool() ? Expr(v != ir::make_zero(from)) : ir::cast(dtype, v);
            return ir::reinterpret(dtype, v);
        },
        "bitcast");
}

}  // namespace weft::topi
