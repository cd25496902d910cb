// Definitions for te/operation.hpp and te/compute.hpp.
#include <unordered_set>

#include "weft/ir/visitor.hpp"
#include "weft/te/compute.hpp"

namespace weft::te {

std::vector<Expr> OperationNode::output_shape() const {
    if (is_placeholder()) return shape;
    if (is_scan()) return scan_state->shape;  // all rows, the initial ones included
    std::vector<Expr> s;
    for (auto& iv : axis) s.push_back(iv.dom().extent);
    return s;
}

Tensor Operation::output(int i) const {
    WEFT_CHECK(i >= 0 && i < get()->num_outputs(), "operation '", name(), "' has no output ", i);
    return Tensor(*this, i);
}

std::vector<Tensor> Operation::input_tensors() const {
    std::vector<Tensor> out;
    for (auto& b : get()->body) {
        ir::post_order_visit(b, [&](const ir::Object* n) {
            if (n->kind != ir::NodeKind::ProducerLoad) return;
            auto* load = static_cast<const ir::ProducerLoad*>(n);
            Operation op(std::static_pointer_cast<const OperationNode>(load->producer));
            Tensor t(op, load->value_index);
            for (auto& o : out)
                if (o.same_as(t)) return;
            out.push_back(t);
        });
    }
    if (get()->is_scan()) out.push_back(Operation(get()->scan_init).output(0));
    return out;
}

std::string Tensor::name() const {
    if (op_->num_outputs() == 1) return op_->name;
    return op_->name + "." + std::to_string(value_index_);
}

IterVar Tensor::axis(int i) const {
    WEFT_CHECK(op_->is_compute(), "tensor '", name(), "' is a placeholder: it has no axes to schedule");
    WEFT_CHECK(i >= 0 && size_t(i) < op_->axis.size(), "tensor '", name(), "' has ", op_->axis.size(),
               " axes; axis(", i, ") does not exist");
    return op_->axis[size_t(i)];
}

IterVar Tensor::reduce_axis(int i) const {
    WEFT_CHECK(op_->is_compute() && i >= 0 && size_t(i) < op_->reduce_axis.size(), "tensor '", name(), "' has ",
               op_->reduce_axis.size(), " reduce axes; reduce_axis(", i, ") does not exist");
    return op_->reduce_axis[size_t(i)];
}

Expr Tensor::at(const std::vector<Expr>& indices) const {
    WEFT_CHECK(defined(), "indexing an undefined tensor");
    auto shp = shape();
    WEFT_CHECK(indices.size() == shp.size(), "tensor '", name(), "' has ", shp.size(), " dimensions but was indexed with ",
               indices.size(), " indices");
    std::vector<Expr> idx;
    for (size_t d = 0; d < indices.size(); ++d) {
        WEFT_CHECK(indices[d].defined(), "index ", d, " of tensor '", name(), "' is undefined");
        WEFT_CHECK(indices[d].type().is_integer() && indices[d].type().is_scalar(), "index ", d, " of tensor '", name(),
                   "' must be an integer scalar, got ", indices[d].type().str());
        idx.push_back(ir::cast(index_type, indices[d]));
    }
    return Expr(ir::make_node<ir::ProducerLoad>(dtype(), op_.ptr(), value_index_, std::move(idx), name()));
}

Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name) {
    WEFT_CHECK(!shape.empty(), "placeholder '", name, "' needs at least one dimension");
    for (size_t d = 0; d < shape.size(); ++d) {
        auto& e = shape[d];
        WEFT_CHECK(e.defined() && e.type().is_integer(), "placeholder '", name, "': dimension ", d,
                   " must be an integer or an integer Var");
        int64_t v;
        if (ir::as_const_int(e, &v)) WEFT_CHECK(v > 0, "placeholder '", name, "': dimension ", d, " is ", v, ", must be > 0");
        e = ir::cast(index_type, e);
    }
    auto node = std::make_shared<OperationNode>(OperationNode::OpKind::Placeholder, std::move(name));
    node->shape = std::move(shape);
    node->dtype = dtype;
    return Operation(std::shared_ptr<const OperationNode>(node)).output(0);
}

