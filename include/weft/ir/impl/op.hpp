// Definitions for ir/expr.hpp, ir/stmt.hpp and ir/op.hpp (compiled once, see weft/impl/core.hpp).
#include <cmath>
#include <limits>

#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"

namespace weft::ir {

const char* kind_name(NodeKind k) {
    switch (k) {
#define WEFT_NAME(N) \
    case NodeKind::N: return #N;
        WEFT_EXPR_NODES(WEFT_NAME) WEFT_STMT_NODES(WEFT_NAME)
#undef WEFT_NAME
        case NodeKind::Object: return "Object";
    }
    return "?";
}

const char* for_kind_name(ForKind k) {
    switch (k) {
        case ForKind::Serial: return "serial";
        case ForKind::Parallel: return "parallel";
        case ForKind::Vectorized: return "vectorized";
        case ForKind::Unrolled: return "unrolled";
        case ForKind::ThreadBound: return "thread_bound";
    }
    return "?";
}

Expr::Expr(int v) : Expr(IntImm::make(i32, v, true)) {}
Expr::Expr(int64_t v) : Expr(IntImm::make(i64, v, true)) {}
Expr::Expr(float v) : Expr(FloatImm::make(f32, v, true)) {}
Expr::Expr(double v) : Expr(FloatImm::make(f32, v, true)) {}

// Wraps an integer value to the width of t, as the hardware would.
static int64_t wrap_to(DataType t, int64_t v) {
    if (t.bits >= 64) return v;
    if (t.is_bool()) return v != 0;
    uint64_t mask = (uint64_t(1) << t.bits) - 1;
    uint64_t u = uint64_t(v) & mask;
    if (t.is_int() && (u >> (t.bits - 1))) u |= ~mask;
    return int64_t(u);
}

Expr IntImm::make(DataType t, int64_t v, bool weak) {
    WEFT_ICHECK(t.is_scalar() && t.is_integer(), "IntImm of type ", t.str());
    return Expr(make_node<IntImm>(t, wrap_to(t, v), weak));
}

Expr FloatImm::make(DataType t, double v, bool weak) {
    WEFT_ICHECK(t.is_scalar() && t.is_float(), "FloatImm of type ", t.str());
    if (t.bits == 32) v = double(float(v));
    return Expr(make_node<FloatImm>(t, v, weak));
}

static void check_binary(const Expr& a, const Expr& b, const char* op) {
    WEFT_CHECK(a.defined() && b.defined(), "operator ", op, " applied to an undefined expression");
    WEFT_ICHECK(a.type() == b.type(), "operands of ", op, " have types ", a.type().str(), " and ", b.type().str());
}

#define WEFT_ARITH_MAKE(N, OP)                                 \
    Expr N::make(Expr a, Expr b) {                             \
        check_binary(a, b, OP);                                \
        DataType t = a.type();                                 \
        return Expr(make_node<N>(t, std::move(a), std::move(b))); \
    }
WEFT_ARITH_MAKE(Add, "+")
WEFT_ARITH_MAKE(Sub, "-")
WEFT_ARITH_MAKE(Mul, "*")
WEFT_ARITH_MAKE(Div, "/")
WEFT_ARITH_MAKE(Mod, "%")
WEFT_ARITH_MAKE(Min, "min")
WEFT_ARITH_MAKE(Max, "max")
#undef WEFT_ARITH_MAKE

#define WEFT_CMP_MAKE(N, OP)                                                           \
    Expr N::make(Expr a, Expr b) {                                                     \
        check_binary(a, b, OP);                                                        \
        DataType t = DataType::bool_(a.type().lanes);                                  \
        return Expr(make_node<N>(t, std::move(a), std::move(b)));                      \
    }
WEFT_CMP_MAKE(EQ, "==")
WEFT_CMP_MAKE(NE, "!=")
WEFT_CMP_MAKE(LT, "<")
WEFT_CMP_MAKE(LE, "<=")
WEFT_CMP_MAKE(GT, ">")
WEFT_CMP_MAKE(GE, ">=")
#undef WEFT_CMP_MAKE

Expr And::make(Expr a, Expr b) {
    check_binary(a, b, "&&");
    WEFT_CHECK(a.type().is_bool(), "&& needs bool operands, got ", a.type().str());
    DataType t = a.type();
    return Expr(make_node<And>(t, std::move(a), std::move(b)));
}
Expr Or::make(Expr a, Expr b) {
    check_binary(a, b, "||");
    WEFT_CHECK(a.type().is_bool(), "|| needs bool operands, got ", a.type().str());
    DataType t = a.type();
    return Expr(make_node<Or>(t, std::move(a), std::move(b)));
}
Expr Not::make(Expr a) {
    WEFT_CHECK(a.defined() && a.type().is_bool(), "! needs a bool operand");
    DataType t = a.type();
    return Expr(make_node<Not>(t, std::move(a)));
}

Expr Select::make(Expr c, Expr t, Expr f) {
    WEFT_CHECK(c.defined() && t.defined() && f.defined(), "select of an undefined expression");
    WEFT_CHECK(c.type().is_bool(), "select's condition must be bool, got ", c.type().str());
    WEFT_ICHECK(t.type() == f.type(), "select branches have types ", t.type().str(), " and ", f.type().str());
    WEFT_ICHECK(c.type().lanes == 1 || c.type().lanes == t.type().lanes, "select lanes mismatch");
    DataType ty = t.type();
    return Expr(make_node<Select>(ty, std::move(c), std::move(t), std::move(f)));
}

Expr Cast::make(DataType t, Expr v) {
    WEFT_CHECK(v.defined(), "cast of an undefined expression");
    WEFT_ICHECK(t.lanes == v.type().lanes, "cast changes lanes: ", v.type().str(), " to ", t.str());
    return Expr(make_node<Cast>(t, std::move(v)));
}

Expr Call::make(DataType t, std::string name, std::vector<Expr> args, CallKind k) {
    for (auto& a : args) WEFT_CHECK(a.defined(), "argument of call to ", name, " is undefined");
    return Expr(make_node<Call>(t, std::move(name), std::move(args), k));
}

Expr Load::make(DataType t, Var buffer, Expr index) {
    WEFT_ICHECK(buffer.defined() && index.defined());
    WEFT_ICHECK(t.lanes == index.type().lanes, "load lanes ", t.str(), " vs index ", index.type().str());
    return Expr(make_node<Load>(t, std::move(buffer), std::move(index)));
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
    WEFT_ICHECK(base.type().is_scalar() && base.type() == stride.type() && lanes > 1);
    DataType t = base.type().with_lanes(lanes);
    return Expr(make_node<Ramp>(t, std::move(base), std::move(stride), lanes));
}

Expr Broadcast::make(Expr value, int lanes) {
    WEFT_ICHECK(value.type().is_scalar() && lanes > 1);
    DataType t = value.type().with_lanes(lanes);
    return Expr(make_node<Broadcast>(t, std::move(value), lanes));
}

Expr Let::make(Var v, Expr value, Expr body) {
    WEFT_ICHECK(v.type() == value.type(), "let of ", v.name(), ": ", v.type().str(), " vs ", value.type().str());
    DataType t = body.type();
    return Expr(make_node<Let>(t, std::move(v), std::move(value), std::move(body)));
}

Expr Reduce::make(CommReducer c, std::vector<Expr> source, std::vector<IterVar> axis, Expr condition,
                  int value_index) {
    WEFT_ICHECK(c && value_index >= 0 && size_t(value_index) < c->result.size());
    DataType t = c->result[value_index].type();
    if (!condition.defined()) condition = make_const(boolean, 1);
    return Expr(make_node<Reduce>(t, std::move(c), std::move(source), std::move(axis), std::move(condition),
                                  value_index));
}

Stmt For::make(Var v, Expr min, Expr extent, ForKind k, Stmt body, std::string tag) {
    WEFT_ICHECK(v.defined() && min.defined() && extent.defined() && body.defined());
    return Stmt(make_node<For>(std::move(v), std::move(min), std::move(extent), k, std::move(body), std::move(tag)));
}

Stmt Store::make(Var buffer, Expr value, Expr index) {
    WEFT_ICHECK(value.type().lanes == index.type().lanes, "store lanes mismatch");
    return Stmt(make_node<Store>(std::move(buffer), std::move(value), std::move(index)));
}

Stmt Allocate::make(Var buffer, DataType t, std::vector<Expr> extents, std::string scope, Stmt body) {
    return Stmt(make_node<Allocate>(std::move(buffer), t, std::move(extents), std::move(scope), std::move(body)));
}

Stmt Seq::make(std::vector<Stmt> stmts) {
    std::vector<Stmt> flat;
    for (auto& s : stmts) {
        if (!s.defined()) continue;
        if (auto* seq = s.as<Seq>())
            flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
        else
            flat.push_back(s);
    }
    if (flat.empty()) return Evaluate::make(make_int(0, i32));
    if (flat.size() == 1) return flat[0];
    return Stmt(make_node<Seq>(std::move(flat)));
}

Stmt IfThenElse::make(Expr c, Stmt t, Stmt e) {
    WEFT_ICHECK(c.type().is_bool() && c.type().is_scalar(), "if condition of type ", c.type().str());
    return Stmt(make_node<IfThenElse>(std::move(c), std::move(t), std::move(e)));
}

Stmt LetStmt::make(Var v, Expr value, Stmt body) {
    WEFT_ICHECK(v.type() == value.type(), "let of ", v.name(), ": ", v.type().str(), " vs ", value.type().str());
    return Stmt(make_node<LetStmt>(std::move(v), std::move(value), std::move(body)));
}

Stmt AssertStmt::make(Expr c, std::string message, Stmt body) {
    return Stmt(make_node<AssertStmt>(std::move(c), std::move(message), std::move(body)));
}

// ---- constants ------------------------------------------------------------------------

Expr make_const(DataType t, double value) {
    if (t.is_vector()) return Broadcast::make(make_const(t.element_of(), value), t.lanes);
    if (t.is_float()) return FloatImm::make(t, value);
    return IntImm::make(t, int64_t(value));
}
Expr make_int(int64_t v, DataType t) {
    if (t.is_vector()) return Broadcast::make(make_int(v, t.element_of()), t.lanes);
    if (t.is_float()) return FloatImm::make(t, double(v));
    return IntImm::make(t, v);
}
Expr make_zero(DataType t) { return make_int(0, t); }
Expr make_one(DataType t) { return make_int(1, t); }

Expr min_value(DataType t) {
    if (t.is_float()) return make_const(t, -std::numeric_limits<double>::infinity());
    if (t.is_uint() || t.is_bool()) return make_int(0, t);
    return make_int(t.bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (t.bits - 1)), t);
}
Expr max_value(DataType t) {
    if (t.is_float()) return make_const(t, std::numeric_limits<double>::infinity());
    if (t.is_bool()) return make_int(1, t);
    if (t.is_uint()) return make_int(t.bits >= 64 ? -1 : int64_t((uint64_t(1) << t.bits) - 1), t);
    return make_int(t.bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (t.bits - 1)) - 1, t);
}

