// topi::cuda::schedule: the GPU schedule for whatever operator computed `op`.
#pragma once
#include "weft/topi/impl/cuda_common.hpp"

namespace weft::topi::cuda {

void schedule(Schedule& s, const Tensor& op, const Tensor& out) {
    nn_detail::check_defined(op, "cuda::schedule", "op");
    nn_detail::check_defined(out, "cuda::schedule", "output");
    WEFT_CHECK(op.op()->is_compute(), "cuda::schedule: '", op.name(), "' is a placeholder; there is nothing to compute");
    using detail::find_input_named;
    // The row operators, by their statistics' stage names.
    if (find_input_named(op, "softmax.max").defined()) return schedule_softmax(s, op, out);
    if (find_input_named(op, "log_softmax.max").defined()) return schedule_log_softmax(s, op, out);
    if (find_input_named(op, "layer_norm.sum").defined()) return schedule_layer_norm(s, op, out);
    Tensor red = detail::reduction_of(op);
    if (!red.defined()) return schedule_injective(s, out);
    const size_t nred = red.op()->reduce_axis.size();
    const size_t ninputs = red.op().input_tensors().size();
    // conv2d: [N, O, OH, OW] over (rc, rh, rw), reading the (padded) data and the weights.
    if (red.ndim() == 4 && nred == 3 && ninputs == 2) return schedule_conv2d_nchw(s, op, out);
    // matmul / dense / batch_matmul: one reduce axis, two operands.
    if (nred == 1 && ninputs == 2 && (red.ndim() == 2 || red.ndim() == 3)) {
        if (red.ndim() == 3) return schedule_batch_matmul(s, op, out);
        return schedule_matmul(s, op, out);
    }
    // Reductions and pooling (a window is a reduction read at non-contiguous indices).
    return schedule_reduce(s, op, out);
}

}  // namespace weft::topi::cuda
