// Definitions of topi/recurrent.hpp.
#pragma once
#include <algorithm>

#include "weft/ir/op.hpp"
#include "weft/topi/recurrent.hpp"

namespace weft::topi {

namespace recurrent_detail {

// The activations and their ONNX defaults of alpha and beta (used where the lists are short).
struct ActivationDefaults {
    const char* name;
    double alpha, beta;
};
inline constexpr ActivationDefaults kActivations[] = {{"Sigmoid", 1, 0},     {"Tanh", 1, 0},   {"Relu", 1, 0},
                                                      {"LeakyRelu", 0.01, 0}, {"HardSigmoid", 0.2, 0.5},
                                                      {"Affine", 1, 0},      {"Softsign", 1, 0}};

inline const ActivationDefaults* find_activation(const std::string& name) {
    for (const ActivationDefaults& a : kActivations)
        if (name == a.name) return &a;
    return nullptr;
}

inline Expr activate(const std::string& name, double alpha, double beta, Expr x) {
    const DataType t = x.type();
    auto c = [&](double v) { return ir::make_const(t, v); };
    if (name == "Sigmoid") return ir::sigmoid(x);
    if (name == "Tanh") return ir::tanh(x);
    if (name == "Relu") return ir::max(x, c(0));
    if (name == "LeakyRelu") return ir::select(x >= c(0), x, x * c(alpha));
    if (name == "HardSigmoid") return ir::min(ir::max(x * c(alpha) + c(beta), c(0)), c(1));
    if (name == "Affine") return x * c(alpha) + c(beta);
    if (name == "Softsign") return x / (ir::abs(x) + c(1));
    std::string known;
    for (const ActivationDefaults& a : kActivations) known += std::string(known.empty() ? "" : ", ") + a.name;
    ::weft::detail::throw_user_error(::weft::detail::concat("recurrent: the activation '", name, "' is not one of ", known));
}

// Activation k of the list, with ONNX's default alpha and beta where the lists are short;
// `clipped`: x is a gate's pre-activation, which clip bounds (LSTM's cell activation h is not
// clipped, as ONNX Runtime computes it).
struct Activations {
    const RecurrentParams& p;
    Expr operator()(size_t k, Expr x, bool clipped = true) const {
        const std::string& n = p.activations.at(k);
        const ActivationDefaults* d = find_activation(n);
        const double alpha = k < p.alphas.size() ? p.alphas[k] : d ? d->alpha : 1.0;
        const double beta = k < p.betas.size() ? p.betas[k] : d ? d->beta : 0.0;
        if (clipped && p.clip > 0) x = ir::min(ir::max(x, ir::make_const(x.type(), -p.clip)), ir::make_const(x.type(), p.clip));
        return activate(n, alpha, beta, x);
    }
};

inline int64_t const_dim(const Tensor& t, size_t d, const char* what) {
    int64_t v = 0;
    WEFT_CHECK(t.ndim() > int(d) && ir::as_const_int(t.shape()[d], &v), "recurrent: ", what, " '", t.name(),
               "' needs a constant dimension ", d);
    return v;
}

}  // namespace recurrent_detail

bool is_recurrent_activation(const std::string& name) { return recurrent_detail::find_activation(name) != nullptr; }

Tensor recurrent(const Tensor& xw, const Tensor& rt, const Tensor& rb, const Tensor& h0, const Tensor& c0,
                 const Tensor& p, const Tensor& lens, const RecurrentParams& params, const std::string& name) {
    using namespace recurrent_detail;
    const std::string& kind = params.kind;
    WEFT_CHECK(kind == "RNN" || kind == "GRU" || kind == "LSTM", "recurrent: kind '", kind, "' is none of RNN, GRU, LSTM");
    const int64_t G = kind == "RNN" ? 1 : kind == "GRU" ? 3 : 4;
    const size_t acts = kind == "RNN" ? 1 : kind == "GRU" ? 2 : 3;
    WEFT_CHECK(params.activations.size() == acts, "recurrent: ", kind, " takes ", acts, " activations, got ",
               params.activations.size());
    const bool lstm = kind == "LSTM";
    WEFT_CHECK((xw.ndim() == 3 || xw.ndim() == 2) && rt.ndim() == 2 && rb.ndim() == 1 && h0.ndim() == 2,
               "recurrent: xw [T, N, G H] (or [T N, G H]), rt [H, G H], "
               "rb [G H] and h0 [N, H] have ranks 3, 2, 1 and 2");
    // xw [T N, G H] (a matmul's result as it is) reads as [T, N, G H].
    const bool flat = xw.ndim() == 2;
    const int64_t N = flat ? const_dim(h0, 0, "h0") : const_dim(xw, 1, "xw"), GH = const_dim(xw, flat ? 1 : 2, "xw");
    // The number of steps may be symbolic (a graph's sequence length).
    int64_t rows = 0;
    const bool fixed_steps = ir::as_const_int(xw.shape()[0], &rows);
    WEFT_CHECK(!flat || !fixed_steps || rows % N == 0, "recurrent: xw's ", rows, " rows are no multiple of the batch ", N);
    const Expr T = ir::arith::simplify(flat ? xw.shape()[0] / ir::make_int(N) : xw.shape()[0]);
    const Expr T1 = ir::arith::simplify(T + ir::make_int(1));  // the states' rows: the initial and one per step
    const int64_t H = const_dim(rt, 0, "rt");
    WEFT_CHECK(GH == G * H && const_dim(rt, 1, "rt") == GH && const_dim(rb, 0, "rb") == GH &&
                   const_dim(h0, 0, "h0") == N && const_dim(h0, 1, "h0") == H,
               "recurrent: ", kind, " with hidden size ", H, " takes xw [T, N, ", G * H, "], rt [", H, ", ", G * H,
               "], rb [", G * H, "] and h0 [N, ", H, "]");
    if (lstm)
        WEFT_CHECK(c0.defined() && p.defined() && const_dim(c0, 0, "c0") == N && const_dim(c0, 1, "c0") == H &&
                       const_dim(p, 0, "p") == 3 * H,
                   "recurrent: LSTM takes c0 [N, ", H, "] and peepholes p [", 3 * H, "]");
    if (lens.defined())
        WEFT_CHECK(lens.ndim() == 1 && const_dim(lens, 0, "lens") == N && lens.dtype().is_int(), "recurrent: lens must be ",
                   "integers [", N, "], one length per sequence");
    const DataType t = xw.dtype();
    const int64_t S = lstm ? 2 : 1;
    // Sequence n's length, clamped into [0, T] (the reads below stay inside xw and the states).
    auto length = [&](Expr n) -> Expr {
        if (!lens.defined()) return T;
        return ir::min(ir::max(ir::cast(index_type, lens(n)), ir::make_int(0)), T);
    };
    const Activations act{params};
    const Expr one = ir::make_const(t, 1);

    Tensor state = placeholder({T1, S, N, H}, t, name + ".state");
    Tensor init = compute(
        {1, S, N, H}, [&](Expr, Expr s, Expr n, Expr j) { return lstm ? ir::select(s == 0, h0(n, j), c0(n, j)) : h0(n, j); },
        name + ".init");
    // The recurrent product of the previous h, every gate (GRU without linear_before_reset:
    // z and r only; its h gate multiplies r h instead).
    const bool reset_first = kind == "GRU" && !params.linear_before_reset;
    const int64_t cols = reset_first ? 2 * H : GH;
    IterVar k = reduce_axis(0, H, "k");
    Tensor rec = compute(
        {T1, N, cols}, [&](Expr r, Expr n, Expr g) { return te::sum(state(r - 1, 0, n, k) * rt(k, g), {k}); },
        name + ".recurrent");
    // The input step r - 1 reads: in order, or from the sequence's last input back (a step
    // past the length reads its own row, unused).
    auto input_row = [&](Expr r, Expr n) -> Expr {
        Expr step = r - 1;
        if (!params.reverse) return step;
        if (!lens.defined()) return T - ir::make_int(1) - step;
        return ir::max(ir::select(step < length(n), length(n) - 1 - step, step), ir::make_int(0));  // (>= 0 already)
    };
    auto x = [&](Expr r, Expr n, int64_t gate, Expr j) {
        return flat ? xw(input_row(r, n) * ir::make_int(N) + n, j + gate * H) : xw(input_row(r, n), n, j + gate * H);
    };
    auto hr = [&](Expr r, Expr n, int64_t gate, Expr j) { return rec(r, n, j + gate * H) + rb(j + gate * H); };
    Tensor reset_rec;
    if (reset_first) {
        Tensor reset = compute(
            {T1, N, H}, [&](Expr r, Expr n, Expr j) { return act(0, x(r, n, 1, j) + hr(r, n, 1, j)); }, name + ".reset");
        IterVar k2 = reduce_axis(0, H, "k2");
        reset_rec = compute(
            {T1, N, H},
            [&](Expr r, Expr n, Expr j) { return te::sum(reset(r, n, k2) * state(r - 1, 0, n, k2) * rt(k2, j + 2 * H), {k2}); },
            name + ".reset_recurrent");
    }
    auto step_value = [&](Expr r, Expr s, Expr n, Expr j) -> Expr {
            Expr h_prev = state(r - 1, 0, n, j);
            if (kind == "RNN") return act(0, x(r, n, 0, j) + hr(r, n, 0, j));
            if (kind == "GRU") {
                Expr z = act(0, x(r, n, 0, j) + hr(r, n, 0, j));
                Expr candidate;
                if (reset_first) {
                    candidate = x(r, n, 2, j) + reset_rec(r, n, j) + rb(j + 2 * H);
                } else {
                    Expr reset = act(0, x(r, n, 1, j) + hr(r, n, 1, j));
                    candidate = x(r, n, 2, j) + reset * hr(r, n, 2, j);
                }
                return (one - z) * act(1, candidate) + z * h_prev;
            }
            Expr c_prev = state(r - 1, 1, n, j);
            Expr i = act(0, x(r, n, 0, j) + hr(r, n, 0, j) + p(j) * c_prev);
            Expr f = params.input_forget ? one - i : act(0, x(r, n, 2, j) + hr(r, n, 2, j) + p(j + 2 * H) * c_prev);
            Expr c = f * c_prev + i * act(1, x(r, n, 3, j) + hr(r, n, 3, j));
            Expr o = act(0, x(r, n, 1, j) + hr(r, n, 1, j) + p(j + H) * c);
            return ir::select(s == 0, o * act(2, c, false), c);
    };
    // A step past the sequence's length keeps the state.
    Tensor update = compute(
        {T1, S, N, H},
        [&](Expr r, Expr s, Expr n, Expr j) {
            if (!lens.defined()) return step_value(r, s, n, j);
            return ir::select(r - 1 < length(n), step_value(r, s, n, j), state(r - 1, s, n, j));
        },
        name + ".update");
    Tensor states = scan(init, update, state, name + ".steps");
    // In time order: the step that read input t is row t + 1 (reverse: row length - t) of
    // the states; zeros past the length; the last states at row T.
    return compute(
        {T1, S, N, H},
        [&](Expr r, Expr s, Expr n, Expr j) -> Expr {
            if (!lens.defined() && !params.reverse) return states(ir::min(r + 1, T), s, n, j);
            // (The row clamped for the bounds check: a live one lies in [1, T] already.)
            Expr row = ir::min(ir::max(params.reverse ? length(n) - r : r + 1, ir::make_int(0)), T);
            Expr in_time = ir::select(r < length(n), states(row, s, n, j), ir::make_const(t, 0));
            return ir::select(r == T, states(T, s, n, j), in_time);
        },
        name);
}

void schedule_recurrent(Schedule& s, const Tensor& out, const Target& target) {
    std::vector<Tensor> inputs = out.op().input_tensors();
    auto found = std::find_if(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.op()->is_scan(); });
    WEFT_CHECK(found != inputs.end(), "schedule_recurrent: '", out.name(), "' is not topi::recurrent's result");
    const Tensor steps = *found;
    const int64_t lanes = std::max(1, target.natural_lanes(out.dtype().bits));
    auto vectorize_last = [&](const Tensor& t) {
        int64_t extent = 0;
        IterVar last = t.axis(t.ndim() - 1);
        if (!ir::as_const_int(last.dom().extent, &extent) || extent < lanes) return;
        s[t].vectorize(s[t].split(last, lanes).second);
    };
    for (const Operation& b : scan_body_ops(steps.op())) {
        Tensor t = b.output(0);
        if (t.op()->is_reduction()) {  // the products: gates innermost, the reduction around them
            s[t].reorder({t.axis(0), t.axis(1), t.reduce_axis(0), t.axis(2)});
        }
        vectorize_last(t);
    }
    vectorize_last(steps);
    vectorize_last(out);
}

}  // namespace weft::topi
