// Tensorize: replaces each loop nest schedule_ops marked (AttrStmt "tensorize") by its tensor
// intrinsic's code, after checking that the nest computes what the intrinsic's description
// computes: the same loops (data to data, reduce to reduce, same extents), the same
// expression, and reads/writes whose indices move with the loops exactly as the
// description's do (each operand's trailing dimensions; leading ones stay fixed).
#pragma once
#include <map>
#include <unordered_set>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/equality.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/lower/impl/stage_nest.hpp"

namespace weft::lower_passes {
namespace tensorize_detail {

using ir::Stmt;
using VarMap = std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq>;

bool uses_any(const Expr& e, const std::unordered_set<const ir::Object*>& vars) {
    bool found = false;
    ir::post_order_visit(e, [&](const ir::Object* n) { found |= vars.count(n) > 0; });
    return found;
}

std::vector<const ir::ProducerLoad*> loads_in(const Expr& e) {
    std::vector<const ir::ProducerLoad*> loads;
    ir::post_order_visit(e, [&](const ir::Object* n) {
        if (n->kind == ir::NodeKind::ProducerLoad) loads.push_back(static_cast<const ir::ProducerLoad*>(n));
    });
    return loads;
}

class Matcher {
public:
    Matcher(const TensorizeSite& site, const Stmt& nest) : site_(site), nest_(nest), intrin_(site.stage->tensorize_intrin) {}

    Stmt run() {
        const auto& desc = *intrin_->desc.op().get();
        check(desc.num_outputs() == 1, "intrinsics with several outputs are not supported");
        check(desc.is_reduction() == bool(site_.combiner), desc.is_reduction()
                                                              ? "the intrinsic is a reduction but the stage is not"
                                                              : "the stage is a reduction but the intrinsic is not");
        bool nested_realize = false;
        ir::post_order_visit(nest_, [&](const ir::Object* n) { nested_realize |= n->kind == ir::NodeKind::ProducerRealize; });
        check(!nested_realize, "another stage is computed inside the loops it replaces (compute_at into them); "
                               "attach it outside the tensorized axis");
        bind_loops(desc);
        for (auto& g : site_.guards)
            check(!uses_any(g, region_vars_), "the loops have a tail or a condition (" + ir::to_string(g) +
                                                  "): a split that does not divide its axis; choose factors that divide the extents");
        // The output: trailing indices must be the description's axes.
        std::vector<Expr> desc_out;
        for (auto& a : desc.axis) desc_out.push_back(a.var());
        out_origin_ = match_indices(site_.out_index, desc_out, "the output '" + site_.stage->op.name() + "'");
        // The value computed.
        Expr desc_src = desc.is_reduction() ? desc.body[0].as<ir::Reduce>()->source[0] : desc.body[0];
        Expr src = ir::arith::simplify(ir::substitute(site_.sources[0], to_intrin_), ranges_);
        auto got = loads_in(src), want = loads_in(desc_src);
        check(got.size() == want.size(), "the stage reads " + std::to_string(got.size()) + " values, the intrinsic " +
                                             std::to_string(want.size()) + " (stage: " + ir::to_string(src) +
                                             "; intrinsic: " + ir::to_string(desc_src) + ")");
        for (size_t i = 0; i < got.size(); ++i) bind_input(got[i], want[i]);
        Expr rewritten = ir::arith::simplify(replace_loads(src, got, want));
        std::string a = ir::to_string(rewritten), b = ir::to_string(ir::arith::simplify(desc_src));
        check(a == b, "it computes " + a + " where the intrinsic computes " + b);
        if (desc.is_reduction()) {
            auto& mine = *site_.combiner;
            auto& theirs = *desc.body[0].as<ir::Reduce>()->combiner;
            bool same = mine.result.size() == theirs.result.size();
            for (size_t v = 0; same && v < mine.result.size(); ++v)
                same = ir::structural_equal(mine.result[v], theirs.result[v]) &&
                       ir::structural_equal(mine.identity[v], theirs.identity[v]);
            check(same, "its reduction combines with " + ir::to_string(mine.result[0]) + ", the intrinsic's with " +
                            ir::to_string(theirs.result[0]));
        }
        return emit(desc);
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        const StageNode& st = *site_.stage;
        detail::throw_user_error_at(st.tensorize_loc,
                                    detail::concat("tensorize of stage '", st.op.name(), "' at '", st.tensorize_axis.name(),
                                                   "' with intrinsic '", intrin_.name(), "': ", why));
    }
    void check(bool ok, const std::string& why) const {
        if (!ok) fail(why);
    }

    // Region loops -> the description's axes (data in order, then reduce in order).
    void bind_loops(const te::OperationNode& desc) {
        std::map<const ir::Object*, const ir::For*> loops;
        ir::post_order_visit(nest_, [&](const ir::Object* n) {
            if (n->kind == ir::NodeKind::For) {
                auto* f = static_cast<const ir::For*>(n);
                loops[f->loop_var.get()] = f;
            }
        });
        size_t di = 0, ri = 0;
        for (auto& iv : site_.loops) {
            bool reduce = iv->iter_kind == ir::IterKind::Reduce;
            const IterVar& target = reduce ? desc.reduce_axis.at(ri++) : desc.axis.at(di++);
            auto it = loops.find(iv.var().get());
            check(it != loops.end(), "loop '" + iv.name() + "' is missing from the lowered nest");
            const ir::For* f = it->second;
            int64_t got = -1, want = -2;
            ir::as_const_int(ir::arith::simplify(f->extent), &got);
            ir::as_const_int(ir::arith::simplify(target.dom().extent), &want);
            check(got == want, "loop '" + iv.name() + "' runs " + ir::to_string(ir::arith::simplify(f->extent)) +
                                   " iterations, the intrinsic's axis '" + target.name() + "' " +
                                   ir::to_string(target.dom().extent));
            to_intrin_[iv.var()] = ir::arith::simplify(f->min + target.var() - target.dom().min);
            intrin_origin_[target.var()] = target.dom().min;
            region_vars_.insert(iv.var().get());
            ranges_[target.var()] = ir::arith::Interval(target.dom().min, ir::arith::simplify(target.dom().min + target.dom().extent - 1));
            intrin_vars_.insert(target.var().get());
        }
    }

