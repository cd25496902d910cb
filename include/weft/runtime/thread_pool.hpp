// weft's thread pool: the engine behind weft_runtime_parallel_for (ir/abi.hpp), which
// parallel loops in generated code call.
//
// One persistent pool per process. Its size comes from the WEFT_NUM_THREADS environment
// variable, else std::thread::hardware_concurrency(); set_num_threads changes it. A call
// cuts [0, n) into C contiguous chunks, chunk c = [n*c/C, n*(c+1)/C): one per thread, fewer
// when n is smaller or when the loop's estimated work (work_per_iteration x n) is too small
// to be worth a chunk on another thread (a loop of one chunk runs on the caller alone). The
// threads, the caller among them, claim chunks until none is left, so a worker the OS has
// descheduled delays nothing it has not started; the bounds depend only on n and C, so
// results never depend on timing. A call from inside a parallel body runs serially in its
// caller (no nested pools, no deadlock). Idle workers spin for 2 ms after a job, then
// sleep: back-to-back kernels pay no wake-up cost, an idle process burns no CPU. The
// WEFT_SPIN_MICROSECONDS environment variable sets the spin (0: sleep at once).
#pragma once
#include <cstdint>
#include <type_traits>
#include <utility>

#include "weft/ir/abi.hpp"
#include "weft/ir/error.hpp"  // set_num_threads throws weft::Error

namespace weft {

// The number of threads (the caller included) a parallel loop uses.
int num_threads();
// Resizes the pool; n == 0 restores the default (WEFT_NUM_THREADS or the core count).
// Throws weft::Error for n < 0 or when called from inside a parallel loop.
void set_num_threads(int n);

namespace runtime {

// Runs body over [0, n) on the pool; returns the first non-zero code a chunk returned.
// work_per_iteration: the estimated work of one iteration (<= 0: unknown, split over every
// thread). Never throws: this is what weft_runtime_parallel_for calls.
int32_t parallel_for(int64_t n, WeftParallelBody body, void* closure, int64_t work_per_iteration = 0) noexcept;

// C++ convenience over the same pool: f(begin, end) returns int32_t (an error code) or
// void. f must not throw (a throw on a worker thread ends the process).
// While one lives, the parallel loops this thread starts run serially on it, as a pool
// worker's do: a background compile (graph::Module's) then leaves the pool to the threads
// that run the model. Scopes nest.
class SerialLoops {
public:
    SerialLoops();
    ~SerialLoops();
    SerialLoops(const SerialLoops&) = delete;
    SerialLoops& operator=(const SerialLoops&) = delete;

private:
    bool was_;
};

template <class F>
int32_t parallel_for(int64_t n, F&& f) {
    using Fn = std::remove_reference_t<F>;
    WeftParallelBody body = [](int64_t begin, int64_t end, void* closure) -> int32_t {
        Fn& fn = *static_cast<Fn*>(closure);
        if constexpr (std::is_void_v<decltype(fn(begin, end))>) {
            fn(begin, end);
            return 0;
        } else {
            return static_cast<int32_t>(fn(begin, end));
        }
    };
    return parallel_for(n, body, const_cast<void*>(static_cast<const void*>(&f)));
}

}  // namespace runtime
}  // namespace weft
