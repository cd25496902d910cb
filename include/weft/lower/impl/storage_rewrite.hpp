// Storage rewrite: intermediate allocations whose lifetimes do not overlap share memory, so
// a chain of root-computed stages A -> B -> C -> D needs two buffers, not four.
//
// Storage flattening leaves the allocations nested (`allocate A { A's loops; allocate B {
// B's loops read A; ... } }`), so a later allocation B can take over the memory of an
// allocation A that encloses it once A is dead. Three steps:
//  1. Analysis: statements are numbered in execution (pre-order) order. A buffer's lifetime
//     is the hull of the numbers of its loads and stores, where an access inside a loop
//     that lies below the buffer's own Allocate counts for that whole loop (outermost such
//     loop): the body repeats, so what it reads in one iteration it may have written in an
//     earlier one. A buffer allocated inside a loop holds nothing across iterations (it is
//     a realize, produced anew each time), so loops above its Allocate do not widen it.
//  2. Decision, greedy in pre-order: B joins the group of an enclosing allocation A when
//     scope and element type match, both sizes are constants, the group's lifetime ends
//     before B's begins, and no parallel or GPU-thread loop lies between A's Allocate and
//     B's (every thread would need its own copy). The group's lifetime becomes the union.
//  3. Rewrite: B's Allocate goes, B's loads and stores use A's buffer, A grows to the max.
// A buffer whose variable appears anywhere but as the buffer of a Load or Store (passed to
// a call, bound by a let) may be aliased in ways this pass cannot see: it is left alone.
// Kernel arguments are not Allocates, so they are never touched.
#pragma once
#include <algorithm>
#include <climits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "weft/ir/op.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {
namespace storage_rewrite_detail {

using ir::Expr;
using ir::Stmt;
using ir::Var;
using ir::make_int;

struct AllocInfo {
    const ir::Allocate* node = nullptr;
    std::vector<const ir::For*> loops;        // loops enclosing the Allocate, outer to inner
    std::vector<size_t> enclosing;            // enclosing allocations (indices), outer to inner
    int64_t size = -1;                        // elements, when every extent is a constant
    bool escaped = false;                     // its variable is used other than by Load/Store
    int first = INT_MAX, last = -1;           // lifetime, in statement numbers
    std::vector<const ir::For*> widen_loops;  // accesses that count for a whole loop
};

// Step 1: numbers statements, records every allocation and its accesses.
class LifetimeAnalysis : public ir::IRVisitor {
public:
    std::vector<AllocInfo> allocs;  // in pre-order

    void run(const Stmt& s) {
        visit(s);
        for (auto& a : allocs)
            for (auto* loop : a.widen_loops) {
                auto [lo, hi] = loop_range_.at(loop);
                a.first = std::min(a.first, lo);
                a.last = std::max(a.last, hi);
            }
    }

    using IRVisitor::visit;
    void visit(const Stmt& s) override {
        current_ = counter_++;
        IRVisitor::visit(s);
    }

protected:
    void visit_(const ir::For* op) override {
        int first = current_;
        visit(op->min);
        visit(op->extent);
        loops_.push_back(op);
        visit(op->body);
        loops_.pop_back();
        loop_range_[op] = {first, counter_ - 1};
    }
    void visit_(const ir::Allocate* op) override {
        for (auto& e : op->extents) visit(e);
        AllocInfo info;
        info.node = op;
        info.loops = loops_;
        info.enclosing = open_;
        info.size = constant_size(op->extents);
        size_t id = allocs.size();
        allocs.push_back(std::move(info));
        by_var_[op->buffer.get()] = id;
        open_.push_back(id);
        visit(op->body);
        open_.pop_back();
    }
    void visit_(const ir::Load* op) override {
        access(op->buffer);
        visit(op->index);
    }
    void visit_(const ir::Store* op) override {
        access(op->buffer);
        visit(op->value);
        visit(op->index);
    }
    void visit_(const ir::VarNode* op) override {
        auto it = by_var_.find(op);
        if (it != by_var_.end()) allocs[it->second].escaped = true;
    }

private:
    int counter_ = 0, current_ = 0;
    std::vector<const ir::For*> loops_;
    std::vector<size_t> open_;
    std::unordered_map<const ir::Object*, size_t> by_var_;
    std::unordered_map<const ir::For*, std::pair<int, int>> loop_range_;

