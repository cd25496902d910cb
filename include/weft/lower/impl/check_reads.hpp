// Out-of-range reads: every read a computation makes, over every point of its domain, must
// lie inside the tensor it reads (Halide: "Input buffer X is accessed at 115, which is
// beyond the max (15)"). A compute op defines every element of its domain, so a read that
// leaves its tensor anywhere is a bug in the computation, whatever the schedule computes:
// unchecked, it returns garbage or crashes (X(i + (1 << 30))).
//
// A read counts where it may run: inside if_then_else's taken branch and a reduction's
// `where` only where their condition holds (a condition that bounds the index or a loop
// variable narrows its range, on an expression the reads at it plus a constant), everywhere
// else always (select evaluates both sides).
// Constant shapes are decided here, at build time; a bound that depends on symbolic shapes
// becomes an assert at the kernel's entry, after the shapes are known. Reads whose index
// has no bound (a gather by data) cannot be checked and are left alone.
#pragma once
#include <optional>
#include <unordered_map>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/printer.hpp"
#include "weft/lower/impl/range_visitor.hpp"
#include "weft/te/operation.hpp"

namespace weft::lower_passes {

// An assert the kernel's entry makes about symbolic shapes: `cond` holds or `message`.
struct EntryAssert {
    Expr cond;
    std::string message;
};

class ReadBoundsChecker : public RangeVisitor {
public:
    // first_row: a scan's body stage runs for the steps from that row on (te::scan), so its
    // axis 0 starts there.
    explicit ReadBoundsChecker(const te::OperationNode& op, int64_t first_row = 0) : op_(op) {
        for (auto* axes : {&op.axis, &op.reduce_axis})
            for (const IterVar& iv : *axes)
                ranges_[iv.var()] = ir::arith::Interval(iv.dom().min, iv.dom().min + iv.dom().extent - 1);
        if (first_row > 0) ranges_[op.axis[0].var()].min = make_int(first_row);
        for (const Expr& body : op.body) visit(body);
    }
    std::vector<EntryAssert> asserts;

private:
    using RangeVisitor::visit_;

    void visit_(const ir::Call* op) override {
        if (op->name != "if_then_else" || op->args.size() != 3) return IRVisitor::visit_(op);
        visit(op->args[0]);
        under(op->args[0], [&] { visit(op->args[1]); });
        visit(op->args[2]);
    }
    void visit_(const ir::Reduce* op) override {
        if (op->condition.defined()) visit(op->condition);
        under(op->condition, [&] {
            for (const Expr& s : op->source) visit(s);
        });
    }
    void visit_(const ir::ProducerLoad* op) override {
        IRVisitor::visit_(op);
        auto* producer = static_cast<const te::OperationNode*>(op->producer.get());
        std::vector<Expr> shape = producer->output_shape();
        if (shape.size() != op->indices.size()) return;  // the tensor's own call checked the rank
        for (size_t d = 0; d < shape.size(); ++d) check(*op, producer->name, d, op->indices[d], shape[d]);
    }

    // Runs f with the facts `cond` gives (where it is defined) in force.
    template <class F>
    void under(const Expr& cond, F&& f) {
        const ir::arith::VarRanges saved_ranges = ranges_;
        const size_t saved_facts = facts_.size();
        if (cond.defined()) learn(cond);
        f();
        ranges_ = saved_ranges;
        facts_.resize(saved_facts);
    }

