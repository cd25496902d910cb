// Helpers for tests that inspect a printed (lowered) program.
#pragma once
#include <cstddef>
#include <string>

namespace lowered_text {

// How many times `what` occurs in `text` (overlapping occurrences count).
inline size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace lowered_text
