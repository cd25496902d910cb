// How deep an expression tree is, measured without recursion: the IR's visitors and
// mutators recurse once per level, so a tree deeper than the stack allows would crash them.
// Checks that refuse such trees (te's compute) call this first.
#pragma once
#include <cstdint>

#include "weft/ir/expr.hpp"

namespace weft::ir {

// The number of levels of e's tree (a leaf: 1), counted up to `cap` (returned as soon as a
// path reaches it). A node shared by several parents counts once per path, as a visitor
// would walk it, but its subtree is measured once.
int64_t expr_depth(const Expr& e, int64_t cap);

}  // namespace weft::ir
