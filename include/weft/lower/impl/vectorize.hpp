// Vectorize: a loop marked vectorized with a constant extent L becomes straight-line vector
// code: its variable becomes Ramp(min, 1, L), scalar operands broadcast, loads and stores
// become vector (contiguous when the index is a unit-stride Ramp). On a CPU, an L that is not
// a power of two and overflows a vector register becomes pieces of powers of two, one after
// the other (48 -> 32 + 16; see VectorizeLoops). A loop that cannot be
// vectorized safely (a branch on the lane, a loop bound depending on it, a store of a
// vector to one address) stays a serial loop: correct, just slower. Split tails with a
// symbolic extent take that path.
//
// A vectorized reduce axis (Halide's VectorReduce) is the one store of a vector to one
// address that does vectorize: `acc = acc op f(k)` over the lanes of k becomes
// `acc = acc op vector_reduce_op(f(ramp))` for op in +, *, min, max, which codegen combines
// as a tree of halves (log2(lanes) steps, not a chain of lanes - 1). It applies when that
// store is the loop body's only store and f does not read acc; float sums and products then
// add in a different order than the serial loop, as rfactor does.
#pragma once
#include <bit>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {
namespace vectorize_detail {

using ir::Stmt;

struct CannotVectorize {};

inline Expr widen(const Expr& e, int lanes) {
    return e.type().lanes == lanes ? e : ir::Broadcast::make(e, lanes);
}

inline int count_stores(const Stmt& s) {
    int n = 0;
    ir::post_order_visit(s, [&](const ir::Object* node) { n += node->kind == ir::NodeKind::Store; });
    return n;
}

class Vectorizer : public ir::IRMutator {
public:
    // `reduce_lanes`: a store of a vector to one address may become a reduction over the lanes.
    Vectorizer(Var v, Expr ramp, int lanes, bool reduce_lanes)
        : v_(std::move(v)), ramp_(std::move(ramp)), lanes_(lanes), reduce_lanes_(reduce_lanes) {}
    using IRMutator::mutate;

protected:
    Expr visit_(const ir::VarNode* op, const Expr& self) override {
        if (op == v_.get()) return ramp_;
        auto it = renamed_.find(op);
        return it == renamed_.end() ? self : it->second;
    }
    Expr visit_(const ir::Select* op, const Expr& self) override {
        Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
        if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
        int l = std::max({c.type().lanes, t.type().lanes, f.type().lanes});
        return ir::Select::make(widen(c, l), widen(t, l), widen(f, l));
    }
    Expr visit_(const ir::Call* op, const Expr& self) override {
        bool changed = false;
        auto args = mutate_all(op->args, &changed);
        if (!changed) return self;
        // A condition the same in every lane picks one side for the whole vector, so only that
        // side still runs (a padded copy's guarded load, vectorized along its channels).
        if (op->name == "if_then_else" && args[0].type().lanes == 1)
            return ir::Call::make(op->type.with_lanes(lanes_), op->name,
                                  {args[0], widen(args[1], lanes_), widen(args[2], lanes_)}, op->call_kind);
        if (op->name == "if_then_else" || op->name == "likely" || op->call_kind != ir::Call::CallKind::PureIntrinsic ||
            ir::is_vector_reduce(op->name))
            throw CannotVectorize{};
        for (auto& a : args) a = widen(a, lanes_);
        return ir::Call::make(op->type.with_lanes(lanes_), op->name, args, op->call_kind);
    }
    Expr visit_(const ir::Let* op, const Expr& self) override {
        Expr value = mutate(op->value);
        if (value.type().lanes == 1) return IRMutator::visit_(op, self);
        Var nv(op->var.name(), value.type());
        renamed_[op->var.get()] = nv;
        Expr body = mutate(op->body);
        return ir::Let::make(nv, value, body);
    }
    Expr visit_(const ir::Ramp*, const Expr&) override { throw CannotVectorize{}; }
    Expr visit_(const ir::Broadcast*, const Expr&) override { throw CannotVectorize{}; }

