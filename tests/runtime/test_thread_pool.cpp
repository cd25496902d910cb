// weft_runtime_parallel_for and the pool behind it: exact coverage of [0, n), the fixed
// partition, dynamic claiming, the work threshold, nesting, error codes and messages,
// resizing, and stress for the claiming protocol (run under ThreadSanitizer too:
// WEFT_SANITIZE=thread, see tests/README.md). Plus the other C runtime calls.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "weft/runtime/c_runtime.hpp"
#include "weft/runtime/thread_pool.hpp"

using namespace weft;

namespace {

// Restores the pool size a test changed, so test order does not matter.
struct ThreadCountGuard {
    int saved = num_threads();
    ~ThreadCountGuard() { set_num_threads(saved); }
};

struct Chunks {
    std::vector<std::atomic<int>> hits;
    std::atomic<int> calls{0};
    explicit Chunks(int64_t n) : hits(static_cast<size_t>(n)) {}
};

int32_t count_body(int64_t begin, int64_t end, void* closure) {
    auto* c = static_cast<Chunks*>(closure);
    c->calls.fetch_add(1);
    for (int64_t i = begin; i < end; ++i) c->hits[static_cast<size_t>(i)].fetch_add(1);
    return 0;
}

}  // namespace

TEST_CASE("parallel_for covers 0..n exactly once for many n and thread counts") {
    ThreadCountGuard guard;
    for (int threads : {1, 2, 3, 4, 7}) {
        set_num_threads(threads);
        CHECK(num_threads() == threads);
        for (int64_t n : {0, 1, 2, 3, 5, 7, 8, 64, 100, 1001}) {
            Chunks c(n);
            REQUIRE(weft_runtime_parallel_for(count_body, &c, n, 0) == 0);
            for (int64_t i = 0; i < n; ++i) REQUIRE(c.hits[static_cast<size_t>(i)].load() == 1);
            // One contiguous chunk per worker, and no more workers than iterations.
            CHECK(c.calls.load() == (n == 0 ? 0 : std::min<int64_t>(n, threads)));
        }
    }
}

TEST_CASE("parallel_for chunks are the static partition n*t/T .. n*(t+1)/T") {
    ThreadCountGuard guard;
    set_num_threads(3);
    std::mutex m;
    std::set<std::pair<int64_t, int64_t>> seen;
    runtime::parallel_for(10, [&](int64_t b, int64_t e) {
        std::lock_guard lock(m);
        seen.insert({b, e});
    });
    CHECK(seen == std::set<std::pair<int64_t, int64_t>>{{0, 3}, {3, 6}, {6, 10}});
}

TEST_CASE("parallel_for uses several threads and the caller is one of them") {
    ThreadCountGuard guard;
    set_num_threads(4);
    std::mutex m;
    std::set<std::thread::id> ids;
    // Every chunk waits (a bounded time) for a second thread to show up: chunks are claimed,
    // so without the wait the caller may run them all before a worker wakes.
    runtime::parallel_for(4, [&](int64_t, int64_t) {
        {
            std::lock_guard lock(m);
            ids.insert(std::this_thread::get_id());
        }
        auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        for (;;) {
            {
                std::lock_guard lock(m);
                if (ids.size() >= 2) return;
            }
            if (std::chrono::steady_clock::now() > give_up) return;
            std::this_thread::yield();
        }
    });
    CHECK(ids.size() >= 2);
}

TEST_CASE("the calling thread claims a chunk while a worker is busy with another") {
    ThreadCountGuard guard;
    set_num_threads(2);
    const auto caller = std::this_thread::get_id();
    std::atomic<bool> caller_ran{false};
    std::atomic<int> chunks{0};
    // A worker's chunk waits (a bounded time) for the caller to run one: the caller must
    // take the other chunk itself rather than wait for the busy worker to get to it.
    runtime::parallel_for(2, [&](int64_t, int64_t) {
        chunks.fetch_add(1);
        if (std::this_thread::get_id() == caller) {
            caller_ran = true;
            return;
        }
        auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!caller_ran.load() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    });
    CHECK(chunks.load() == 2);
    CHECK(caller_ran.load());
}

