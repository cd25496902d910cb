// Definitions of te::scan and te::scan_body_ops (te/compute.hpp).
#pragma once
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/te/compute.hpp"

namespace weft::te {

namespace scan_detail {

// Calls f(load) on every read of `producer` in e.
inline void for_each_read(const Expr& e, const OperationNode* producer, const std::function<void(const ir::ProducerLoad&)>& f) {
    ir::post_order_visit(e, [&](const ir::Object* n) {
        if (n->kind != ir::NodeKind::ProducerLoad) return;
        auto* load = static_cast<const ir::ProducerLoad*>(n);
        if (load->producer.get() == producer) f(*load);
    });
}

// The ops reachable from `root`'s inputs that read `state` directly or through each other.
inline std::vector<Operation> ops_reading(const Operation& root, const OperationNode* state) {
    std::unordered_map<const OperationNode*, bool> reads;  // op -> whether it reads the state
    std::vector<Operation> body;
    std::function<bool(const Operation&)> visit = [&](const Operation& op) -> bool {
        if (op.get() == state) return true;
        if (auto it = reads.find(op.get()); it != reads.end()) return it->second;
        reads[op.get()] = false;
        bool r = false;
        for (const Tensor& t : op.input_tensors()) r = visit(t.op()) || r;
        reads[op.get()] = r;
        if (r && op.get() != root.get()) body.push_back(op);
        return r;
    };
    visit(root);
    return body;
}

// Every read of the state in op's body must be at a constant distance before op's row t
// (its axis 0): state(t - c, ...), c >= 1.
inline void check_reads_back(const OperationNode& op, const OperationNode* state, const std::string& scan_name) {
    const Expr t = op.axis.at(0).var();
    for (const Expr& b : op.body)
        for_each_read(b, state, [&](const ir::ProducerLoad& load) {
            int64_t back = 0;
            const bool constant = ir::as_const_int(ir::arith::simplify(t - load.indices.at(0)), &back);
            WEFT_CHECK(constant && back >= 1, "scan '", scan_name, "': '", op.name, "' reads the state '", state->name,
                       "' at row ", load.indices.at(0), "; a step may read only earlier rows, a constant number back (",
                       t, " - 1, ", t, " - 2, ...)");
        });
}

}  // namespace scan_detail

std::vector<Operation> scan_body_ops(const Operation& scan) {
    WEFT_CHECK(scan.defined() && scan->is_scan(), "scan_body_ops: '", scan.defined() ? scan.name() : "?",
               "' is not a scan");
    return scan_detail::ops_reading(scan, scan->scan_state.get());
}

Tensor scan(const Tensor& init, const Tensor& update, const Tensor& state, std::string name) {
    using namespace scan_detail;
    WEFT_CHECK(init.defined() && update.defined() && state.defined(), "scan '", name, "': an undefined tensor");
    WEFT_CHECK(state.op()->is_placeholder(), "scan '", name, "': the state '", state.name(),
               "' must be a placeholder (it stands for the scan's result)");
    WEFT_CHECK(update.op()->is_compute() && update.op()->num_outputs() == 1 && !update.op()->is_scan(), "scan '", name,
               "': the update '", update.name(), "' must be a compute with one output");
    WEFT_CHECK(init.op()->num_outputs() == 1, "scan '", name, "': the init '", init.name(), "' must have one output");
    const std::vector<Expr> shape = state.shape(), ushape = update.shape(), ishape = init.shape();
    // The time extent (dimension 0 of the state and the update) may be symbolic (a graph's
    // sequence length); the other extents and the init's are constants.
    std::vector<int64_t> dims(shape.size()), init_dims(ishape.size());
    for (size_t d = 1; d < shape.size(); ++d)
        WEFT_CHECK(ir::as_const_int(shape[d], &dims[d]), "scan '", name, "': the state's dimension ", d,
                   " must be a constant");
    const Expr steps = shape.at(0);
    const bool fixed_steps = ir::as_const_int(steps, &dims[0]);
    for (size_t d = 0; d < ishape.size(); ++d)
        WEFT_CHECK(ir::as_const_int(ishape[d], &init_dims[d]), "scan '", name, "': the init's dimension ", d,
                   " must be a constant");
    auto same = [](const Expr& a, const Expr& b) {
        int64_t diff = 1;
        return ir::as_const_int(ir::arith::simplify(a - b), &diff) && diff == 0;
    };
    auto dims_str = [](const std::vector<Expr>& s) {
        std::string r = "[";
        for (size_t d = 0; d < s.size(); ++d) r += (d ? ", " : "") + ir::to_string(s[d]);
        return r + "]";
    };
    bool fits = ushape.size() == shape.size() && ishape.size() == shape.size();
    for (size_t d = 0; fits && d < shape.size(); ++d)
        fits = same(ushape[d], shape[d]) && (d == 0 || init_dims[d] == dims[d]);
    WEFT_CHECK(fits, "scan '", name, "': the state ", dims_str(shape), ", the update ", dims_str(ushape),
               " and the init ", dims_str(ishape), " must agree: update as the state, init with fewer rows");
    const int64_t k = init_dims[0], T = dims[0];
    WEFT_CHECK(k >= 1 && (!fixed_steps || k < T), "scan '", name, "': the init has ", k, " rows of the state's ",
               dims_str({steps}), "; it must have at least 1 and fewer than all");
    WEFT_CHECK(init.dtype() == state.dtype() && update.dtype() == state.dtype(), "scan '", name, "': the state is ",
               state.dtype().str(), ", the init ", init.dtype().str(), " and the update ", update.dtype().str());

    // The scan's own axes: time from k, the others as the update's.
    const OperationNode& u = *update.op().get();
    std::vector<IterVar> axes;
    std::unordered_map<Var, Expr, ir::VarHash, ir::VarEq> to_new;
    for (size_t d = 0; d < u.axis.size(); ++d) {
        const IterVar& old = u.axis[d];
        IterVar iv(d == 0 ? ir::Range(ir::make_int(k), ir::arith::simplify(steps - ir::make_int(k))) : old.dom(),
                   Var(old.var().name(), index_type),
                   ir::IterKind::DataPar);
        to_new[old.var()] = iv.var();
        axes.push_back(iv);
    }
    Expr body = ir::substitute(u.body[0], to_new);
    Operation made = detail::make_compute(axes, {body}, name, u.loc);  // its checks, and its reduce axes
    auto node = std::make_shared<OperationNode>(OperationNode::OpKind::Compute, name);
    node->axis = made->axis;
    node->reduce_axis = made->reduce_axis;
    node->body = made->body;
    node->loc = made->loc;
    node->scan_state = state.op().ptr();
    node->scan_init = init.op().ptr();
    node->scan_init_rows = k;
    Operation op(std::shared_ptr<const OperationNode>(std::move(node)));
    check_reads_back(*op.get(), state.op().get(), name);
    for (const Operation& b : ops_reading(op, state.op().get())) {
        WEFT_CHECK(b->is_compute() && !b->axis.empty(), "scan '", name, "': '", b.name(), "' reads the state but is not a compute");
        WEFT_CHECK(same(b->axis[0].dom().extent, steps), "scan '", name, "': '", b.name(),
                   "' reads the state, so its axis 0 must be time, of the state's ", dims_str({steps}), " rows");
        check_reads_back(*b.get(), state.op().get(), name);
    }
    return op.output(0);
}

}  // namespace weft::te