    Stmt visit_(const ir::Store* op, const Stmt& self) override {
        Expr value = mutate(op->value), index = mutate(op->index);
        if (value.same_as(op->value) && index.same_as(op->index)) return self;
        if (index.type().lanes == 1) {  // every lane writes one address: a reduction over the lanes, or nothing
            Expr reduced = reduce_lanes_ ? reduce_over_lanes(op, value) : Expr();
            if (!reduced.defined()) throw CannotVectorize{};
            return ir::Store::make(op->buffer, reduced, index);
        }
        return ir::Store::make(op->buffer, widen(value, lanes_), index);
    }
    Stmt visit_(const ir::LetStmt* op, const Stmt& self) override {
        Expr value = mutate(op->value);
        if (value.type().lanes == 1) {
            scalar_lets_[op->var.get()] = value;
            return IRMutator::visit_(op, self);
        }
        Var nv(op->var.name(), value.type());
        renamed_[op->var.get()] = nv;
        Stmt body = mutate(op->body);
        return ir::LetStmt::make(nv, value, body);
    }
    Stmt visit_(const ir::IfThenElse* op, const Stmt& self) override {
        Expr c = mutate(op->condition);
        if (c.type().lanes != 1) throw CannotVectorize{};
        return IRMutator::visit_(op, self);
    }
    Stmt visit_(const ir::For* op, const Stmt& self) override {
        if (mutate(op->min).type().lanes != 1 || mutate(op->extent).type().lanes != 1) throw CannotVectorize{};
        return IRMutator::visit_(op, self);
    }
    Stmt visit_(const ir::Allocate*, const Stmt&) override { throw CannotVectorize{}; }
    Stmt visit_(const ir::AssertStmt*, const Stmt&) override { throw CannotVectorize{}; }

private:
    // Whether `e` is the value stored at `store`'s address (a load of it, or a variable bound to one).
    bool is_accumulator(const Expr& e, const ir::Store* store) const {
        Expr value = e;
        if (auto* v = e.as<ir::VarNode>()) {
            auto it = scalar_lets_.find(v);
            if (it == scalar_lets_.end()) return false;
            value = it->second;
        }
        auto* load = value.as<ir::Load>();
        return load && load->buffer.same_as(store->buffer) && ir::structural_equal(load->index, store->index);
    }
    // Whether `e` reads the buffer `store` writes, directly or through a variable.
    bool reads_buffer_of(const Expr& e, const ir::Store* store) const {
        bool reads = false;
        ir::post_order_visit(e, [&](const ir::Object* node) {
            if (node->kind == ir::NodeKind::Load && static_cast<const ir::Load*>(node)->buffer.same_as(store->buffer))
                reads = true;
            if (auto it = scalar_lets_.find(node); it != scalar_lets_.end() && reads_buffer_of(it->second, store))
                reads = true;
        });
        return reads;
    }
    // acc op f(lanes) -> acc op vector_reduce_op(f(lanes)); undefined when `value` is not that.
    Expr reduce_over_lanes(const ir::Store* store, const Expr& value) const {
        const char* name = ir::vector_reduce_name(value.kind());
        if (!name || value.type().lanes == 1) return {};
        Expr a, b;
        if (auto* x = value.as<ir::Add>()) a = x->a, b = x->b;
        if (auto* x = value.as<ir::Mul>()) a = x->a, b = x->b;
        if (auto* x = value.as<ir::Min>()) a = x->a, b = x->b;
        if (auto* x = value.as<ir::Max>()) a = x->a, b = x->b;
        // After vectorizing, the scalar side is the accumulator widened to a vector.
        auto scalar_of = [](const Expr& e) { auto* bc = e.as<ir::Broadcast>(); return bc ? bc->value : Expr(); };
        for (int side = 0; side < 2; ++side) {
            Expr acc = scalar_of(side == 0 ? a : b), lanes = side == 0 ? b : a;
            if (!acc.defined() || !is_accumulator(acc, store) || reads_buffer_of(lanes, store)) continue;
            Expr reduced = ir::Call::make(lanes.type().element_of(), name, {lanes}, ir::Call::CallKind::PureIntrinsic);
            switch (value.kind()) {
                case ir::NodeKind::Add: return ir::Add::make(acc, reduced);
                case ir::NodeKind::Mul: return ir::Mul::make(acc, reduced);
                case ir::NodeKind::Min: return ir::Min::make(acc, reduced);
                default: return ir::Max::make(acc, reduced);
            }
        }
        return {};
    }

