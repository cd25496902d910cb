// topi: data movement and type operators — reshape, flatten, transpose, concat, slice, pad,
// squeeze, unsqueeze, gather, where, cast — with ONNX's semantics. Every result is injective
// (each output element reads some input elements, computes nothing else): schedule it with
// schedule_injective (injective.hpp), or inline it into a consumer.
//
// Axes may be negative (counting from the end, -1 the last). transpose, where and cast take
// symbolic shapes too; the others need constant ones. A result must have at least one
// dimension and no dimension of extent 0.
//
// The *_shape functions give an operator's output shape from constant input shapes, with the
// same checks (and messages) as the compute: the graph layer's type inference uses them.
#pragma once
#include <cstdint>
#include <vector>

#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"

namespace weft::topi {

// x's elements in row-major order, read as `shape`. One entry may be -1 (inferred from the
// others); 0 copies the input's extent at that position (ONNX's default, allowzero = 0).
Tensor reshape(const Tensor& x, const std::vector<int64_t>& shape);
std::vector<int64_t> reshape_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& shape);
// The same to a shape given as expressions (extents that are symbols, `n * 64`): the element
// count must agree, which the caller guarantees (graph::build's symbolic dimensions).
Tensor reshape_to(const Tensor& x, const std::vector<Expr>& shape);

// A 2-d view: [product of the dimensions before axis, product of the rest]; axis in
// [-rank, rank] (0 gives [1, size]).
Tensor flatten(const Tensor& x, int64_t axis = 1);
std::vector<int64_t> flatten_shape(const std::vector<int64_t>& in, int64_t axis);

// out dimension d is x's dimension perm[d]; an empty perm reverses the dimensions.
Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm = {});
// perm checked (a permutation of 0..rank-1, negative entries allowed) and made
// non-negative; the reverse order when perm is empty.
std::vector<int64_t> transpose_perm(size_t rank, const std::vector<int64_t>& perm);

// The inputs joined along `axis`; every other dimension and the dtypes must match. Past 16
// inputs, a balanced tree of tests over chains of 16 selects: n pieces cost O(n) to build
// and O(log n) per element.
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);
std::vector<int64_t> concat_shape(const std::vector<std::vector<int64_t>>& in, int64_t axis);

// x repeated repeats[d] times along each dimension d (ONNX Tile): out[i] = x[i % shape].
Tensor tile(const Tensor& x, const std::vector<int64_t>& repeats);
std::vector<int64_t> tile_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& repeats);

// ONNX Slice: for each listed axis (all of them, in order, when `axes` is empty) the elements
// start, start + step, ... before end. Negative starts and ends count from the end; both are
// clamped to the dimension (an end past it, e.g. INT64_MAX, means "to the end"; with a
// negative step, INT64_MIN means "to the front"). steps default to 1 and must not be 0.
Tensor slice(const Tensor& x, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
             const std::vector<int64_t>& axes = {}, const std::vector<int64_t>& steps = {});
// What a slice reads along one dimension: start, start + step, ..., `extent` elements.
struct SliceRange {
    int64_t start = 0, step = 1, extent = 0;
};
// One range per dimension of `in` (unsliced dimensions: all of it).
std::vector<SliceRange> slice_ranges(const std::vector<int64_t>& in, const std::vector<int64_t>& starts,
                                     const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                                     const std::vector<int64_t>& steps);

// Padding: pads in ONNX's layout {before_0, ..., before_{r-1}, after_0, ..., after_{r-1}}; a
// negative pad crops. The new elements are `value` (PadMode::Constant), or x's mirrored
// about its edge without repeating it (Reflect: 1 2 3 -> 3 2 1 2 3 2 1), its edge repeated
// (Edge: 1 1 1 2 3 3 3), or x repeated (Wrap: 2 3 1 2 3 1 2), as numpy.pad and ONNX Pad.
enum class PadMode { Constant, Reflect, Edge, Wrap };
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, double value = 0.0, PadMode mode = PadMode::Constant);
// "constant", "reflect", "edge", "wrap" (weft::Error for anything else).
PadMode pad_mode(const std::string& name);
std::vector<int64_t> pad_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& pads);

