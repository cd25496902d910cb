// CodeGenCUDA: expressions, literals and calls (see codegen.hpp).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>

#include "weft/codegen/cuda/impl/codegen.hpp"
#include "weft/codegen/cuda/impl/tensor_core.hpp"
#include "weft/ir/gpu.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::codegen::cuda_detail {

inline bool CodeGenCUDA::nonneg(const Expr& e) const {
    int64_t c;
    if (ir::as_const_int(e, &c)) return c >= 0;
    if (e.as<ir::VarNode>()) return nonneg_.count(e.get()) > 0;
    if (auto* x = e.as<ir::Add>()) return nonneg(x->a) && nonneg(x->b);
    if (auto* x = e.as<ir::Mul>()) return nonneg(x->a) && nonneg(x->b);
    if (auto* x = e.as<ir::Div>()) return nonneg(x->a) && nonneg(x->b);
    if (auto* x = e.as<ir::Mod>()) return nonneg(x->b);
    if (auto* x = e.as<ir::Min>()) return nonneg(x->a) && nonneg(x->b);
    if (auto* x = e.as<ir::Max>()) return nonneg(x->a) || nonneg(x->b);
    if (auto* x = e.as<ir::Cast>()) return x->type.is_integer() && x->value.type().is_integer() && nonneg(x->value);
    if (auto* x = e.as<ir::Ramp>()) return nonneg(x->base) && nonneg(x->stride);
    if (auto* x = e.as<ir::Broadcast>()) return nonneg(x->value);
    if (!ir::gpu::thread_index_tag(e).empty()) return true;
    return false;
}

inline std::string CodeGenCUDA::int_literal(DataType t, int64_t v) const {
    if (t.is_bool()) return v ? "true" : "false";
    std::string s = std::to_string(v);
    if (v == std::numeric_limits<int64_t>::min()) s = "(-9223372036854775807LL - 1)";
    bool fits32 = v >= INT32_MIN && v <= INT32_MAX;
    if (t.is_uint()) return s + (t.bits == 64 ? "ull" : "u");
    if (t.bits == 64 && !(fits32 && narrow_index_)) return s + "LL";
    if (t.bits < 32) return "(" + std::string(t.bits == 8 ? "signed char" : "short") + ")" + s;
    return v < 0 ? "(" + s + ")" : s;
}

inline std::string CodeGenCUDA::float_literal(DataType t, double v) {
    std::string s;
    if (std::isnan(v)) s = t.bits == 64 ? "__longlong_as_double(0x7ff8000000000000LL)" : "__int_as_float(0x7fc00000)";
    else if (std::isinf(v))
        s = t.bits == 64 ? (v > 0 ? "__longlong_as_double(0x7ff0000000000000LL)" : "__longlong_as_double(0xfff0000000000000LL)")
                         : (v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)");
    else {
        std::ostringstream os;
        os << std::setprecision(t.bits == 64 ? 17 : 9) << v;
        s = os.str();
        if (s.find_first_of(".e") == std::string::npos) s += ".0";
        if (t.bits != 64) s += "f";
        if (v < 0) s = "(" + s + ")";
    }
    return t.bits == 16 ? from_float(t, s) : s;
}

inline std::string CodeGenCUDA::binary(const char* op, const Expr& a, const Expr& b, int lane) {
    return "(" + expr(a, lane) + " " + op + " " + expr(b, lane) + ")";
}

// min(x, y) or max(x, y) of two printed values of type t.
inline std::string CodeGenCUDA::min_max(bool is_min, DataType t, const std::string& x, const std::string& y) {
    if (t == f32) return std::string(is_min ? "fminf(" : "fmaxf(") + x + ", " + y + ")";
    if (t == f64) return std::string(is_min ? "fmin(" : "fmax(") + x + ", " + y + ")";
    if (is_half(t)) return from_float(t, std::string(is_min ? "fminf(" : "fmaxf(") + to_float(t, x) + ", " + to_float(t, y) + ")");
    return std::string(is_min ? "min(" : "max(") + x + ", " + y + ")";
}

