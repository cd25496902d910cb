// The host's Target with one CPU feature switched off: a test runs the code paths of CPUs
// without it (AVX512_BF16's, VNNI's fallbacks) on this one.
#pragma once
#include <string>

#include "weft/ir/target.hpp"

namespace weft::test {

// Target::host() with the whole entry "+feature" of its features made "-feature" (as
// Target::has_feature reads them: "+avx512fp16" is not "+avx512f").
inline Target host_without(const std::string& feature) {
    Target t = Target::host();
    const std::string entry = "+" + feature;
    for (size_t at = t.features.find(entry); at != std::string::npos; at = t.features.find(entry, at + 1)) {
        const size_t end = at + entry.size();
        if ((at == 0 || t.features[at - 1] == ',') && (end == t.features.size() || t.features[end] == ',')) {
            t.features[at] = '-';
            break;
        }
    }
    return t;
}

}  // namespace weft::test
