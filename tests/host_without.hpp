// The host's Target with one CPU feature switched off: a test runs the code paths of CPUs
// without it (AVX512_BF16's, VNNI's fallbacks) on this one.
#pragma once
#include <string>

#include "weft/ir/target.hpp"

namespace weft::test {

// Target::host() with `feature` switched off by a "-feature" entry after its "+feature" (as
// LLVM and Target::has_feature read them: the last entry wins).
inline Target host_without(const std::string& feature) {
    Target t = Target::host();
    t.features += ",-" + feature;
    return t;
}

}  // namespace weft::test