// vector_reduce_*(v): the lanes of v combined as a tree of halves, as the CPU backend does.
inline std::string CodeGenCUDA::vector_reduce(const ir::Call* op) {
    ir::NodeKind kind;
    const bool known = ir::vector_reduce_op(op->name, &kind);
    WEFT_ICHECK(known, "unknown reduction ", op->name);
    const Expr& v = op->args.at(0);
    DataType t = v.type().element_of();
    std::vector<std::string> parts;
    for (int i = 0; i < v.type().lanes; ++i) parts.push_back(expr(v, v.type().lanes > 1 ? i : -1));
    auto combine = [&](const std::string& x, const std::string& y) {
        if (kind == ir::NodeKind::Add) return "(" + x + " + " + y + ")";
        if (kind == ir::NodeKind::Mul) return "(" + x + " * " + y + ")";
        return min_max(kind == ir::NodeKind::Min, t, x, y);
    };
    std::vector<std::string> odd_lanes;  // in the order the CPU backend combines them
    while (parts.size() > 2) {
        if (parts.size() % 2) {
            odd_lanes.push_back(parts.back());
            parts.pop_back();
        }
        std::vector<std::string> halves;
        const size_t half = parts.size() / 2;
        for (size_t i = 0; i < half; ++i) halves.push_back(combine(parts[i], parts[half + i]));
        parts = std::move(halves);
    }
    std::string result = parts.size() == 2 ? combine(parts[0], parts[1]) : parts.at(0);
    for (auto it = odd_lanes.rbegin(); it != odd_lanes.rend(); ++it) result = combine(result, *it);
    return result;
}

// Bit operations (ir/op.hpp): shifts in the unsigned type of the width, outside [0, bits) as
// ir/op.hpp defines them (C++ leaves them undefined).
inline std::string CodeGenCUDA::bit_intrinsic(const ir::Call* op, int lane) {
    const DataType t = op->type.element_of();
    const std::string& n = op->name;
    const std::string a = expr(op->args[0], lane);
    if (n == "bitwise_not") return t.is_bool() ? "(!" + a + ")" : "((" + type_name(t) + ")~" + a + ")";
    if (n == "bitwise_and") return binary("&", op->args[0], op->args[1], lane);
    if (n == "bitwise_or") return binary("|", op->args[0], op->args[1], lane);
    if (n == "bitwise_xor") return binary("^", op->args[0], op->args[1], lane);
    const std::string b = expr(op->args[1], lane), ty = type_name(t), uty = type_name(DataType::uint(t.bits));
    const std::string in_range = "((" + uty + ")" + b + " < " + std::to_string(t.bits) + ")";
    if (n == "shift_left") return "(" + in_range + " ? (" + ty + ")((" + uty + ")" + a + " << " + b + ") : (" + ty + ")0)";
    const std::string fill = t.is_int() ? "(" + a + " < 0 ? (" + ty + ")-1 : (" + ty + ")0)" : "(" + ty + ")0";
    return "(" + in_range + " ? (" + ty + ")(" + a + " >> " + b + ") : " + fill + ")";
}

inline std::string CodeGenCUDA::call_math(const ir::Call* op, int lane) {
    DataType t = op->type.element_of();
    auto arg = [&](size_t i) { return expr(op->args[i], lane); };
    auto argf = [&](size_t i) { return to_float(op->args[i].type(), arg(i)); };
    const std::string& n = op->name;
    if (n == "if_then_else" || n == "likely" || n == "truncdiv" || n == "truncmod") WEFT_ICHECK(false, "handled by caller");
    if (t.is_integer()) {
        if (n == "abs") return (t.bits == 64 ? "llabs(" : "abs(") + arg(0) + ")";
        WEFT_ICHECK(false, "integer math intrinsic ", n);
    }
    bool dbl = t.bits == 64;
    bool fast = f_.fast_math && !dbl;
    std::string sfx = dbl ? "" : "f";
    std::string x = op->args.empty() ? "" : argf(0);
    std::string r;
    if (n == "exp") r = fast ? "__expf(" + x + ")" : "exp" + sfx + "(" + x + ")";
    else if (n == "log") r = fast ? "__logf(" + x + ")" : "log" + sfx + "(" + x + ")";
    else if (n == "sqrt") r = "sqrt" + sfx + "(" + x + ")";
    else if (n == "rsqrt") r = "rsqrt" + sfx + "(" + x + ")";
    else if (n == "tanh") r = "tanh" + sfx + "(" + x + ")";
    else if (n == "erf") r = "erf" + sfx + "(" + x + ")";
    else if (n == "floor") r = "floor" + sfx + "(" + x + ")";
    else if (n == "ceil") r = "ceil" + sfx + "(" + x + ")";
    else if (n == "round") r = "round" + sfx + "(" + x + ")";
    else if (n == "roundeven") r = "rint" + sfx + "(" + x + ")";  // the default rounding mode: to even
    else if (n == "fmod") r = "fmod" + sfx + "(" + x + ", " + argf(1) + ")";
    else if (std::find(ir::libm_unary_functions().begin(), ir::libm_unary_functions().end(), n) !=
             ir::libm_unary_functions().end())
        r = n + sfx + "(" + x + ")";
    else if (n == "abs") r = "fabs" + sfx + "(" + x + ")";
    else if (n == "pow") r = (fast ? "__powf(" : "pow" + sfx + "(") + x + ", " + argf(1) + ")";
    else if (n == "ldexp") {  // the exponent clamped so that the int conversion is defined (past it: 0 or inf)
        std::string e = "floor" + sfx + "(" + argf(1) + ")";
        r = "(isnan(" + e + ") ? " + x + " + " + e + " : ldexp" + sfx + "(" + x + ", (int)fmin" + sfx + "(fmax" + sfx +
            "(" + e + ", -2200), 2200)))";
    }
    else if (n == "sigmoid") {
        std::string one = dbl ? "1.0" : "1.0f";
        r = "(" + one + " / (" + one + " + " + (fast ? "__expf(-" : "exp" + sfx + "(-") + x + ")))";
    } else {
        detail::throw_user_error(detail::concat("CUDA codegen of kernel '", f_.name, "': math function '", n,
                                                "' is not available on the GPU"));
    }
    return from_float(t, r);
}