bool as_const_int(const Expr& e, int64_t* value) {
    if (auto* i = e.as<IntImm>()) {
        *value = i->value;
        return true;
    }
    return false;
}
bool is_const_int(const Expr& e, int64_t value) {
    int64_t v;
    if (as_const_int(e, &v)) return v == value;
    if (auto* b = e.as<Broadcast>()) return is_const_int(b->value, value);
    return false;
}
bool is_const(const Expr& e) {
    return e.as<IntImm>() || e.as<FloatImm>() || (e.as<Broadcast>() && is_const(e.as<Broadcast>()->value));
}

// ---- operators ------------------------------------------------------------------------

static bool is_weak(const Expr& e) {
    if (auto* i = e.as<IntImm>()) return i->weak;
    if (auto* f = e.as<FloatImm>()) return f->weak;
    return false;
}

// Converts a constant to type t without a Cast node.
static Expr retype_const(const Expr& e, DataType t) {
    if (auto* i = e.as<IntImm>()) return t.is_float() ? make_const(t, double(i->value)) : make_int(i->value, t);
    if (auto* f = e.as<FloatImm>()) return t.is_float() ? make_const(t, f->value) : make_int(int64_t(f->value), t);
    return cast(t, e);
}

void match_types(Expr& a, Expr& b, const char* op) {
    WEFT_CHECK(a.defined() && b.defined(), "operator ", op, " applied to an undefined expression");
    DataType ta = a.type(), tb = b.type();
    WEFT_CHECK(!ta.is_handle() && !tb.is_handle(), "operator ", op, " applied to a handle");
    // 1. lanes
    if (ta.lanes != tb.lanes) {
        WEFT_CHECK(ta.lanes == 1 || tb.lanes == 1, "operator ", op, " on vectors of different lanes: ", ta.str(),
                   " and ", tb.str());
        if (ta.lanes == 1) a = Broadcast::make(a, tb.lanes); else b = Broadcast::make(b, ta.lanes);
        ta = a.type(); tb = b.type();
    }
    if (ta == tb) return;
    auto convert = [](Expr& e, DataType t) {
        if (e.type() == t) return;
        if (e.type().is_vector()) {
            if (auto* bc = e.as<Broadcast>(); bc && is_const(bc->value)) {
                e = Broadcast::make(retype_const(bc->value, t.element_of()), t.lanes);
                return;
            }
        }
        e = is_const(e) && e.type().is_scalar() ? retype_const(e, t) : Cast::make(t, e);
    };
    // 2. weak immediates
    bool wa = is_weak(a) || (a.as<Broadcast>() && is_weak(a.as<Broadcast>()->value));
    bool wb = is_weak(b) || (b.as<Broadcast>() && is_weak(b.as<Broadcast>()->value));
    if (wa != wb) {
        Expr& weak = wa ? a : b;
        Expr& strong = wa ? b : a;
        if (weak.type().is_float() && !strong.type().is_float())
            convert(strong, f32.with_lanes(strong.type().lanes)), convert(weak, strong.type());
        else
            convert(weak, strong.type());
        return;
    }
    // 3-5. promotion
    DataType t;
    if (ta.is_float() != tb.is_float()) t = ta.is_float() ? ta : tb;
    else if (ta.bits != tb.bits) t = ta.bits > tb.bits ? ta : tb;
    else if (ta.is_float()) t = ta.is_bfloat() ? tb : ta;  // float16 vs bfloat16: prefer float16
    else t = DataType::int_(ta.bits, ta.lanes);
    if (t.is_bool()) t = i32.with_lanes(ta.lanes);
    convert(a, t);
    convert(b, t);
}