TEST_CASE("a loop whose estimated work is small runs on the calling thread alone") {
    ThreadCountGuard guard;
    set_num_threads(4);
    std::mutex m;
    std::set<std::pair<int64_t, int64_t>> chunks;
    auto record = [](int64_t b, int64_t e, void* closure) -> int32_t {
        auto* self = static_cast<std::pair<std::set<std::pair<int64_t, int64_t>>*, std::mutex*>*>(closure);
        std::lock_guard lock(*self->second);
        self->first->insert({b, e});
        return 0;
    };
    auto state = std::make_pair(&chunks, &m);
    // 64 iterations of one element store each: far below a second thread's cost.
    REQUIRE(weft_runtime_parallel_for(record, &state, 64, 1) == 0);
    CHECK(chunks == std::set<std::pair<int64_t, int64_t>>{{0, 64}});
    // Work enough for every thread: one chunk each. Unknown work (0) splits the same way.
    for (int64_t work : {int64_t(1) << 30, int64_t(0)}) {
        chunks.clear();
        REQUIRE(weft_runtime_parallel_for(record, &state, 64, work) == 0);
        CHECK(chunks.size() == 4);
    }
}

TEST_CASE("a nested parallel_for runs serially inside its caller's chunk") {
    ThreadCountGuard guard;
    set_num_threads(4);
    std::atomic<int> total{0};
    std::atomic<int> inner_on_other_thread{0};
    runtime::parallel_for(8, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
            auto outer = std::this_thread::get_id();
            runtime::parallel_for(16, [&](int64_t ib, int64_t ie) {
                if (std::this_thread::get_id() != outer) inner_on_other_thread.fetch_add(1);
                CHECK_MESSAGE(ib == 0, "a nested loop runs whole, in one chunk");
                CHECK(ie == 16);
                total.fetch_add(static_cast<int>(ie - ib));
            });
        }
    });
    CHECK(total.load() == 8 * 16);
    CHECK(inner_on_other_thread.load() == 0);
}

TEST_CASE("parallel_for returns a failing chunk's code and carries its message to the caller") {
    ThreadCountGuard guard;
    for (int threads : {1, 4}) {
        set_num_threads(threads);
        // Only the last chunk (a worker's, when threads > 1) fails.
        int32_t code = runtime::parallel_for(100, [](int64_t, int64_t e) -> int32_t {
            if (e == 100) {
                weft_runtime_set_error("chunk ending at 100 failed");
                return 7;
            }
            return 0;
        });
        CHECK(code == 7);
        CHECK(runtime::take_last_error() == "chunk ending at 100 failed");
        CHECK(runtime::take_last_error().empty());  // taking clears it
        // All chunks fail: some chunk's code comes back.
        code = runtime::parallel_for(100, [](int64_t b, int64_t) -> int32_t {
            weft_runtime_set_error("failed");
            return static_cast<int32_t>(b + 1);
        });
        CHECK(code != 0);
        CHECK(runtime::take_last_error() == "failed");
    }
}

TEST_CASE("set_num_threads validates its argument and restores the default with 0") {
    ThreadCountGuard guard;
    CHECK_THROWS_AS(set_num_threads(-1), Error);
    set_num_threads(2);
    CHECK(num_threads() == 2);
    set_num_threads(0);
    CHECK(num_threads() >= 1);
    // Resizing from inside a parallel loop is a user error, reported, not a deadlock.
    set_num_threads(2);
    std::atomic<int> errors{0};
    runtime::parallel_for(2, [&](int64_t, int64_t) {
        try {
            set_num_threads(3);
        } catch (const Error&) {
            errors.fetch_add(1);
        }
    });
    CHECK(errors.load() == 2);
}

