// The thread pool behind weft_runtime_parallel_for (see runtime/thread_pool.hpp).
//
// Protocol: one job at a time (mutex_). The submitter writes the job fields, then bumps
// generation_ (release); each worker sees the new generation (acquire), runs its chunk and
// decrements pending_ (acq_rel); the submitter waits for pending_ == 0 before reading the
// result or writing the next job. Waiting spins for a short while, then sleeps in
// std::atomic::wait (a futex), which costs nothing when no one sleeps.
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "weft/ir/error.hpp"
#include "weft/runtime/impl/c_runtime.hpp"
#include "weft/runtime/thread_pool.hpp"

namespace weft::runtime::detail {

// True on pool workers, and on a submitting thread while it runs its own chunk: a
// parallel_for from such a thread runs serially instead of re-entering the pool.
inline bool& in_parallel_region() {
    thread_local bool inside = false;
    return inside;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#else
    std::this_thread::yield();
#endif
}

// The integer in environment variable `name`, clamped to at most `hi`; nothing when it is
// unset, not a whole number or below `lo`.
inline std::optional<long> env_integer(const char* name, long lo, long hi) {
    const char* env = std::getenv(name);
    if (!env) return std::nullopt;
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end == env || *end != '\0' || v < lo) return std::nullopt;
    return std::min(v, hi);
}

// How long a waiting thread spins before it sleeps: WEFT_SPIN_MICROSECONDS, else 2000.
// Back-to-back kernel launches (a network's layers, a benchmark's iterations) then find the
// workers awake: a worker asleep in a futex takes tens to hundreds of microseconds to wake
// on a virtual machine (its idle vCPU has gone back to the host), longer than a small kernel
// runs. libgomp and TVM's pool also spin for milliseconds. Measured on the 2-vCPU VM, five
// processes each: 2-thread SGEMM 256^3 at 128-178 GFLOP/s with a 25 us spin, 180-208 with
// 2 ms; int8 GEMM 256^3 at 451 in a full benchmark run, 680-816 with 2 ms. The cost: a
// worker burns up to that long after each parallel loop (set 0 where other processes need
// the cores more than weft needs the latency).
inline std::chrono::microseconds spin_before_sleep() {
    static const std::chrono::microseconds spin(env_integer("WEFT_SPIN_MICROSECONDS", 0, 1000000).value_or(2000));
    return spin;
}

// Waits until `a` no longer holds `old` and returns the new value: spins (with pause) for
// spin_before_sleep(), then sleeps in std::atomic::wait.
template <class T>
T wait_while_equal(const std::atomic<T>& a, T old) {
    const auto give_up = std::chrono::steady_clock::now() + spin_before_sleep();
    for (int i = 1;; ++i) {
        T v = a.load(std::memory_order_acquire);
        if (v != old) return v;
        cpu_relax();
        if (i % 256 == 0 && std::chrono::steady_clock::now() >= give_up) break;
    }
    for (;;) {
        a.wait(old, std::memory_order_acquire);
        T v = a.load(std::memory_order_acquire);
        if (v != old) return v;
    }
}

inline int default_num_threads() {
    // An unparsable value falls back to the core count rather than failing inside a kernel
    // launch, where no exception may be thrown.
    if (std::optional<long> v = env_integer("WEFT_NUM_THREADS", 1, 1024)) return static_cast<int>(*v);
    unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
}

class ThreadPool {
public:
    static ThreadPool& global() {
        // Destroyed at exit, which joins the workers.
        static ThreadPool pool;
        return pool;
    }

    ThreadPool() : size_(default_num_threads()) {}
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;
    ~ThreadPool() {
        std::lock_guard lock(mutex_);
        stop_workers();
    }

    int size() const { return size_.load(std::memory_order_relaxed); }

    // Workers are (re)started lazily by the next job, so resizing is cheap.
    void resize(int n) {
        WEFT_CHECK(n >= 0, "set_num_threads(", n, "): the thread count must be >= 1, or 0 for the default");
        WEFT_CHECK(!in_parallel_region(),
                   "set_num_threads() was called from inside a parallel loop; call it between kernel calls");
        std::lock_guard lock(mutex_);
        stop_workers();
        size_.store(n == 0 ? default_num_threads() : n, std::memory_order_relaxed);
    }

