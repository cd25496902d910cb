// The process-wide cache of compiled kernels: building the same lowered program for the
// same target twice costs a hash and a structural comparison, not a compile.
//
// The key is the whole function up to renaming of variables: its name, each argument's
// kind, name, dtype and shape, the body, fast_math and target.str(). The argument
// variables are compared *with* the body (they come first in one token stream), so two
// functions whose bodies match but take their arguments in another order are different
// kernels. A hash hit is confirmed by structural equality, so a collision can never hand
// back the wrong kernel. Names are part of the key because the generated code reports
// them in its error messages.
//
// Thread-safe. When two threads ask for the same missing kernel, one builds it and the
// other waits for that result instead of compiling it again.
//
// The memory level has a byte budget (the modules' KernelModule::memory_bytes() plus the
// keys): past it, the least recently used kernels are forgotten (kernels already handed out
// stay alive; asking again compiles again). The default is 256 MiB, or the environment
// variable WEFT_KERNEL_CACHE_BYTES when the cache is first used; 0 means unlimited.
//
// A second level on disk, off by default: with a directory set (set_disk_directory, or the
// environment variable WEFT_KERNEL_CACHE_DIR when the cache is first used), a CPU kernel the
// memory cache misses is looked up there before it is compiled, and what is compiled is
// stored there: a program that JIT-compiles at start-up pays the compile once per machine,
// not once per run (codegen/impl/disk_cache.hpp has the format).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/ir/function.hpp"
#include "weft/ir/target.hpp"
#include "weft/runtime/module.hpp"

namespace weft {

class KernelCache {
public:
    using Builder = std::function<std::shared_ptr<const KernelModule>()>;

    static KernelCache& global();

    // The module compiled from `func` for `target`: the cached one, or the one `build`
    // makes (and the cache keeps). If `build` throws, nothing is cached and the exception
    // reaches every caller waiting for this kernel.
    std::shared_ptr<const KernelModule> get_or_build(const ir::PrimFunc& func, const Target& target,
                                                     const Builder& build);

    // A second, cheaper index for rebuilding the very same object (build() of a Schedule
    // whose trace has not grown): `key` names the object's state, `owner` is the object, held
    // weakly so a freed object whose address is reused never matches. A hit skips lowering.
    struct Recalled {
        std::shared_ptr<const KernelModule> module;
        ir::PrimFunc func;
    };
    std::optional<Recalled> recall(const std::string& key, const std::shared_ptr<const void>& owner) const;
    void remember(const std::string& key, const std::shared_ptr<const void>& owner, Recalled r);

    // The on-disk level: "" turns it off. The directory is created when the first kernel is
    // stored; a directory that cannot be written only costs the compile (no error).
    void set_disk_directory(std::string directory);
    std::string disk_directory() const;
    // Kernels loaded from the disk instead of compiled (counted by the LLVM backend).
    uint64_t disk_hits() const { return disk_hits_.load(std::memory_order_relaxed); }
    void count_disk_hit() { disk_hits_.fetch_add(1, std::memory_order_relaxed); }

    uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
    uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }
    size_t size() const;
    // The memory budget in bytes (0: unlimited); setting it evicts down to it at once.
    void set_memory_budget(int64_t bytes);
    int64_t memory_budget() const;
    // The bytes the cached kernels hold now (see the budget above), and how many were evicted.
    int64_t memory_bytes() const;
    uint64_t evictions() const { return evictions_.load(std::memory_order_relaxed); }
    // Forgets every kernel (kernels already handed out stay alive) and zeroes the counters.
    void clear();

private:
    struct Entry {
        // The comparison key: the signature-and-body statement plus the flat description.
        ir::Stmt structure;
        std::string description;
        std::shared_future<std::shared_ptr<const KernelModule>> module;
        uint64_t id;  // identifies the entry a failed build must remove
        uint64_t last_used = 0;  // its key in lru_
        int64_t bytes = 0;       // counted in bytes_ once built
    };

    struct Memo {
        std::weak_ptr<const void> owner;
        Recalled kernel;
    };

    // With mutex_ held: the entry of (hash key, id), or null.
    Entry* find_entry(uint64_t key, uint64_t id);
    void touch(Entry& e, uint64_t key);
    void remove_entry(uint64_t key, uint64_t id);
    void evict_to_budget();

    mutable std::mutex mutex_;
    std::unordered_map<uint64_t, std::vector<Entry>> entries_;
    // Least recently used first: use tick -> (hash key, entry id).
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> lru_;
    uint64_t tick_ = 0;
    int64_t bytes_ = 0;
    int64_t budget_ = int64_t(256) << 20;
    std::atomic<uint64_t> evictions_{0};
    std::unordered_map<std::string, Memo> memo_;
    mutable std::atomic<uint64_t> hits_{0}, misses_{0};  // recall() counts its hits too
    std::atomic<uint64_t> disk_hits_{0};
    std::string disk_directory_;  // guarded by mutex_
    uint64_t next_id_ = 0;  // guarded by mutex_
};

namespace detail {
// The two halves of the cache's key: every variable of the signature followed by the body
// (compared structurally), and everything else as text (name, arguments, fast_math, target).
ir::Stmt kernel_structure(const ir::PrimFunc& f);
std::string kernel_description(const ir::PrimFunc& f, const Target& target);
}  // namespace detail

}  // namespace weft
