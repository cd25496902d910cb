// A visitor that keeps the range of every variable a let binds inside what it visits, so
// that the indices it meets can be bounded (ir::arith::bounds_of over ranges_).
#pragma once
#include "weft/ir/arith/interval.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {

class RangeVisitor : public ir::IRVisitor {
public:
    explicit RangeVisitor(ir::arith::VarRanges ranges = {}) : ranges_(std::move(ranges)) {}
    using IRVisitor::visit;

protected:
    using IRVisitor::visit_;
    void visit_(const ir::LetStmt* op) override {
        visit(op->value);
        ranges_[op->var] = ir::arith::bounds_of(op->value, ranges_);
        visit(op->body);
    }
    void visit_(const ir::Let* op) override {
        visit(op->value);
        ranges_[op->var] = ir::arith::bounds_of(op->value, ranges_);
        visit(op->body);
    }

    ir::arith::VarRanges ranges_;
};

}  // namespace weft::lower_passes
