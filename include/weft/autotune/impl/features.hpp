// Definitions of autotune/features.hpp.
#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <optional>
#include <unordered_map>

#include "weft/autotune/features.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::autotune {
namespace features_detail {

constexpr int64_t kUnknownExtent = 32;

float log2p(double x) { return float(std::log2(1.0 + std::max(0.0, x))); }

struct Loop {
    const ir::VarNode* var;
    int64_t extent;
    ir::ForKind kind;
};

struct Access {
    const ir::VarNode* buffer;
    ir::Expr index;
    int lanes;
    int element_bytes;
};

// One store with its loop nest and the buffers it touches (the store's first).
struct Site {
    std::vector<Loop> loops;
    std::vector<Access> accesses;
    double executions = 1;
    double flops = 0;  // float operations per execution (lanes counted)
};

// The integer value of an index with every loop variable at its value in `env` (others 0);
// variables bound by a let are evaluated through their values. Nothing for what cannot be
// evaluated (a load inside an index).
class IndexEvaluator {
public:
    IndexEvaluator(const std::unordered_map<const ir::VarNode*, ir::Expr>& lets,
                   const std::unordered_map<const ir::VarNode*, int64_t>& env)
        : lets_(lets), env_(env) {}

    std::optional<int64_t> eval(const ir::Expr& e, int depth = 0) const {
        if (!e.defined() || depth > 64) return std::nullopt;
        switch (e.kind()) {
            case ir::NodeKind::IntImm: return e.as<ir::IntImm>()->value;
            case ir::NodeKind::Var: {
                const auto* v = e.as<ir::VarNode>();
                if (auto it = env_.find(v); it != env_.end()) return it->second;
                if (auto it = lets_.find(v); it != lets_.end()) return eval(it->second, depth + 1);
                return 0;
            }
            case ir::NodeKind::Cast: return eval(e.as<ir::Cast>()->value, depth + 1);
            case ir::NodeKind::Ramp: return eval(e.as<ir::Ramp>()->base, depth + 1);
            case ir::NodeKind::Broadcast: return eval(e.as<ir::Broadcast>()->value, depth + 1);
#define WEFT_BINARY(N, OP)                                                       \
    case ir::NodeKind::N: {                                                      \
        const auto* b = e.as<ir::N>();                                           \
        auto x = eval(b->a, depth + 1), y = eval(b->b, depth + 1);               \
        if (!x || !y) return std::nullopt;                                       \
        const int64_t a = *x, c = *y;                                            \
        return OP;                                                               \
    }
            WEFT_BINARY(Add, a + c)
            WEFT_BINARY(Sub, a - c)
            WEFT_BINARY(Mul, a * c)
            WEFT_BINARY(Div, c == 0 ? int64_t(0) : (a - ((a % c + c) % c)) / c)
            WEFT_BINARY(Mod, c == 0 ? int64_t(0) : (a % c + c) % c)
            WEFT_BINARY(Min, std::min(a, c))
            WEFT_BINARY(Max, std::max(a, c))
#undef WEFT_BINARY
            default: return std::nullopt;
        }
    }

private:
    const std::unordered_map<const ir::VarNode*, ir::Expr>& lets_;
    const std::unordered_map<const ir::VarNode*, int64_t>& env_;
};

// Walks the program: each store's site, and the totals.
class Collector : public ir::IRVisitor {
public:
    std::vector<Site> sites;
    std::unordered_map<const ir::VarNode*, ir::Expr> lets;
    double loops = 0, max_depth = 0, parallel_loops = 0, scratch_bytes = 0, int_ops = 0;
    double load_bytes = 0, store_bytes = 0, vector_accesses = 0, scalar_accesses = 0, max_lanes = 1;

protected:
    using ir::IRVisitor::visit_;

    void visit_(const ir::For* op) override {
        int64_t extent = kUnknownExtent;
        if (!ir::as_const_int(op->extent, &extent) || extent < 0) extent = kUnknownExtent;
        ++loops;
        parallel_loops += op->for_kind == ir::ForKind::Parallel;
        stack_.push_back({op->loop_var.node(), extent, op->for_kind});
        executions_ *= double(std::max<int64_t>(extent, 1));
        max_depth = std::max(max_depth, double(stack_.size()));
        visit(op->body);
        executions_ /= double(std::max<int64_t>(extent, 1));
        stack_.pop_back();
    }

    void visit_(const ir::LetStmt* op) override {
        lets[op->var.node()] = op->value;
        ir::IRVisitor::visit_(op);
    }

