// The host side of ir/abi.hpp: the C functions generated kernels call (declared there),
// plus the C++ half of the error channel. A kernel reports a failure by calling
// weft_runtime_set_error and returning non-zero; the runtime then throws weft::Error with
// take_last_error(). The message lives in a thread-local, so concurrent kernels on other
// threads cannot clobber it.
#pragma once
#include <string>

#include "weft/ir/abi.hpp"

namespace weft::runtime {

// Returns the message the last failing kernel on this thread stored, and clears it.
std::string take_last_error();

}  // namespace weft::runtime
