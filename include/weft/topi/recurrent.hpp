// topi: ONNX's recurrent layers (RNN, GRU, LSTM) as one scan over the sequence (te::scan):
// one kernel whose loop over the steps computes the recurrent product and the gates of
// each step, instead of a graph unrolled step by step.
#pragma once
#include <string>
#include <vector>

#include "weft/ir/target.hpp"
#include "weft/schedule/schedule.hpp"
#include "weft/te/compute.hpp"

namespace weft::topi {

struct RecurrentParams {
    std::string kind = "LSTM";             // "RNN" (1 gate), "GRU" (z, r, h) or "LSTM" (i, o, f, c)
    // f, and g (GRU, LSTM), and h (LSTM), by their ONNX names: Sigmoid, Tanh, Relu, LeakyRelu,
    // HardSigmoid, Affine, Softsign; alpha and beta per activation (ONNX's defaults when short).
    std::vector<std::string> activations;
    std::vector<double> alphas, betas;
    double clip = 0;                       // > 0: every pre-activation clipped to [-clip, clip]
    bool linear_before_reset = false;      // GRU: r (h R_h^T + Rb_h) instead of (r h) R_h^T + Rb_h
    bool input_forget = false;             // LSTM: f = 1 - i
    bool reverse = false;                  // the steps run from each sequence's last input to its first
};

// One direction of a layer over T steps. xw [T, N, G H] (or [T N, G H]): the input projection
// x W^T + Wb of every step (a matmul before the scan), in time order; rt [H, G H]: R transposed; rb [G H]:
// the recurrent bias; h0 [N, H]; for LSTM c0 [N, H] and the peepholes p [3 H] (i, o, f; zeros
// for none; pass undefined tensors otherwise); lens [N] (integers, each clamped to [0, T]):
// sequence n has lens[n] steps (undefined: all have T). Returns [T + 1, S, N, H] (S = 2 for
// LSTM: h, then c): row t < T the states after the step that read input t, zeros past the
// sequence's length; row T the last states (after each sequence's last step). weft::Error
// for shapes that do not fit or an activation it does not know.
Tensor recurrent(const Tensor& xw, const Tensor& rt, const Tensor& rb, const Tensor& h0, const Tensor& c0,
                 const Tensor& p, const Tensor& lens, const RecurrentParams& params,
                 const std::string& name = "recurrent");
// Whether `name` is an activation recurrent() knows (Sigmoid, Tanh, Relu, LeakyRelu,
// HardSigmoid, Affine, Softsign).
bool is_recurrent_activation(const std::string& name);
// The steps in order; in each, the recurrent products vectorized along the gates (the
// reduction outside them), the state's row vectorized along H.
void schedule_recurrent(Schedule& s, const Tensor& out, const Target& target = Target::host());

}  // namespace weft::topi
