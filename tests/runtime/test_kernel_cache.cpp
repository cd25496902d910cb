// KernelCache: hits for structurally equal functions, misses for anything that changes the
// kernel, and one build when several threads ask at once.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "weft/ir/op.hpp"
#include "weft/runtime/kernel_cache.hpp"

using namespace weft;

namespace {

class NullModule : public KernelModule {
public:
    WeftKernelFn entry() const override { return nullptr; }
};

// out[i] = lhs[i] - rhs[i] * scale, i in [0, extent), over fresh variables every time.
// With swap, the function takes (rhs, lhs, out): the same body, other argument order.
ir::PrimFunc make_func(int64_t extent, double scale = 2.0, bool swap = false) {
    ir::Var lhs("lhs", DataType::handle()), rhs("rhs", DataType::handle()), out("out", DataType::handle());
    ir::Var i("i");
    ir::Expr value = ir::Load::make(f32, lhs, i) - ir::Load::make(f32, rhs, i) * ir::make_const(f32, scale);
    ir::PrimFunc f;
    f.name = "sub";
    auto arg = [&](const char* name, const ir::Var& v) {
        return ir::KernelArg{ir::KernelArg::Kind::Tensor, name, v, f32, {ir::make_int(extent)}};
    };
    f.args = swap ? std::vector<ir::KernelArg>{arg("a", rhs), arg("b", lhs), arg("c", out)}
                  : std::vector<ir::KernelArg>{arg("a", lhs), arg("b", rhs), arg("c", out)};
    f.body = ir::For::make(i, ir::make_int(0), ir::make_int(extent), ir::ForKind::Serial,
                           ir::Store::make(out, value, i));
    return f;
}

Target cpu(const std::string& name = "x86-64") {
    Target t;
    t.triple = "x86_64-pc-linux-gnu";
    t.cpu = name;
    return t;
}

}  // namespace

TEST_CASE("structurally equal functions share one module and any difference builds another") {
    KernelCache cache;
    int builds = 0;
    auto build = [&] {
        ++builds;
        return std::make_shared<NullModule>();
    };
    auto first = cache.get_or_build(make_func(16), cpu(), build);
    auto again = cache.get_or_build(make_func(16), cpu(), build);  // distinct but equal PrimFunc
    CHECK(again == first);
    CHECK(builds == 1);
    CHECK(cache.hits() == 1);
    CHECK(cache.misses() == 1);

    CHECK(cache.get_or_build(make_func(17), cpu(), build) != first);            // another constant
    CHECK(cache.get_or_build(make_func(16, 3.0), cpu(), build) != first);       // another float constant
    CHECK(cache.get_or_build(make_func(16, 2.0, true), cpu(), build) != first); // arguments reordered
    CHECK(cache.get_or_build(make_func(16), cpu("skylake"), build) != first);   // another target
    ir::PrimFunc fast = make_func(16);
    fast.fast_math = true;
    CHECK(cache.get_or_build(fast, cpu(), build) != first);
    ir::PrimFunc renamed = make_func(16);
    renamed.name = "sub2";
    CHECK(cache.get_or_build(renamed, cpu(), build) != first);
    Target wide = cpu();
    wide.vector_bits = 512;  // the same machine told to use wider vectors
    CHECK(cache.get_or_build(make_func(16), wide, build) != first);
    ir::PrimFunc aligned = make_func(16);
    for (auto& a : aligned.args) a.alignment = 64;
    CHECK(cache.get_or_build(aligned, cpu(), build) != first);
    CHECK(builds == 9);
    CHECK(cache.misses() == 9);
    CHECK(cache.size() == 9);

    cache.clear();
    CHECK(cache.size() == 0);
    CHECK(cache.hits() == 0);
    cache.get_or_build(make_func(16), cpu(), build);
    CHECK(builds == 10);
}

