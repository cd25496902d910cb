// topi: einsum (numpy's and ONNX's Einsum) as one compute: the output indexed by its labels,
// a sum over the labels that leave (if any) of the product of the operands.
#pragma once
#include <string>
#include <vector>

#include "weft/te/compute.hpp"

namespace weft::topi {

// `equation` like "bij,bjk->bik", "ii->i" (a diagonal), "...ij,...jk" (an ellipsis for the
// leading dimensions, broadcast among the operands) or without "->" (the output: the ellipsis,
// then the labels that appear once, in alphabetical order). Letters a-z and A-Z; the operands
// share one dtype. weft::Error names the equation and what does not fit.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& inputs);
// The output shape for operands of these shapes (the same checks).
std::vector<int64_t> einsum_shape(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes);

}  // namespace weft::topi
