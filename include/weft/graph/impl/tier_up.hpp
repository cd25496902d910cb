// A tiered build's second tier (BuildOptions::tier = CompileTier::tiered): the optimized
// kernels, compiled on a thread of their own while the module runs its fast ones. The module
// takes them on the thread that runs it, between runs (Module::State::adopt_optimized), so a
// run never sees a kernel change under it; the worker never touches the module.
#pragma once
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "weft/graph/impl/compile_group.hpp"

namespace weft::graph::detail {

class TierUp {
public:
    // Compiles the module's groups again (the optimized tier); stops early, its result then
    // unused, once `cancel` is set.
    using Compile = std::function<std::vector<CompiledGroup>(const std::atomic<bool>& cancel)>;

    explicit TierUp(Compile compile) : worker_([this, compile = std::move(compile)] { run(compile); }) {}
    // A module dropped before its optimized tier is ready: the worker stops at the next group.
    ~TierUp() {
        cancel_.store(true);
        worker_.join();
    }
    TierUp(const TierUp&) = delete;
    TierUp& operator=(const TierUp&) = delete;

    bool ready() const { return ready_.load(std::memory_order_acquire); }

    // The optimized groups, waiting for them, each checked to take what the fast kernel it
    // replaces takes (`args`, `large_args`: per kernel); rethrows the compile's error.
    std::vector<CompiledGroup> take(const std::vector<std::vector<int>>& args,
                                    const std::vector<std::vector<int>>& large_args) {
        std::unique_lock<std::mutex> lock(mutex_);
        done_.wait(lock, [&] { return ready(); });
        if (error_) std::rethrow_exception(error_);
        WEFT_ICHECK(groups_.size() == args.size(), "tiered build: ", groups_.size(), " optimized kernels for ",
                    args.size());
        for (size_t k = 0; k < groups_.size(); ++k)
            WEFT_ICHECK(groups_[k].args == args[k] && groups_[k].large_args == large_args[k], "tiered build: kernel #",
                        k, "'s optimized tier takes other arguments");
        return std::move(groups_);
    }

private:
    void run(const Compile& compile) {
        std::vector<CompiledGroup> groups;
        std::exception_ptr error;
        try {
            groups = compile(cancel_);
        } catch (...) {
            error = std::current_exception();
        }
        std::lock_guard<std::mutex> lock(mutex_);
        groups_ = std::move(groups);
        error_ = error;
        ready_.store(true, std::memory_order_release);
        done_.notify_all();
    }

    std::atomic<bool> cancel_{false}, ready_{false};
    std::mutex mutex_;
    std::condition_variable done_;
    std::vector<CompiledGroup> groups_;
    std::exception_ptr error_;
    std::thread worker_;  // last: it starts once the members above exist
};

}  // namespace weft::graph::detail