inline std::string CodeGenCUDA::expr(const Expr& e, int lane) {
    WEFT_ICHECK(e.type().lanes == 1 || lane >= 0, "vector expression ", ir::to_string(e), " printed as a scalar");
    if (e.type().lanes == 1) lane = -1;
    switch (e.kind()) {
        case ir::NodeKind::IntImm: return int_literal(e.type(), e.as<ir::IntImm>()->value);
        case ir::NodeKind::FloatImm: return float_literal(e.type(), e.as<ir::FloatImm>()->value);
        case ir::NodeKind::Var: {
            auto it = names_.find(e.get());
            WEFT_ICHECK(it != names_.end(), "CUDA codegen: unbound variable ", e.as<ir::VarNode>()->name);
            if (vector_vars_.count(e.get())) return it->second + "[" + std::to_string(lane) + "]";
            return it->second;
        }
        case ir::NodeKind::Add: return binary("+", e.as<ir::Add>()->a, e.as<ir::Add>()->b, lane);
        case ir::NodeKind::Sub: return binary("-", e.as<ir::Sub>()->a, e.as<ir::Sub>()->b, lane);
        case ir::NodeKind::Mul: return binary("*", e.as<ir::Mul>()->a, e.as<ir::Mul>()->b, lane);
        case ir::NodeKind::Div: {
            auto* d = e.as<ir::Div>();
            if (!e.type().is_integer() || (nonneg(d->a) && nonneg(d->b))) return binary("/", d->a, d->b, lane);
            uses_floordiv_ = true;
            return "weft_floordiv(" + expr(d->a, lane) + ", " + expr(d->b, lane) + ")";
        }
        case ir::NodeKind::Mod: {
            auto* m = e.as<ir::Mod>();
            if (e.type().is_integer()) {
                if (nonneg(m->a) && nonneg(m->b)) return binary("%", m->a, m->b, lane);
                uses_floordiv_ = true;
                return "weft_floormod(" + expr(m->a, lane) + ", " + expr(m->b, lane) + ")";
            }
            // x - floor(x / y) * y
            DataType t = e.type().element_of();
            std::string a = to_float(t, expr(m->a, lane)), b = to_float(t, expr(m->b, lane));
            std::string fl = t.bits == 64 ? "floor" : "floorf";
            return from_float(t, "(" + a + " - " + fl + "(" + a + " / " + b + ") * " + b + ")");
        }
        case ir::NodeKind::Min:
        case ir::NodeKind::Max: {
            bool is_min = e.kind() == ir::NodeKind::Min;
            const Expr& a = is_min ? e.as<ir::Min>()->a : e.as<ir::Max>()->a;
            const Expr& b = is_min ? e.as<ir::Min>()->b : e.as<ir::Max>()->b;
            return min_max(is_min, e.type().element_of(), expr(a, lane), expr(b, lane));
        }
        case ir::NodeKind::EQ: return binary("==", e.as<ir::EQ>()->a, e.as<ir::EQ>()->b, lane);
        case ir::NodeKind::NE: return binary("!=", e.as<ir::NE>()->a, e.as<ir::NE>()->b, lane);
        case ir::NodeKind::LT: return binary("<", e.as<ir::LT>()->a, e.as<ir::LT>()->b, lane);
        case ir::NodeKind::LE: return binary("<=", e.as<ir::LE>()->a, e.as<ir::LE>()->b, lane);
        case ir::NodeKind::GT: return binary(">", e.as<ir::GT>()->a, e.as<ir::GT>()->b, lane);
        case ir::NodeKind::GE: return binary(">=", e.as<ir::GE>()->a, e.as<ir::GE>()->b, lane);
        case ir::NodeKind::And: return binary("&&", e.as<ir::And>()->a, e.as<ir::And>()->b, lane);
        case ir::NodeKind::Or: return binary("||", e.as<ir::Or>()->a, e.as<ir::Or>()->b, lane);
        case ir::NodeKind::Not: return "(!" + expr(e.as<ir::Not>()->a, lane) + ")";
        case ir::NodeKind::Select: {
            auto* s = e.as<ir::Select>();
            return "(" + expr(s->condition, lane) + " ? " + expr(s->true_value, lane) + " : " +
                   expr(s->false_value, lane) + ")";
        }
        case ir::NodeKind::Cast: {
            auto* c = e.as<ir::Cast>();
            DataType to = e.type().element_of(), from = c->value.type().element_of();
            std::string v = expr(c->value, lane);
            if (to == from) return v;
            if (is_half(from)) {
                v = to_float(from, v);
                if (to == f32) return v;
                if (is_half(to)) return from_float(to, v);
                return "((" + type_name(to) + ")" + v + ")";
            }
            if (is_half(to)) return from_float(to, from == f32 ? v : "((float)" + v + ")");
            return "((" + type_name(to) + ")" + v + ")";
        }
        case ir::NodeKind::Call: return call(e.as<ir::Call>(), lane);
        case ir::NodeKind::Load: {
            auto* l = e.as<ir::Load>();
            if (auto it = hoisted_.find(e.get()); it != hoisted_.end() && lane >= 0)
                return it->second + "." + "xyzw"[lane];
            return name_of(l->buffer) + "[" + expr(l->index, lane) + "]";
        }
        case ir::NodeKind::Ramp: {
            auto* r = e.as<ir::Ramp>();
            int64_t s;
            if (lane == 0) return expr(r->base);
            if (ir::as_const_int(r->stride, &s))
                return "(" + expr(r->base) + " + " + int_literal(r->base.type(), s * lane) + ")";
            return "(" + expr(r->base) + " + " + std::to_string(lane) + " * " + expr(r->stride) + ")";
        }
        case ir::NodeKind::Broadcast: return expr(e.as<ir::Broadcast>()->value);
        case ir::NodeKind::Let: {
            auto* l = e.as<ir::Let>();
            return expr(ir::substitute(l->body, {{l->var, l->value}}), lane);
        }
        default: break;
    }
    WEFT_ICHECK(false, "CUDA codegen: unexpected expression ", ir::to_string(e));
    return {};
}

