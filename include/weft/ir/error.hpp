// weft::Error and the two kinds of checks.
//
// A *user* error (weft::Error) means the input was wrong (a shape, a schedule, a buffer, a
// model): the message says what and how to fix it. An *internal* error
// (weft::InternalError, also a weft::Error) is a bug in weft: an invariant failed, or an
// operator's shape inference accepted what its computation then refused. Catch
// weft::Error for both; tests and apps that must tell them apart catch InternalError first.
// Messages are only built when a check fails.
#pragma once
#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>

namespace weft {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& msg) : std::runtime_error(msg) {}
    // Throws an error of this one's own kind with another message: how a layer adds context
    // on the way up without turning, say, an internal error into a user error. Each kind
    // derived from Error overrides it.
    [[noreturn]] virtual void rethrow_with(const std::string& message) const { throw Error(message); }
};

// A bug in weft (see above); its message starts "weft internal error".
class InternalError : public Error {
public:
    explicit InternalError(const std::string& msg) : Error(msg) {}
    [[noreturn]] void rethrow_with(const std::string& message) const override { throw InternalError(message); }
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

inline constexpr const char* internal_error_prefix = "weft internal error (a bug in weft, please report it)";

[[noreturn]] inline void throw_internal_error(const char* file, int line, const std::string& msg) {
    throw InternalError(concat(internal_error_prefix, " at ", file, ":", line, ": ", msg));
}

// An internal error found where no source line is the culprit (a rewrite's result refused).
[[noreturn]] inline void throw_internal_error(const std::string& msg) {
    throw InternalError(concat(internal_error_prefix, ": ", msg));
}

// The one way to add context to an error on its way up: the same kind (user or internal),
// the message "weft: <context>: <the error's message><suffix>" (an internal error keeps its
// prefix and gets the context on a line of its own).
[[noreturn]] inline void rethrow_with_context(const Error& e, const std::string& context,
                                              const std::string& suffix = "") {
    if (dynamic_cast<const InternalError*>(&e)) e.rethrow_with(concat(e.what(), "\n  (while ", context, suffix, ")"));
    e.rethrow_with(concat("weft: ", context, ": ", unprefixed(e.what()), suffix));
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