Expr operator+(Expr a, Expr b) { match_types(a, b, "+"); return Add::make(a, b); }
Expr operator-(Expr a, Expr b) { match_types(a, b, "-"); return Sub::make(a, b); }
Expr operator*(Expr a, Expr b) { match_types(a, b, "*"); return Mul::make(a, b); }
Expr operator/(Expr a, Expr b) { match_types(a, b, "/"); return Div::make(a, b); }
Expr operator%(Expr a, Expr b) { match_types(a, b, "%"); return Mod::make(a, b); }
Expr operator-(Expr a) {
    if (auto* i = a.as<IntImm>()) return IntImm::make(a.type(), -i->value, i->weak);
    if (auto* f = a.as<FloatImm>()) return FloatImm::make(a.type(), -f->value, f->weak);
    return Sub::make(make_zero(a.type()), a);
}
Expr operator==(Expr a, Expr b) { match_types(a, b, "=="); return EQ::make(a, b); }
Expr operator!=(Expr a, Expr b) { match_types(a, b, "!="); return NE::make(a, b); }
Expr operator<(Expr a, Expr b) { match_types(a, b, "<"); return LT::make(a, b); }
Expr operator<=(Expr a, Expr b) { match_types(a, b, "<="); return LE::make(a, b); }
Expr operator>(Expr a, Expr b) { match_types(a, b, ">"); return GT::make(a, b); }
Expr operator>=(Expr a, Expr b) { match_types(a, b, ">="); return GE::make(a, b); }
Expr operator&&(Expr a, Expr b) { match_types(a, b, "&&"); return And::make(a, b); }
Expr operator||(Expr a, Expr b) { match_types(a, b, "||"); return Or::make(a, b); }
Expr operator!(Expr a) { return Not::make(a); }