IterVar reduce_axis(Expr begin, Expr end, std::string name) {
    WEFT_CHECK(begin.defined() && end.defined() && begin.type().is_integer() && end.type().is_integer(),
               "reduce_axis '", name, "': bounds must be integers");
    begin = ir::cast(index_type, begin);
    end = ir::cast(index_type, end);
    int64_t b, e;
    if (ir::as_const_int(begin, &b) && ir::as_const_int(end, &e))
        WEFT_CHECK(e > b, "reduce_axis '", name, "' is empty: [", b, ", ", e, ")");
    Var v(name, index_type);
    return IterVar(ir::Range(begin, end - begin), v, ir::IterKind::Reduce);
}

namespace detail {

std::vector<IterVar> make_axes(const std::vector<Expr>& shape, const std::vector<std::string>& names) {
    static const char* defaults2[] = {"i", "j"};
    std::vector<IterVar> axes;
    for (size_t d = 0; d < shape.size(); ++d) {
        std::string n = d < names.size() ? names[d]
                        : shape.size() <= 2 ? defaults2[d]
                                            : "i" + std::to_string(d);
        WEFT_CHECK(shape[d].defined() && shape[d].type().is_integer(), "compute: dimension ", d,
                   " must be an integer or an integer Var");
        Expr ext = ir::cast(index_type, shape[d]);
        int64_t v;
        if (ir::as_const_int(ext, &v)) WEFT_CHECK(v > 0, "compute: dimension ", d, " is ", v, ", must be > 0");
        axes.emplace_back(ir::Range(ir::make_int(0), ext), Var(n, index_type), ir::IterKind::DataPar);
    }
    return axes;
}

Operation make_compute(const std::vector<IterVar>& axis, std::vector<Expr> body, std::string name,
                       std::source_location loc) {
    WEFT_CHECK(!body.empty(), "compute '", name, "' has no output expression");
    std::vector<IterVar> raxis;
    for (size_t i = 0; i < body.size(); ++i) {
        WEFT_CHECK(body[i].defined(), "compute '", name, "': the lambda returned an undefined expression");
        WEFT_CHECK(!body[i].type().is_handle(), "compute '", name, "': the lambda returned a non-numeric expression");
        // Before anything walks it: the visitors recurse once per level.
        WEFT_CHECK(ir::expr_depth(body[i], kMaxExpressionDepth) < kMaxExpressionDepth, "compute '", name,
                   "': its expression is ", kMaxExpressionDepth, " or more levels deep (weft::te::kMaxExpressionDepth); "
                   "compute parts of it into tensors of their own");
        // A Reduce may only be the whole body, not nested inside another expression.
        bool nested_reduce = false;
        ir::post_order_visit(body[i], [&](const ir::Object* n) {
            if (n->kind == ir::NodeKind::Reduce && n != body[i].get()) nested_reduce = true;
        });
        WEFT_CHECK(!nested_reduce, "compute '", name,
                   "': a reduction (sum, max, ...) must be the whole body, e.g. sum(A(i, k) * 2, {k}); "
                   "to post-process a reduction, compute it into its own tensor first");
        if (auto* r = body[i].as<ir::Reduce>()) {
            if (i == 0) raxis = r->axis;
            WEFT_CHECK(i == 0 || r->axis.size() == raxis.size(), "compute '", name,
                       "': all outputs must reduce over the same axes");
        } else {
            WEFT_CHECK(raxis.empty(), "compute '", name, "': either every output is a reduction or none is");
        }
    }
    auto node = std::make_shared<OperationNode>(OperationNode::OpKind::Compute, std::move(name));
    node->axis = axis;
    node->reduce_axis = raxis;
    node->body = std::move(body);
    node->loc = loc;
    return Operation(std::shared_ptr<const OperationNode>(node));
}

}  // namespace detail

