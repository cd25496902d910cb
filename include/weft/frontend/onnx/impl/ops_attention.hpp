// The ONNX importer's transformer blocks as graph nodes. Attention (opsets 23-25): scaled
// dot-product attention with an additive or boolean mask, causal and sliding-window masks, a
// key/value cache (past_key / past_value, or nonpad_kv_seqlen), grouped-query heads and
// softcap; every output (Y, present_key, present_value, qk_matmul_output in modes 0-3).
// RotaryEmbedding (opset 23): rotary position embeddings, halves or interleaved pairs.
// CausalConvWithState (opset 27): a depthwise causal 1-D convolution carrying its state.
// LinearAttention (opset 27): a recurrent key-value state (linear, gated, delta, gated_delta
// rules), unrolled over the sequence.
#pragma once
#include <limits>

#include "weft/frontend/onnx/impl/ops_nn.hpp"

namespace weft::onnx::detail {

namespace attention_detail {

const double kNegInf = -std::numeric_limits<double>::infinity();

// [B, S, H * D] as [B, H, S, D] (the 3-D form names the head count).
inline Value heads_first(Ctx& c, Value x, int64_t heads, const char* what) {
    const std::vector<int64_t> s = c.shape(x);
    if (s.size() != 3) malformed(std::string(what) + " must be [batch, sequence, hidden], got " + graph::shape_str(s));
    if (heads <= 0 || s[2] % heads)
        malformed(std::string(what) + " has hidden size " + std::to_string(s[2]) + ", which " + std::to_string(heads) +
                  " heads do not divide");
    Value r = reshape(c, x, {s[0], s[1], heads, s[2] / heads});
    return c.g.transpose(r, {0, 2, 1, 3}, c.fresh(std::string(what) + "_heads"));
}

// [B, H, ...] with each head repeated `group` times in a row: [B, H * group, ...] (grouped-
// query attention, where one key/value head serves `group` query heads).
inline Value repeat_heads(Ctx& c, Value x, int64_t group) {
    if (group == 1) return x;
    std::vector<int64_t> s = c.shape(x), wide = s;
    wide.insert(wide.begin() + 2, group);
    Value u = c.add("unsqueeze", {x}, {{"axes", std::vector<int64_t>{2}}});
    s[1] *= group;
    return reshape(c, expand_to(c, u, wide), s);
}

// 0 where `allowed`, -inf elsewhere, in dtype t.
inline Value bias_of(Ctx& c, Value allowed, DataType t) {
    return c.g.where(allowed, c.scalar(0, t, "zero"), c.scalar(kNegInf, t, "minus_inf"), c.fresh("bias"));
}

// The keys query i may see, j <= i + offset (causal) or within the window around i + offset,
// as a bool [q, kv] (or [B, 1, q, kv] when the offset is per batch: a [B] int64 value).
inline Value position_mask(Ctx& c, int64_t q, int64_t kv, int64_t offset, std::optional<Value> batch_offset,
                           bool causal, int64_t left, int64_t right) {
    const DataType i64 = DataType::int_(64);
    std::vector<int64_t> is, js;
    for (int64_t i = 0; i < q; ++i) is.push_back(i + offset);
    for (int64_t j = 0; j < kv; ++j) js.push_back(j);
    Value i_pos = c.constant(int64_buffer(is, {q, 1}), "query_position");
    Value j_pos = c.constant(int64_buffer(js, {1, kv}), "key_position");
    if (batch_offset) i_pos = c.add("add", {i_pos, reshape(c, *batch_offset, {c.shape(*batch_offset)[0], 1, 1, 1})});
    Value diff = c.add("sub", {i_pos, j_pos});  // how far key j lies behind the query
    Value zero = c.scalar(0, i64, "zero");
    std::optional<Value> ok;
    auto both = [&](Value v) { ok = ok ? c.add("logical_and", {*ok, v}) : v; };
    if (causal) both(c.add("greater_equal", {diff, zero}));
    if (left >= 0) both(c.add("less_equal", {diff, c.scalar(double(left), i64, "left_window")}));
    if (right >= 0) both(c.add("greater_equal", {diff, c.scalar(double(-right), i64, "right_window")}));
    return *ok;
}

}  // namespace attention_detail

inline std::vector<Value> convert_attention(Ctx& c) {
    using namespace attention_detail;
    Value q = c.in(0), k = c.in(1), v = c.in(2);
    const DataType t = c.dtype(q), i64 = DataType::int_(64);
    if (!t.is_float()) malformed("Q must be floating point, got " + t.str());
    if (c.dtype(k) != t || c.dtype(v) != t) malformed("Q, K and V must have one dtype");
    const int64_t rank = c.rank(q);
    if (rank != 3 && rank != 4) malformed("Q must be 3-D or 4-D, got " + graph::shape_str(c.shape(q)));
    if (c.rank(k) != rank || c.rank(v) != rank) malformed("Q, K and V must have one rank");
    if (rank == 3) {
        q = heads_first(c, q, c.i("q_num_heads"), "Q");
        k = heads_first(c, k, c.i("kv_num_heads"), "K");
        v = heads_first(c, v, c.i("kv_num_heads"), "V");
    } else {
        c.ignore({"q_num_heads", "kv_num_heads"});
    }
    const int64_t batch = c.shape(q)[0], heads = c.shape(q)[1], seq_q = c.shape(q)[2], head_size = c.shape(q)[3];
    // Q and K each scaled by sqrt(scale), as ONNX's function does.
    const double scale = c.has_attr("scale") ? c.f("scale", 1.0) : 1.0 / std::sqrt(double(head_size));
    const double root_v = std::sqrt(scale);  // rounded to Q's type first, as ONNX's function casts it
    Value root = c.scalar(t.bits == 32 ? double(float(root_v)) : root_v, t, "scale_root");
    q = c.add("mul", {q, root});

    // The cache: past keys and values before the new ones.
    const bool has_past = c.has(4) || c.has(5);
    if (has_past && !(c.has(4) && c.has(5))) malformed("past_key and past_value go together");
    const int64_t fresh_keys = c.shape(k)[2];
    if (has_past) {  // concat checks the cache's shapes
        k = c.g.concat({c.in(4), k}, 2, c.out(1));
        v = c.g.concat({c.in(5), v}, 2, c.out(2));
    }
    const int64_t past = c.shape(k)[2] - fresh_keys;
    std::vector<Value> outs{Value{}, k, v, Value{}};
    const int64_t seq_kv = c.shape(k)[2];
    std::optional<Value> nonpad;  // [B] int64: keys valid per batch (an external cache)
    if (c.has(6)) {
        if (has_past) malformed("nonpad_kv_seqlen and a past cache do not go together");
        nonpad = c.dtype(c.in(6)) == i64 ? c.in(6) : c.g.cast(c.in(6), i64, c.fresh("nonpad64"));
    }

    // The additive bias: the mask (padded to every key), then causal and window masks.
    std::optional<Value> bias;
    if (c.has(3)) {
        Value m = c.in(3);
        const int64_t mr = c.rank(m), short_by = seq_kv - c.shape(m).back();
        if (short_by < 0) malformed("attn_mask covers more keys than there are");
        if (short_by > 0) {
            std::vector<int64_t> pads(size_t(2 * mr), 0);
            pads.back() = short_by;
            m = c.add("pad", {m}, {{"pads", pads}, {"value", c.dtype(m).is_bool() ? 0.0 : kNegInf}});
        }
        bias = c.dtype(m).is_bool() ? bias_of(c, m, t) : m;
    }
    const bool causal = c.i("is_causal", 0) != 0;
    const int64_t left = c.i("left_window_size", -1), right = c.i("right_window_size", -1);
    if (left < -1 || right < -1) malformed("a window size must be -1 or at least 0");
    if (causal || left >= 0 || right >= 0) {
        std::optional<Value> offset;
        if (nonpad) offset = c.add("sub", {*nonpad, c.scalar(double(seq_q), i64, "seq_q")});
        Value allowed = position_mask(c, seq_q, seq_kv, past, offset, causal, left, right);
        Value b = bias_of(c, allowed, t);
        bias = bias ? c.add("add", {*bias, b}) : b;
    }
    if (nonpad) {  // keys past each batch's length
        std::vector<int64_t> js;
        for (int64_t j = 0; j < seq_kv; ++j) js.push_back(j);
        Value j_pos = c.constant(int64_buffer(js, {1, 1, 1, seq_kv}), "key_position");
        Value valid = c.add("less", {j_pos, reshape(c, *nonpad, {batch, 1, 1, 1})});
        Value b = bias_of(c, valid, t);
        bias = bias ? c.add("add", {*bias, b}) : b;
    }

    // Grouped-query attention: each key/value head serves heads / kv_heads query heads.
    const int64_t kv_heads = c.shape(k)[1];
    if (kv_heads != heads) {
        if (kv_heads <= 0 || heads % kv_heads || c.shape(v)[1] != kv_heads)
            malformed(std::to_string(heads) + " query heads for " + std::to_string(kv_heads) + " key/value heads");
        k = repeat_heads(c, k, heads / kv_heads);
        v = repeat_heads(c, v, heads / kv_heads);
    }

    Value kt = c.g.transpose(c.add("mul", {k, root}), {0, 1, 3, 2}, c.fresh("k_t"));
    Value qk = matmul_of(c, q, kt, c.fresh("qk"));
    if (const double cap = c.f("softcap", 0.0); cap > 0) {
        Value capv = c.scalar(cap, t, "softcap");
        qk = c.add("mul", {c.add("tanh", {c.add("div", {qk, capv})}), capv});
    }
    Value scores = bias ? c.add("add", {qk, *bias}) : qk;
    const int64_t mode = c.i("qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3) malformed("qk_matmul_output_mode " + std::to_string(mode) + " is none of 0 to 3");
    c.ignore({"softmax_precision"});  // weft's softmax computes in the input's type, float32 at least
    Value p = c.g.softmax(scores, -1, c.fresh("probabilities"));
    if (bias) {  // a query that may see no key: zeros (its softmax would be NaN)
        Value top = c.add("max", {*bias}, {{"axes", std::vector<int64_t>{c.rank(*bias) - 1}}, {"keepdims", int64_t(1)}});
        Value none = c.add("equal", {top, c.scalar(kNegInf, t, "minus_inf")});
        p = c.g.where(none, c.scalar(0, t, "zero"), p, c.fresh("probabilities_guarded"));
    }
    Value y = matmul_of(c, p, v, rank == 3 ? c.fresh("y_heads") : c.out(0));
    if (rank == 3) {
        Value yt = c.g.transpose(y, {0, 2, 1, 3}, c.fresh("y_t"));
        y = reshape(c, yt, {batch, seq_q, heads * c.shape(v)[3]}, c.out(0));
    }
    outs[0] = y;
    if (c.wants(3)) {
        Value qk_out = mode == 3 ? p : mode == 2 ? scores : qk;
        outs[3] = reshape(c, qk_out, c.shape(qk_out), c.out(3));
    }
    if (!has_past) {  // present_key / present_value: the keys and values as given (4-D)
        if (c.wants(1)) outs[1] = reshape(c, outs[1], c.shape(outs[1]), c.out(1));
        if (c.wants(2)) outs[2] = reshape(c, outs[2], c.shape(outs[2]), c.out(2));
    }
    return outs;
}

// RotaryEmbedding: each head's first rotary_embedding_dim features rotated in pairs (the two
// halves, or neighbours when interleaved) by the angles of cos_cache / sin_cache at each
// position (position_ids picks rows of the caches; without it they are [B, S, dim / 2]).
inline std::vector<Value> convert_rotary_embedding(Ctx& c) {
    Value x = c.in(0);
    const std::vector<int64_t> s = c.shape(x);
    if (s.size() != 3 && s.size() != 4) malformed("the input must be 3-D or 4-D, got " + graph::shape_str(s));
    // As [B, S, H, D].
    Value h = s.size() == 4 ? c.g.transpose(x, {0, 2, 1, 3}, c.fresh("bshd")) : Value{};
    if (s.size() == 3) {
        const int64_t heads = c.i("num_heads", 0);
        if (heads <= 0 || s[2] % heads) malformed("num_heads must divide the hidden size " + std::to_string(s[2]));
        h = reshape(c, x, {s[0], s[1], heads, s[2] / heads});
    } else {
        c.ignore({"num_heads"});
    }
    const std::vector<int64_t> hs = c.shape(h);
    const int64_t d = hs[3], rd = c.i("rotary_embedding_dim", 0) ? c.i("rotary_embedding_dim", 0) : d;
    if (rd <= 0 || rd > d || rd % 2) malformed("rotary_embedding_dim " + std::to_string(rd) + " does not fit head size " + std::to_string(d));
    Value cosv = c.in(1), sinv = c.in(2);
    if (c.has(3)) {
        cosv = c.add("gather", {cosv, c.in(3)}, {{"axis", int64_t(0)}});
        sinv = c.add("gather", {sinv, c.in(3)}, {{"axis", int64_t(0)}});
    }
    if (c.rank(cosv) != 3 || c.shape(cosv).back() != rd / 2 || c.shape(sinv) != c.shape(cosv))
        malformed("the caches must give [batch, sequence, " + std::to_string(rd / 2) + "] angles, got " +
                  graph::shape_str(c.shape(cosv)));
    cosv = c.add("unsqueeze", {cosv}, {{"axes", std::vector<int64_t>{2}}});
    sinv = c.add("unsqueeze", {sinv}, {{"axes", std::vector<int64_t>{2}}});
    const bool interleaved = c.i("interleaved", 0) != 0;
    auto part = [&](int64_t start, int64_t end, int64_t step) { return c.g.slice(h, {start}, {end}, {3}, {step}, c.fresh("part")); };
    Value x1 = interleaved ? part(0, rd, 2) : part(0, rd / 2, 1), x2 = interleaved ? part(1, rd, 2) : part(rd / 2, rd, 1);
    Value real = c.add("sub", {c.add("mul", {cosv, x1}), c.add("mul", {sinv, x2})});
    Value imag = c.add("add", {c.add("mul", {sinv, x1}), c.add("mul", {cosv, x2})});
    Value rotated;
    if (interleaved) {  // (real, imag) pairs side by side
        auto last = [&](Value v) { return c.add("unsqueeze", {v}, {{"axes", std::vector<int64_t>{4}}}); };
        rotated = reshape(c, c.g.concat({last(real), last(imag)}, 4, c.fresh("pairs")), {hs[0], hs[1], hs[2], rd});
    } else {
        rotated = c.g.concat({real, imag}, 3, c.fresh("rotated"));
    }
    Value y = rd < d ? c.g.concat({rotated, part(rd, d, 1)}, 3, c.fresh("joined")) : rotated;
    if (s.size() == 3) return {reshape(c, y, s, c.out())};
    return {c.g.transpose(y, {0, 2, 1, 3}, c.out())};
}

// CausalConvWithState: the depthwise convolution (weight [C, 1, k]) of the input [B, C, L]
// behind its past state ([B, C, k - 1], zeros without one), plus bias, then SiLU if asked;
// present_state is the last k - 1 steps of that padded input.
inline std::vector<Value> convert_causal_conv_with_state(Ctx& c) {
    Value x = c.in(0), w = c.in(1);
    const std::vector<int64_t> xs = c.shape(x), ws = c.shape(w);
    if (xs.size() != 3 || ws.size() != 3 || ws[0] != xs[1] || ws[1] != 1)
        malformed("the input [B, C, L] " + graph::shape_str(xs) + " needs a weight [C, 1, k], got " + graph::shape_str(ws));
    const int64_t k = ws[2];
    const std::string act = c.s("activation", "none");
    if (act != "none" && act != "silu" && act != "swish") malformed("activation '" + act + "' is none of none, silu, swish");
    Value padded = x;
    if (k > 1) {
        Value past = c.has(3) ? c.in(3) : c.constant(filled_buffer(c.dtype(x), {xs[0], xs[1], k - 1}, 0), "no_past");
        padded = c.g.concat({past, x}, 2, c.fresh("padded"));
    }
    auto row = [&](Value v) { return c.add("unsqueeze", {v}, {{"axes", std::vector<int64_t>{2}}}); };
    Value y = c.add("conv2d", {row(padded), row(w)},
                    {{"strides", std::vector<int64_t>{1, 1}}, {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                     {"dilations", std::vector<int64_t>{1, 1}}, {"groups", xs[1]}});
    if (c.has(2)) y = c.add("bias_add", {y, c.in(2)}, {{"axis", int64_t(1)}});
    y = c.add("squeeze", {y}, {{"axes", std::vector<int64_t>{2}}});
    y = act == "none" ? reshape(c, y, xs, c.out(0)) : swish(c, y, 1.0, c.out(0));
    if (!c.wants(1)) return {y};
    if (k == 1) unsupported("present_state of a kernel of size 1 (an empty tensor)");
    const int64_t len = c.shape(padded)[2];
    return {y, c.g.slice(padded, {len - (k - 1)}, {len}, {2}, {1}, c.out(1))};
}

// LinearAttention: per step t, S = S * exp(decay_t) (gated), v_t = beta_t (v_t - S^T k_t)
// (delta), S += k_t v_t^T, out_t = scale q_t S (S's heads repeated for grouped queries);
// outputs [B, T, Hq * dv] and the final state [B, Hkv, dk, dv]. Unrolled over T.
inline std::vector<Value> convert_linear_attention(Ctx& c) {
    using namespace attention_detail;
    const std::string rule = c.s("update_rule", "gated_delta");
    if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
        malformed("update_rule '" + rule + "' is none of linear, gated, delta, gated_delta");
    const bool gating = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
    if (gating != c.has(4)) malformed("update_rule '" + rule + (gating ? "' needs" : "' forbids") + " the decay input");
    if (delta != c.has(5)) malformed("update_rule '" + rule + (delta ? "' needs" : "' forbids") + " the beta input");
    c.ignore({"chunk_size"});  // a tuning hint, no effect on the result
    const int64_t hq = c.i("q_num_heads"), hkv = c.i("kv_num_heads");
    if (hq <= 0 || hkv <= 0 || hq % hkv) malformed("q_num_heads must be a positive multiple of kv_num_heads");
    Value q = heads_first(c, c.in(0), hq, "Q"), k = heads_first(c, c.in(1), hkv, "K"), v = heads_first(c, c.in(2), hkv, "V");
    const std::vector<int64_t> qs = c.shape(q);  // [B, Hq, T, dk]
    const int64_t b = qs[0], t = qs[2], dk = qs[3], dv = c.shape(v)[3];
    const DataType f = c.dtype(q);
    const double scale = c.f("scale", 0.0) != 0.0 ? c.f("scale", 0.0) : 1.0 / std::sqrt(double(dk));
    auto per_head = [&](Value x, int64_t last) {  // [B, T, Hkv * last | Hkv | 1] as [B, Hkv | 1, T, last]
        const int64_t w = c.shape(x)[2];
        if (w == hkv * last && last > 1) return heads_first(c, x, hkv, "decay");
        return c.g.transpose(reshape(c, x, {b, t, w, 1}), {0, 2, 1, 3}, c.fresh("per_head"));
    };
    auto width = [&](size_t k, const char* what) {  // the last extent of a [B, T, w] input
        if (c.shape(c.in(k)).size() != 3 || c.shape(c.in(k))[0] != b || c.shape(c.in(k))[1] != t)
            malformed(std::string(what) + " must be [batch, sequence, ...], got " + graph::shape_str(c.shape(c.in(k))));
        return c.shape(c.in(k))[2];
    };
    if (gating && width(4, "decay") != hkv && width(4, "decay") != hkv * dk)
        malformed("decay's last dimension must be kv_num_heads or kv_num_heads * d_k");
    if (delta && width(5, "beta") != hkv && width(5, "beta") != 1)
        malformed("beta's last dimension must be kv_num_heads or 1");
    Value decay = gating ? per_head(c.in(4), dk) : Value{}, beta = delta ? per_head(c.in(5), 1) : Value{};
    Value state = c.has(3) ? c.in(3) : c.constant(filled_buffer(f, {b, hkv, dk, dv}, 0), "no_past_state");
    if (c.shape(state) != std::vector<int64_t>{b, hkv, dk, dv}) malformed("past_state must be [B, Hkv, d_k, d_v]");
    auto step = [&](Value x, int64_t i) {  // [B, H, d] at step i
        const std::vector<int64_t> s = c.shape(x);
        return reshape(c, c.g.slice(x, {i}, {i + 1}, {2}, {1}, c.fresh("step")), {s[0], s[1], s[3]});
    };
    std::vector<Value> outs;
    for (int64_t i = 0; i < t; ++i) {
        Value kt = step(k, i), vt = step(v, i);
        if (gating) {  // [B, Hkv, 1 | dk] -> [B, Hkv, 1 | dk, 1]
            Value g = c.add("exp", {step(decay, i)});
            state = c.add("mul", {state, c.add("unsqueeze", {g}, {{"axes", std::vector<int64_t>{3}}})});
        }
        if (delta) {
            Value got = c.add("einsum", {state, kt}, {{"equation", std::string("bhdm,bhd->bhm")}});
            vt = c.add("mul", {step(beta, i), c.add("sub", {vt, got})});
        }
        Value outer = c.add("einsum", {kt, vt}, {{"equation", std::string("bhd,bhm->bhdm")}});
        state = c.add("add", {state, outer});
        Value read = repeat_heads(c, state, hq / hkv);
        Value o = c.add("einsum", {step(q, i), read}, {{"equation", std::string("bhd,bhdm->bhm")}});
        outs.push_back(c.add("unsqueeze", {c.add("mul", {o, c.scalar(scale, f, "scale")})}, {{"axes", std::vector<int64_t>{1}}}));
    }
    Value y = outs.size() == 1 ? outs[0] : c.g.concat(outs, 1, c.fresh("steps"));  // [B, T, Hq, dv]
    return {reshape(c, y, {b, t, hq * dv}, c.out(0)), reshape(c, state, c.shape(state), c.out(1))};
}

}  // namespace weft::onnx::detail
