// A reference evaluator for integer and bool expressions, written independently of the
// simplifier: int64 arithmetic with floor division and modulo, wrapped to each type's width
// (the generated code's semantics). Signed 64-bit overflow and division by zero make the
// value undefined (the simplifier may assume neither happens), reported as nullopt.
#pragma once
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "weft/ir/expr.hpp"

namespace arith_test {

using namespace weft;
using namespace weft::ir;

using Env = std::unordered_map<const VarNode*, int64_t>;

// v as the generated code stores a value of scalar type t.
inline int64_t wrap(DataType t, int64_t v) {
    if (t.is_bool()) return v != 0;
    if (t.bits >= 64) return v;
    uint64_t mask = (uint64_t(1) << t.bits) - 1, u = uint64_t(v) & mask;
    if (t.is_int() && (u >> (t.bits - 1))) u |= ~mask;
    return int64_t(u);
}

inline int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

class Evaluator {
public:
    explicit Evaluator(Env env) : env_(std::move(env)) {}

    std::optional<int64_t> eval(const Expr& e) {
        ok_ = true;
        int64_t v = go(e);
        if (!ok_) return std::nullopt;
        return v;
    }

private:
    Env env_;
    bool ok_ = true;

    bool is_signed64(DataType t) const { return t.is_int() && t.bits == 64; }
    bool less(DataType t, int64_t a, int64_t b) const { return t.is_uint() ? uint64_t(a) < uint64_t(b) : a < b; }

    int64_t arith(DataType t, NodeKind k, int64_t a, int64_t b) {
        int64_t r = 0;
        bool overflow = false;
        switch (k) {
            case NodeKind::Add: overflow = __builtin_add_overflow(a, b, &r); if (overflow) r = int64_t(uint64_t(a) + uint64_t(b)); break;
            case NodeKind::Sub: overflow = __builtin_sub_overflow(a, b, &r); if (overflow) r = int64_t(uint64_t(a) - uint64_t(b)); break;
            case NodeKind::Mul: overflow = __builtin_mul_overflow(a, b, &r); if (overflow) r = int64_t(uint64_t(a) * uint64_t(b)); break;
            case NodeKind::Div:
            case NodeKind::Mod:
                if (b == 0) { ok_ = false; return 0; }
                if (t.is_uint()) r = k == NodeKind::Div ? int64_t(uint64_t(a) / uint64_t(b)) : int64_t(uint64_t(a) % uint64_t(b));
                else if (a == INT64_MIN && b == -1) { overflow = true; r = k == NodeKind::Div ? INT64_MIN : 0; }
                else r = k == NodeKind::Div ? floordiv(a, b) : a - floordiv(a, b) * b;
                break;
            case NodeKind::Min: r = less(t, b, a) ? b : a; break;
            case NodeKind::Max: r = less(t, a, b) ? b : a; break;
            default: break;
        }
        if (overflow && is_signed64(t)) ok_ = false;
        return wrap(t, r);
    }

    int64_t go(const Expr& e) {
        if (!ok_) return 0;
        DataType t = e.type();
        switch (e.kind()) {
            case NodeKind::IntImm: return e.as<IntImm>()->value;
            case NodeKind::Var: {
                auto it = env_.find(static_cast<const VarNode*>(e.get()));
                if (it == env_.end()) throw std::runtime_error("unbound variable " + e.as<VarNode>()->name);
                return it->second;
            }
#define BIN(N) case NodeKind::N: { auto* op = e.as<N>(); int64_t a = go(op->a), b = go(op->b); return arith(t, NodeKind::N, a, b); }
            BIN(Add) BIN(Sub) BIN(Mul) BIN(Div) BIN(Mod) BIN(Min) BIN(Max)
#undef BIN
#define CMP(N, EXPR) case NodeKind::N: { auto* op = e.as<N>(); DataType ot = op->a.type(); int64_t a = go(op->a), b = go(op->b); (void)ot; return (EXPR) ? 1 : 0; }
            CMP(EQ, a == b) CMP(NE, a != b) CMP(LT, less(ot, a, b)) CMP(LE, !less(ot, b, a))
            CMP(GT, less(ot, b, a)) CMP(GE, !less(ot, a, b)) CMP(And, a && b) CMP(Or, a || b)
#undef CMP
            case NodeKind::Not: return go(e.as<Not>()->a) ? 0 : 1;
            case NodeKind::Select: {
                auto* op = e.as<Select>();
                // Both branches are evaluated (select's semantics): an undefined branch makes
                // the whole undefined.
                int64_t c = go(op->condition), a = go(op->true_value), b = go(op->false_value);
                return c ? a : b;
            }
            case NodeKind::Cast: return wrap(t, go(e.as<Cast>()->value));
            case NodeKind::Let: {
                auto* op = e.as<Let>();
                int64_t v = go(op->value);
                auto key = static_cast<const VarNode*>(op->var.get());
                auto saved = env_.find(key) != env_.end() ? std::optional<int64_t>(env_[key]) : std::nullopt;
                env_[key] = v;
                int64_t r = go(op->body);
                if (saved) env_[key] = *saved; else env_.erase(key);
                return r;
            }
            default: throw std::runtime_error(std::string("reference evaluator: unsupported node ") + kind_name(e.kind()));
        }
    }
};

}  // namespace arith_test