    int32_t run(int64_t n, WeftParallelBody body, void* closure) noexcept {
        if (n <= 0) return 0;
        if (in_parallel_region()) return body(0, n, closure);
        std::unique_lock lock(mutex_);
        int threads = size();
        if (threads <= 1 || n == 1 || !ensure_workers(threads - 1)) {
            lock.unlock();
            return run_serial(n, body, closure);
        }
        body_ = body;
        closure_ = closure;
        n_ = n;
        chunks_ = std::min<int64_t>(n, threads);
        error_.store(0, std::memory_order_relaxed);
        error_from_worker_ = false;
        pending_.store(static_cast<int32_t>(workers_.size()), std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
        generation_.notify_all();

        in_parallel_region() = true;
        run_chunk(0);
        in_parallel_region() = false;

        for (int32_t left = pending_.load(std::memory_order_acquire); left != 0;)
            left = wait_while_equal(pending_, left);
        if (error_from_worker_) last_error_slot() = std::move(error_message_);
        return error_.load(std::memory_order_relaxed);
    }

private:
    static int32_t run_serial(int64_t n, WeftParallelBody body, void* closure) {
        in_parallel_region() = true;
        int32_t code = body(0, n, closure);
        in_parallel_region() = false;
        return code;
    }

    // Chunk t of the current job: [n*t/T, n*(t+1)/T), computed in 128 bits so that no n
    // overflows. Records the first failure and, for a worker, its message.
    void run_chunk(int64_t t) {
        if (t >= chunks_) return;
        auto bound = [&](int64_t k) { return static_cast<int64_t>(static_cast<__int128>(n_) * k / chunks_); };
        int32_t code = body_(bound(t), bound(t + 1), closure_);
        if (code == 0) return;
        int32_t expected = 0;
        if (error_.compare_exchange_strong(expected, code, std::memory_order_relaxed)) {
            if (t != 0) {
                error_message_ = std::move(last_error_slot());
                error_from_worker_ = true;
            }
        }
        if (t != 0) last_error_slot().clear();
    }

    void worker_loop(int64_t index, uint32_t seen) {
        in_parallel_region() = true;
        for (;;) {
            seen = wait_while_equal(generation_, seen);
            if (stop_) return;
            run_chunk(index);
            if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
        }
    }

    // Called with mutex_ held. Returns false when threads cannot be created (the job then
    // runs serially: a kernel launch must not fail for lack of threads).
    bool ensure_workers(int count) {
        if (static_cast<int>(workers_.size()) == count) return true;
        stop_workers();
        try {
            workers_.reserve(count);
            uint32_t gen = generation_.load(std::memory_order_relaxed);
            for (int i = 0; i < count; ++i) workers_.emplace_back(&ThreadPool::worker_loop, this, i + 1, gen);
        } catch (...) {
            stop_workers();
            return false;
        }
        return true;
    }

    // Called with mutex_ held.
    void stop_workers() {
        if (workers_.empty()) return;
        stop_ = true;
        generation_.fetch_add(1, std::memory_order_release);
        generation_.notify_all();
        for (auto& w : workers_) w.join();
        workers_.clear();
        stop_ = false;
    }

    std::mutex mutex_;  // one job at a time; guards workers_ and the job fields
    std::atomic<int> size_;
    std::vector<std::thread> workers_;

    // The current job; written only by the submitter while no worker is running a chunk.
    WeftParallelBody body_ = nullptr;
    void* closure_ = nullptr;
    int64_t n_ = 0;
    int64_t chunks_ = 0;
    bool stop_ = false;

    std::atomic<uint32_t> generation_{0};
    std::atomic<int32_t> pending_{0};
    std::atomic<int32_t> error_{0};
    bool error_from_worker_ = false;  // written by the worker that won error_
    std::string error_message_;
};

}  // namespace weft::runtime::detail

namespace weft {

int num_threads() { return runtime::detail::ThreadPool::global().size(); }

void set_num_threads(int n) { runtime::detail::ThreadPool::global().resize(n); }

namespace runtime {
int32_t parallel_for(int64_t n, WeftParallelBody body, void* closure) noexcept {
    return detail::ThreadPool::global().run(n, body, closure);
}
}  // namespace runtime

}  // namespace weft

extern "C" int32_t weft_runtime_parallel_for(WeftParallelBody body, void* closure, int64_t n) {
    return weft::runtime::parallel_for(n, body, closure);
}
