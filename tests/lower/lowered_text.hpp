// Helpers for tests that inspect a printed (lowered) program.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace lowered_text {

// How many times `what` occurs in `text` (overlapping occurrences count).
inline size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// The lines allocating `buffer` (e.g. "matmul.local") whose size is not a constant: a
// register tile of symbolic size is a heap buffer per tile, with no unrolled or vector code.
inline std::vector<std::string> symbolic_allocations(const std::string& text, const std::string& buffer) {
    std::vector<std::string> lines;
    const std::string head = "allocate " + buffer + "[";
    for (size_t at = text.find(head); at != std::string::npos; at = text.find(head, at + 1)) {
        std::string line = text.substr(at, text.find('\n', at) - at);
        size_t star = line.find('*'), close = line.find(']');
        std::string size = star == std::string::npos ? line : line.substr(star + 1, close - star - 1);
        if (size.find_first_not_of(" 0123456789") != std::string::npos) lines.push_back(line);
    }
    return lines;
}

}  // namespace lowered_text