    void visit_(const ir::Allocate* op) override {
        double bytes = op->type.bytes();
        for (const ir::Expr& e : op->extents) {
            int64_t n = kUnknownExtent;
            ir::as_const_int(e, &n);
            bytes *= double(std::max<int64_t>(n, 1));
        }
        scratch_bytes += bytes;
        ir::IRVisitor::visit_(op);
    }

    void visit_(const ir::Store* op) override {
        Site site;
        site.loops = stack_;
        site.executions = executions_;
        const int lanes = op->value.type().lanes;
        site.accesses.push_back({op->buffer.node(), op->index, lanes, std::max(1, op->value.type().bits / 8)});
        count_access(lanes, op->value.type().bits / 8, false);
        std::map<const ir::VarNode*, int> reads;  // buffer -> loads of it in this store
        std::vector<Access> loads;
        // The value's loads and operations, through the lets it names (lowering binds a
        // reduction's operands to lets: `let y0 = A[..] * B[..]; C[i] = x0 + y0`).
        std::set<const ir::VarNode*> followed;
        std::vector<ir::Expr> values = {op->value};  // in the order they are named
        for (size_t next = 0; next < values.size(); ++next) {
            const ir::Expr value = values[next];
            ir::post_order_visit(value, [&](const ir::Object* o) {
                if (o->kind != ir::NodeKind::Var) return;
                const auto* v = static_cast<const ir::VarNode*>(o);
                auto it = lets.find(v);
                if (it != lets.end() && followed.insert(v).second) values.push_back(it->second);
            });
        }
        for (const ir::Expr& value : values) ir::post_order_visit(value, [&](const ir::Object* o) {
            if (o->kind == ir::NodeKind::Load) {
                const auto* l = static_cast<const ir::Load*>(o);
                const int load_lanes = l->type.lanes;
                count_access(load_lanes, l->type.bits / 8, true);
                if (reads[l->buffer.node()]++ == 0)
                    loads.push_back({l->buffer.node(), l->index, load_lanes, std::max(1, l->type.bits / 8)});
                return;
            }
            if (!is_arithmetic(o->kind)) return;
            const auto* e = static_cast<const ir::ExprNode*>(o);
            if (e->type.is_float()) site.flops += e->type.lanes;
            else int_ops += executions_ * e->type.lanes;
        });
        ir::post_order_visit(op->index, [&](const ir::Object* o) {
            if (is_arithmetic(o->kind)) int_ops += executions_;
        });
        // The most read first, then in the order they appear.
        std::vector<size_t> order(loads.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            const int ra = reads[loads[a].buffer], rb = reads[loads[b].buffer];
            return ra != rb ? ra > rb : a < b;
        });
        for (size_t i : order) site.accesses.push_back(loads[i]);
        sites.push_back(std::move(site));
    }

private:
    static bool is_arithmetic(ir::NodeKind k) {
        switch (k) {
            case ir::NodeKind::Add: case ir::NodeKind::Sub: case ir::NodeKind::Mul: case ir::NodeKind::Div:
            case ir::NodeKind::Mod: case ir::NodeKind::Min: case ir::NodeKind::Max: case ir::NodeKind::Call:
            case ir::NodeKind::Select:
                return true;
            default: return false;
        }
    }

    void count_access(int lanes, int element_bytes, bool load) {
        const double bytes = executions_ * lanes * std::max(1, element_bytes);
        (load ? load_bytes : store_bytes) += bytes;
        (lanes > 1 ? vector_accesses : scalar_accesses) += executions_;
        max_lanes = std::max(max_lanes, double(lanes));
    }

    std::vector<Loop> stack_;
    double executions_ = 1;
};

