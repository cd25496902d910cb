// GPU targets: double buffering of a shared stage computed inside a serial loop (TVM's
// InjectDoubleBuffer). Schedule_ops marks the stage's realize (AttrStmt double_buffer)
// and its fetch nest (AttrStmt double_buffer_write). For the loop k that encloses them
//
//   for k in [m, m+N):  allocate S[n] { fetch S for k;  compute k from S }
// becomes
//   allocate S[2n] {
//     fetch S[0:n] for k = m
//     for k in [m, m+N):
//       double_buffer_write { if (k + 1 < m + N) fetch S[((k+1-m) % 2) * n ...] for k + 1 }
//       compute k from S[((k-m) % 2) * n ...]
//   }
// so the loads for iteration k+1 are in flight while iteration k computes. Barrier
// insertion (gpu_thread_sync.hpp) then puts one barrier per iteration, before the fetch.
// Runs after storage flattening, before storage rewrite and the thread binding.
#pragma once
#include <unordered_set>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/gpu.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {
namespace double_buffer_detail {

using ir::Expr;
using ir::Var;
using ir::make_int;

using ir::Stmt;
using VarMap = std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq>;

// Adds `offset` to the index of every store to (or load from) `buffer`.
class OffsetAccesses : public ir::IRMutator {
public:
    OffsetAccesses(Var buffer, Expr offset, bool stores) : buffer_(std::move(buffer)), offset_(std::move(offset)), stores_(stores) {}
    using IRMutator::mutate;

protected:
    Stmt visit_(const ir::Store* op, const Stmt& self) override {
        Stmt s = IRMutator::visit_(op, self);
        auto* st = s.as<ir::Store>();
        if (!stores_ || !st->buffer.same_as(buffer_)) return s;
        return ir::Store::make(st->buffer, st->value, shift(st->index));
    }
    Expr visit_(const ir::Load* op, const Expr& self) override {
        Expr e = IRMutator::visit_(op, self);
        auto* l = e.as<ir::Load>();
        if (stores_ || !l->buffer.same_as(buffer_)) return e;
        return ir::Load::make(l->type, l->buffer, shift(l->index));
    }

private:
    Var buffer_;
    Expr offset_;
    bool stores_;
    Expr shift(const Expr& index) const {
        return ir::arith::simplify(index + (index.type().lanes > 1 ? ir::broadcast(offset_, index.type().lanes) : offset_));
    }
};

struct Found {
    Stmt alloc_stmt;  // keeps the node alive: it may belong to a tree rebuilt on the way
    const ir::Allocate* alloc;
    Stmt fetch;  // the nest inside the double_buffer_write attribute
};

// Inside one loop's body (not inside inner loops): replaces each double-buffered realize
// by its rewritten body and records it.
class ExtractDoubleBuffers : public ir::IRMutator {
public:
    ExtractDoubleBuffers(const ir::For* loop) : loop_(loop) {}
    std::vector<Found> found;
    using IRMutator::mutate;

protected:
    Stmt visit_(const ir::For* op, const Stmt& self) override { return self; }  // inner loops: their own turn
    Stmt visit_(const ir::AttrStmt* op, const Stmt& self) override {
        if (op->key != ir::gpu::double_buffer_key) return IRMutator::visit_(op, self);
        auto* alloc = op->body.as<ir::Allocate>();
        auto* seq = alloc ? alloc->body.as<ir::Seq>() : nullptr;
        auto* fetch = seq ? seq->stmts.at(0).as<ir::AttrStmt>() : nullptr;
        WEFT_ICHECK(fetch && fetch->key == ir::gpu::double_buffer_write_key, "double buffer: unexpected structure");
        const Var& k = loop_->loop_var;
        int64_t n;
        WEFT_CHECK(alloc->extents.size() == 1 && ir::as_const_int(ir::arith::simplify(alloc->extents[0]), &n),
                   "double_buffer: the shared buffer '", alloc->buffer.name(), "' has a size that is not a constant (",
                   ir::to_string(alloc->extents.at(0)), "); split the loops it is computed in by constant factors");
        Expr size = make_int(n);
        Expr next = k + make_int(1);
        Expr end = loop_->min + loop_->extent;
        Stmt fetch_next = ir::substitute(fetch->body, VarMap{{k, next}});
        fetch_next = OffsetAccesses(alloc->buffer, ((next - loop_->min) % make_int(2)) * size, true).mutate(fetch_next);
        fetch_next = ir::AttrStmt::make(ir::gpu::double_buffer_write_key, make_int(1),
                                        ir::IfThenElse::make(ir::arith::simplify(next < end), ir::arith::simplify(fetch_next)));
        std::vector<Stmt> rest(seq->stmts.begin() + 1, seq->stmts.end());
        Stmt compute = OffsetAccesses(alloc->buffer, ((k - loop_->min) % make_int(2)) * size, false)
                           .mutate(ir::Seq::make(rest));
        found.push_back({op->body, alloc, fetch->body});
        return ir::Seq::make({fetch_next, mutate(compute)});
    }

private:
    const ir::For* loop_;
};

class InjectDoubleBuffer : public ir::IRMutator {
public:
    using IRMutator::mutate;

protected:
    Stmt visit_(const ir::For* op, const Stmt& self) override {
        Stmt inner = IRMutator::visit_(op, self);
        auto* loop = inner.as<ir::For>();
        ExtractDoubleBuffers extract(loop);
        Stmt body = extract.mutate(loop->body);
        if (extract.found.empty()) return inner;
        WEFT_CHECK(loop->for_kind == ir::ForKind::Serial || loop->for_kind == ir::ForKind::Unrolled,
                   "double_buffer: '", extract.found[0].alloc->buffer.name(), "' is computed at loop '",
                   loop->loop_var.name(), "', which is ", ir::for_kind_name(loop->for_kind),
                   "; double buffering overlaps the iterations of a serial loop (compute it at the reduction's outer loop)");
        Stmt result = ir::For::make(loop->loop_var, loop->min, loop->extent, loop->for_kind, body, loop->thread_tag);
        // The prologue fetches the first iteration's tile; it must not need anything the loop binds.
        std::unordered_set<const ir::Object*> bound_inside;
        ir::post_order_visit(loop->body, [&](const ir::Object* n) {
            if (n->kind == ir::NodeKind::LetStmt) bound_inside.insert(static_cast<const ir::LetStmt*>(n)->var.get());
        });
        for (auto it = extract.found.rbegin(); it != extract.found.rend(); ++it) {
            std::unordered_set<const ir::Object*> own;  // the fetch's own bindings
            ir::post_order_visit(it->fetch, [&](const ir::Object* n) {
                if (n->kind == ir::NodeKind::LetStmt) own.insert(static_cast<const ir::LetStmt*>(n)->var.get());
            });
            bool free_ok = true;
            ir::post_order_visit(it->fetch, [&](const ir::Object* n) { free_ok &= !bound_inside.count(n) || own.count(n); });
            WEFT_CHECK(free_ok, "double_buffer: the fetch of '", it->alloc->buffer.name(),
                       "' depends on a value computed inside loop '", loop->loop_var.name(),
                       "', so it cannot be issued one iteration ahead");
            Stmt prologue = ir::arith::simplify(ir::substitute(it->fetch, VarMap{{loop->loop_var, loop->min}}));
            Expr n = ir::arith::simplify(it->alloc->extents[0] * make_int(2));
            result = ir::Allocate::make(it->alloc->buffer, it->alloc->type, {n}, it->alloc->scope,
                                        ir::Seq::make({prologue, result}));
        }
        return result;
    }
};

}  // namespace double_buffer_detail

inline ir::Stmt inject_double_buffer(const ir::Stmt& s) { return double_buffer_detail::InjectDoubleBuffer().mutate(s); }

}  // namespace weft::lower_passes