TEST_CASE("a failed build is not cached and reaches the caller") {
    KernelCache cache;
    auto failing = []() -> std::shared_ptr<const KernelModule> { throw Error("weft: codegen failed"); };
    CHECK_THROWS_WITH_AS(cache.get_or_build(make_func(8), cpu(), failing), "weft: codegen failed", Error);
    CHECK(cache.size() == 0);
    auto m = cache.get_or_build(make_func(8), cpu(), [] { return std::make_shared<NullModule>(); });
    CHECK(m != nullptr);
    CHECK(cache.size() == 1);
}

TEST_CASE("concurrent requests for one kernel build it once") {
    KernelCache cache;
    std::atomic<int> builds{0};
    std::vector<std::shared_ptr<const KernelModule>> got(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            got[size_t(t)] = cache.get_or_build(make_func(32), cpu(), [&] {
                builds.fetch_add(1);
                std::this_thread::sleep_for(std::chrono::milliseconds(30));
                return std::make_shared<NullModule>();
            });
        });
    for (auto& t : threads) t.join();
    CHECK(builds.load() == 1);
    for (auto& m : got) CHECK(m == got[0]);
    CHECK(cache.hits() == 3);
}

TEST_CASE("the global cache is one object") {
    CHECK(&KernelCache::global() == &KernelCache::global());
}

namespace {

// A module that says it holds `bytes` (the LLVM backend's are about 40 KB).
class SizedModule : public KernelModule {
public:
    explicit SizedModule(int64_t bytes) : bytes_(bytes) {}
    WeftKernelFn entry() const override { return nullptr; }
    int64_t memory_bytes() const override { return bytes_; }

private:
    int64_t bytes_;
};

}  // namespace

TEST_CASE("10,000 distinct kernels stay within the cache's byte budget, least recently used evicted first") {
    KernelCache cache;
    const int64_t budget = int64_t(4) << 20;
    cache.set_memory_budget(budget);
    auto build = [] { return std::make_shared<SizedModule>(40 << 10); };
    auto kept = cache.get_or_build(make_func(1), cpu(), build);
    int64_t peak = 0;
    for (int64_t n = 2; n <= 10000; ++n) {
        cache.get_or_build(make_func(n), cpu(), build);
        if (n % 10 == 0) cache.get_or_build(make_func(1), cpu(), build);  // kept in use: never the oldest
        peak = std::max(peak, cache.memory_bytes());
    }
    CHECK(peak <= budget);
    CHECK(cache.memory_bytes() <= budget);
    CHECK(cache.size() <= size_t(budget / (40 << 10)));
    CHECK(cache.evictions() >= 9800);
    const uint64_t misses = cache.misses();
    CHECK(cache.get_or_build(make_func(1), cpu(), build) == kept);  // recently used: still there
    CHECK(cache.misses() == misses);
    cache.get_or_build(make_func(2), cpu(), build);  // long evicted: built again
    CHECK(cache.misses() == misses + 1);
}

TEST_CASE("the cache evicts in order of last use and a budget of 0 keeps everything") {
    KernelCache cache;
    auto build = [] { return std::make_shared<SizedModule>(100 << 10); };
    auto a = cache.get_or_build(make_func(1), cpu(), build);
    cache.get_or_build(make_func(2), cpu(), build);
    cache.get_or_build(make_func(3), cpu(), build);
    CHECK(cache.size() == 3);
    cache.get_or_build(make_func(1), cpu(), build);      // a used last: b is now the oldest
    cache.set_memory_budget(cache.memory_bytes() - 1);  // room for two: b goes
    CHECK(cache.size() == 2);
    const uint64_t misses = cache.misses();
    CHECK(cache.get_or_build(make_func(1), cpu(), build) == a);
    cache.get_or_build(make_func(3), cpu(), build);
    CHECK(cache.misses() == misses);
    cache.get_or_build(make_func(2), cpu(), build);
    CHECK(cache.misses() == misses + 1);
    CHECK_THROWS_AS(cache.set_memory_budget(-1), Error);
    KernelCache unlimited;
    unlimited.set_memory_budget(0);
    for (int64_t n = 1; n <= 100; ++n) unlimited.get_or_build(make_func(n), cpu(), build);
    CHECK(unlimited.size() == 100);
    CHECK(unlimited.evictions() == 0);
}
