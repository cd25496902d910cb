// Stage::compute_with in lowering: the loop nest of a stage B fused with that of stage A,
// from the outermost loop down to a depth both schedules name (Halide's compute_with).
//
// schedule_ops builds each stage's nest as usual. B's (placed first: consumers are placed
// before producers) is marked; when A's nest is placed at the same loop, the two become one:
// at each fused level, A's and B's statements before the next loop (B's reduction init, A's
// prefetch hints) and then one loop, A's, whose body at the last level is A's body followed by
// B's with B's loop variables renamed to A's. What B reads of A inside an iteration must be
// what A wrote in that iteration (checked on the index bounds), or the fusion would read
// elements A has not computed yet.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/gpu.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft::lower_passes {

// The attribute that marks B's nest until A's is placed.
inline constexpr const char* kComputeWithSite = "compute_with_site";

// The region of stage A (per dimension) that a statement reads or writes, every variable
// bound inside the statement ranging over its values and the others fixed; nullopt if it
// touches none of A.
using RegionOf = std::function<std::optional<std::vector<ir::arith::Interval>>(const ir::Stmt&)>;

namespace compute_with_detail {

using ir::Stmt;
using VarMap = std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq>;

struct Fusion {
    const StageNode& a;
    const StageNode& b;
    size_t depth;
    const RegionOf& region_of_a;
    VarMap b_to_a;

    std::string what() const { return "compute_with of '" + b.op.name() + "' with '" + a.op.name() + "'"; }

    // Statements before the loop of this level (a sequence whose last element leads on).
    static Stmt peel(Stmt s, std::vector<Stmt>* pre) {
        while (auto* seq = s.as<ir::Seq>()) {
            pre->insert(pre->end(), seq->stmts.begin(), seq->stmts.end() - 1);
            s = seq->stmts.back();
        }
        return s;
    }

    const ir::For* loop_of(const Stmt& s, const StageNode& st, size_t level) const {
        const IterVar& iv = st.leaf_iter_vars[level];
        auto* loop = s.as<ir::For>();
        WEFT_CHECK(loop && loop->loop_var.same_as(iv.var()), what(), ": loop '", iv.name(), "' of '", st.op.name(),
                   "' cannot be fused: it is ",
                   s.as<ir::IfThenElse>() ? "guarded (a GPU thread guard)"
                   : s.as<ir::AttrStmt>() ? "wrapped in '" + s.as<ir::AttrStmt>()->key + "'"
                                          : std::string("not a plain loop there"));
        return loop;
    }

    void check_same(const ir::For* la, const ir::For* lb, size_t level) const {
        const std::string la_name = a.leaf_iter_vars[level].name(), lb_name = b.leaf_iter_vars[level].name();
        Expr bmin = ir::substitute(lb->min, b_to_a), bext = ir::substitute(lb->extent, b_to_a);
        bool same_range = ir::arith::can_prove(ir::arith::simplify(bmin - la->min) == make_int(0)) &&
                          ir::arith::can_prove(ir::arith::simplify(bext - la->extent) == make_int(0));
        WEFT_CHECK(same_range, what(), ": loop '", lb_name, "' of '", b.op.name(), "' runs [", ir::to_string(bmin),
                   ", +", ir::to_string(bext), ") and loop '", la_name, "' of '", a.op.name(), "' runs [",
                   ir::to_string(la->min), ", +", ir::to_string(la->extent),
                   "); fused loops must have the same range (split them alike)");
        WEFT_CHECK(la->for_kind == lb->for_kind && la->thread_tag == lb->thread_tag, what(), ": loop '", lb_name,
                   "' is ", ir::for_kind_name(lb->for_kind), lb->thread_tag.empty() ? "" : " " + lb->thread_tag,
                   " and loop '", la_name, "' is ", ir::for_kind_name(la->for_kind),
                   la->thread_tag.empty() ? "" : " " + la->thread_tag, "; fused loops must be of the same kind");
    }