    // Bounds on expressions from a conjunction of comparisons: on a variable they narrow its
    // range; on any other expression they apply to an index equal to it.
    void learn(const Expr& cond) {
        if (auto* c = cond.as<ir::Call>(); c && c->name == "likely" && c->args.size() == 1) return learn(c->args[0]);
        if (auto* a = cond.as<ir::And>()) {
            learn(a->a);
            learn(a->b);
            return;
        }
        const Expr one = make_int(1);
        if (auto* lt = cond.as<ir::LT>()) bound(lt->a, {}, lt->b - one), bound(lt->b, lt->a + one, {});
        else if (auto* le = cond.as<ir::LE>()) bound(le->a, {}, le->b), bound(le->b, le->a, {});
        else if (auto* gt = cond.as<ir::GT>()) bound(gt->a, gt->b + one, {}), bound(gt->b, {}, gt->a - one);
        else if (auto* ge = cond.as<ir::GE>()) bound(ge->a, ge->b, {}), bound(ge->b, {}, ge->a);
    }
    void bound(const Expr& e, const Expr& lo, const Expr& hi) {
        if (!e.type().is_int() || (lo.defined() && !lo.type().is_int()) || (hi.defined() && !hi.type().is_int()))
            return;
        // The bound itself may use loop variables: take its extreme over their ranges.
        Expr low = lo.defined() ? ir::arith::bounds_of(lo, ranges_).min : Expr();
        Expr high = hi.defined() ? ir::arith::bounds_of(hi, ranges_).max : Expr();
        if (e.as<ir::VarNode>()) {
            Var v(e.ptr());
            ir::arith::Interval r = ranges_.count(v) ? ranges_[v] : ir::arith::Interval();
            ranges_[v] = narrow(r, low, high);
            return;
        }
        facts_.push_back({ir::arith::simplify(e), ir::arith::Interval(low, high)});
    }
    static ir::arith::Interval narrow(ir::arith::Interval r, const Expr& lo, const Expr& hi) {
        if (lo.defined()) r.min = r.has_lower() ? ir::arith::simplify(ir::max(r.min, lo)) : lo;
        if (hi.defined()) r.max = r.has_upper() ? ir::arith::simplify(ir::min(r.max, hi)) : hi;
        return r;
    }

    void check(const ir::ProducerLoad& load, const std::string& tensor, size_t d, const Expr& index,
               const Expr& extent) {
        ir::arith::Interval b = ir::arith::bounds_of(index, ranges_);
        const Expr simple = ir::arith::simplify(index);
        // A fact on e bounds an index e + c too (the padded convolution tests y >= pad and
        // reads y - pad).
        for (auto& [e, fact] : facts_) {
            int64_t c = 0;
            if (!ir::as_const_int(ir::arith::simplify(simple - e), &c)) continue;
            b = narrow(b, fact.has_lower() ? fact.min + make_int(c) : Expr(),
                       fact.has_upper() ? fact.max + make_int(c) : Expr());
        }
        if (!b.is_bounded()) return;  // a data-dependent index: nothing to check
        const Expr lo = ir::arith::simplify(b.min), hi = ir::arith::simplify(b.max);
        const Expr last = ir::arith::simplify(extent - 1);
        int64_t l = 0, h = 0, n = 0;
        const bool constant = ir::as_const_int(lo, &l) && ir::as_const_int(hi, &h) && ir::as_const_int(last, &n);
        if (constant) {
            if (l < 0 || h > n) detail::throw_user_error(message(load, tensor, d, lo, hi, last));
            return;
        }
        // Symbolic: decided when the shapes are known, unless provable either way now.
        const Expr inside = ir::arith::simplify(lo >= 0 && hi <= last);
        if (ir::arith::can_prove(inside)) return;
        asserts.push_back({inside, message(load, tensor, d, lo, hi, last)});
    }

    std::string message(const ir::ProducerLoad&, const std::string& tensor, size_t d, const Expr& lo, const Expr& hi,
                        const Expr& last) const {
        std::string where = op_.loc.line() ? detail::concat(" (defined at ", op_.loc.file_name(), ":", op_.loc.line(), ")")
                                           : std::string();
        return detail::concat("compute '", op_.name, "'", where, " reads tensor '", tensor, "' along axis ", d,
                              " at indices [", ir::to_string(lo), ", ", ir::to_string(hi),
                              "], beyond its extent: valid indices are [0, ", ir::to_string(last),
                              "]; clamp the index or guard the read with if_then_else");
    }

    const te::OperationNode& op_;
    std::vector<std::pair<Expr, ir::arith::Interval>> facts_;
};

// Checks the reads of every compute stage of `s`; returns the asserts that symbolic shapes
// leave to the kernel's entry.
inline std::vector<EntryAssert> check_reads_in_bounds(const Schedule& s) {
    std::vector<EntryAssert> asserts;
    std::unordered_map<const te::OperationNode*, int64_t> first_row;  // scan body stages: their first step
    for (auto& st : s.stages())
        if (st.node()->op->is_scan())
            for (const te::Operation& b : te::scan_body_ops(st.node()->op))
                first_row[b.get()] = st.node()->op->scan_init_rows;
    for (auto& st : s.stages()) {
        const te::OperationNode& op = *st.node()->op.get();
        if (!op.is_compute()) continue;
        auto row = first_row.find(&op);
        ReadBoundsChecker c(op, row == first_row.end() ? 0 : row->second);
        asserts.insert(asserts.end(), c.asserts.begin(), c.asserts.end());
    }
    return asserts;
}

}  // namespace weft::lower_passes
