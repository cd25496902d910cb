// Definitions of autotune/measure.hpp.
#pragma once
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "weft/autotune/measure.hpp"
#include "weft/ir/error.hpp"
#include "weft/runtime/cuda/cuda.hpp"

namespace weft::autotune {

namespace measure_detail {

// A child's report of one item through the pipe: index, ok, the text's length, then the text.
struct FrameHeader {
    uint32_t index;
    uint8_t ok;
    uint64_t length;
};
constexpr size_t kFrameHeader = sizeof(uint32_t) + sizeof(uint8_t) + sizeof(uint64_t);

inline void write_all(int fd, const char* data, size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        data += n;
        size -= size_t(n);
    }
}

// The child: items [first, n) one after the other, each reported as a frame; it stops after
// the first that fails (a GPU fault leaves its context unusable: the rest go to a new child).
[[noreturn]] inline void child_main(int fd, size_t first, size_t n, const std::function<bool(size_t, std::string&)>& work) {
    // Only this thread exists. The child never returns and never runs destructors (the
    // parent's thread pool and JIT state are copies whose threads are gone); parallel loops
    // run their chunks on this thread alone. A crash ends it at once: the process's own
    // handlers (a test framework's, an application's crash reporter) must not run for the
    // candidate's fault.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT}) ::signal(sig, SIG_DFL);
    for (size_t i = first; i < n; ++i) {
        std::string text;
        bool ok = false;
        try {
            ok = work(i, text);
        } catch (const std::exception& e) {
            text = std::string("threw: ") + e.what();
        } catch (...) {
            text = "threw an exception that is not a std::exception";
        }
        char header[kFrameHeader];
        const uint32_t index = uint32_t(i);
        const uint8_t flag = ok ? 1 : 0;
        const uint64_t length = text.size();
        std::memcpy(header, &index, sizeof index);
        std::memcpy(header + sizeof index, &flag, sizeof flag);
        std::memcpy(header + sizeof index + sizeof flag, &length, sizeof length);
        write_all(fd, header, sizeof header);
        write_all(fd, text.data(), text.size());
        if (!ok) break;
    }
    ::_exit(0);
}

}  // namespace measure_detail

std::vector<ChildResult> run_in_children(size_t n, const std::function<bool(size_t, std::string&)>& work,
                                                double timeout_s) {
    std::vector<ChildResult> results(n);
    using Clock = std::chrono::steady_clock;
    const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
    size_t next = 0;  // the first item without a result
    while (next < n) {
        int fds[2];
        WEFT_CHECK(::pipe(fds) == 0, "autotune: cannot create a pipe: ", std::strerror(errno));
        const pid_t pid = ::fork();
        if (pid < 0) {
            ::close(fds[0]);
            ::close(fds[1]);
            ::weft::detail::throw_user_error(::weft::detail::concat("autotune: cannot fork: ", std::strerror(errno)));
        }
        if (pid == 0) {
            ::close(fds[0]);
            measure_detail::child_main(fds[1], next, n, work);
        }
        ::close(fds[1]);
        // Read frames until the child closes the pipe; each item has timeout_s from the last report.
        const size_t started = next;
        auto deadline = Clock::now() + timeout;
        std::string pending;
        bool timed_out = false;
        char buffer[65536];
        for (;;) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) {
                timed_out = true;
                break;
            }
            pollfd p{fds[0], POLLIN, 0};
            const int ready = ::poll(&p, 1, int(std::min<long long>(left, 20)));
            if (ready < 0 && errno != EINTR) break;
            if (ready <= 0) continue;
            const ssize_t got = ::read(fds[0], buffer, sizeof buffer);
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;  // the child closed the pipe
            pending.append(buffer, size_t(got));
            while (pending.size() >= measure_detail::kFrameHeader) {
                measure_detail::FrameHeader h{};
                std::memcpy(&h.index, pending.data(), sizeof h.index);
                std::memcpy(&h.ok, pending.data() + sizeof h.index, sizeof h.ok);
                std::memcpy(&h.length, pending.data() + sizeof h.index + sizeof h.ok, sizeof h.length);
                if (pending.size() < measure_detail::kFrameHeader + h.length) break;
                if (h.index == next && next < n) {
                    results[next] = {h.ok != 0, pending.substr(measure_detail::kFrameHeader, size_t(h.length))};
                    ++next;
                    deadline = Clock::now() + timeout;
                }
                pending.erase(0, measure_detail::kFrameHeader + size_t(h.length));
            }
        }
        ::close(fds[0]);
        int status = 0;
        if (!timed_out) {
            // The pipe closed: the child is exiting (or hangs after closing it: bounded too).
            for (auto pause = std::chrono::microseconds(50);; pause = std::min(pause * 2, std::chrono::microseconds(20000))) {
                if (::waitpid(pid, &status, WNOHANG) == pid) break;
                if (Clock::now() >= deadline) {
                    timed_out = true;
                    break;
                }
                std::this_thread::sleep_for(pause);
            }
        }
        if (timed_out) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
        }
        if (next >= n) break;
        // The item the child was on when it ended without reporting it. A child that failed
        // an item and stopped ended cleanly: the next child goes on (unless it reported nothing).
        const bool clean = !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (clean && next > started && !results[next - 1].ok) continue;
        std::string why;
        if (timed_out) why = "timed out after " + std::to_string(timeout_s) + " s";
        else if (WIFSIGNALED(status)) why = "crashed: signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
        else if (clean) why = "the measuring process ended without a result";
        else why = "exited with status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        results[next++] = {false, why};
    }
    return results;
}