// The per-loop features of the hottest site, innermost loop first.
void loop_features(const Site& site, const std::unordered_map<const ir::VarNode*, ir::Expr>& lets, float* out) {
    std::unordered_map<const ir::VarNode*, int64_t> env;
    for (const Loop& l : site.loops) env[l.var] = 0;
    const int n = int(site.loops.size());
    const int buffers = std::min<int>(kFeatureBuffers, int(site.accesses.size()));
    // Strides of each access along each loop (the index's change when the loop's variable
    // goes from 0 to 1, the others at 0).
    std::vector<std::vector<double>> stride(size_t(buffers), std::vector<double>(size_t(n), 0));
    for (int b = 0; b < buffers; ++b) {
        const Access& a = site.accesses[size_t(b)];
        IndexEvaluator at(lets, env);
        const std::optional<int64_t> base = at.eval(a.index);
        for (int l = 0; l < n; ++l) {
            env[site.loops[size_t(l)].var] = 1;
            const std::optional<int64_t> moved = IndexEvaluator(lets, env).eval(a.index);
            env[site.loops[size_t(l)].var] = 0;
            // Unknown: assume it moves (a gather).
            stride[size_t(b)][size_t(l)] = base && moved ? double(std::llabs(*moved - *base)) : 1.0;
        }
    }
    for (int level = 0; level < std::min(n, kFeatureLoops); ++level) {
        const int l = n - 1 - level;  // the loop `level` steps out from the innermost
        const Loop& loop = site.loops[size_t(l)];
        float* f = out + level * kPerLoopFeatures;
        f[0] = log2p(double(loop.extent));
        f[1] = loop.kind == ir::ForKind::Parallel;
        f[2] = loop.kind == ir::ForKind::Vectorized;
        f[3] = loop.kind == ir::ForKind::Unrolled;
        f[4] = loop.kind == ir::ForKind::Serial;
        for (int b = 0; b < buffers; ++b) {
            const Access& a = site.accesses[size_t(b)];
            double iterations = a.lanes, distinct = a.lanes;
            for (int inner = l; inner < n; ++inner) {
                iterations *= double(site.loops[size_t(inner)].extent);
                if (stride[size_t(b)][size_t(inner)] != 0) distinct *= double(site.loops[size_t(inner)].extent);
            }
            float* g = f + 5 + b * kPerBufferFeatures;
            g[0] = log2p(stride[size_t(b)][size_t(l)]);
            g[1] = log2p(distinct * a.element_bytes);
            g[2] = log2p(iterations / std::max(1.0, distinct));
        }
    }
}

}  // namespace features_detail

std::vector<float> program_features(const ir::PrimFunc& f) {
    using namespace features_detail;
    Collector c;
    c.visit(f.body);
    std::vector<float> out(size_t(kProgramFeatures), 0.f);
    double flops = 0;
    const Site* hot = nullptr;
    for (const Site& s : c.sites) {
        flops += s.flops * s.executions;
        if (!hot || s.flops * s.executions > hot->flops * hot->executions) hot = &s;
    }
    double parallel_extent = 1;
    if (hot)
        for (const Loop& l : hot->loops)
            if (l.kind == ir::ForKind::Parallel) parallel_extent *= double(l.extent);
    const double moved = c.load_bytes + c.store_bytes;
    const float totals[kGlobalFeatures] = {
        log2p(flops), log2p(c.int_ops), log2p(c.load_bytes), log2p(c.store_bytes), log2p(c.vector_accesses),
        log2p(c.scalar_accesses), float(c.max_lanes), float(c.loops), float(c.max_depth), log2p(parallel_extent),
        float(c.parallel_loops), log2p(double(c.sites.size())), log2p(c.scratch_bytes),
        log2p(moved > 0 ? flops / moved : 0), log2p(hot ? hot->executions : 0), log2p(hot ? hot->flops : 0),
        log2p(hot ? double(hot->accesses.size()) : 0)};
    std::copy(totals, totals + kGlobalFeatures, out.begin());
    if (hot) loop_features(*hot, c.lets, out.data() + kGlobalFeatures);
    return out;
}

const std::vector<std::string>& program_feature_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n = {"flops", "int_ops", "load_bytes", "store_bytes", "vector_accesses",
                                      "scalar_accesses", "max_lanes", "loops", "max_depth", "parallel_extent",
                                      "parallel_loops", "stores", "scratch_bytes", "flops_per_byte",
                                      "hot_executions", "hot_flops", "hot_buffers"};
        for (int l = 0; l < kFeatureLoops; ++l) {
            const std::string p = "loop" + std::to_string(l) + ".";
            for (const char* s : {"extent", "parallel", "vectorized", "unrolled", "serial"}) n.push_back(p + s);
            for (int b = 0; b < kFeatureBuffers; ++b)
                for (const char* s : {"stride", "footprint_bytes", "reuse"})
                    n.push_back(p + "buf" + std::to_string(b) + "." + s);
        }
        return n;
    }();
    return names;
}

std::vector<float> knob_features(const ConfigSpace& space, const Config& config) {
    std::vector<float> out;
    for (const Knob& k : space.knobs())
        out.push_back(features_detail::log2p(double(config.get(k.name).value_or(k.default_value))));
    return out;
}

}  // namespace weft::autotune
