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
    // linear and cubic, where a dimension shrinks (scale < 1): the kernel stretched by 1 / scale
    // (more taps, each weight at distance * scale) and the weights normalized, as ONNX's
    // Resize antialias (PIL's and torchvision's antialiased resize).
    bool antialias = false;
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
// resize's checks that need the shapes: an antialiased shrink that would read more than 4096
// input elements per output is refused.
void check_resize_shapes(const std::vector<int64_t>& in, const std::vector<int64_t>& out, const ResizeParams& params);

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

// ONNX RoiAlign (Mask R-CNN's): each region of interest of x [N, C, H, W] (float) cut into
// output_height x output_width bins, each bin the average (or mode "max": the largest weighted
// corner of any sample, ONNX's rule) of a grid of bilinear samples. rois [R, 4] are (x1, y1,
// x2, y2) in x's dtype, times spatial_scale; batch_indices [R] (integers, clamped to [0, N))
// name each region's image; the result is [R, C, output_height, output_width]. A bin takes
// sampling_ratio x sampling_ratio samples, or with sampling_ratio 0 ceil(bin extent) along each
// axis, per region (the loops' extents come from the data), at most roi_align_max_grid of
// them: a region that needs more (one spanning more than the map) is an error at run time
// where the ONNX importer builds it (roi_align_exceeds).
struct RoiAlignParams {
    int64_t output_height = 1, output_width = 1;
    int64_t sampling_ratio = 0;
    double spatial_scale = 1.0;
    bool half_pixel = true;  // coordinate_transformation_mode half_pixel; false: output_half_pixel
    bool max = false;        // mode "max" instead of "avg"
};
Tensor roi_align(const Tensor& x, const Tensor& rois, const Tensor& batch_indices, const RoiAlignParams& params = {});
// The most samples per bin along an axis of `extent` cut into `bins` with sampling_ratio 0:
// enough for any region inside the map and a bin beyond it.
inline int64_t roi_align_max_grid(int64_t extent, int64_t bins) { return (extent + bins) / bins + 1; }
// bool [1]: whether any region needs more samples than roi_align_max_grid (sampling_ratio 0).
Tensor roi_align_exceeds(const Tensor& x, const Tensor& rois, const RoiAlignParams& params = {});
// Parallel over (region, channel); a bin's samples summed at the element that divides them.
void schedule_roi_align(Schedule& s, const Tensor& op, const Tensor& out);

}  // namespace weft::topi
