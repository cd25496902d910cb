// Definitions for runtime/kernel_cache.hpp.
#pragma once
#include "weft/ir/equality.hpp"
#include "weft/runtime/kernel_cache.hpp"

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
    std::string s = f.name + (f.fast_math ? " fast_math" : "") + " | " + target.str();
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
        for (const Entry& e : entries_[key]) {
            if (e.description == description && ir::structural_equal(e.structure, structure)) {
                found = e.module;
                break;
            }
        }
        if (found.valid()) {
            hits_.fetch_add(1, std::memory_order_relaxed);
        } else {
            misses_.fetch_add(1, std::memory_order_relaxed);
            id = next_id_++;
            entries_[key].push_back(Entry{structure, description, promise.get_future().share(), id});
        }
    }
    // A hit waits (outside the lock) in case another thread is still building the kernel.
    if (found.valid()) return found.get();

    try {
        std::shared_ptr<const KernelModule> module = build();
        WEFT_ICHECK(module != nullptr, "the builder of kernel '", func.name, "' returned no module");
        promise.set_value(module);
        return module;
    } catch (...) {
        // Forget the failed entry so a later call tries again, then tell any waiters.
        {
            std::lock_guard lock(mutex_);
            auto it = entries_.find(key);
            if (it != entries_.end()) {
                auto& list = it->second;
                for (auto e = list.begin(); e != list.end(); ++e) {
                    if (e->id == id) {
                        list.erase(e);
                        break;
                    }
                }
                if (list.empty()) entries_.erase(it);
            }
        }
        promise.set_exception(std::current_exception());
        throw;
    }
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
    memo_.clear();
    hits_.store(0, std::memory_order_relaxed);
    misses_.store(0, std::memory_order_relaxed);
    disk_hits_.store(0, std::memory_order_relaxed);
}

}  // namespace weft
