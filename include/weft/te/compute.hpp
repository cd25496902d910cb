// placeholder, compute, reduce_axis and the reducers (sum, max, min, prod, comm_reducer).
#pragma once
#include <functional>
#include <initializer_list>
#include <type_traits>

#include "weft/te/operation.hpp"

namespace weft::te {

// An input tensor of the given shape and dtype. Shape entries may be integers or symbolic
// Vars (bound from the buffers passed at call time).
Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name);

// A reduction axis over [begin, end).
IterVar reduce_axis(Expr begin, Expr end, std::string name);

namespace detail {
// The output shape is the extents of `axis`.
Operation make_compute(const std::vector<IterVar>& axis, std::vector<Expr> body, std::string name,
                       std::source_location loc = {});
std::vector<IterVar> make_axes(const std::vector<Expr>& shape, const std::vector<std::string>& names);

template <class F, size_t... I>
auto invoke_with_axes(F& f, const std::vector<IterVar>& axes, std::index_sequence<I...>) {
    return f(Expr(axes[I].var())...);
}

// The arity (1..6) of a callable taking Exprs.
template <class F>
constexpr int expr_arity() {
    if constexpr (std::is_invocable_v<F&, Expr>) return 1;
    else if constexpr (std::is_invocable_v<F&, Expr, Expr>) return 2;
    else if constexpr (std::is_invocable_v<F&, Expr, Expr, Expr>) return 3;
    else if constexpr (std::is_invocable_v<F&, Expr, Expr, Expr, Expr>) return 4;
    else if constexpr (std::is_invocable_v<F&, Expr, Expr, Expr, Expr, Expr>) return 5;
    else if constexpr (std::is_invocable_v<F&, Expr, Expr, Expr, Expr, Expr, Expr>) return 6;
    else return 0;
}
}  // namespace detail

// A tensor whose element (i, j, ...) is fcompute(i, j, ...). The lambda's arity (1 to 6) is
// deduced at compile time and must equal the number of dimensions (checked at run time
// too, with the tensor's name). A lambda taking `const std::vector<Expr>&` gets one index
// per dimension, for a rank known only at run time. A lambda returning std::vector<Expr>
// defines several outputs over the same domain (see compute_multi).
template <class F>
Tensor compute(const std::vector<Expr>& shape, F fcompute, std::string name = "compute",
               const std::vector<std::string>& axis_names = {},
               std::source_location loc = std::source_location::current()) {
    if constexpr (std::is_invocable_v<F&, const std::vector<Expr>&>) {
        WEFT_CHECK(!shape.empty(), "compute '", name, "': the result would have no dimensions");
        auto axes = detail::make_axes(shape, axis_names);
        std::vector<Expr> index;
        for (auto& a : axes) index.push_back(a.var());
        return detail::make_compute(axes, {fcompute(index)}, std::move(name), loc).output(0);
    } else {
        constexpr int arity = detail::expr_arity<F>();
        static_assert(arity >= 1, "compute: the lambda must take between 1 and 6 Expr arguments");
        WEFT_CHECK(int(shape.size()) == arity, "compute '", name, "': the lambda takes ", arity,
                   arity == 1 ? " index" : " indices", " but the shape has ", shape.size(),
                   shape.size() == 1 ? " dimension" : " dimensions");
        auto axes = detail::make_axes(shape, axis_names);
        Expr body = detail::invoke_with_axes(fcompute, axes, std::make_index_sequence<arity>{});
        return detail::make_compute(axes, {body}, std::move(name), loc).output(0);
    }
}

// A recurrence over the first axis (TVM's te.scan). The result has `state`'s shape
// [T, ...]: its rows [0, k) are `init`'s ([k, ...]) and each later row t is `update`'s row t,
// whose body may read `state` at earlier rows only (state(t - 1, j), a constant distance
// back): the state placeholder stands for the result itself. A stage between the state and
// the update (a reduction over the previous row, say) is computed inside the recurrence's
// loop over t, once per step: create_schedule attaches it there, and every stage that reads
// the state must have time as its axis 0. T and k are constants; the time loop stays the
// stage's outermost, serial loop (its other axes can be split, vectorized, parallel).
//
//   Tensor h0 = placeholder({1, H}, f32, "h0"), X = placeholder({T, H}, f32, "X");
//   Tensor state = placeholder({T, H}, f32, "state");
//   IterVar k = reduce_axis(0, H, "k");
//   Tensor pre = compute({T, H}, [&](Var t, Var j) { return sum(R(j, k) * state(t - 1, k), {k}); }, "pre");
//   Tensor next = compute({T, H}, [&](Var t, Var j) { return tanh(X(t, j) + pre(t, j)); }, "next");
//   Tensor h = scan(h0, next, state, "h");                     // an RNN's hidden states
Tensor scan(const Tensor& init, const Tensor& update, const Tensor& state, std::string name = "scan");
// The operations of scan's body: those that read its state, directly or through each other
// (not the scan itself), in no particular order.
std::vector<Operation> scan_body_ops(const Operation& scan);