    // Checks that `indices` (in leaf loop variables) move like `desc` (in the description's
    // axes) in their trailing dimensions and not at all in the leading ones; returns the
    // indices at the region's origin.
    std::vector<Expr> match_indices(const std::vector<Expr>& indices, const std::vector<Expr>& desc, const std::string& what) {
        const size_t r = indices.size(), q = desc.size();
        check(r >= q, what + " has " + std::to_string(r) + " dimensions, fewer than the intrinsic's " + std::to_string(q));
        std::vector<Expr> origin;
        for (size_t d = 0; d < r; ++d) {
            Expr at = ir::arith::simplify(ir::substitute(indices[d], to_intrin_), ranges_);
            Expr base = ir::arith::simplify(ir::substitute(at, intrin_origin_), ranges_);
            origin.push_back(base);
            if (d < r - q) {
                check(!uses_any(at, intrin_vars_), what + ": index " + std::to_string(d) + " (" + ir::to_string(at) +
                                                      ") moves with the replaced loops, but the intrinsic's operand has only " +
                                                      std::to_string(q) + " dimensions");
                continue;
            }
            Expr want = desc[d - (r - q)];
            check(ir::is_zero(ir::arith::simplify(at - base - want, ranges_)),
                  what + ": index " + std::to_string(d) + " is " + ir::to_string(at) + ", which moves as " +
                      ir::to_string(ir::arith::simplify(at - base, ranges_)) + " where the intrinsic's moves as " + ir::to_string(want));
        }
        return origin;
    }

    void bind_input(const ir::ProducerLoad* got, const ir::ProducerLoad* want) {
        auto tensor = te::Operation(std::static_pointer_cast<const te::OperationNode>(got->producer)).output(got->value_index);
        check(got->type == want->type, "'" + got->name + "' is " + got->type.str() + " where the intrinsic reads " +
                                           want->type.str() + " ('" + want->name + "')");
        auto origin = match_indices(got->indices, want->indices, "the read of '" + got->name + "'");
        auto [it, fresh] = inputs_.try_emplace(want->producer.get(), tensor, origin);
        if (!fresh) {
            bool same = it->second.first.same_as(tensor);
            for (size_t d = 0; same && d < origin.size(); ++d)
                same = ir::to_string(origin[d]) == ir::to_string(it->second.second[d]);
            check(same, "the intrinsic reads '" + want->name + "' twice at one place, the stage reads '" + got->name +
                            "' at another");
        }
    }

    Expr replace_loads(const Expr& e, const std::vector<const ir::ProducerLoad*>& got,
                       const std::vector<const ir::ProducerLoad*>& want) {
        struct Replace : ir::IRMutator {
            std::map<const ir::Object*, Expr> by;
            using IRMutator::mutate;
            Expr visit_(const ir::ProducerLoad* op, const Expr& self) override {
                auto it = by.find(op);
                return it != by.end() ? it->second : self;
            }
        } r;
        for (size_t i = 0; i < got.size(); ++i)
            r.by[got[i]] = Expr(ir::make_node<ir::ProducerLoad>(want[i]->type, want[i]->producer, want[i]->value_index,
                                                                want[i]->indices, want[i]->name));
        return r.mutate(e);
    }

    Stmt emit(const te::OperationNode& desc) {
        te::TensorIntrinCall call;
        call.intrin_name = intrin_.name();
        for (auto& in : intrin_->inputs) {
            auto it = inputs_.find(in.op().get());
            check(it != inputs_.end(), "the stage never reads what the intrinsic's input '" + in.name() + "' stands for");
            call.inputs.push_back({it->second.first, it->second.second, in.shape()});
        }
        call.out = {site_.stage->op.output(0), out_origin_, desc.output_shape()};
        Stmt s = intrin_->lower(call);
        check(s.defined(), "its lowering returned no statement");
        std::vector<Expr> outer;
        for (auto& g : site_.guards) outer.push_back(g);
        return nest_detail::guard(s, outer);
    }

    const TensorizeSite& site_;
    Stmt nest_;
    te::TensorIntrin intrin_;
    VarMap to_intrin_, intrin_origin_;  // region loops -> the description's axes -> their first values
    ir::arith::VarRanges ranges_;  // the description's axes
    std::unordered_set<const ir::Object*> region_vars_, intrin_vars_;
    std::vector<Expr> out_origin_;
    std::map<const ir::Object*, std::pair<te::Tensor, std::vector<Expr>>> inputs_;
};

}  // namespace tensorize_detail

// Replaces every marked nest of `program` by its intrinsic.
inline ir::Stmt apply_tensorize(const ir::Stmt& program, const std::vector<TensorizeSite>& sites) {
    if (sites.empty()) return program;
    struct Replace : ir::IRMutator {
        const std::vector<TensorizeSite>* sites;
        using IRMutator::mutate;
        ir::Stmt visit_(const ir::AttrStmt* op, const ir::Stmt& self) override {
            if (op->key != "tensorize") return IRMutator::visit_(op, self);
            int64_t id = -1;
            ir::as_const_int(op->value, &id);
            return tensorize_detail::Matcher(sites->at(size_t(id)), op->body).run();
        }
    } r;
    r.sites = &sites;
    return r.mutate(program);
}

}  // namespace weft::lower_passes