inline std::string CodeGenCUDA::call(const ir::Call* op, int lane) {
    const std::string& n = op->name;
    if (n == ir::gpu::thread_index_name) {
        auto* tag = op->args.at(0).as<ir::StringImm>();
        return "((" + index_type_name() + ")" + tag->value + ")";
    }
    if (auto mma = tensor_core::print_call(op, [&](const Expr& e) { return expr(e); }); !mma.empty()) return mma;
    if (n == "likely") return expr(op->args[0], lane);
    if (n == "if_then_else")
        return "(" + expr(op->args[0], op->args[0].type().lanes > 1 ? lane : -1) + " ? " + expr(op->args[1], lane) +
               " : " + expr(op->args[2], lane) + ")";
    if (ir::is_vector_reduce(n)) return vector_reduce(op);
    if (n == "truncdiv") return binary("/", op->args[0], op->args[1], lane);
    if (n == "truncmod") return binary("%", op->args[0], op->args[1], lane);
    if (ir::is_bit_intrinsic(n)) return bit_intrinsic(op, lane);
    if (n == "reinterpret") {
        DataType to = op->type.element_of(), from = op->args[0].type().element_of();
        std::string v = expr(op->args[0], lane);
        if (to == f32 && from.bits == 32) return "__int_as_float(" + v + ")";
        if (to.is_integer() && to.bits == 32 && from == f32) return "__float_as_int(" + v + ")";
        if (to == f64 && from.bits == 64) return "__longlong_as_double(" + v + ")";
        if (to.is_integer() && to.bits == 64 && from == f64) return "__double_as_longlong(" + v + ")";
        detail::throw_user_error(detail::concat("CUDA codegen of kernel '", f_.name, "': reinterpret from ",
                                                from.str(), " to ", to.str(), " is not supported on the GPU"));
    }
    if (op->call_kind == ir::Call::CallKind::PureIntrinsic) return call_math(op, lane);
    if (op->call_kind == ir::Call::CallKind::Extern) {
        std::string s = n + "(";
        for (size_t i = 0; i < op->args.size(); ++i) s += (i ? ", " : "") + expr(op->args[i], lane);
        return s + ")";
    }
    detail::throw_user_error(detail::concat("CUDA codegen of kernel '", f_.name, "': the intrinsic '", n,
                                            "' is not available on the GPU"));
}

}  // namespace weft::codegen::cuda_detail
