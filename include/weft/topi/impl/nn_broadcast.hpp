// Definitions of topi/broadcast.hpp: numpy broadcasting and the binary arithmetic on it.
#pragma once
#include "weft/topi/broadcast.hpp"
#include "weft/topi/impl/nn_detail.hpp"

namespace weft::topi {

namespace {

std::string shape_str(const std::vector<Expr>& shape) {
    std::ostringstream os;
    os << "{";
    for (size_t d = 0; d < shape.size(); ++d) os << (d ? ", " : "") << shape[d];
    os << "}";
    return os.str();
}

bool is_one_dim(const Expr& e) { return ir::is_one(e); }

using nn_detail::broadcast_index;

using Combine = std::function<Expr(Expr, Expr)>;

Tensor broadcast_binary(const Tensor& a, const Tensor& b, const Combine& f, const std::string& op) {
    nn_detail::check_defined(a, op, "first");
    nn_detail::check_defined(b, op, "second");
    WEFT_CHECK(a.dtype() == b.dtype(), op, ": '", a.name(), "' has dtype ", a.dtype().str(), " but '", b.name(),
               "' has ", b.dtype().str(), "; cast one of them first");
    std::vector<Expr> sa = a.shape(), sb = b.shape();
    std::vector<Expr> shape = broadcast_shape(sa, sb, op);
    return nn_detail::compute_nd(
        shape, [&](const std::vector<Expr>& i) {
            return f(a.at(broadcast_index(sa, shape, i)), b.at(broadcast_index(sb, shape, i)));
        },
        op);
}

Tensor with_scalar(const Tensor& a, const Expr& scalar, bool scalar_first, const Combine& f, const std::string& op) {
    nn_detail::check_defined(a, op);
    WEFT_CHECK(scalar.defined(), op, ": the scalar operand is undefined");
    WEFT_CHECK(scalar.type().is_scalar() && !scalar.type().is_handle(), op, ": the scalar operand has type ",
               scalar.type().str(), "; it must be a number or a scalar Var");
    return nn_detail::compute_nd(
        a.shape(), [&](const std::vector<Expr>& i) { return scalar_first ? f(scalar, a.at(i)) : f(a.at(i), scalar); },
        op);
}

Expr add_e(Expr x, Expr y) { return x + y; }
Expr sub_e(Expr x, Expr y) { return x - y; }
Expr mul_e(Expr x, Expr y) { return x * y; }
// Integers divide as C does (toward zero, ONNX's Div); codegen guards truncdiv: x / 0 is 0
// and the minimum / -1 wraps, no trap.
Expr div_e(Expr x, Expr y) {
    Expr q = x / y;  // the operands' common type (a weak constant takes the tensor's)
    return q.type().is_integer() ? ir::truncdiv(x, y) : q;
}
Expr pow_e(Expr x, Expr y) { return ir::pow(x, y); }
Expr max_e(Expr x, Expr y) { return ir::max(x, y); }
Expr min_e(Expr x, Expr y) { return ir::min(x, y); }

}  // namespace

std::vector<Expr> broadcast_shape(const std::vector<Expr>& a, const std::vector<Expr>& b, const std::string& op) {
    size_t n = std::max(a.size(), b.size());
    std::vector<Expr> out(n);
    for (size_t k = 0; k < n; ++k) {  // k counts from the last dimension
        bool has_a = k < a.size(), has_b = k < b.size();
        Expr da = has_a ? a[a.size() - 1 - k] : Expr(), db = has_b ? b[b.size() - 1 - k] : Expr();
        Expr& o = out[n - 1 - k];
        if (!has_a) o = db;
        else if (!has_b) o = da;
        else if (is_one_dim(da)) o = db;
        else if (is_one_dim(db)) o = da;
        else if (nn_detail::same_extent(da, db)) o = da;
        else {
            int64_t va, vb;
            bool both_const = ir::as_const_int(da, &va) && ir::as_const_int(db, &vb);
            WEFT_CHECK(false, op, ": shapes ", shape_str(a), " and ", shape_str(b), " do not broadcast: dimension ",
                       int64_t(n - 1 - k), " of the result would need ", da, " == ", db,
                       both_const ? " (each pair of trailing dimensions must be equal or 1)"
                                  : " (symbolic dimensions broadcast only with 1 or the same Var)");
        }
    }
    return out;
}

#define WEFT_TOPI_BINARY(NAME, FN)                                                                        \
    Tensor NAME(const Tensor& a, const Tensor& b) { return broadcast_binary(a, b, FN, #NAME); }          \
    Tensor NAME(const Tensor& a, Expr b) { return with_scalar(a, b, false, FN, #NAME); }                 \
    Tensor NAME(Expr a, const Tensor& b) { return with_scalar(b, a, true, FN, #NAME); }

WEFT_TOPI_BINARY(add, add_e)
WEFT_TOPI_BINARY(sub, sub_e)
WEFT_TOPI_BINARY(mul, mul_e)
WEFT_TOPI_BINARY(div, div_e)
WEFT_TOPI_BINARY(maximum, max_e)
WEFT_TOPI_BINARY(minimum, min_e)
#undef WEFT_TOPI_BINARY

Tensor equal(const Tensor& a, const Tensor& b) {
    return broadcast_binary(a, b, [](Expr x, Expr y) { return x == y; }, "equal");
}
Tensor not_equal(const Tensor& a, const Tensor& b) {
    return broadcast_binary(a, b, [](Expr x, Expr y) { return x != y; }, "not_equal");
}
Tensor greater(const Tensor& a, const Tensor& b) {
    return broadcast_binary(a, b, [](Expr x, Expr y) { return x > y; }, "greater");
}
Tensor greater_equal(const Tensor& a, const Tensor& b) {
    return broadcast_binary(a, b, [](Expr x, Expr y) { return x >= y; }, "greater_equal");
}
Tensor less(const Tensor& a, const Tensor& b) {
    return broadcast_binary(a, b, [](Expr x, Expr y) { return x < y; }, "less");
}
Tensor less_equal(const Tensor& a, const Tensor& b) {
    return broadcast_binary(a, b, [](Expr x, Expr y) { return x <= y; }, "less_equal");
}

namespace {
Tensor logic(const Tensor& a, const Tensor& b, const Combine& f, const std::string& op) {
    nn_detail::check_defined(a, op, "first");
    WEFT_CHECK(a.dtype().is_bool(), op, ": '", a.name(), "' has dtype ", a.dtype().str(), "; it must be bool");
    return broadcast_binary(a, b, f, op);
}
}  // namespace

Tensor logical_and(const Tensor& a, const Tensor& b) {
    return logic(a, b, [](Expr x, Expr y) { return x && y; }, "logical_and");
}
Tensor logical_or(const Tensor& a, const Tensor& b) {
    return logic(a, b, [](Expr x, Expr y) { return x || y; }, "logical_or");
}
Tensor logical_xor(const Tensor& a, const Tensor& b) {
    return logic(a, b, [](Expr x, Expr y) { return x != y; }, "logical_xor");
}

namespace {
Tensor bits(const Tensor& a, const Tensor& b, Expr (*f)(Expr, Expr), const std::string& op, bool shift) {
    nn_detail::check_defined(a, op, "first");
    WEFT_CHECK(a.dtype().is_integer() && (!shift || !a.dtype().is_bool()), op, ": '", a.name(), "' has dtype ",
               a.dtype().str(), shift ? "; it needs integers" : "; it needs integers or bools");
    return broadcast_binary(a, b, [f](Expr x, Expr y) { return f(x, y); }, op);
}
}  // namespace

Tensor bitwise_and(const Tensor& a, const Tensor& b) { return bits(a, b, ir::bitwise_and, "bitwise_and", false); }
Tensor bitwise_or(const Tensor& a, const Tensor& b) { return bits(a, b, ir::bitwise_or, "bitwise_or", false); }
Tensor bitwise_xor(const Tensor& a, const Tensor& b) { return bits(a, b, ir::bitwise_xor, "bitwise_xor", false); }
Tensor shift_left(const Tensor& a, const Tensor& b) { return bits(a, b, ir::shift_left, "shift_left", true); }
Tensor shift_right(const Tensor& a, const Tensor& b) { return bits(a, b, ir::shift_right, "shift_right", true); }

Tensor mod(const Tensor& a, const Tensor& b, bool fmod) {
    nn_detail::check_defined(a, "mod", "first");
    const DataType t = a.dtype();
    WEFT_CHECK(!t.is_bool(), "mod: '", a.name(), "' is a bool tensor; it needs numbers");
    Expr zero = ir::make_zero(t);
    return broadcast_binary(
        a, b,
        [&](Expr x, Expr y) -> Expr {
            if (t.is_float()) {
                Expr r = ir::fmod(x, y);
                if (fmod) return r;
                // Python's float %: fmod moved into the divisor's sign, a zero signed like it
                // (an infinite divisor of the other sign gives the divisor, as ONNX says).
                Expr moved = ir::select(r != zero && ((r < zero) != (y < zero)), r + y, r);
                return ir::select(moved == zero, ir::select(y < zero, ir::make_const(t, -0.0), zero), moved);
            }
            // The divisor 0 replaced by 1 inside (no trap), the result 0 there.
            Expr safe = ir::select(y == zero, ir::make_one(t), y);
            return ir::select(y == zero, zero, fmod ? ir::truncmod(x, safe) : x % safe);
        },
        "mod");
}

Tensor pow(const Tensor& a, const Tensor& b) {
    nn_detail::check_float(a, "pow", "first");
    return broadcast_binary(a, b, pow_e, "pow");
}
Tensor pow(const Tensor& a, Expr b) {
    nn_detail::check_float(a, "pow", "base");
    return with_scalar(a, b, false, pow_e, "pow");
}
Tensor pow(Expr a, const Tensor& b) {
    nn_detail::check_float(b, "pow", "exponent");
    return with_scalar(b, a, true, pow_e, "pow");
}

}  // namespace weft::topi
