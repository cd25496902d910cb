// GPU targets: __syncthreads() where the threads of a block communicate through a shared
// buffer (TVM's ThreadSync, at the granularity of whole buffers).
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
#include <unordered_set>

#include "weft/ir/gpu.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {
namespace thread_sync_detail {

using ir::Expr;
using ir::Var;
using ir::make_int;

using ir::Stmt;
using BufferSet = std::unordered_set<const ir::Object*>;

struct SyncState {
    BufferSet reads, writes, next_writes;
    bool operator==(const SyncState&) const = default;
    void clear() { *this = {}; }
    void join(const SyncState& o) {
        reads.insert(o.reads.begin(), o.reads.end());
        writes.insert(o.writes.begin(), o.writes.end());
        next_writes.insert(o.next_writes.begin(), o.next_writes.end());
    }
    // Across a loop's back edge the next iteration's buffers become this one's.
    SyncState promoted() const {
        SyncState s = *this;
        s.writes.insert(next_writes.begin(), next_writes.end());
        s.next_writes.clear();
        return s;
    }
};

inline bool intersects(const BufferSet& a, const BufferSet& b) {
    for (auto* x : a)
        if (b.count(x)) return true;
    return false;
}

class ThreadSync {
public:
    Stmt run(const Stmt& body) {
        ir::post_order_visit(body, [&](const ir::Object* n) {
            if (n->kind == ir::NodeKind::Allocate && static_cast<const ir::Allocate*>(n)->scope == "shared")
                shared_.insert(static_cast<const ir::Allocate*>(n)->buffer.get());
        });
        if (shared_.empty()) return body;
        SyncState st;
        return process(body, st);
    }

private:
    BufferSet shared_;
    std::unordered_set<const ir::Object*> thread_vars_;  // vars whose value depends on the thread

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
    SyncState accesses(const Stmt& s) const {
        SyncState a;
        auto collect = [&](const Stmt& x, BufferSet& writes) {
            ir::post_order_visit(x, [&](const ir::Object* n) {
                if (n->kind == ir::NodeKind::Load) {
                    auto* l = static_cast<const ir::Load*>(n);
                    if (shared_.count(l->buffer.get())) a.reads.insert(l->buffer.get());
                } else if (n->kind == ir::NodeKind::Store) {
                    auto* st = static_cast<const ir::Store*>(n);
                    if (shared_.count(st->buffer.get())) writes.insert(st->buffer.get());
                }
            });
        };
        auto* attr = s.as<ir::AttrStmt>();
        if (attr && attr->key == ir::gpu::double_buffer_write_key) collect(s, a.next_writes);
        else collect(s, a.writes);
        return a;
    }

    // A unit: a barrier before it if it conflicts with what is pending.
    Stmt unit(const Stmt& s, SyncState& st) {
        SyncState a = accesses(s);
        bool conflict = intersects(a.reads, st.writes) || intersects(a.writes, st.reads) ||
                        intersects(a.next_writes, st.reads);
        Stmt out = s;
        if (conflict) {
            st.clear();
            out = ir::Seq::make({ir::gpu::syncthreads(), s});
        }
        st.join(a);
        return out;
    }

    // A loop or branch every thread runs: a barrier before it when it conflicts as a whole
    // (not inside it, where it would run on every iteration).
    Stmt sync_before(const Stmt& s, SyncState& st, bool& synced) {
        SyncState a = accesses(s);
        synced = intersects(a.reads, st.writes) || intersects(a.writes, st.reads) || intersects(a.next_writes, st.reads);
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
            if (thread_dependent(let->value)) thread_vars_.insert(let->var.get());
            return ir::LetStmt::make(let->var, let->value, process(let->body, st));
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
                if (next == iteration) break;
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
