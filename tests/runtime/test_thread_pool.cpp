// weft_runtime_parallel_for and the pool behind it: exact coverage of [0, n), the static
// chunking, nesting, error codes and messages, resizing. Plus the other C runtime calls.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <cstdint>
#include <set>
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
            REQUIRE(weft_runtime_parallel_for(count_body, &c, n) == 0);
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
    runtime::parallel_for(4, [&](int64_t, int64_t) {
        std::lock_guard lock(m);
        ids.insert(std::this_thread::get_id());
    });
    CHECK(ids.size() == 4);
    CHECK(ids.count(std::this_thread::get_id()) == 1);
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
