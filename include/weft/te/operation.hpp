// Operations and tensors: the dataflow graph of a computation.
//
// A placeholder is an input; a compute op defines each output element by an expression of
// its axes (and, for reductions, a Reduce node over reduce axes). A Tensor is one output of
// an operation; calling it with indices builds a read (ir::ProducerLoad) of it.
#pragma once
#include <source_location>
#include <string>
#include <vector>

#include "weft/ir/depth.hpp"
#include "weft/ir/op.hpp"

namespace weft::te {

// The deepest expression a compute's body may be. Lowering's passes recurse once per level;
// past this (measured: 5,000 levels lower and compile in 0.9 s, 20,000 in 10 s, 50,000
// overflow the stack) a body is refused with a weft::Error instead.
inline constexpr int64_t kMaxExpressionDepth = 4096;

using ir::Expr;
using ir::IterVar;
using ir::Var;

struct OperationNode : ir::Object {
    enum class OpKind : uint8_t { Placeholder, Compute };
    OpKind op_kind;
    std::string name;
    // Placeholder: shape and dtype of the single output.
    std::vector<Expr> shape;
    DataType dtype;
    // Compute: data-parallel axes (one per output dimension), reduce axes (of the Reduce
    // node, if the body is a reduction) and one body expression per output.
    std::vector<IterVar> axis;
    std::vector<IterVar> reduce_axis;
    std::vector<Expr> body;
    // Compute: where the user's compute() call is (line 0: made by weft itself), for messages.
    std::source_location loc;
    // A scan (te::scan, compute.hpp): a compute whose axis 0 is time, running over
    // [scan_init_rows, T); its body reads scan_state, a placeholder that stands for this
    // operation's own output at earlier rows, and rows below scan_init_rows are scan_init's.
    std::shared_ptr<const OperationNode> scan_state, scan_init;
    int64_t scan_init_rows = 0;
    bool is_scan() const { return scan_state != nullptr; }

    OperationNode(OpKind k, std::string n) : ir::Object(ir::NodeKind::Object), op_kind(k), name(std::move(n)) {}
    bool is_placeholder() const { return op_kind == OpKind::Placeholder; }
    bool is_compute() const { return op_kind == OpKind::Compute; }
    int num_outputs() const { return is_placeholder() ? 1 : int(body.size()); }
    DataType output_dtype(int i) const { return is_placeholder() ? dtype : body.at(size_t(i)).type(); }
    std::vector<Expr> output_shape() const;
    bool is_reduction() const { return !reduce_axis.empty(); }
};

class Tensor;

class Operation : public ir::Handle<OperationNode> {
public:
    using Handle::Handle;
    Tensor output(int i) const;
    // The tensors this operation reads, in order of first use (no duplicates).
    std::vector<Tensor> input_tensors() const;
    const std::string& name() const { return ptr_->name; }
};

class Tensor {
public:
    Tensor() = default;
    Tensor(Operation op, int value_index) : op_(std::move(op)), value_index_(value_index) {}

    const Operation& op() const { return op_; }
    int value_index() const { return value_index_; }
    bool defined() const { return op_.defined(); }
    std::string name() const;
    DataType dtype() const { return op_->output_dtype(value_index_); }
    std::vector<Expr> shape() const { return op_->output_shape(); }
    int ndim() const { return int(shape().size()); }
    // The i-th data-parallel axis of the compute op that produces this tensor.
    IterVar axis(int i) const;
    // The i-th reduce axis of the compute op that produces this tensor.
    IterVar reduce_axis(int i) const;

    // A read of element (indices...). The number of indices must equal ndim().
    template <class... Idx>
    Expr operator()(Idx&&... idx) const {
        return at({Expr(idx)...});
    }
    Expr at(const std::vector<Expr>& indices) const;

    bool same_as(const Tensor& o) const { return op_.same_as(o.op_) && value_index_ == o.value_index_; }

private:
    Operation op_;
    int value_index_ = 0;
};

}  // namespace weft::te