// Several outputs computed together (e.g. argmax's index and value).
template <class F>
std::vector<Tensor> compute_multi(const std::vector<Expr>& shape, F fcompute, std::string name = "compute",
                                  const std::vector<std::string>& axis_names = {},
                                  std::source_location loc = std::source_location::current()) {
    constexpr int arity = detail::expr_arity<F>();
    static_assert(arity >= 1, "compute_multi: the lambda must take between 1 and 6 Expr arguments");
    WEFT_CHECK(int(shape.size()) == arity, "compute '", name, "': the lambda takes ", arity,
               arity == 1 ? " index" : " indices", " but the shape has ", shape.size(),
               shape.size() == 1 ? " dimension" : " dimensions");
    auto axes = detail::make_axes(shape, axis_names);
    std::vector<Expr> body = detail::invoke_with_axes(fcompute, axes, std::make_index_sequence<arity>{});
    Operation op = detail::make_compute(axes, std::move(body), std::move(name), loc);
    std::vector<Tensor> out;
    for (int i = 0; i < op->num_outputs(); ++i) out.push_back(op.output(i));
    return out;
}

// A commutative, associative reduction: combine(lhs, rhs) -> result and the identity,
// each over one or more values (argmax combines (index, value) pairs).
class Reducer {
public:
    using Combine = std::function<std::vector<Expr>(const std::vector<Expr>& lhs, const std::vector<Expr>& rhs)>;
    using Identity = std::function<std::vector<Expr>(const std::vector<DataType>& types)>;
    Reducer(Combine combine, Identity identity, std::string name = "reducer")
        : combine_(std::move(combine)), identity_(std::move(identity)), name_(std::move(name)) {}

    // Reduce one value over axes (only where `where` holds, if given).
    Expr operator()(Expr source, const std::vector<IterVar>& axes, Expr where = Expr()) const;
    // Reduce several values together; returns one expression per value.
    std::vector<Expr> operator()(const std::vector<Expr>& sources, const std::vector<IterVar>& axes,
                                 Expr where = Expr()) const;
    const std::string& name() const { return name_; }

private:
    Combine combine_;
    Identity identity_;
    std::string name_;
};

// A user-declared commutative reducer (see Reducer).
inline Reducer comm_reducer(Reducer::Combine combine, Reducer::Identity identity, std::string name = "reducer") {
    return Reducer(std::move(combine), std::move(identity), std::move(name));
}

Expr sum(Expr source, const std::vector<IterVar>& axes, Expr where = Expr());
Expr prod(Expr source, const std::vector<IterVar>& axes, Expr where = Expr());
Expr max(Expr source, const std::vector<IterVar>& axes, Expr where = Expr());
Expr min(Expr source, const std::vector<IterVar>& axes, Expr where = Expr());
// `max(x, {k})` must mean the reduction, not the element-wise max(Expr, Expr): a braced
// list binds to std::initializer_list<IterVar> exactly, which beats converting {k} to Expr.
inline Expr sum(Expr source, std::initializer_list<IterVar> axes, Expr where = Expr()) {
    return sum(std::move(source), std::vector<IterVar>(axes), std::move(where));
}
inline Expr prod(Expr source, std::initializer_list<IterVar> axes, Expr where = Expr()) {
    return prod(std::move(source), std::vector<IterVar>(axes), std::move(where));
}
inline Expr max(Expr source, std::initializer_list<IterVar> axes, Expr where = Expr()) {
    return max(std::move(source), std::vector<IterVar>(axes), std::move(where));
}
inline Expr min(Expr source, std::initializer_list<IterVar> axes, Expr where = Expr()) {
    return min(std::move(source), std::vector<IterVar>(axes), std::move(where));
}

}  // namespace weft::te

// The user-facing names, in namespace weft.
namespace weft {
using ir::Expr;
using ir::IterVar;
using ir::Var;
using ir::make_int;
using ir::cast;
using ir::select;
using ir::if_then_else;
using ir::likely;
using ir::exp;
using ir::log;
using ir::sqrt;
using ir::rsqrt;
using ir::tanh;
using ir::sigmoid;
using ir::erf;
using ir::pow;
using ir::abs;
using ir::floor;
using ir::ceil;
using ir::round;
using ir::truncdiv;
using ir::truncmod;
using ir::call_extern;
using ir::call_llvm_intrin;
using ir::reinterpret;
using ir::broadcast;
using ir::min;
using ir::max;
using te::min;
using te::max;
using te::sum;
using te::prod;
using te::Reducer;
using te::comm_reducer;
using te::compute;
using te::compute_multi;
using te::placeholder;
using te::reduce_axis;
using te::Tensor;
using te::Operation;
}  // namespace weft
