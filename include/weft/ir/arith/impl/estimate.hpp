#pragma once
#include "weft/ir/arith/estimate.hpp"
#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::ir::arith {

namespace detail {
// Every variable replaced by its estimate; `known` false where one has none.
class AtEstimates : public IRMutator {
public:
    bool known = true;

protected:
    Expr visit_(const VarNode* op, const Expr& self) override {
        if (op->estimate <= 0) {
            known = false;
            return self;
        }
        return make_const(op->type, op->estimate);
    }
};
}  // namespace detail

std::optional<int64_t> estimate(const Expr& e) {
    int64_t v = 0;
    if (as_const_int(e, &v)) return v;
    detail::AtEstimates at;
    Expr folded = at.mutate(e);
    if (!at.known || !as_const_int(simplify(folded), &v)) return std::nullopt;
    return v;
}

int64_t value_or_estimate(const Expr& e, int64_t fallback) { return estimate(e).value_or(fallback); }

}  // namespace weft::ir::arith
