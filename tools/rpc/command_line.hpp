// The RPC tools' command lines: --name value pairs, --help, one-line errors (exit status 2).
#pragma once
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

namespace weft_rpc_tools {

// Calls take(name, value) for each pair; a name it does not take (false), a missing value or
// --help ends the program with the usage.
inline void parse(int argc, char** argv, const char* program, const char* usage,
                  const std::function<bool(const std::string&, const std::string&)>& take) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::fputs(usage, stdout);
            std::exit(0);
        }
        if (i + 1 >= argc) {
            std::fprintf(stderr, "%s: error: %s needs a value\n%s", program, a.c_str(), usage);
            std::exit(2);
        }
        if (!take(a, argv[++i])) {
            std::fprintf(stderr, "%s: error: unknown option '%s'\n%s", program, a.c_str(), usage);
            std::exit(2);
        }
    }
}

}  // namespace weft_rpc_tools