    // B's statements between fused loops (its reduction init) run before A's iteration.
    void check_no_reads(const std::vector<Stmt>& b_pre) const {
        for (auto& s : b_pre)
            WEFT_CHECK(!region_of_a(s), what(), ": '", b.op.name(), "' reads '", a.op.name(),
                       "' outside the innermost fused loop, before '", a.op.name(), "' computes it");
    }

    void check_reads(const Stmt& a_body, const Stmt& b_body) const {
        auto read = region_of_a(b_body);
        if (!read) return;
        auto written = region_of_a(a_body);
        bool inside = written && written->size() == read->size();
        for (size_t d = 0; inside && d < read->size(); ++d) {
            auto& r = (*read)[d];
            auto& w = (*written)[d];
            inside = r.is_bounded() && w.is_bounded() && ir::arith::can_prove(r.min >= w.min) &&
                     ir::arith::can_prove(r.max <= w.max);
        }
        if (inside) return;
        auto show = [](const std::optional<std::vector<ir::arith::Interval>>& reg) {
            if (!reg) return std::string("nothing");
            std::string out;
            for (auto& iv : *reg)
                out += (out.empty() ? "[" : ", [") +
                       (iv.has_lower() ? ir::to_string(ir::arith::simplify(iv.min)) : "-inf") + ", " +
                       (iv.has_upper() ? ir::to_string(ir::arith::simplify(iv.max)) : "inf") + "]";
            return out;
        };
        WEFT_CHECK(false, what(), ": in one iteration of the fused loops '", b.op.name(), "' reads ", show(read), " of '",
                   a.op.name(), "' but '", a.op.name(), "' writes ", show(written),
                   " there; fuse at a loop where the second stage reads only what the first just wrote");
    }

    Stmt fuse(Stmt sa, Stmt sb, size_t level) {
        std::vector<Stmt> a_pre, b_pre;
        if (level == depth) {
            Stmt b_body = ir::substitute(sb, b_to_a);
            check_reads(sa, b_body);
            return ir::Seq::make({sa, b_body});
        }
        // Pragmas of A's loop wrap the fused loop.
        std::vector<const ir::AttrStmt*> pragmas;
        sa = peel(sa, &a_pre);
        for (auto* at = sa.as<ir::AttrStmt>(); at && at->key.rfind("pragma_", 0) == 0; at = sa.as<ir::AttrStmt>()) {
            pragmas.push_back(at);
            sa = at->body;
        }
        sb = peel(sb, &b_pre);
        const ir::For* la = loop_of(sa, a, level);
        const ir::For* lb = loop_of(sb, b, level);
        check_same(la, lb, level);
        for (auto& s : b_pre) s = ir::substitute(s, b_to_a);
        check_no_reads(b_pre);
        b_to_a[lb->loop_var] = la->loop_var;
        Stmt loop = ir::For::make(la->loop_var, la->min, la->extent, la->for_kind, fuse(la->body, lb->body, level + 1),
                                  la->thread_tag);
        for (auto it = pragmas.rbegin(); it != pragmas.rend(); ++it) loop = ir::AttrStmt::make((*it)->key, (*it)->value, loop);
        std::vector<Stmt> seq = a_pre;
        seq.insert(seq.end(), b_pre.begin(), b_pre.end());
        seq.push_back(loop);
        return ir::Seq::make(seq);
    }
};

}  // namespace compute_with_detail

