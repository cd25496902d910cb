// The thread pool behind weft_runtime_parallel_for (see runtime/thread_pool.hpp).
//
// Why chunks are claimed rather than assigned: where other processes share the cores, the
// OS can deschedule a worker for a whole time slice (milliseconds). When worker t had to
// run chunk t, the calling thread waited out that slice for a chunk nobody was running, once
// per parallel loop (docs/performance.md, "Threads on busy cores", has the figures). Here
// every thread, the caller included, takes chunks from a shared ticket until none is left,
// so a late worker's chunks are run by whoever is there, and the caller waits only for
// chunks another thread has already started.
//
// The protocol. One job at a time: a submitter holds mutex_ from publication to return.
//   ticket_ (64 bits) = the job's generation (high 32 bits) | its unclaimed chunks (low 32).
//   Publish: the submitter, knowing that no chunk of the previous job is running, writes
//     the job fields (body_, closure_, n_, chunks_, finished_ = 0, error_ = 0), then stores
//     the ticket {generation + 1, chunks_} (release) and wakes the workers that sleep.
//   Claim (the submitter and the workers alike): load the ticket (acquire); while it has an
//     unclaimed chunk, CAS it from that value t to t - 1 (acquire; a failed CAS reloads t).
//     Success claims chunk chunks_ - unclaimed(t) of the job of generation(t), and only
//     then does the thread read the job fields: its CAS read a value in the release
//     sequence of that job's publication (later claims are RMWs, which continue it), so it
//     sees the fields, and they stay unchanged until the chunk is finished (below).
//     The CAS compares the whole word: a thread that loaded the ticket of an older job and
//     was descheduled before its CAS fails on the newer job's generation and reloads;
//     it never runs a chunk index of one job with the fields of another. (Only 2^32
//     publications between its load and its CAS could bring the same word back, and a
//     successful CAS is a real claim on the current job even then.)
//   Finish: after its chunk's body returns (and the chunk's error, if any, is recorded),
//     the thread adds 1 to finished_ (release); whoever brings it to chunks_ wakes the
//     submitter.
//   The submitter runs chunks until none is unclaimed, then waits for finished_ == chunks_
//     (acquire): only for chunks that other threads claimed and are still running. After
//     that no thread holds a claim of this job, so the next publication may rewrite it; a
//     worker that comes late finds no unclaimed chunk (or the next job's).
//   Stop: stop_ = true, then a ticket of a new generation without chunks (release).
//   A worker loops: load the ticket (acquire), then read stop_ (exit if set), then claim
//     if the ticket has unclaimed chunks, else wait until the ticket differs from the value
//     loaded (spin, then sleep in std::atomic::wait, a futex). Reading stop_ after the load
//     and waiting on that loaded value is what makes a stop impossible to miss: a worker
//     that loaded the stop ticket sees stop_ set, one that loaded an older ticket wakes
//     when the stop ticket replaces it. (Waiting on a value loaded before reading stop_
//     but after the last check, e.g. the one seen at the end of claiming, lost a stop: a
//     worker slept on the stop ticket itself. The stress tests in
//     tests/runtime/test_thread_pool.cpp hung that way under ThreadSanitizer.)
//
// The partition is fixed by n and the chunk count alone: chunk c is [n*c/C, n*(c+1)/C)
// whichever thread runs it, so results never depend on timing.
#pragma once
#include <sched.h>

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

// True on pool workers, and on a submitting thread while it runs chunks: a parallel_for
// from such a thread runs serially instead of re-entering the pool.
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

// How long a waiting thread (an idle worker, or the caller waiting for chunks that others
// run) spins before it sleeps: WEFT_SPIN_MICROSECONDS, else 2000. Back-to-back kernel
// launches then find the workers awake, where waking a futex sleeper costs tens to hundreds
// of microseconds on a VM (libgomp and TVM's pool spin for milliseconds too); measured in
// docs/performance.md ("What changed in session 7").
inline std::chrono::microseconds spin_before_sleep() {
    static const std::chrono::microseconds spin(env_integer("WEFT_SPIN_MICROSECONDS", 0, 1000000).value_or(2000));
    return spin;
}

// How long the spin pauses (keeps the core) before it yields the core to other runnable
// threads at each turn (sched_yield returns at once when there are none): a worker that only
// pauses can hold back, on a shared core, the thread that has the work. docs/performance.md,
// "Threads on busy cores", has the figures behind 50 us.
inline constexpr std::chrono::microseconds kPauseBeforeYield{50};

