// A compile on a thread of its own while the module runs: a tiered build's optimized tier
// (BuildOptions::tier = CompileTier::tiered) and the kernels specialized for a size that
// runs often (BuildOptions::specialize_after_runs). The module takes the result on the
// thread that runs it, between runs, so a run never sees a kernel change under it; the
// worker never touches the module.
#pragma once
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace weft::graph::detail {

template <class T>
class BackgroundCompile {
public:
    // Makes the result; may stop early, its result then unused, once `cancel` is set.
    using Compile = std::function<T(const std::atomic<bool>& cancel)>;

    explicit BackgroundCompile(Compile compile) : worker_([this, compile = std::move(compile)] { run(compile); }) {}
    // A module dropped before the result is ready: the worker stops at its next step.
    ~BackgroundCompile() {
        cancel_.store(true);
        worker_.join();
    }
    BackgroundCompile(const BackgroundCompile&) = delete;
    BackgroundCompile& operator=(const BackgroundCompile&) = delete;

    bool ready() const { return ready_.load(std::memory_order_acquire); }

    // The result, waiting for it; rethrows the compile's error.
    T take() {
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [&] { return ready(); });
        if (error_) std::rethrow_exception(error_);
        return std::move(result_);
    }

private:
    void run(const Compile& compile) {
        T result{};
        std::exception_ptr error;
        try {
            result = compile(cancel_);
        } catch (...) {
            error = std::current_exception();
        }
        std::lock_guard<std::mutex> lock(mutex_);
        result_ = std::move(result);
        error_ = error;
        ready_.store(true, std::memory_order_release);
        done_.notify_all();
    }

    std::atomic<bool> cancel_{false}, ready_{false};
    std::mutex mutex_;
    std::condition_variable done_;
    T result_{};
    std::exception_ptr error_;
    std::thread worker_;  // last: it starts once the members above exist
};

}  // namespace weft::graph::detail