// ---- reducers -------------------------------------------------------------------------

std::vector<Expr> Reducer::operator()(const std::vector<Expr>& sources, const std::vector<IterVar>& axes,
                                      Expr where) const {
    WEFT_CHECK(!sources.empty(), "reducer '", name_, "': no values to reduce");
    WEFT_CHECK(!axes.empty(), "reducer '", name_, "': no reduce axes given");
    std::vector<DataType> types;
    std::vector<Var> lhs, rhs;
    for (size_t i = 0; i < sources.size(); ++i) {
        WEFT_CHECK(sources[i].defined(), "reducer '", name_, "': value ", i, " is undefined");
        types.push_back(sources[i].type());
        lhs.emplace_back("x" + std::to_string(i), sources[i].type());
        rhs.emplace_back("y" + std::to_string(i), sources[i].type());
    }
    for (auto& a : axes)
        WEFT_CHECK(a->iter_kind == ir::IterKind::Reduce, "reducer '", name_, "': axis '", a.name(),
                   "' is not a reduce axis; make it with reduce_axis(begin, end, name)");
    std::vector<Expr> l(lhs.begin(), lhs.end()), r(rhs.begin(), rhs.end());
    std::vector<Expr> result = combine_(l, r);
    std::vector<Expr> identity = identity_(types);
    WEFT_CHECK(result.size() == sources.size() && identity.size() == sources.size(), "reducer '", name_,
               "': combine and identity must return one expression per reduced value (", sources.size(), ")");
    for (size_t i = 0; i < result.size(); ++i) {
        result[i] = ir::cast(types[i], result[i]);
        identity[i] = ir::cast(types[i], identity[i]);
    }
    if (where.defined())
        WEFT_CHECK(where.type().is_bool(), "reducer '", name_, "': the `where` condition must be a bool expression");
    auto comb = std::make_shared<const ir::CommReducerNode>(lhs, rhs, result, identity);
    std::vector<Expr> out;
    for (size_t i = 0; i < sources.size(); ++i) out.push_back(ir::Reduce::make(comb, sources, axes, where, int(i)));
    return out;
}

Expr Reducer::operator()(Expr source, const std::vector<IterVar>& axes, Expr where) const {
    return (*this)(std::vector<Expr>{source}, axes, where)[0];
}

namespace {
Reducer builtin(const char* name, std::function<Expr(Expr, Expr)> f, std::function<Expr(DataType)> id) {
    return Reducer([f](const std::vector<Expr>& l, const std::vector<Expr>& r) { return std::vector<Expr>{f(l[0], r[0])}; },
                   [id](const std::vector<DataType>& t) { return std::vector<Expr>{id(t[0])}; }, name);
}
}  // namespace

Expr sum(Expr source, const std::vector<IterVar>& axes, Expr where) {
    static const Reducer r = builtin("sum", [](Expr a, Expr b) { return a + b; }, ir::make_zero);
    return r(source, axes, where);
}
Expr prod(Expr source, const std::vector<IterVar>& axes, Expr where) {
    static const Reducer r = builtin("prod", [](Expr a, Expr b) { return a * b; }, ir::make_one);
    return r(source, axes, where);
}
Expr max(Expr source, const std::vector<IterVar>& axes, Expr where) {
    static const Reducer r = builtin("max", [](Expr a, Expr b) { return ir::max(a, b); }, ir::min_value);
    return r(source, axes, where);
}
Expr min(Expr source, const std::vector<IterVar>& axes, Expr where) {
    static const Reducer r = builtin("min", [](Expr a, Expr b) { return ir::min(a, b); }, ir::max_value);
    return r(source, axes, where);
}

}  // namespace weft::te