    static int64_t constant_size(const std::vector<Expr>& extents) {
        int64_t size = 1;
        for (auto& e : extents) {
            auto* imm = e.as<ir::IntImm>();
            if (!imm || imm->value < 0) return -1;
            size *= imm->value;
        }
        return size;
    }
    void access(const Var& buffer) {
        auto it = by_var_.find(buffer.get());
        if (it == by_var_.end()) return;  // a kernel argument
        AllocInfo& a = allocs[it->second];
        a.first = std::min(a.first, current_);
        a.last = std::max(a.last, current_);
        // The outermost loop below the buffer's Allocate, if any, makes the access span it.
        if (loops_.size() > a.loops.size()) a.widen_loops.push_back(loops_[a.loops.size()]);
    }
};

// Step 2: for each allocation, the allocation whose memory it uses (itself when unmerged),
// and the grown sizes of the allocations that others joined.
struct Plan {
    std::vector<size_t> target;
    std::vector<int64_t> size;
};

inline bool mergeable(const AllocInfo& a) { return !a.escaped && a.size >= 0 && a.last >= 0; }

inline Plan plan_merges(std::vector<AllocInfo>& allocs) {
    Plan p;
    for (size_t i = 0; i < allocs.size(); ++i) {
        p.target.push_back(i);
        p.size.push_back(allocs[i].size);
    }
    for (size_t b = 0; b < allocs.size(); ++b) {
        const AllocInfo& B = allocs[b];
        if (!mergeable(B)) continue;
        // Innermost enclosing group first: it was freed most recently.
        for (auto it = B.enclosing.rbegin(); it != B.enclosing.rend(); ++it) {
            size_t a = p.target[*it];  // a group's target is never itself merged
            AllocInfo& A = allocs[a];
            if (!mergeable(A) || A.node->scope != B.node->scope || !(A.node->type == B.node->type)) continue;
            if (A.last >= B.first) continue;
            bool crosses_threads = false;
            for (size_t l = A.loops.size(); l < B.loops.size(); ++l) {
                auto kind = B.loops[l]->for_kind;
                crosses_threads |= kind == ir::ForKind::Parallel || kind == ir::ForKind::ThreadBound;
            }
            if (crosses_threads) continue;
            p.target[b] = a;
            p.size[a] = std::max(p.size[a], B.size);
            A.first = std::min(A.first, B.first);
            A.last = std::max(A.last, B.last);
            break;
        }
    }
    return p;
}

// Step 3: drops merged Allocates, redirects their accesses, grows the targets. Allocates are
// met in the analysis's pre-order, so the i-th one here is allocs[i]. The plan is per
// occurrence, not per node or buffer variable: unrolling copies a body, and the copies share
// the buffer variable (and, where they do not depend on the unrolled loop, the very node);
// one copy joining an enclosing buffer says nothing about the others. So the redirection
// of a buffer variable holds only inside the body of the occurrence that was merged.
class MergeRewriter : public ir::IRMutator {
public:
    MergeRewriter(const std::vector<AllocInfo>& allocs, const Plan& plan) : allocs_(allocs), plan_(plan) {}
    using IRMutator::mutate;

protected:
    Stmt visit_(const ir::Allocate* op, const Stmt& self) override {
        const size_t i = next_++;
        WEFT_ICHECK(i < allocs_.size() && allocs_[i].node == op, "storage_rewrite: allocations visited out of order");
        const size_t t = plan_.target[i];
        const ir::Object* key = op->buffer.get();
        auto saved = buffer_of_.find(key);
        std::optional<Var> previous;
        if (saved != buffer_of_.end()) previous = saved->second;
        if (t != i) buffer_of_[key] = allocs_[t].node->buffer;
        else buffer_of_.erase(key);
        Stmt body = mutate(op->body);
        if (previous) buffer_of_[key] = *previous;
        else buffer_of_.erase(key);
        if (t != i) return body;
        if (plan_.size[i] != allocs_[i].size) {
            DataType index_t = op->extents.empty() ? index_type : op->extents[0].type();
            return ir::Allocate::make(op->buffer, op->type, {make_int(plan_.size[i], index_t)}, op->scope, body);
        }
        if (body.same_as(op->body)) return self;
        return ir::Allocate::make(op->buffer, op->type, op->extents, op->scope, body);
    }
    Expr visit_(const ir::Load* op, const Expr& self) override {
        Expr e = IRMutator::visit_(op, self);
        auto* load = e.as<ir::Load>();
        auto it = buffer_of_.find(load->buffer.get());
        return it == buffer_of_.end() ? e : ir::Load::make(load->type, it->second, load->index);
    }
    Stmt visit_(const ir::Store* op, const Stmt& self) override {
        Stmt s = IRMutator::visit_(op, self);
        auto* store = s.as<ir::Store>();
        auto it = buffer_of_.find(store->buffer.get());
        return it == buffer_of_.end() ? s : ir::Store::make(it->second, store->value, store->index);
    }

private:
    const std::vector<AllocInfo>& allocs_;
    const Plan& plan_;
    size_t next_ = 0;
    std::unordered_map<const ir::Object*, Var> buffer_of_;
};

}  // namespace storage_rewrite_detail

inline ir::Stmt storage_rewrite(const ir::Stmt& s) {
    using namespace storage_rewrite_detail;
    LifetimeAnalysis analysis;
    analysis.run(s);
    Plan plan = plan_merges(analysis.allocs);
    bool any = false;
    for (size_t i = 0; i < plan.target.size(); ++i) any |= plan.target[i] != i;
    if (!any) return s;  // unchanged: the pass printer says so
    return MergeRewriter(analysis.allocs, plan).mutate(s);
}

}  // namespace weft::lower_passes
