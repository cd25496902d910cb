// GPU targets: __syncthreads() where the threads of a block communicate through a shared
// buffer (TVM's ThreadSync). Accesses are compared per buffer; two of them need no barrier
// when both are at the same index and that index gives each thread its own element
// (B_rf[threadIdx.x]), or when both are made by thread 0 alone (under threadIdx == 0).
//
// The pass walks the kernel in execution order with the shared buffers read and written
// since the last barrier. Before a statement that reads a buffer others wrote (read after
// write) or writes a buffer others read (write after read), it puts a barrier. Barriers go
// only where every thread of the block passes: in sequences whose enclosing conditions and
// loop bounds do not depend on the thread index; a statement under a thread-dependent
// condition (a cooperative fetch's tail guard, a threadIdx == 0 store) is one unit whose
// accesses count as a whole. A serial loop is walked again with what its end leaves
// pending, so the write of iteration k+1 waits for the reads of iteration k (the barrier
// then sits at the top of the body). Writes of a double-buffered fetch fill the buffer of
// the next iteration: they do not conflict with this iteration's reads, and become
// ordinary writes across the loop's back edge, so such a loop needs one barrier per
// iteration.
#pragma once
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/gpu.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {
namespace thread_sync_detail {

using ir::Expr;
using ir::Var;
using ir::make_int;

using ir::Stmt;

// What a set of statements did to one shared buffer: when every access was at the same
// index, and that index is a one-to-one function of the thread indices alone (B_rf[tx]),
// each thread touched only its own element and no barrier is needed against itself.
// Accesses under a guard that lets only thread 0 of the block through (the stores of a stage
// the block's threads share) are all made by one thread: they never conflict with each other.
struct Access {
    bool shared_among_threads = false;
    Expr private_index;  // in canonical thread variables; set when private to each thread
    bool single_thread = false;  // made by thread 0 only
};
using AccessMap = std::unordered_map<const ir::Object*, Access>;

inline bool same_index(const Expr& a, const Expr& b) {
    return a.type() == b.type() && ir::arith::can_prove(a == b);
}
inline void merge(AccessMap& into, const ir::Object* buffer, const Access& a) {
    auto [it, inserted] = into.try_emplace(buffer, a);
    if (inserted) return;
    Access& e = it->second;
    if (e.shared_among_threads) return;
    if (e.single_thread && a.single_thread) return;
    if (e.single_thread || a.single_thread || a.shared_among_threads || !same_index(e.private_index, a.private_index))
        e = Access{true, {}, false};
}
inline void merge_all(AccessMap& into, const AccessMap& from) {
    for (auto& [b, a] : from) merge(into, b, a);
}
// Whether accesses `a` (pending) and `b` (new) may touch one element from two threads.
inline bool conflicts(const AccessMap& a, const AccessMap& b) {
    for (auto& [buffer, x] : b) {
        auto it = a.find(buffer);
        if (it == a.end()) continue;
        const Access& y = it->second;
        if (x.single_thread && y.single_thread) continue;
        if (x.single_thread || y.single_thread || x.shared_among_threads || y.shared_among_threads ||
            !same_index(x.private_index, y.private_index))
            return true;
    }
    return false;
}

struct SyncState {
    AccessMap reads, writes, next_writes;
    void clear() { *this = {}; }
    void join(const SyncState& o) {
        merge_all(reads, o.reads);
        merge_all(writes, o.writes);
        merge_all(next_writes, o.next_writes);
    }
    // Across a loop's back edge the next iteration's buffers become this one's.
    SyncState promoted() const {
        SyncState s = *this;
        merge_all(s.writes, next_writes);
        s.next_writes.clear();
        return s;
    }
    // Same buffers, same sharing (for the loop's fixed point).
    bool same_as(const SyncState& o) const {
        auto eq = [](const AccessMap& x, const AccessMap& y) {
            if (x.size() != y.size()) return false;
            for (auto& [b, a] : x) {
                auto it = y.find(b);
                if (it == y.end() || it->second.shared_among_threads != a.shared_among_threads ||
                    it->second.single_thread != a.single_thread)
                    return false;
            }
            return true;
        };
        return eq(reads, o.reads) && eq(writes, o.writes) && eq(next_writes, o.next_writes);
    }
};

class ThreadSync {
public:
    Stmt run(const Stmt& body) {
        ir::post_order_visit(body, [&](const ir::Object* n) {
            if (n->kind == ir::NodeKind::Allocate && static_cast<const ir::Allocate*>(n)->scope == "shared")
                shared_.insert(static_cast<const ir::Allocate*>(n)->buffer.get());
        });
        if (shared_.empty()) return body;
        // The block's thread extents, from the launch attributes around the body.
        for (Stmt s = body; auto* a = s.as<ir::AttrStmt>(); s = a->body) {
            auto* c = a->value.as<ir::Call>();
            int64_t e;
            if (a->key == ir::gpu::thread_extent_key && c && ir::as_const_int(c->args[1], &e))
                extents_[c->args[0].as<ir::StringImm>()->value] = e;
        }
        SyncState st;
        return process(body, st);
    }

private:
    std::unordered_set<const ir::Object*> shared_;
    std::unordered_set<const ir::Object*> thread_vars_;  // vars whose value depends on the thread
    std::unordered_map<const ir::Object*, Expr> thread_values_;  // their values, in canonical thread vars
    std::map<std::string, Var> canonical_;                          // one variable per thread tag
    std::map<std::string, int64_t> extents_;

    // e with thread-dependent lets replaced by their values and thread_index(tag) by one
    // variable per tag; undefined if e depends on anything else.
    Expr canonical(const Expr& e) {
        struct Canon : ir::IRMutator {
            ThreadSync* self;
            bool other = false;
            using IRMutator::mutate;
            Expr visit_(const ir::VarNode* op, const Expr& e) override {
                auto it = self->thread_values_.find(op);
                if (it != self->thread_values_.end()) return it->second;
                other = true;
                return e;
            }
            Expr visit_(const ir::Call* op, const Expr& e) override {
                std::string tag = ir::gpu::thread_index_tag(e);
                if (tag.empty()) return IRMutator::visit_(op, e);
                auto [it, inserted] = self->canonical_.try_emplace(tag, Var(tag, index_type));
                return it->second;
            }
        } c;
        c.self = this;
        Expr r = c.mutate(e);
        return c.other ? Expr() : ir::arith::simplify(r);
    }
    // Whether a canonical index gives every thread of the block its own element: linear in
    // the thread indices with strides that do not overlap (tx + 32 * ty over 32 x threads).
    bool one_to_one(const Expr& index) {
        if (!index.defined() || index.type().lanes != 1) return false;
        std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq> zero;
        for (auto& [tag, v] : canonical_) zero[v] = make_int(0);
        Expr base = ir::arith::simplify(ir::substitute(index, zero));
        std::vector<std::pair<int64_t, int64_t>> terms;  // |coefficient|, extent
        Expr linear = base;
        for (auto& [tag, v] : canonical_) {
            if (!ir::uses_var(index, v)) continue;
            auto one = zero;
            one[v] = make_int(1);
            int64_t c;
            if (!ir::as_const_int(ir::arith::simplify(ir::substitute(index, one) - base), &c) || c == 0) return false;
            auto ext = extents_.find(tag);
            if (ext == extents_.end()) return false;
            terms.emplace_back(c < 0 ? -c : c, ext->second);
            linear = linear + make_int(c) * v;
        }
        if (terms.empty() || !ir::arith::can_prove(linear == index)) return false;
        for (auto& [tag, e] : extents_)  // a launched thread axis the index ignores: threads share elements
            if (ir::gpu::is_thread_tag(tag) && e > 1 && !(canonical_.count(tag) && ir::uses_var(index, canonical_[tag])))
                return false;
        std::sort(terms.begin(), terms.end());
        for (size_t i = 1; i < terms.size(); ++i)
            if (terms[i].first < terms[i - 1].first * terms[i - 1].second) return false;
        return true;
    }
    Access access_at(const Expr& index, bool single) {
        if (single) return Access{false, {}, true};
        Expr c = canonical(index);
        return one_to_one(c) ? Access{false, c, false} : Access{true, {}, false};
    }
    // Whether `cond` holds only for thread 0 of every launched thread axis of the block.
    bool only_thread_zero(const Expr& cond) {
        std::set<std::string> zero;
        std::function<void(const Expr&)> conjuncts = [&](const Expr& e) {
            if (auto* a = e.as<ir::And>()) {
                conjuncts(a->a);
                conjuncts(a->b);
            } else if (auto* eq = e.as<ir::EQ>(); eq && ir::is_zero(eq->b)) {
                std::string tag = ir::gpu::thread_index_tag(eq->a);
                if (!tag.empty()) zero.insert(tag);
            }
        };
        conjuncts(cond);
        bool any = false;
        for (auto& [tag, e] : extents_)
            if (ir::gpu::is_thread_tag(tag) && e > 1) {
                if (!zero.count(tag)) return false;
                any = true;
            }
        return any;
    }

    bool thread_dependent(const Expr& e) const {
        bool dep = false;
        ir::post_order_visit(e, [&](const ir::Object* n) {
            if (thread_vars_.count(n)) dep = true;
            if (n->kind == ir::NodeKind::Call && static_cast<const ir::Call*>(n)->name == ir::gpu::thread_index_name)
                dep = true;
        });
        return dep;
    }

    // The shared accesses of a statement taken as one unit.
    SyncState accesses(const Stmt& s) {
        SyncState a;
        struct Collect : ir::IRVisitor {
            ThreadSync* self;
            bool single = false;
            std::vector<std::tuple<const ir::Object*, Expr, bool>> loads, stores;
            using IRVisitor::visit;
            void visit_(const ir::Load* op) override {
                IRVisitor::visit_(op);
                if (self->shared_.count(op->buffer.get())) loads.emplace_back(op->buffer.get(), op->index, single);
            }
            void visit_(const ir::Store* op) override {
                IRVisitor::visit_(op);
                if (self->shared_.count(op->buffer.get())) stores.emplace_back(op->buffer.get(), op->index, single);
            }
            void visit_(const ir::IfThenElse* op) override {
                visit(op->condition);
                bool was = single;
                single = single || self->only_thread_zero(op->condition);
                visit(op->then_case);
                single = was;
                if (op->else_case.defined()) visit(op->else_case);
            }
        } collect;
        collect.self = this;
        collect.visit(s);
        // Lets inside the unit are not known here: an index using one counts as shared.
        auto* attr = s.as<ir::AttrStmt>();
        AccessMap& writes = attr && attr->key == ir::gpu::double_buffer_write_key ? a.next_writes : a.writes;
        for (auto& [b, i, single] : collect.loads) merge(a.reads, b, access_at(i, single));
        for (auto& [b, i, single] : collect.stores) merge(writes, b, access_at(i, single));
        return a;
    }

    bool conflict(const SyncState& pending, const SyncState& a) const {
        return conflicts(pending.writes, a.reads) || conflicts(pending.reads, a.writes) ||
               conflicts(pending.reads, a.next_writes);
    }

    // A unit: a barrier before it if it conflicts with what is pending.
    Stmt unit(const Stmt& s, SyncState& st) {
        SyncState a = accesses(s);
        Stmt out = s;
        if (conflict(st, a)) {
            st.clear();
            out = ir::Seq::make({ir::gpu::syncthreads(), s});
        }
        st.join(a);
        return out;
    }

    // A loop or branch every thread runs: a barrier before it when it conflicts as a whole
    // (not inside it, where it would run on every iteration).
    Stmt sync_before(const Stmt& s, SyncState& st, bool& synced) {
        synced = conflict(st, accesses(s));
        if (synced) st.clear();
        return s;
    }
    Stmt with_barrier(bool synced, const Stmt& s) { return synced ? ir::Seq::make({ir::gpu::syncthreads(), s}) : s; }

    Stmt process(const Stmt& s, SyncState& st) {
        if (auto* seq = s.as<ir::Seq>()) {
            std::vector<Stmt> out;
            for (auto& c : seq->stmts) out.push_back(process(c, st));
            return ir::Seq::make(out);
        }
        if (auto* let = s.as<ir::LetStmt>()) {
            // The value's reads come first (let y = A.shared[k] * B.shared[k]).
            SyncState a = accesses(ir::Evaluate::make(let->value));
            bool synced = conflict(st, a);
            if (synced) st.clear();
            st.join(a);
            if (thread_dependent(let->value)) {
                thread_vars_.insert(let->var.get());
                if (Expr c = canonical(let->value); c.defined()) thread_values_[let->var.get()] = c;
            }
            return with_barrier(synced, ir::LetStmt::make(let->var, let->value, process(let->body, st)));
        }
        if (auto* a = s.as<ir::Allocate>())
            return ir::Allocate::make(a->buffer, a->type, a->extents, a->scope, process(a->body, st));
        if (auto* attr = s.as<ir::AttrStmt>(); attr && attr->key != ir::gpu::double_buffer_write_key)
            return ir::AttrStmt::make(attr->key, attr->value, process(attr->body, st));
        if (auto* ite = s.as<ir::IfThenElse>(); ite && !thread_dependent(ite->condition)) {
            bool synced;
            sync_before(s, st, synced);
            SyncState then_state = st, else_state = st;
            Stmt t = process(ite->then_case, then_state);
            Stmt e = ite->else_case.defined() ? process(ite->else_case, else_state) : Stmt();
            st = then_state;
            st.join(else_state);
            return with_barrier(synced, ir::IfThenElse::make(ite->condition, t, e));
        }
        if (auto* loop = s.as<ir::For>(); loop && loop->for_kind != ir::ForKind::Parallel &&
                                          !thread_dependent(loop->min) && !thread_dependent(loop->extent)) {
            bool synced;
            sync_before(s, st, synced);
            // Walk the body until what one iteration leaves pending for the next is stable.
            SyncState entry = st, iteration = st, end;
            Stmt body;
            // Only the loop a double-buffered fetch runs ahead in turns its writes into the
            // next iteration's (inner loops, like the compute's, keep them pending as they are).
            bool owns_double_buffer = false;
            ir::post_order_visit(loop->body, [&](const ir::Object* n) {
                owns_double_buffer |= n->kind == ir::NodeKind::AttrStmt &&
                                      static_cast<const ir::AttrStmt*>(n)->key == ir::gpu::double_buffer_write_key;
            });
            auto back_edge = [&](const SyncState& x) { return owns_double_buffer ? x.promoted() : x; };
            for (int round = 0; round < 4; ++round) {
                end = iteration;
                body = process(loop->body, end);
                SyncState next = back_edge(end);
                next.join(entry);
                if (next.same_as(iteration)) break;
                iteration = next;
            }
            st = back_edge(end);
            st.join(entry);  // the loop may run no iteration
            return with_barrier(synced, ir::For::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, body,
                                                      loop->thread_tag));
        }
        return unit(s, st);
    }
};

}  // namespace thread_sync_detail

inline ir::Stmt insert_thread_sync(const ir::Stmt& kernel_body) {
    return thread_sync_detail::ThreadSync().run(kernel_body);
}

}  // namespace weft::lower_passes
