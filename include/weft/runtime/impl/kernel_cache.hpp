// Definitions for runtime/kernel_cache.hpp.
#pragma once
#include "weft/ir/equality.hpp"
#include "weft/runtime/kernel_cache.hpp"

#include <chrono>
#include <cstdlib>

namespace weft {
namespace detail {

// One statement holding every variable of the signature, in argument order, followed by
// the body: structural equality on it matches variables across signature and body.
ir::Stmt kernel_structure(const ir::PrimFunc& f) {
    std::vector<ir::Stmt> parts;
    for (const ir::KernelArg& a : f.args) {
        if (a.var.defined()) parts.push_back(ir::Evaluate::make(a.var));
        for (const ir::Expr& e : a.shape) parts.push_back(ir::Evaluate::make(e));
    }
    parts.push_back(f.body);
    return ir::Seq::make(std::move(parts));
}

// Everything else that makes two kernels differ, as text.
std::string kernel_description(const ir::PrimFunc& f, const Target& target) {
    std::string s = f.name + (f.fast_math ? " fast_math" : "") + (f.fast_compile ? " fast_compile" : "") + " | " + target.str();
    for (const ir::KernelArg& a : f.args) {
        s += detail::concat(" | ", a.kind == ir::KernelArg::Kind::Tensor ? "tensor " : "scalar ", a.name, " ",
                            a.type.str(), " rank ", a.shape.size(), " aligned ", a.alignment);
    }
    return s;
}

}  // namespace detail

KernelCache& KernelCache::global() {
    // Never destroyed: the cached modules may hold JIT state owned by another static (the
    // backend's JIT), whose destruction order relative to this one is not ours to fix. The
    // memory stays reachable, so leak checkers do not report it.
    static KernelCache* cache = [] {
        auto* c = new KernelCache;
        if (const char* dir = std::getenv("WEFT_KERNEL_CACHE_DIR")) c->disk_directory_ = dir;
        if (const char* bytes = std::getenv("WEFT_KERNEL_CACHE_BYTES")) {
            char* end = nullptr;
            const long long v = std::strtoll(bytes, &end, 10);
            if (end != bytes && *end == '\0' && v >= 0) c->budget_ = v;  // else the default stays
        }
        return c;
    }();
    return *cache;
}

void KernelCache::set_disk_directory(std::string directory) {
    std::lock_guard lock(mutex_);
    disk_directory_ = std::move(directory);
}

std::string KernelCache::disk_directory() const {
    std::lock_guard lock(mutex_);
    return disk_directory_;
}

std::shared_ptr<const KernelModule> KernelCache::get_or_build(const ir::PrimFunc& func, const Target& target,
                                                              const Builder& build) {
    ir::Stmt structure = detail::kernel_structure(func);
    std::string description = detail::kernel_description(func, target);
    const uint64_t key = ir::structural_hash(structure) ^ (std::hash<std::string>()(description) * 0x9e3779b97f4a7c15ull);

    std::shared_future<std::shared_ptr<const KernelModule>> found;
    std::promise<std::shared_ptr<const KernelModule>> promise;
    uint64_t id = 0;
    {
        std::lock_guard lock(mutex_);
        for (Entry& e : entries_[key]) {
            if (e.description == description && ir::structural_equal(e.structure, structure)) {
                found = e.module;
                touch(e, key);
                break;
            }
        }
        if (found.valid()) {
            hits_.fetch_add(1, std::memory_order_relaxed);
        } else {
            misses_.fetch_add(1, std::memory_order_relaxed);
            id = next_id_++;
            entries_[key].push_back(Entry{structure, description, promise.get_future().share(), id});
            touch(entries_[key].back(), key);
        }
    }
    // A hit waits (outside the lock) in case another thread is still building the kernel.
    if (found.valid()) return found.get();

    try {
        std::shared_ptr<const KernelModule> module = build();
        WEFT_ICHECK(module != nullptr, "the builder of kernel '", func.name, "' returned no module");
        promise.set_value(module);
        std::lock_guard lock(mutex_);
        if (Entry* e = find_entry(key, id)) {
            // The module, plus the key kept to compare with (a rough size of its text).
            e->bytes = module->memory_bytes() + int64_t(description.size()) + 1024;
            bytes_ += e->bytes;
            evict_to_budget();
        }
        return module;
    } catch (...) {
        // Forget the failed entry so a later call tries again, then tell any waiters.
        {
            std::lock_guard lock(mutex_);
            remove_entry(key, id);
        }
        promise.set_exception(std::current_exception());
        throw;
    }
}

KernelCache::Entry* KernelCache::find_entry(uint64_t key, uint64_t id) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    for (Entry& e : it->second)
        if (e.id == id) return &e;
    return nullptr;
}