Expr min(Expr a, Expr b) { match_types(a, b, "min"); return Min::make(a, b); }
Expr max(Expr a, Expr b) { match_types(a, b, "max"); return Max::make(a, b); }

Expr select(Expr cond, Expr t, Expr f) {
    WEFT_CHECK(cond.defined() && cond.type().is_bool(), "select's condition must be a bool expression, got ",
               cond.defined() ? cond.type().str() : "undefined");
    match_types(t, f, "select");
    if (cond.type().lanes == 1 && t.type().lanes > 1) cond = Broadcast::make(cond, t.type().lanes);
    return Select::make(cond, t, f);
}

Expr if_then_else(Expr cond, Expr t, Expr f) {
    WEFT_CHECK(cond.defined() && cond.type().is_bool() && cond.type().is_scalar(),
               "if_then_else's condition must be a scalar bool expression");
    match_types(t, f, "if_then_else");
    DataType ty = t.type();
    return Call::make(ty, "if_then_else", {cond, t, f}, Call::CallKind::PureIntrinsic);
}

Expr likely(Expr cond) {
    WEFT_CHECK(cond.defined() && cond.type().is_bool() && cond.type().is_scalar(),
               "likely's condition must be a scalar bool expression");
    return Call::make(cond.type(), "likely", {cond}, Call::CallKind::PureIntrinsic);
}

