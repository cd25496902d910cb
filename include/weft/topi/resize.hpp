// topi: Resize (ONNX Resize and Upsample, TVM's topi.image.resize): nearest, linear and cubic
// interpolation over any dimensions, with ONNX's coordinate transformation modes.
#pragma once
#include <string>
#include <vector>

#include "weft/te/compute.hpp"

namespace weft::topi {

struct ResizeParams {
    // "nearest", "linear" (N-linear over the resized dimensions) or "cubic".
    std::string mode = "nearest";
    // How an output index maps to an input coordinate: "half_pixel", "half_pixel_symmetric"
    // (opset 19: the input's centre on the output's where the size was rounded), "pytorch_half_pixel",
    // "align_corners", "asymmetric", "tf_half_pixel_for_nearest" (opset 11's
    // "tf_half_pixel_for_nn"), "tf_crop_and_resize".
    std::string coordinate_transformation_mode = "half_pixel";
    // How nearest rounds a coordinate: "round_prefer_floor", "round_prefer_ceil", "floor", "ceil".
    std::string nearest_mode = "round_prefer_floor";
    double cubic_coeff_a = -0.75;
    bool exclude_outside = false;       // cubic: taps outside the input get weight 0, the rest renormalized
    double extrapolation_value = 0.0;   // tf_crop_and_resize: outputs whose coordinate leaves the input
    // Per dimension: the scale (output / input) and, for tf_crop_and_resize, the region of
    // interest start and end as fractions of the input (empty: 0 and 1).
    std::vector<double> scales;
    std::vector<double> roi_start, roi_end;
};

// x resized to `out_shape` (same rank). A dimension whose extent and coordinates do not
// change is read as it is; float x (the weights are computed in float64, as ONNX's reference
// does, and applied in x's type). weft::Error for an unknown mode or a bad shape.
Tensor resize(const Tensor& x, const std::vector<int64_t>& out_shape, const ResizeParams& params);
// resize's checks of the modes and numbers alone (weft::Error naming the bad one).
void check_resize_params(const ResizeParams& params);

// ONNX GridSample (PyTorch's grid_sample): x [N, C, D1..Dk] sampled at the normalized
// coordinates of grid [N, O1..Om, k] (in [-1, 1], the last entry for D1's... first axis last:
// (x, y[, z]) as the grid gives them), giving [N, C, O1..Om]. `mode` "nearest" (halfway to
// even), "linear" or "cubic" (Keys, a = -0.75); `padding_mode` "zeros", "border" or
// "reflection"; `align_corners` maps -1 and 1 to the corner pixels' centres (else their
// outer edges).
struct GridSampleParams {
    std::string mode = "linear";
    std::string padding_mode = "zeros";
    bool align_corners = false;
};
Tensor grid_sample(const Tensor& x, const Tensor& grid, const GridSampleParams& params = {});

}  // namespace weft::topi