// Removes the listed dimensions, each of extent 1 (every dimension of extent 1 when axes is
// empty).
Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes = {});
std::vector<int64_t> squeeze_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& axes);

// Inserts dimensions of extent 1 at `axes`, positions in the result (of rank
// rank + axes.size(), so negative ones count from its end).
Tensor unsqueeze(const Tensor& x, const std::vector<int64_t>& axes);
std::vector<int64_t> unsqueeze_shape(const std::vector<int64_t>& in, const std::vector<int64_t>& axes);

// ONNX Gather: out[i.., j.., k..] = data[i.., indices[j..], k..] with the j dimensions those of
// `indices` (int32 or int64) replacing data's dimension `axis`. A negative index counts from
// the end; an index still outside [0, extent) is clamped to it, so no read leaves the buffer.
Tensor gather(const Tensor& data, const Tensor& indices, int64_t axis = 0);
std::vector<int64_t> gather_shape(const std::vector<int64_t>& data, const std::vector<int64_t>& indices,
                                  int64_t axis);

// ONNX GatherElements: out has the shape of `indices` (int32 or int64, the rank of data, each
// other dimension at most data's), out[i] = data[i with its dimension `axis` replaced by
// indices[i]]. Negative indices count from the end, others outside the extent are clamped.
Tensor gather_elements(const Tensor& data, const Tensor& indices, int64_t axis = 0);

// ONNX GatherND: indices [..., k] (int32 or int64) pick slices data[b..., idx_0, ..., idx_{k-1}, :]
// where the first `batch_dims` dimensions of data and indices are shared; the output is
// indices.shape[:-1] + data.shape[batch_dims + k:]. Negative indices count from the end, others
// outside the extent are clamped.
Tensor gather_nd(const Tensor& data, const Tensor& indices, int64_t batch_dims = 0);
std::vector<int64_t> gather_nd_shape(const std::vector<int64_t>& data, const std::vector<int64_t>& indices,
                                     int64_t batch_dims);

// ONNX ScatterElements: data with updates (the shape of indices, which has data's rank) written
// at out[i with dimension `axis` replaced by indices[i]]. `reduction` "none" keeps the last
// update aimed at an element; "add", "mul", "max", "min" combine all of them with the data.
// Each output element searches the indices along the axis (cost: data x indices' extent).
Tensor scatter_elements(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis = 0,
                        const std::string& reduction = "none");
// ONNX ScatterND: indices [..., k] aim slices updates[...] at data[idx_0, ..., idx_{k-1}, :];
// reductions as scatter_elements (cost: data x the indices' leading elements).
Tensor scatter_nd(const Tensor& data, const Tensor& indices, const Tensor& updates,
                  const std::string& reduction = "none");
// ONNX TensorScatter (a KV cache's update): past [B, ..., S, ...] with update [B, ..., U, ...]
// (U <= S along `axis`, the same elsewhere) written along `axis` (not 0) from position
// write_indices[b] (int64 [B]; an undefined Tensor(): 0) of each batch entry b; `circular`
// wraps the positions modulo S, else positions past S are not written.
Tensor tensor_scatter(const Tensor& past, const Tensor& update, const Tensor& write_indices, int64_t axis = -2,
                      bool circular = false);

// The running sum of x along `axis` (ONNX CumSum): element i holds x[0] + ... + x[i], or
// with `exclusive` x[0] + ... + x[i - 1], and with `reverse` the sums run from the end.
Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive = false, bool reverse = false);
// Running products, likewise (an exclusive one starts from 1).
Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive = false, bool reverse = false);

// cond ? a : b, element by element, the three broadcast together (numpy rules); cond is
// bool, a and b have the same dtype.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

// x converted to dtype: float -> int truncates toward zero (a value outside the integer type's
// range, or NaN, gives an undefined result), anything -> bool is x != 0, bool -> number is 0
// or 1.
Tensor cast(const Tensor& x, DataType dtype);
// x's bits read as dtype, of the same width (ONNX BitCast); a bool is one byte (0 or 1).
Tensor bitcast(const Tensor& x, DataType dtype);

}  // namespace weft::topi
