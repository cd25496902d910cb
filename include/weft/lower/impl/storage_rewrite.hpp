// Storage rewrite: intermediate allocations whose lifetimes do not overlap share memory.
#pragma once
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {

// (Implemented in the storage-rewrite change; for now the identity.)
inline ir::Stmt storage_rewrite(const ir::Stmt& s) { return s; }

}  // namespace weft::lower_passes