Expr cast(DataType t, Expr v) {
    WEFT_CHECK(v.defined(), "cast of an undefined expression");
    if (v.type().lanes > 1 && t.lanes == 1) t = t.with_lanes(v.type().lanes);
    if (v.type() == t) return v;
    if (is_const(v) && v.type().is_scalar()) return retype_const(v, t);
    return Cast::make(t, v);
}

static Expr integer_intrinsic(const char* name, Expr a, Expr b) {
    match_types(a, b, name);
    WEFT_CHECK(a.type().is_integer(), name, " needs integer operands, got ", a.type().str());
    DataType t = a.type();
    return Call::make(t, name, {a, b}, Call::CallKind::PureIntrinsic);
}
Expr truncdiv(Expr a, Expr b) { return integer_intrinsic("truncdiv", a, b); }
Expr truncmod(Expr a, Expr b) { return integer_intrinsic("truncmod", a, b); }
Expr bitwise_and(Expr a, Expr b) { return integer_intrinsic("bitwise_and", a, b); }
Expr bitwise_or(Expr a, Expr b) { return integer_intrinsic("bitwise_or", a, b); }
Expr bitwise_xor(Expr a, Expr b) { return integer_intrinsic("bitwise_xor", a, b); }
Expr bitwise_not(Expr a) {
    WEFT_CHECK(a.defined() && a.type().is_integer(), "bitwise_not needs an integer or bool operand");
    return Call::make(a.type(), "bitwise_not", {a}, Call::CallKind::PureIntrinsic);
}
static Expr shift(const char* name, Expr a, Expr b) {
    Expr r = integer_intrinsic(name, a, b);
    WEFT_CHECK(!r.type().is_bool(), name, " needs integer operands, got bool");
    return r;
}
Expr shift_left(Expr a, Expr b) { return shift("shift_left", a, b); }
Expr shift_right(Expr a, Expr b) { return shift("shift_right", a, b); }
bool is_bit_intrinsic(const std::string& n) {
    return n == "bitwise_and" || n == "bitwise_or" || n == "bitwise_xor" || n == "bitwise_not" || n == "shift_left" ||
           n == "shift_right";
}

