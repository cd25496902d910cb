// Shorthands shared by the targeted arith tests.
#pragma once
#include <string>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"

namespace arith_test {

// The constant interval [lo, hi].
inline weft::ir::arith::Interval range(int64_t lo, int64_t hi) {
    return weft::ir::arith::Interval(weft::ir::make_int(lo), weft::ir::make_int(hi));
}

// The simplified form of e as text.
inline std::string s(const weft::ir::Expr& e, const weft::ir::arith::VarRanges& r = {}) {
    return weft::ir::to_string(weft::ir::arith::simplify(e, r));
}

}  // namespace arith_test
