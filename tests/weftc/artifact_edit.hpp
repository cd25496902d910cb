// Edits of a .weft artifact's bytes for the tests: what a faulty tool, a bad copy or a hand
// could do to a file, with the header made to fit again so that the loader's own checks
// (past the checksum) are what sees the damage.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <weft/graph/artifact.hpp>

namespace artifact_edit {

// The header's payload size and checksum recomputed after an edit.
inline void fix_checksum(std::string& a) {
    const std::string_view payload = std::string_view(a).substr(weft::graph::kArtifactHeaderBytes);
    uint64_t size = payload.size(), sum = weft::graph::artifact_checksum(payload);
    std::memcpy(a.data() + 16, &size, 8);
    std::memcpy(a.data() + 24, &sum, 8);
}

// Replaces the first `from` in s by `to`; whether there was one.
inline bool replace_first(std::string& s, const std::string& from, const std::string& to) {
    size_t at = s.find(from);
    if (at == std::string::npos) return false;
    s.replace(at, from.size(), to);
    return true;
}

}  // namespace artifact_edit