    Var v_;
    Expr ramp_;
    int lanes_;
    bool reduce_lanes_;
    std::unordered_map<const ir::Object*, Expr> renamed_;
    std::unordered_map<const ir::Object*, Expr> scalar_lets_;  // scalar let variables and their values
};

// The widest element, in bits, that the loop body loads or stores.
inline int widest_element_bits(const Stmt& body) {
    int bits = 0;
    ir::post_order_visit(body, [&](const ir::Object* node) {
        if (node->kind == ir::NodeKind::Load) bits = std::max(bits, int(static_cast<const ir::Load*>(node)->type.bits));
        if (node->kind == ir::NodeKind::Store)
            bits = std::max(bits, int(static_cast<const ir::Store*>(node)->value.type().bits));
    });
    return bits;
}

class VectorizeLoops : public ir::IRMutator {
public:
    explicit VectorizeLoops(int register_bits) : register_bits_(register_bits) {}
    using IRMutator::mutate;
    Stmt visit_(const ir::For* op, const Stmt& self) override {
        Stmt s = IRMutator::visit_(op, self);
        auto* f = s.as<ir::For>();
        if (f->for_kind != ir::ForKind::Vectorized) return s;
        int64_t lanes;
        Stmt serial = ir::For::make(f->loop_var, f->min, f->extent, ir::ForKind::Serial, f->body, f->thread_tag);
        if (!ir::as_const_int(f->extent, &lanes) || lanes < 2 || lanes > 256) return serial;
        const bool reduce_lanes = count_stores(f->body) == 1;
        try {
            // LLVM's x86 backend takes vectors apart lane by lane where a vector wider than a
            // register has a lane count that is not a power of two and lives across a loop
            // (an accumulator): <48 x float> ran at 5 GFLOP/s in a conv tile, against 100 for
            // <32 x float>. Such loops run as pieces of powers of two (48: 32 + 16), one
            // after the other, each a vector LLVM splits into whole registers.
            if (register_bits_ > 0 && !ir::is_power_of_two(lanes) &&
                lanes * widest_element_bits(f->body) > register_bits_) {
                std::vector<Stmt> pieces;
                for (int64_t at = 0; at < lanes;) {
                    const int64_t n = int64_t(std::bit_floor(uint64_t(lanes - at)));
                    Expr first = ir::arith::simplify(f->min + make_int(at));
                    pieces.push_back(n == 1 ? ir::substitute(f->body, {{f->loop_var, first}})
                                            : piece(f, ir::Ramp::make(first, make_int(1), int(n)), int(n), reduce_lanes));
                    at += n;
                }
                return ir::Seq::make(pieces);
            }
            return piece(f, ir::Ramp::make(f->min, make_int(1), int(lanes)), int(lanes), reduce_lanes);
        } catch (const CannotVectorize&) {
            return serial;
        }
    }

private:
    static Stmt piece(const ir::For* f, Expr ramp, int lanes, bool reduce_lanes) {
        return Vectorizer(f->loop_var, std::move(ramp), lanes, reduce_lanes).mutate(f->body);
    }

    int register_bits_;
};

}  // namespace vectorize_detail

// `register_bits`: the target's vector register width (0: vectors of any lane count stay whole,
// as for a GPU, whose code is written lane by lane anyway).
inline ir::Stmt vectorize_loops(const ir::Stmt& s, int register_bits = 0) {
    return vectorize_detail::VectorizeLoops(register_bits).mutate(s);
}

// Unroll: a loop marked unrolled with a constant extent up to max_unroll becomes a sequence
// of copies of its body, inside AttrStmt("unrolled", extent): the schedule has chosen the
// unrolling of that nest, and codegen asks LLVM not to unroll the loop around it again
// (emit_stmt.hpp). Longer or symbolic ones stay serial loops.
inline ir::Stmt unroll_loops(const ir::Stmt& s, int max_unroll) {
    struct Unroller : ir::IRMutator {
        int max_unroll;
        using IRMutator::mutate;
        ir::Stmt visit_(const ir::For* op, const ir::Stmt& self) override {
            ir::Stmt s = IRMutator::visit_(op, self);
            auto* f = s.as<ir::For>();
            if (f->for_kind != ir::ForKind::Unrolled) return s;
            int64_t n;
            if (!ir::as_const_int(f->extent, &n) || n > max_unroll)
                return ir::For::make(f->loop_var, f->min, f->extent, ir::ForKind::Serial, f->body, f->thread_tag);
            std::vector<ir::Stmt> copies;
            for (int64_t i = 0; i < n; ++i)
                copies.push_back(ir::substitute(f->body, {{f->loop_var, ir::arith::simplify(f->min + make_int(i))}}));
            return ir::AttrStmt::make(ir::attr::unrolled, f->extent, ir::Seq::make(copies));
        }
    } u;
    u.max_unroll = max_unroll;
    return u.mutate(s);
}

}  // namespace weft::lower_passes
