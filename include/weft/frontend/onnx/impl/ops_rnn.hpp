// The ONNX importer's recurrent layers: RNN, GRU and LSTM: the input projection of every step
// in one matmul, then per direction one `recurrent` node (topi::recurrent: a scan whose
// steps compute the recurrent product and the gates, one kernel). Directions forward, reverse and
// bidirectional; layout 0 and 1; initial states; LSTM's peepholes and input_forget; GRU's
// linear_before_reset; clip; the activations ONNX lists that are element-wise compositions.
// sequence_lens (a constant or an input): each sequence's steps, zeros in Y past them.
#pragma once
#include "weft/frontend/onnx/impl/ops_elementwise.hpp"
#include "weft/topi/recurrent.hpp"

namespace weft::onnx::detail {

namespace rnn_detail {

// Entry d of the first axis of v, that axis dropped: [D, a, b] -> [a, b] (or [D, a] -> [a]).
inline Value entry(Ctx& c, Value v, int64_t d) {
    Value s = c.add("slice", {v}, {{"starts", std::vector<int64_t>{d}}, {"ends", std::vector<int64_t>{d + 1}},
                                   {"axes", std::vector<int64_t>{0}}});
    std::vector<int64_t> shape(c.shape(s).begin() + 1, c.shape(s).end());
    return reshape(c, s, shape);
}

}  // namespace rnn_detail

// kind: "RNN" (1 gate), "GRU" (3: z, r, h) or "LSTM" (4: i, o, f, c).
inline std::vector<Value> convert_rnn(Ctx& c, const std::string& kind) {
    using namespace rnn_detail;
    const int64_t G = kind == "RNN" ? 1 : kind == "GRU" ? 3 : 4;
    Value X = c.in(0), W = c.in(1), R = c.in(2);
    if (!c.dtype(X).is_float()) unsupported(kind + " on " + c.dtype(X).str());
    if (c.rank(X) != 3 || c.rank(W) != 3 || c.rank(R) != 3) malformed("X, W and R must be 3-D");
    const DataType t = c.dtype(X);
    const int64_t layout = c.i("layout", 0);
    if (layout == 1) X = c.g.transpose(X, {1, 0, 2}, c.fresh("time_major"));
    const std::vector<int64_t> xs = c.shape(X);
    const int64_t T = xs[0], N = xs[1], I = xs[2];
    const int64_t H = c.i("hidden_size", c.shape(R)[2]);
    const std::string direction = c.s("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
        malformed("direction '" + direction + "' is none of forward, reverse, bidirectional");
    const int64_t D = direction == "bidirectional" ? 2 : 1;
    if (c.shape(W) != std::vector<int64_t>{D, G * H, I} || c.shape(R) != std::vector<int64_t>{D, G * H, H})
        malformed("W " + graph::shape_str(c.shape(W)) + " or R " + graph::shape_str(c.shape(R)) + " does not fit " +
                  std::to_string(D) + " direction(s), hidden size " + std::to_string(H) + " and input size " +
                  std::to_string(I));
    // Per-sequence lengths, a constant or an input of the model (each clamped to [0, T]).
    std::optional<Value> lens;
    if (c.has(4) && !c.is_empty(4)) {
        lens = c.in(4);
        if (c.shape(*lens) != std::vector<int64_t>{N} || !c.dtype(*lens).is_int())
            malformed("sequence_lens must be integers [" + std::to_string(N) + "], got " + c.type(*lens).str());
    }
    // The activations: per direction, f (and g, h); ONNX's defaults.
    const size_t per_dir = kind == "RNN" ? 1 : kind == "GRU" ? 2 : 3;
    std::vector<std::string> names;
    if (c.has_attr("activations")) {
        for (const auto& s : c.typed("activations", pb::AttributeProto::STRINGS).strings()) names.push_back(s);
    } else {
        std::vector<std::string> d = kind == "RNN"   ? std::vector<std::string>{"Tanh"}
                                     : kind == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                     : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
        for (int64_t k = 0; k < D; ++k) names.insert(names.end(), d.begin(), d.end());
    }
    if (names.size() != per_dir * size_t(D)) malformed("activations must list " + std::to_string(per_dir * size_t(D)) + " names");
    for (const std::string& name : names)
        if (!topi::is_recurrent_activation(name)) unsupported("the recurrent activation '" + name + "'");
    // alpha and beta by position in the list (topi::recurrent fills in ONNX's defaults).
    const std::vector<double> alphas = c.floats("activation_alpha"), betas = c.floats("activation_beta");
    auto direction_part = [&](const std::vector<double>& v, int64_t d) {
        const size_t from = std::min(v.size(), size_t(d) * per_dir), to = std::min(v.size(), size_t(d + 1) * per_dir);
        return std::vector<double>(v.begin() + long(from), v.begin() + long(to));
    };
    const double clip = c.f("clip", 0.0);
    const bool linear_before_reset = kind == "GRU" && c.i("linear_before_reset", 0) != 0;
    const bool input_forget = kind == "LSTM" && c.i("input_forget", 0) != 0;

    Value x2 = reshape(c, X, {T * N, I});
    std::vector<Value> ys, hs, cs;
    for (int64_t d = 0; d < D; ++d) {
        const bool backward = direction == "reverse" || d == 1;
        Value Wt = c.g.transpose(entry(c, W, d), {1, 0}, c.fresh("W_t"));  // [I, G H]
        Value Rt = c.g.transpose(entry(c, R, d), {1, 0}, c.fresh("R_t"));  // [H, G H]
        Value xw = c.g.matmul(x2, Wt, c.fresh("input_projection"));        // [T N, G H]
        std::optional<Value> wb, rb;
        if (c.has(3) && !c.is_empty(3)) {
            Value b = entry(c, c.in(3), d);  // [2 G H]
            wb = c.add("slice", {b}, {{"starts", std::vector<int64_t>{0}}, {"ends", std::vector<int64_t>{G * H}}});
            rb = c.add("slice", {b}, {{"starts", std::vector<int64_t>{G * H}}, {"ends", std::vector<int64_t>{2 * G * H}}});
            xw = c.add("add", {xw, *wb});
        }
        // An initial state: [D, N, H], or [N, D, H] with layout 1.
        auto initial = [&](size_t k, const char* what) {
            if (!c.has(k) || c.is_empty(k)) return c.constant(filled_buffer(t, {N, H}, 0), what);
            Value v = c.in(k);
            if (layout == 1) v = c.g.transpose(v, {1, 0, 2}, c.fresh(std::string(what) + "_time_major"));
            return entry(c, v, d);
        };
        Value h = initial(5, "h0");
        graph::Attrs attrs{{"kind", kind}, {"clip", clip},
                           {"linear_before_reset", int64_t(linear_before_reset)}, {"input_forget", int64_t(input_forget)},
                           {"reverse", int64_t(backward)}};
        std::string list;
        for (size_t k = 0; k < per_dir; ++k) list += (k ? "," : "") + names[size_t(d) * per_dir + k];
        attrs.set("activations", list).set("alphas", direction_part(alphas, d)).set("betas", direction_part(betas, d));
        std::vector<Value> ins{xw, Rt, rb ? *rb : c.constant(filled_buffer(t, {G * H}, 0), "no_recurrent_bias"), h};
        if (kind == "LSTM") {
            ins.push_back(initial(6, "c0"));
            ins.push_back(c.has(7) && !c.is_empty(7) ? entry(c, c.in(7), d) : c.constant(filled_buffer(t, {3 * H}, 0), "no_peepholes"));
        }
        if (lens) ins.push_back(*lens);
        Value states = c.add("recurrent", ins, attrs);  // [T + 1, S, N, H]: each input's states in time order, then the last
        auto row = [&](int64_t from, int64_t to, int64_t which) {
            return c.g.slice(states, {from, which}, {to, which + 1}, {0, 1}, {}, c.fresh("states"));
        };
        ys.push_back(row(0, T, 0));  // [T, 1, N, H]
        hs.push_back(reshape(c, row(T, T + 1, 0), {1, N, H}));
        if (kind == "LSTM") cs.push_back(reshape(c, row(T, T + 1, 1), {1, N, H}));
    }
    Value y = D == 1 ? ys[0] : c.g.concat(ys, 1, c.fresh("Y_dirs"));  // [T, D, N, H]
    if (layout == 1) y = c.g.transpose(y, {2, 0, 1, 3}, c.fresh("batch_major"));
    std::vector<Value> out{reshape(c, y, c.shape(y), c.wants(0) ? c.out(0) : c.fresh("Y"))};
    Value yh = D == 1 ? hs[0] : c.g.concat(hs, 0, c.fresh("Y_h_dirs"));
    if (layout == 1) yh = c.g.transpose(yh, {1, 0, 2}, c.fresh("Y_h_batch_major"));
    out.push_back(reshape(c, yh, c.shape(yh), c.wants(1) ? c.out(1) : c.fresh("Y_h")));
    if (kind == "LSTM") {
        Value yc = D == 1 ? cs[0] : c.g.concat(cs, 0, c.fresh("Y_c_dirs"));
        if (layout == 1) yc = c.g.transpose(yc, {1, 0, 2}, c.fresh("Y_c_batch_major"));
        out.push_back(reshape(c, yc, c.shape(yc), c.wants(2) ? c.out(2) : c.fresh("Y_c")));
    }
    return out;
}

}  // namespace weft::onnx::detail
