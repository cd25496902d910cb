// CodeGenCUDA: vector accesses and stores (see codegen.hpp).
//
// A contiguous, aligned vector access (codegen.hpp says which) is one float4-style access:
// a store writes `*(float4*)(A + i) = make_float4(...)`, and the vector loads in a
// statement's value are first read into `const float4 vecN` temporaries
// (hoist_vector_loads), whose lanes expr() prints as vecN.x, .y, .z, .w. Any other vector
// access is written lane by lane.
#pragma once
#include <string>
#include <vector>

#include "weft/codegen/cuda/impl/codegen.hpp"
#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::codegen::cuda_detail {

// A vector index as one Ramp (or Broadcast) where the lanes allow: vectorizing a split of
// a fused axis leaves ramp(4x, 1, 4) / x4(16) and % x4(16), which are x4(4x / 16) and
// ramp(4x % 16, 1, 4) when 4x is a multiple of the lanes and 16 of the lane count.
inline Expr CodeGenCUDA::normalize_vector_index(const Expr& e) {
    using namespace ir;
    int lanes = e.type().lanes;
    if (lanes == 1) return e;
    auto parts = [](const Expr& x, Expr* base, Expr* stride) {
        if (auto* r = x.as<Ramp>()) { *base = r->base; *stride = r->stride; return true; }
        if (auto* b = x.as<Broadcast>()) { *base = b->value; *stride = make_zero(b->value.type()); return true; }
        return false;
    };
    auto rebuild = [&](Expr base, Expr stride) -> Expr {
        base = arith::simplify(base);
        stride = arith::simplify(stride);
        return is_zero(stride) ? Broadcast::make(base, lanes) : Ramp::make(base, stride, lanes);
    };
    auto bin = [&](const Expr& a0, const Expr& b0, char op) -> Expr {
        Expr a = normalize_vector_index(a0), b = normalize_vector_index(b0);
        Expr ab, as, bb, bs;
        if (!parts(a, &ab, &as) || !parts(b, &bb, &bs)) return Expr();
        int64_t c;
        switch (op) {
            case '+': return rebuild(ab + bb, as + bs);
            case '-': return rebuild(ab - bb, as - bs);
            case '*':
                if (is_zero(bs)) return rebuild(ab * bb, as * bb);
                if (is_zero(as)) return rebuild(ab * bb, ab * bs);
                return Expr();
            case '/':
            case '%':
                if (!is_zero(bs) || !as_const_int(bb, &c) || c <= 0 || c % lanes != 0) return Expr();
                if (!is_zero(as) && !(is_one(as) && arith::can_prove(ab % make_int(lanes, ab.type()) ==
                                                                     make_zero(ab.type()))))
                    return Expr();
                if (is_zero(as)) return rebuild(op == '/' ? ab / bb : ab % bb, as);
                return op == '/' ? rebuild(ab / bb, make_zero(ab.type())) : rebuild(ab % bb, as);
        }
        return Expr();
    };
    Expr r;
    if (auto* x = e.as<Add>()) r = bin(x->a, x->b, '+');
    else if (auto* x = e.as<Sub>()) r = bin(x->a, x->b, '-');
    else if (auto* x = e.as<Mul>()) r = bin(x->a, x->b, '*');
    else if (auto* x = e.as<Div>()) r = bin(x->a, x->b, '/');
    else if (auto* x = e.as<Mod>()) r = bin(x->a, x->b, '%');
    return r.defined() ? r : e;
}

// "float4" for a contiguous, aligned access of `lanes` elements of t at `index`, else empty.
inline std::string CodeGenCUDA::vector_type(DataType t, const Expr& index) const {
    int lanes = index.type().lanes;
    auto* r = index.as<ir::Ramp>();
    if (!r || !ir::is_one(r->stride) || (lanes != 2 && lanes != 4)) return {};
    std::string base;
    if (t == f32) base = "float";
    else if (t.is_int() && t.bits == 32) base = "int";
    else if (t.is_uint() && t.bits == 32) base = "uint";
    else return {};
    if (!ir::arith::can_prove(r->base % ir::make_int(lanes, r->base.type()) == ir::make_int(0, r->base.type())))
        return {};
    return base + std::to_string(lanes);
}

// Reads each contiguous vector load of `e` (outside conditional branches) into a temporary.
inline void CodeGenCUDA::hoist_vector_loads(const Expr& e) {
    if (auto* c = e.as<ir::Call>(); c && c->name == "if_then_else") {
        hoist_vector_loads(c->args[0]);
        return;  // a branch not taken must not be read
    }
    if (auto* l = e.as<ir::Load>(); l && l->type.lanes > 1 && !hoisted_.count(e.get())) {
        Expr index = normalize_vector_index(l->index);
        std::string vt = vector_type(l->type.element_of(), index);
        if (!vt.empty()) {
            // The same address read twice (A(i) written twice in a compute) is one load.
            std::string address = name_of(l->buffer) + " + " + expr(index.as<ir::Ramp>()->base);
            auto [it, fresh] = hoisted_by_address_.try_emplace(address, "vec" + std::to_string(temp_counter_));
            if (fresh) {
                ++temp_counter_;
                line() << "const " << vt << " " << it->second << " = *(const " << vt << "*)(" << address << ");\n";
            }
            hoisted_[e.get()] = it->second;
            return;
        }
    }
    // Children (loads in the index of a load included).
    struct Children : ir::IRVisitor {
        using IRVisitor::visit;
        std::vector<Expr> list;
        void visit(const Expr& x) override { list.push_back(x); }
    };
    if (e.as<ir::Load>()) {
        hoist_vector_loads(e.as<ir::Load>()->index);
        return;
    }
    Children ch;
    ch.IRVisitor::visit(e);  // dispatches to visit_(node), which calls visit(child) for each child
    for (auto& c : ch.list)
        if (!c.same_as(e)) hoist_vector_loads(c);
}

inline void CodeGenCUDA::emit_store(const ir::Store* op) {
    int lanes = op->index.type().lanes;
    DataType t = buffer_types_.count(op->buffer.get()) ? buffer_types_.at(op->buffer.get()) : op->value.type().element_of();
    if (lanes == 1 && op->value.type().lanes == 1) {
        line() << name_of(op->buffer) << "[" << expr(op->index) << "] = " << expr(op->value) << ";\n";
        return;
    }
    line() << "{\n";
    ++indent_;
    hoist_vector_loads(op->value);
    Expr index = normalize_vector_index(op->index);
    std::string vt = vector_type(t, index);
    if (!vt.empty()) {
        line() << "*(" << vt << "*)(" << name_of(op->buffer) << " + " << expr(index.as<ir::Ramp>()->base)
               << ") = make_" << vt << "(";
        for (int l = 0; l < lanes; ++l) body_ << (l ? ", " : "") << expr(op->value, l);
        body_ << ");\n";
    } else {
        for (int l = 0; l < lanes; ++l)
            line() << name_of(op->buffer) << "[" << expr(index, l) << "] = " << expr(op->value, l) << ";\n";
    }
    --indent_;
    line() << "}\n";
    hoisted_.clear();  // the temporaries' scope ends with the block
    hoisted_by_address_.clear();
}

}  // namespace weft::codegen::cuda_detail
