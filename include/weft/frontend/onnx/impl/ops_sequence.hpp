// The ONNX importer's sequence operators. A sequence is a list of tensors known at import (a
// std::vector<Value>, Ctx::seq_ins / seq_outs): positions must be constants, and a sequence
// never reaches the graph's inputs or outputs; what comes out of one (SequenceAt,
// ConcatFromSequence, SequenceLength) is an ordinary value.
#pragma once
#include "weft/frontend/onnx/impl/ops_common.hpp"

namespace weft::onnx::detail {

namespace sequence_detail {

// Position input k (a constant; negative counts from the end) into a list of n, where `end`
// allows n itself (an insertion at the back); `fallback` when the input is omitted.
inline int64_t position(Ctx& c, size_t k, int64_t n, bool end, int64_t fallback) {
    if (!c.has(k)) return fallback;
    const std::vector<int64_t> p = c.const_ints(k, "the position");
    if (p.size() != 1) malformed("the position must be one value");
    const int64_t at = p[0] < 0 ? p[0] + n : p[0];
    if (at < 0 || at > (end ? n : n - 1))
        malformed("position " + std::to_string(p[0]) + " is outside a sequence of " + std::to_string(n));
    return at;
}

inline std::vector<Value> sequence_out(Ctx& c, std::vector<Value> list) {
    c.seq_outs[0] = std::move(list);
    return {Value{}};
}

}  // namespace sequence_detail

inline std::vector<Value> convert_sequence_empty(Ctx& c) {
    c.ignore({"dtype"});
    return sequence_detail::sequence_out(c, {});
}

inline std::vector<Value> convert_sequence_construct(Ctx& c) {
    std::vector<Value> list;
    for (size_t k = 0; k < c.n_in(); ++k) list.push_back(c.in(k));
    return sequence_detail::sequence_out(c, std::move(list));
}

inline std::vector<Value> convert_sequence_at(Ctx& c) {
    const std::vector<Value>& list = c.seq(0);
    if (list.empty()) malformed("SequenceAt of an empty sequence");
    return {renamed(c, list[size_t(sequence_detail::position(c, 1, int64_t(list.size()), false, 0))], c.out())};
}

inline std::vector<Value> convert_sequence_insert(Ctx& c) {
    std::vector<Value> list = c.seq(0);
    const int64_t at = sequence_detail::position(c, 2, int64_t(list.size()), true, int64_t(list.size()));
    list.insert(list.begin() + at, c.in(1));
    return sequence_detail::sequence_out(c, std::move(list));
}

inline std::vector<Value> convert_sequence_erase(Ctx& c) {
    std::vector<Value> list = c.seq(0);
    if (list.empty()) malformed("SequenceErase of an empty sequence");
    const int64_t at = sequence_detail::position(c, 1, int64_t(list.size()), false, int64_t(list.size()) - 1);
    list.erase(list.begin() + at);
    return sequence_detail::sequence_out(c, std::move(list));
}

inline std::vector<Value> convert_sequence_length(Ctx& c) {
    const int64_t n = int64_t(c.seq(0).size());
    return {c.mark_scalar(c.named_constant(0, int64_buffer({n}, {1})))};
}

// ConcatFromSequence: the tensors joined along axis, or stacked along a new one (new_axis).
inline std::vector<Value> convert_concat_from_sequence(Ctx& c) {
    const std::vector<Value>& list = c.seq(0);
    if (list.empty()) unsupported("ConcatFromSequence of an empty sequence (an empty tensor)");
    if (c.i("new_axis", 0) != 0) return {stack(c, list, c.i("axis"), c.out())};
    const int64_t axis = norm_axis(c.i("axis"), c.rank(list[0]));
    if (list.size() == 1) return {reshape(c, list[0], c.shape(list[0]), c.out())};
    return {c.g.concat(list, axis, c.out())};
}

// SplitToSequence: x cut along axis into pieces of the constant split (one size for all but the
// last, or one per piece), or into single slices (dropping the axis unless keepdims).
inline std::vector<Value> convert_split_to_sequence(Ctx& c) {
    Value x = c.in(0);
    const int64_t axis = norm_axis(c.i("axis", 0), c.rank(x)), n = c.shape(x)[size_t(axis)];
    std::vector<int64_t> sizes;
    const bool given = c.has(1);
    if (given) {
        const std::vector<int64_t> split = c.const_ints(1, "split");
        if (c.is_scalar(c.in(1))) {
            if (split.at(0) < 1) malformed("split must be positive");
            for (int64_t at = 0; at < n; at += split[0]) sizes.push_back(std::min(split[0], n - at));
        } else {
            sizes = split;
        }
    } else {
        sizes.assign(size_t(n), 1);
    }
    const bool keep = given || c.i("keepdims", 1) != 0;
    std::vector<Value> list;
    int64_t at = 0;
    for (int64_t len : sizes) {
        if (len < 1 || at + len > n) malformed("split sizes do not fit the extent " + std::to_string(n));
        Value piece = c.g.slice(x, {at}, {at + len}, {axis}, {1}, c.fresh("piece"));
        list.push_back(keep ? piece : c.add("squeeze", {piece}, {{"axes", std::vector<int64_t>{axis}}}));
        at += len;
    }
    if (at != n) malformed("split sizes add up to " + std::to_string(at) + ", not the extent " + std::to_string(n));
    return sequence_detail::sequence_out(c, std::move(list));
}

}  // namespace weft::onnx::detail
