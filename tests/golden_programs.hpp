// Golden loop programs: a map of case name -> lowered program text, compared with a file
// written once by the code a change must not alter (the hand-written schedules, before they
// became templates). WEFT_WRITE_GOLDEN=1 rewrites the file instead of comparing (only after a
// change meant to alter the programs).
//
// File format: "=== <name>" lines, each followed by its program.
#pragma once
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace golden {

inline std::string serialize(const std::map<std::string, std::string>& programs) {
    std::ostringstream text;
    for (const auto& [name, program] : programs) text << "=== " << name << "\n" << program << "\n";
    return text.str();
}

inline std::map<std::string, std::string> parse(const std::string& text) {
    std::map<std::string, std::string> out;
    std::istringstream in(text);
    std::string line, name, body;
    auto flush = [&] {
        if (!name.empty()) out[name] = body.substr(0, body.empty() ? 0 : body.size() - 1);
    };
    while (std::getline(in, line)) {
        if (line.rfind("=== ", 0) == 0) {
            flush();
            name = line.substr(4);
            body.clear();
        } else {
            body += line + "\n";
        }
    }
    flush();
    return out;
}

// Every program equals its golden copy, and the file has no case more or less.
inline void check_programs(const std::map<std::string, std::string>& programs, const std::string& path) {
    if (const char* write = std::getenv("WEFT_WRITE_GOLDEN"); write && std::string(write) == "1") {
        std::ofstream(path) << serialize(programs);
        MESSAGE("wrote " << path);
        return;
    }
    std::ifstream file(path);
    REQUIRE_MESSAGE(file, "cannot read " << path);
    std::stringstream text;
    text << file.rdbuf();
    std::map<std::string, std::string> want = parse(text.str());
    REQUIRE(want.size() == programs.size());
    for (const auto& [name, program] : programs) {
        CAPTURE(name);
        REQUIRE(want.count(name) == 1);
        CHECK(want[name] == program);
    }
}

}  // namespace golden