static Expr float_intrinsic(const char* name, Expr x) {
    WEFT_CHECK(x.defined(), name, " of an undefined expression");
    if (is_weak(x) && !x.type().is_float()) x = cast(f32, x);
    WEFT_CHECK(x.type().is_float(), "intrinsic ", name, " is only defined on float types, but its argument has type ",
               x.type().str(), "; cast it first, e.g. ", name, "(cast(f32, x))");
    DataType t = x.type();
    return Call::make(t, name, {x}, Call::CallKind::PureIntrinsic);
}
Expr exp(Expr x) { return float_intrinsic("exp", x); }
Expr log(Expr x) { return float_intrinsic("log", x); }
Expr sqrt(Expr x) { return float_intrinsic("sqrt", x); }
Expr rsqrt(Expr x) { return float_intrinsic("rsqrt", x); }
Expr tanh(Expr x) { return float_intrinsic("tanh", x); }
Expr sigmoid(Expr x) { return float_intrinsic("sigmoid", x); }
Expr erf(Expr x) { return float_intrinsic("erf", x); }
Expr floor(Expr x) { return float_intrinsic("floor", x); }
Expr ceil(Expr x) { return float_intrinsic("ceil", x); }
Expr round(Expr x) { return float_intrinsic("round", x); }
Expr roundeven(Expr x) { return float_intrinsic("roundeven", x); }
Expr sin(Expr x) { return float_intrinsic("sin", x); }
Expr cos(Expr x) { return float_intrinsic("cos", x); }
Expr tan(Expr x) { return float_intrinsic("tan", x); }
Expr asin(Expr x) { return float_intrinsic("asin", x); }
Expr acos(Expr x) { return float_intrinsic("acos", x); }
Expr atan(Expr x) { return float_intrinsic("atan", x); }
Expr sinh(Expr x) { return float_intrinsic("sinh", x); }
Expr cosh(Expr x) { return float_intrinsic("cosh", x); }
Expr asinh(Expr x) { return float_intrinsic("asinh", x); }
Expr acosh(Expr x) { return float_intrinsic("acosh", x); }
Expr atanh(Expr x) { return float_intrinsic("atanh", x); }
const std::vector<std::string>& libm_unary_functions() {
    static const std::vector<std::string> names = {"sin",  "cos",  "tan",   "asin",  "acos", "atan",
                                                   "sinh", "cosh", "asinh", "acosh", "atanh"};
    return names;
}
// A two-argument float intrinsic; `hint` ends the error for other types.
static Expr float_binary_intrinsic(const char* name, Expr x, Expr y, const char* hint) {
    match_types(x, y, name);
    WEFT_CHECK(x.type().is_float(), "intrinsic ", name, " is only defined on float types, but its arguments have type ",
               x.type().str(), hint);
    DataType t = x.type();
    return Call::make(t, name, {x, y}, Call::CallKind::PureIntrinsic);
}
Expr fmod(Expr x, Expr y) { return float_binary_intrinsic("fmod", x, y, "; integers have truncmod"); }
Expr pow(Expr x, Expr y) { return float_binary_intrinsic("pow", x, y, ""); }
Expr ldexp(Expr x, Expr n) {
    return float_binary_intrinsic("ldexp", x, n, "; pass the exponent as a float of the same type");
}
Expr abs(Expr x) {
    WEFT_CHECK(x.defined(), "abs of an undefined expression");
    WEFT_CHECK(!x.type().is_handle() && !x.type().is_bool(), "abs is not defined on ", x.type().str());
    if (x.type().is_uint()) return x;
    DataType t = x.type();
    return Call::make(t, "abs", {x}, Call::CallKind::PureIntrinsic);
}

Expr call_extern(DataType type, std::string name, std::vector<Expr> args) {
    return Call::make(type, std::move(name), std::move(args), Call::CallKind::Extern);
}

Expr broadcast(Expr v, int lanes) {
    WEFT_CHECK(v.defined() && v.type().is_scalar(), "broadcast: the value must be a defined scalar");
    WEFT_CHECK(lanes >= 1, "broadcast: lanes must be positive, got ", lanes);
    return lanes == 1 ? v : Broadcast::make(std::move(v), lanes);
}

Expr reinterpret(DataType t, Expr v) {
    WEFT_CHECK(v.defined(), "reinterpret: the value is undefined");
    WEFT_CHECK(int(t.bits) * t.lanes == int(v.type().bits) * v.type().lanes, "reinterpret: ", v.type().str(), " (",
               int(v.type().bits) * v.type().lanes, " bits) cannot be reinterpreted as ", t.str(), " (",
               int(t.bits) * t.lanes, " bits)");
    if (t == v.type()) return v;
    return Call::make(t, "reinterpret", {std::move(v)}, Call::CallKind::PureIntrinsic);
}

Expr call_llvm_intrin(DataType type, std::string name, std::vector<Expr> args) {
    WEFT_CHECK(name.rfind("llvm.", 0) == 0, "call_llvm_intrin: '", name, "' is not an LLVM intrinsic name (llvm.*)");
    return Call::make(type, std::move(name), std::move(args), Call::CallKind::PureIntrinsic);
}

bool is_math_intrinsic(const std::string& n) {
    static const char* names[] = {"exp",   "log",  "sqrt",      "rsqrt", "tanh",     "sigmoid",  "erf",
                                  "pow",   "fmod", "ldexp",     "abs",   "floor",    "ceil",     "round",
                                  "roundeven", "truncdiv", "truncmod", "if_then_else"};
    for (auto* m : names)
        if (n == m) return true;
    for (const std::string& m : libm_unary_functions())
        if (n == m) return true;
    return is_bit_intrinsic(n);
}

}  // namespace weft::ir
