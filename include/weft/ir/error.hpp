// weft::Error and the two kinds of checks.
//
// A *user* error means the input was wrong (a shape, a schedule, a buffer): the message
// says what and how to fix it. An *internal* error is a bug in weft. Messages are only
// built when a check fails.
#pragma once
#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>

namespace weft {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

namespace detail {

template <class... Args>
std::string concat(const Args&... args) {
    std::ostringstream os;
    (os << ... << args);
    return os.str();
}

[[noreturn]] inline void throw_user_error(const std::string& msg) { throw Error("weft: " + msg); }

// A message of throw_user_error without its "weft: " prefix, to quote it inside another.
inline std::string unprefixed(std::string message) {
    if (message.rfind("weft: ", 0) == 0) message.erase(0, 6);
    return message;
}

[[noreturn]] inline void throw_user_error_at(const std::source_location& loc, const std::string& msg) {
    throw Error(concat("weft: ", msg, "\n  (called from ", loc.file_name(), ":", loc.line(), ")"));
}

[[noreturn]] inline void throw_internal_error(const char* file, int line, const std::string& msg) {
    throw Error(concat("weft internal error (a bug in weft, please report it) at ", file, ":", line, ": ",
                       msg));
}

}  // namespace detail
}  // namespace weft

// A user check: the message arguments are streamed only when the condition fails.
#define WEFT_CHECK(cond, ...)                                                         \
    do {                                                                              \
        if (!(cond)) ::weft::detail::throw_user_error(::weft::detail::concat(__VA_ARGS__)); \
    } while (0)

// A user check that points at the user's call site (loc is a std::source_location).
#define WEFT_CHECK_AT(loc, cond, ...)                                                 \
    do {                                                                              \
        if (!(cond))                                                                  \
            ::weft::detail::throw_user_error_at(loc, ::weft::detail::concat(__VA_ARGS__)); \
    } while (0)

// An internal invariant: failing means a bug in weft.
#define WEFT_ICHECK(cond, ...)                                                        \
    do {                                                                              \
        if (!(cond))                                                                  \
            ::weft::detail::throw_internal_error(__FILE__, __LINE__,                  \
                                                 ::weft::detail::concat("check `" #cond "` failed. ", ##__VA_ARGS__)); \
    } while (0)
