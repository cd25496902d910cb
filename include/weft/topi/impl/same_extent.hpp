// Whether two shape extents are provably equal. structural_equal would call two different
// symbolic dimensions (n and m) equal up to renaming, which a shape check must not.
#pragma once
#include "weft/ir/arith/simplify.hpp"

namespace weft::topi::detail {

inline bool same_extent(const Expr& a, const Expr& b) {
    int64_t x = 0, y = 0;
    if (ir::as_const_int(a, &x) && ir::as_const_int(b, &y)) return x == y;
    return ir::arith::can_prove(ir::cast(index_type, a) == ir::cast(index_type, b));
}

}  // namespace weft::topi::detail