// How many of A's loops B's are fused with, after checking what the schedule alone decides.
inline size_t compute_with_depth(const StageNode& a, const StageNode& b) {
    const std::string what = "compute_with of '" + b.op.name() + "' with '" + a.op.name() + "'";
    size_t depth = 0;
    for (; depth < a.leaf_iter_vars.size(); ++depth)
        if (a.leaf_iter_vars[depth].same_as(b.with_ivar)) break;
    WEFT_CHECK(depth < a.leaf_iter_vars.size(), what, ": axis '", b.with_ivar.name(), "' is no longer a loop of '",
               a.op.name(), "' (it was split, fused or reordered after compute_with)");
    ++depth;
    WEFT_CHECK(b.leaf_iter_vars.size() >= depth, what, ": '", b.op.name(), "' has ", b.leaf_iter_vars.size(),
               " loops, fewer than the ", depth, " to fuse");
    WEFT_CHECK(a.attach != AttachType::Inline && b.attach != AttachType::Inline, what, ": '",
               (a.attach == AttachType::Inline ? a : b).op.name(), "' is computed inline and has no loops to fuse");
    bool same_place = a.attach == b.attach &&
                      (a.attach != AttachType::Scope || (a.attach_stage.lock() == b.attach_stage.lock() &&
                                                         a.attach_ivar.same_as(b.attach_ivar)));
    WEFT_CHECK(same_place, what, ": the two stages are computed at different places (",
               a.attach == AttachType::Scope ? "'" + a.op.name() + "' at loop '" + a.attach_ivar.name() + "'"
                                             : "'" + a.op.name() + "' at the root",
               ", ", b.attach == AttachType::Scope ? "'" + b.op.name() + "' at loop '" + b.attach_ivar.name() + "'"
                                                   : "'" + b.op.name() + "' at the root",
               "); compute both at the same loop (compute_at) or at the root");
    for (size_t i = 0; i < depth; ++i) {
        WEFT_CHECK(a.leaf_iter_vars[i]->iter_kind != ir::IterKind::Reduce, what, ": loop '", a.leaf_iter_vars[i].name(),
                   "' of '", a.op.name(), "' is a reduce loop; '", b.op.name(),
                   "' would read partial results. Fuse at a loop outside the reduction");
        for (const StageNode* st : {&a, &b})
            WEFT_CHECK(!st->tensorize_intrin.defined() || !st->leaf_iter_vars[i].same_as(st->tensorize_axis), what,
                       ": loop '", st->leaf_iter_vars[i].name(), "' of '", st->op.name(),
                       "' is replaced by a tensor intrinsic; fuse outside the tensorized loops");
    }
    return depth;
}

// `body` (what follows A's nest at its loop, B's marked nest first, inside B's realizes)
// with B's nest replaced by A's and B's fused into A's first `depth` loops.
inline ir::Stmt place_compute_with(const ir::Stmt& body, const StageNode& a, const StageNode& b, size_t depth,
                                   const ir::Stmt& a_nest, const RegionOf& region_of_a) {
    using ir::Stmt;
    auto fuse = [&](const ir::AttrStmt* site) {
        compute_with_detail::Fusion f{a, b, depth, region_of_a, {}};
        return f.fuse(a_nest, site->body, 0);
    };
    auto is_site = [](const Stmt& s) {
        auto* at = s.as<ir::AttrStmt>();
        return at && at->key == kComputeWithSite ? at : nullptr;
    };
    // B's realizes (one per output; none for an output stage), then B's nest, then the rest.
    std::function<Stmt(const Stmt&)> rebuild = [&](const Stmt& s) -> Stmt {
        if (auto* site = is_site(s)) return fuse(site);
        if (auto* r = s.as<ir::ProducerRealize>(); r && r->producer.get() == b.op.get())
            return Stmt(ir::make_node<ir::ProducerRealize>(r->producer, r->value_index, r->type, r->bounds, r->scope,
                                                           rebuild(r->body), r->name));
        if (auto* at = s.as<ir::AttrStmt>(); at && at->key == ir::gpu::double_buffer_key)
            return ir::AttrStmt::make(at->key, at->value, rebuild(at->body));
        if (auto* seq = s.as<ir::Seq>(); seq && is_site(seq->stmts.front())) {
            std::vector<Stmt> stmts = seq->stmts;
            stmts.front() = fuse(is_site(stmts.front()));
            return ir::Seq::make(stmts);
        }
        WEFT_CHECK(false, "compute_with of '", b.op.name(), "' with '", a.op.name(),
                   "': another stage is computed between them at the same place (stages at one loop run in the "
                   "order of the schedule's stages); compute that stage elsewhere or fuse other stages");
        return Stmt();
    };
    WEFT_ICHECK(body.defined(), "compute_with: the nest of '", b.op.name(), "' was not placed");
    return rebuild(body);
}

}  // namespace weft::lower_passes
