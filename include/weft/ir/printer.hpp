// Shows any node as readable C-like text.
#pragma once
#include <ostream>
#include <string>

#include "weft/ir/stmt.hpp"

namespace weft::ir {

std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);
std::string to_string(const Expr& e);
std::string to_string(const Stmt& s);

}  // namespace weft::ir

namespace weft {
inline std::ostream& operator<<(std::ostream& os, const DataType& t) { return os << t.str(); }
}  // namespace weft