// The least estimated work (lowering's element stores, ir::attr::parallel_work) worth a
// chunk of its own: a loop with less than twice this runs on the calling thread alone (it
// keeps a GEMM's packing of a few thousand elements off the other thread).
// WEFT_PARALLEL_MIN_WORK overrides it (0: no threshold). The figures behind 16384:
// docs/performance.md, "Threads on busy cores".
inline int64_t min_work_per_chunk() {
    static const int64_t work = env_integer("WEFT_PARALLEL_MIN_WORK", 0, int64_t(1) << 40).value_or(16384);
    return work;
}

// Waits until `a` no longer holds `old` and returns the new value: spins for
// spin_before_sleep() (pausing for kPauseBeforeYield of it, then yielding the core at each
// turn), then sleeps in std::atomic::wait.
template <class T>
T wait_while_equal(const std::atomic<T>& a, T old) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    bool yielding = false;
    for (int i = 1;; ++i) {
        T v = a.load(std::memory_order_acquire);
        if (v != old) return v;
        if (yielding) {
            sched_yield();
        } else {
            cpu_relax();
        }
        // The clock is read every 128 pauses (a pause is 10-150 cycles), and at every yield.
        if (yielding || i % 128 == 0) {
            auto waited = Clock::now() - start;
            if (waited >= spin_before_sleep()) break;
            yielding = waited >= kPauseBeforeYield;
        }
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

// How many chunks a loop of n iterations, each of work_per_iteration estimated work (<= 0:
// unknown), is cut into on `threads` threads: one per thread, at most n, and none with
// less than min_work_per_chunk() of work (1: the caller runs the loop alone).
inline int64_t chunk_count(int64_t n, int64_t work_per_iteration, int threads) {
    int64_t chunks = std::min<int64_t>(n, threads);
    if (work_per_iteration > 0 && min_work_per_chunk() > 0) {
        __int128 total = static_cast<__int128>(n) * work_per_iteration;
        chunks = static_cast<int64_t>(std::min<__int128>(chunks, total / min_work_per_chunk()));
    }
    return std::max<int64_t>(chunks, 1);
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

    int32_t run(int64_t n, int64_t work_per_iteration, WeftParallelBody body, void* closure) noexcept {
        if (n <= 0) return 0;
        if (in_parallel_region()) return body(0, n, closure);
        // A loop of one chunk takes neither the lock nor a worker.
        if (chunk_count(n, work_per_iteration, size()) == 1) return run_serial(n, body, closure);
        std::unique_lock lock(mutex_);
        int threads = size();  // again: a resize may have come in between
        int64_t chunks = chunk_count(n, work_per_iteration, threads);
        if (chunks == 1 || !ensure_workers(threads - 1)) {
            lock.unlock();
            return run_serial(n, body, closure);
        }
        body_ = body;
        closure_ = closure;
        n_ = n;
        chunks_ = chunks;
        finished_.store(0, std::memory_order_relaxed);
        error_.store(0, std::memory_order_relaxed);
        uint64_t generation = (ticket_.load(std::memory_order_relaxed) >> 32) + 1;
        ticket_.store(generation << 32 | static_cast<uint64_t>(chunks), std::memory_order_release);
        ticket_.notify_all();

        in_parallel_region() = true;
        run_claimed_chunks();
        in_parallel_region() = false;

        // Only chunks that other threads claimed are left; wait for them to finish.
        for (uint32_t done = finished_.load(std::memory_order_acquire); done != chunks;)
            done = wait_while_equal(finished_, done);
        if (int32_t code = error_.load(std::memory_order_relaxed)) {
            last_error_slot() = std::move(error_message_);
            return code;
        }
        return 0;
    }

private:
    static int32_t run_serial(int64_t n, WeftParallelBody body, void* closure) {
        in_parallel_region() = true;
        int32_t code = body(0, n, closure);
        in_parallel_region() = false;
        return code;
    }

    // Claims and runs chunks of the current job until none is unclaimed.
    void run_claimed_chunks() {
        uint64_t t = ticket_.load(std::memory_order_acquire);
        while (static_cast<uint32_t>(t) != 0) {
            if (!ticket_.compare_exchange_weak(t, t - 1, std::memory_order_acquire, std::memory_order_acquire))
                continue;
            run_chunk(chunks_ - static_cast<uint32_t>(t));
            t = ticket_.load(std::memory_order_acquire);
        }
    }

    // Chunk c of the current job: [n*c/C, n*(c+1)/C), computed in 128 bits so that no n
    // overflows. The first failure's code wins and its message (in this thread's error
    // slot) goes to the submitter; later failures drop theirs.
    void run_chunk(int64_t c) {
        const int64_t chunks = chunks_;
        auto bound = [&](int64_t k) { return static_cast<int64_t>(static_cast<__int128>(n_) * k / chunks); };
        if (int32_t code = body_(bound(c), bound(c + 1), closure_)) {
            int32_t expected = 0;
            if (error_.compare_exchange_strong(expected, code, std::memory_order_relaxed))
                error_message_ = std::move(last_error_slot());
            last_error_slot().clear();
        }
        // The job's fields may change once this count reaches `chunks`: nothing of the job is
        // read after it.
        if (finished_.fetch_add(1, std::memory_order_release) + 1 == static_cast<uint32_t>(chunks))
            finished_.notify_one();
    }

    void worker_loop() {
        in_parallel_region() = true;
        for (;;) {
            uint64_t t = ticket_.load(std::memory_order_acquire);
            // Read after the ticket: a worker that loaded the stop ticket sees stop_ set.
            if (stop_.load(std::memory_order_relaxed)) return;
            if (static_cast<uint32_t>(t) != 0) {
                run_claimed_chunks();
            } else {
                wait_while_equal(ticket_, t);  // nothing to claim: wait for the next job or the stop
            }
        }
    }

    // Called with mutex_ held. Returns false when threads cannot be created (the job then
    // runs serially: a kernel launch must not fail for lack of threads).
    bool ensure_workers(int count) {
        if (static_cast<int>(workers_.size()) == count) return true;
        stop_workers();
        try {
            workers_.reserve(count);
            for (int i = 0; i < count; ++i) workers_.emplace_back(&ThreadPool::worker_loop, this);
        } catch (...) {
            stop_workers();
            return false;
        }
        return true;
    }

    // Called with mutex_ held: publishes a ticket of a new generation without chunks.
    void stop_workers() {
        if (workers_.empty()) return;
        stop_.store(true, std::memory_order_relaxed);
        uint64_t generation = (ticket_.load(std::memory_order_relaxed) >> 32) + 1;
        ticket_.store(generation << 32, std::memory_order_release);
        ticket_.notify_all();
        for (auto& w : workers_) w.join();
        workers_.clear();
        stop_.store(false, std::memory_order_relaxed);
    }

    std::mutex mutex_;  // one job at a time; guards workers_ and the job fields
    std::atomic<int> size_;
    std::vector<std::thread> workers_;

    // The current job: written by the submitter before it publishes the ticket, read by a
    // thread only after it has claimed one of the job's chunks (see the protocol above).
    WeftParallelBody body_ = nullptr;
    void* closure_ = nullptr;
    int64_t n_ = 0;
    int64_t chunks_ = 0;
    // Set before a stop ticket is published (release), so a worker that sees that ticket
    // sees it; atomic because a worker that comes late to a job reads it while a resize may
    // be setting it.
    std::atomic<bool> stop_{false};

    alignas(64) std::atomic<uint64_t> ticket_{0};
    alignas(64) std::atomic<uint32_t> finished_{0};
    std::atomic<int32_t> error_{0};
    std::string error_message_;  // written by the chunk that set error_
};

}  // namespace weft::runtime::detail

namespace weft {

int num_threads() { return runtime::detail::ThreadPool::global().size(); }

void set_num_threads(int n) { runtime::detail::ThreadPool::global().resize(n); }

namespace runtime {
int32_t parallel_for(int64_t n, WeftParallelBody body, void* closure, int64_t work_per_iteration) noexcept {
    return detail::ThreadPool::global().run(n, work_per_iteration, body, closure);
}

SerialLoops::SerialLoops() : was_(detail::in_parallel_region()) { detail::in_parallel_region() = true; }
SerialLoops::~SerialLoops() { detail::in_parallel_region() = was_; }
}  // namespace runtime

}  // namespace weft

extern "C" int32_t weft_runtime_parallel_for(WeftParallelBody body, void* closure, int64_t n,
                                              int64_t work_per_iteration) {
    return weft::runtime::parallel_for(n, body, closure, work_per_iteration);
}