void KernelCache::touch(Entry& e, uint64_t key) {
    if (e.last_used) lru_.erase(e.last_used);
    e.last_used = ++tick_;
    lru_[e.last_used] = {key, e.id};
}

void KernelCache::remove_entry(uint64_t key, uint64_t id) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return;
    auto& list = it->second;
    for (auto e = list.begin(); e != list.end(); ++e) {
        if (e->id != id) continue;
        lru_.erase(e->last_used);
        bytes_ -= e->bytes;
        list.erase(e);
        break;
    }
    if (list.empty()) entries_.erase(it);
}

// Forgets built kernels, least recently used first, until the cache fits its budget (the
// newest always stays: it was just asked for).
void KernelCache::evict_to_budget() {
    if (budget_ <= 0) return;
    for (auto it = lru_.begin(); bytes_ > budget_ && it != lru_.end() && std::next(it) != lru_.end();) {
        auto [key, id] = it->second;
        ++it;
        Entry* e = find_entry(key, id);
        // One still being built has no size yet and a waiter: it stays.
        if (!e || e->module.wait_for(std::chrono::seconds(0)) != std::future_status::ready) continue;
        remove_entry(key, id);
        evictions_.fetch_add(1, std::memory_order_relaxed);
    }
}

void KernelCache::set_memory_budget(int64_t bytes) {
    WEFT_CHECK(bytes >= 0, "KernelCache::set_memory_budget(", bytes, "): the budget must be >= 0 (0: unlimited)");
    std::lock_guard lock(mutex_);
    budget_ = bytes;
    evict_to_budget();
}

int64_t KernelCache::memory_budget() const {
    std::lock_guard lock(mutex_);
    return budget_;
}

int64_t KernelCache::memory_bytes() const {
    std::lock_guard lock(mutex_);
    return bytes_;
}

size_t KernelCache::size() const {
    std::lock_guard lock(mutex_);
    size_t n = 0;
    for (const auto& [key, list] : entries_) n += list.size();
    return n;
}

std::optional<KernelCache::Recalled> KernelCache::recall(const std::string& key,
                                                        const std::shared_ptr<const void>& owner) const {
    std::lock_guard lock(mutex_);
    auto it = memo_.find(key);
    if (it == memo_.end() || it->second.owner.lock() != owner) return std::nullopt;
    hits_.fetch_add(1, std::memory_order_relaxed);
    return it->second.kernel;
}

void KernelCache::remember(const std::string& key, const std::shared_ptr<const void>& owner, Recalled r) {
    std::lock_guard lock(mutex_);
    if (memo_.size() >= 4096) {  // objects come and go; drop the dead ones now and then
        for (auto it = memo_.begin(); it != memo_.end();) it = it->second.owner.expired() ? memo_.erase(it) : std::next(it);
    }
    memo_[key] = Memo{owner, std::move(r)};
}

void KernelCache::clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
    lru_.clear();
    bytes_ = 0;
    memo_.clear();
    hits_.store(0, std::memory_order_relaxed);
    misses_.store(0, std::memory_order_relaxed);
    disk_hits_.store(0, std::memory_order_relaxed);
    evictions_.store(0, std::memory_order_relaxed);
}

}  // namespace weft
