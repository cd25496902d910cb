// Definitions of autotune/measure.hpp.
#pragma once
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "weft/autotune/measure.hpp"
#include "weft/ir/error.hpp"

namespace weft::autotune {

std::string run_isolated(const std::function<std::string()>& check, double timeout_s) {
    int fds[2];
    WEFT_CHECK(::pipe(fds) == 0, "autotune: cannot create a pipe: ", std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        ::weft::detail::throw_user_error(::weft::detail::concat("autotune: cannot fork: ", std::strerror(errno)));
    }
    if (pid == 0) {
        // The child: only this thread exists. It never returns and never runs destructors
        // (the parent's thread pool and JIT state are copies whose threads are gone);
        // parallel loops run their chunks on this thread alone.
        ::close(fds[0]);
        // A crash ends the child at once: the process's own handlers (a test framework's, an
        // application's crash reporter) must not run for the candidate's fault.
        for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::signal(sig, SIG_DFL);
        std::string message;
        try {
            message = check();
        } catch (const std::exception& e) {
            message = std::string("threw: ") + e.what();
        } catch (...) {
            message = "threw an exception that is not a std::exception";
        }
        size_t written = 0;
        while (written < message.size()) {
            ssize_t n = ::write(fds[1], message.data() + written, message.size() - written);
            if (n <= 0) break;
            written += size_t(n);
        }
        ::_exit(message.empty() ? 0 : 3);
    }
    ::close(fds[1]);
    // Wait for the child, polling (a pipe read would block past the timeout on a hang).
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
    int status = 0;
    bool timed_out = false;
    for (auto pause = std::chrono::microseconds(50);; pause = std::min(pause * 2, std::chrono::microseconds(20000))) {
        pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (Clock::now() >= deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            timed_out = true;
            break;
        }
        std::this_thread::sleep_for(pause);
    }
    std::string message;
    char buffer[4096];
    for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, size_t(n));
    ::close(fds[0]);
    if (timed_out) return "timed out after " + std::to_string(timeout_s) + " s";
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        return "crashed: signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
    return message.empty() ? "exited with status " + std::to_string(WEXITSTATUS(status)) : message;
}

std::string compare_outputs(const BufferRef& got, const BufferRef& want, double rtol, double atol) {
    if (got.shape() != want.shape() || got.dtype() != want.dtype()) return "wrong result: the output's shape or type differs";
    if (got.dtype() != f32)
        return std::memcmp(got.data(), want.data(), size_t(got.size_bytes())) == 0 ? "" : "wrong result: bytes differ";
    const float* g = static_cast<const float*>(got.data());
    const float* w = static_cast<const float*>(want.data());
    for (int64_t i = 0; i < got.size(); ++i) {
        const double err = std::abs(double(g[i]) - double(w[i]));
        if (!(err <= atol + rtol * std::abs(double(w[i]))) && !(std::isnan(g[i]) && std::isnan(w[i])))
            return "wrong result: element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", expected " +
                   std::to_string(w[i]);
    }
    return "";
}

MeasureResult measure(const Kernel& kernel, const std::vector<BufferRef>& args, size_t output,
                      const BufferRef* reference, const MeasureOptions& options) {
    std::vector<KernelArgValue> values;
    for (const BufferRef& b : args) values.emplace_back(b);
    auto run = [&] { kernel.call(std::span<const KernelArgValue>(values.data(), values.size())); };
    MeasureResult result;
    result.error = run_isolated(
        [&]() -> std::string {
            run();
            return reference ? compare_outputs(args.at(output), *reference, options.rtol, options.atol) : "";
        },
        options.timeout_s);
    if (!result.error.empty()) return result;
    try {
        for (int i = 0; i < options.warmup; ++i) run();
        for (int i = 0; i < std::max(1, options.repeats); ++i) {
            auto t0 = std::chrono::steady_clock::now();
            run();
            result.costs_ms.push_back(
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
    } catch (const Error& e) {
        result.error = std::string("threw: ") + e.what();
        result.costs_ms.clear();
    }
    return result;
}

}  // namespace weft::autotune