std::string run_isolated(const std::function<std::string()>& check, double timeout_s) {
    ChildResult r = run_in_children(
        1,
        [&](size_t, std::string& text) {
            text = check();
            return text.empty();
        },
        timeout_s)[0];
    return r.ok ? "" : r.text;
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

std::vector<MeasureResult> measure_on_device(size_t count, const std::function<Kernel(size_t)>& kernel_of,
                                             const std::vector<BufferRef>& args, size_t output,
                                             const BufferRef* reference, Device device,
                                             const MeasureOptions& options, BufferRef* output_back) {
    WEFT_CHECK(device.is_cuda(), "autotune::measure_on_device: measures on a CUDA device, got ", device.str());
    WEFT_CHECK(output < args.size(), "autotune::measure_on_device: output ", output, " of ", args.size(), " arguments");
    const bool want_output = output_back != nullptr;
    // The child's copies of the arguments on the device, made for its first candidate.
    std::vector<BufferRef> on_device;
    auto measure_one = [&](size_t i, std::string& text) -> bool {
        const Kernel kernel = kernel_of(i);
        if (on_device.empty())
            for (const BufferRef& a : args) on_device.push_back(a.copy_to(device));
        std::vector<KernelArgValue> values(on_device.begin(), on_device.end());
        auto launch = [&] { kernel.call(std::span<const KernelArgValue>(values.data(), values.size())); };
        launch();
        cuda::synchronize(device);
        BufferRef got = on_device[output].copy_to(Device::cpu());
        if (reference) {
            text = compare_outputs(got, *reference, options.rtol, options.atol);
            if (!text.empty()) return false;
        }
        for (int w = 0; w < options.warmup; ++w) launch();
        cuda::Event start = cuda::Event::create(device), end = cuda::Event::create(device);
        start.record();
        launch();
        end.record();
        // A sample lasts about a millisecond: a short kernel's launches back to back.
        const double one_ms = cuda::Event::elapsed_ms(start, end);
        const int per_sample = int(std::clamp(std::ceil(1.0 / std::max(one_ms, 1e-3)), 1.0, 1000.0));
        std::vector<double> costs;
        for (int r = 0; r < std::max(1, options.repeats); ++r) {
            start.record();
            for (int j = 0; j < per_sample; ++j) launch();
            end.record();
            costs.push_back(cuda::Event::elapsed_ms(start, end) / per_sample);
        }
        // The payload: the number of costs, the costs, then the output's bytes if wanted.
        const uint32_t n = uint32_t(costs.size());
        text.assign(reinterpret_cast<const char*>(&n), sizeof n);
        text.append(reinterpret_cast<const char*>(costs.data()), costs.size() * sizeof(double));
        if (want_output && i == 0) text.append(static_cast<const char*>(got.data()), size_t(got.size_bytes()));
        return true;
    };
    std::vector<ChildResult> children =
        run_in_children(count, measure_one, options.timeout_s);
    std::vector<MeasureResult> results(count);
    for (size_t i = 0; i < count; ++i) {
        MeasureResult& result = results[i];
        const std::string& text = children[i].text;
        if (!children[i].ok) {
            result.error = text;
            continue;
        }
        uint32_t n = 0;
        const size_t output_bytes = want_output && i == 0 ? size_t(args[output].size_bytes()) : 0;
        if (text.size() >= sizeof n) std::memcpy(&n, text.data(), sizeof n);
        if (text.size() != sizeof n + n * sizeof(double) + output_bytes) {
            result.error = "the measuring process returned " + std::to_string(text.size()) + " bytes, not what it was asked for";
            continue;
        }
        result.costs_ms.resize(n);
        std::memcpy(result.costs_ms.data(), text.data() + sizeof n, n * sizeof(double));
        if (output_bytes > 0) {
            *output_back = BufferRef::allocate(args[output].dtype(), args[output].shape());
            std::memcpy(output_back->data(), text.data() + sizeof n + n * sizeof(double), output_bytes);
        }
    }
    return results;
}

MeasureResult measure_on_device(const Kernel& kernel, const std::vector<BufferRef>& args, size_t output,
                                const BufferRef* reference, Device device, const MeasureOptions& options,
                                BufferRef* output_back) {
    return measure_on_device(
        1, [&](size_t) { return kernel; }, args, output, reference, device, options, output_back)[0];
}

}  // namespace weft::autotune