TEST_CASE("parallel_for from several user threads at once") {
    ThreadCountGuard guard;
    set_num_threads(3);
    std::atomic<int64_t> sum{0};
    std::vector<std::thread> users;
    for (int u = 0; u < 4; ++u)
        users.emplace_back([&] {
            for (int rep = 0; rep < 50; ++rep)
                runtime::parallel_for(30, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
        });
    for (auto& t : users) t.join();
    CHECK(sum.load() == 4 * 50 * 30);
}

// ---- The claiming protocol under stress (the same tests run under ThreadSanitizer) ----

namespace {

// Runs one job of n iterations through the C entry and checks that each ran exactly once.
void run_and_check_coverage(int64_t n) {
    Chunks c(n);
    REQUIRE(weft_runtime_parallel_for(count_body, &c, n, 0) == 0);
    for (int64_t i = 0; i < n; ++i) REQUIRE(c.hits[static_cast<size_t>(i)].load() == 1);
}

}  // namespace

TEST_CASE("stress: many tiny jobs back to back cover their range exactly once") {
    ThreadCountGuard guard;
    for (int threads : {2, 3, 4}) {
        set_num_threads(threads);
        // Jobs far shorter than a worker's wake-up: workers arrive late, during the next job
        // or the one after; a late claim must never take a chunk of the wrong job.
        for (int rep = 0; rep < 3000; ++rep) run_and_check_coverage(1 + rep % 9);
    }
}

TEST_CASE("stress: jobs from several user threads, with nested loops inside") {
    ThreadCountGuard guard;
    set_num_threads(3);
    std::atomic<int64_t> sum{0};
    std::vector<std::thread> users;
    for (int u = 0; u < 4; ++u)
        users.emplace_back([&, u] {
            for (int rep = 0; rep < 300; ++rep) {
                int64_t n = 1 + (rep + u) % 7;
                int32_t code = runtime::parallel_for(n, [&](int64_t b, int64_t e) {
                    for (int64_t i = b; i < e; ++i)
                        runtime::parallel_for(5, [&](int64_t ib, int64_t ie) { sum.fetch_add(ie - ib); });
                });
                CHECK(code == 0);
            }
        });
    for (auto& t : users) t.join();
    int64_t want = 0;
    for (int u = 0; u < 4; ++u)
        for (int rep = 0; rep < 300; ++rep) want += (1 + (rep + u) % 7) * 5;
    CHECK(sum.load() == want);
}

TEST_CASE("stress: the code and the message returned are those of one failing chunk") {
    ThreadCountGuard guard;
    set_num_threads(3);
    for (int rep = 0; rep < 2000; ++rep) {
        const int64_t n = 1 + rep % 11;
        // Chunk [b, e) fails when (b + rep) % 3 == 0, with code 1000 + b and a message naming b.
        auto fails = [&](int64_t b) { return (b + rep) % 3 == 0; };
        int32_t code = runtime::parallel_for(n, [&](int64_t b, int64_t) -> int32_t {
            if (!fails(b)) return 0;
            weft_runtime_set_error(("chunk " + std::to_string(b)).c_str());
            return static_cast<int32_t>(1000 + b);
        });
        std::string message = runtime::take_last_error();
        if (code == 0) {
            CHECK(message.empty());
            continue;
        }
        int64_t begin = code - 1000;
        REQUIRE(fails(begin));
        CHECK(message == "chunk " + std::to_string(begin));
    }
    CHECK(runtime::take_last_error().empty());
}

TEST_CASE("stress: resizing between jobs, and from another thread while jobs run") {
    ThreadCountGuard guard;
    for (int rep = 0; rep < 200; ++rep) {
        set_num_threads(1 + rep % 4);
        run_and_check_coverage(1 + rep % 13);
    }
    std::atomic<bool> done{false};
    std::thread resizer([&] {
        for (int rep = 0; !done.load(); ++rep) set_num_threads(1 + rep % 3);
    });
    for (int rep = 0; rep < 500; ++rep) run_and_check_coverage(1 + rep % 6);
    done = true;
    resizer.join();
}

TEST_CASE("weft_runtime_alloc returns 64-byte aligned memory even for 0 bytes") {
    for (int64_t bytes : {0, 1, 63, 64, 65, 1000, 1 << 20}) {
        void* p = weft_runtime_alloc(bytes);
        REQUIRE(p != nullptr);
        CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
        weft_runtime_free(p);
    }
    CHECK(weft_runtime_alloc(-1) == nullptr);
    CHECK(runtime::take_last_error().find("negative") != std::string::npos);
    weft_runtime_free(nullptr);
}

TEST_CASE("the error message is per thread") {
    weft_runtime_set_error("main thread");
    std::thread([] {
        CHECK(runtime::take_last_error().empty());
        weft_runtime_set_error("other thread");
    }).join();
    CHECK(runtime::take_last_error() == "main thread");
}
