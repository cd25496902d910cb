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
// A second level on disk, off by default: with a directory set (set_disk_directory, or the
// environment variable WEFT_KERNEL_CACHE_DIR when the cache is first used), a CPU kernel the
// memory cache misses is looked up there before it is compiled, and what is compiled is
// stored there: a program that JIT-compiles at start-up pays the compile once per machine,
// not once per run (codegen/impl/disk_cache.hpp has the format).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
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
    // Forgets every kernel (kernels already handed out stay alive) and zeroes the counters.
    void clear();

private:
    struct Entry {
        // The comparison key: the signature-and-body statement plus the flat description.
        ir::Stmt structure;
        std::string description;
        std::shared_future<std::shared_ptr<const KernelModule>> module;
        uint64_t id;  // identifies the entry a failed build must remove
    };

    struct Memo {
        std::weak_ptr<const void> owner;
        Recalled kernel;
    };

    mutable std::mutex mutex_;
    std::unordered_map<uint64_t, std::vector<Entry>> entries_;
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
