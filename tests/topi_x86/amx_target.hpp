// The AMX tests' targets: code for AMX's tiles is compiled on any CPU (for this machine with
// the tiles added) and run only where this CPU has them.
#pragma once
#include <doctest/doctest.h>

#include "weft/weft.hpp"

namespace weft::test {

// This machine with AMX's tiles added (code for it is only compiled, not run, elsewhere).
inline Target amx_target() {
    Target t = Target::host();
    t.features += ",+amx-tile,+amx-bf16,+amx-int8";
    return t;
}

// Whether to skip running AMX code here (printing "skipped: no AMX on this CPU").
inline bool skip_without_amx() {
    if (topi::has_amx_bf16(Target::host()) && topi::has_amx_int8(Target::host())) return false;
    MESSAGE("skipped: no AMX on this CPU");
    return true;
}

}  // namespace weft::test
