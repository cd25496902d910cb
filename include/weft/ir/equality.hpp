// Structural equality and hashing, up to renaming of variables: two trees are equal when
// they have the same shape, types and constants, and their variables correspond one to
// one in order of first appearance. The kernel cache keys on this hash.
#pragma once
#include <cstdint>

#include "weft/ir/stmt.hpp"

namespace weft::ir {

bool structural_equal(const Expr& a, const Expr& b);
bool structural_equal(const Stmt& a, const Stmt& b);
uint64_t structural_hash(const Expr& e);
uint64_t structural_hash(const Stmt& s);

}  // namespace weft::ir
