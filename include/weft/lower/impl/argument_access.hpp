// What a kernel does with each tensor argument, for the call's aliasing check (Kernel::call):
// which it writes (the schedule's outputs) and, for each output, the inputs it may write
// over in place. An output may share its bytes with an input only where the kernel reads
// that input element-wise: element i only while computing output element i, before
// writing it, and never again. Anything else (a matmul's output over its A) computes wrong
// numbers without a word, so the call refuses it.
//
// The analysis is conservative: an input counts as element-wise only when every read of it,
// through the stages inlined into the output, is at the output's own indices in order, the
// output stage computes each element once (no tail shifted inwards over the tile before),
// and no other stage reads it except one computed whole before the output (attached at the
// root). A kernel with several output operations allows no sharing at all.
#pragma once
#include <unordered_map>
#include <unordered_set>

#include "weft/ir/equality.hpp"
#include "weft/ir/function.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/lower/lower.hpp"
#include "weft/schedule/schedule.hpp"

namespace weft::lower_passes {

class ElementwiseReads {
public:
    using StageOf = std::unordered_map<const ir::Object*, const StageNode*>;
    ElementwiseReads(const StageOf& stage_of, const ir::Object* input) : stage_of_(stage_of), input_(input) {}

    // Whether `output`'s stage reads the input only at its own element (see above).
    bool of(const StageNode& output) {
        const te::OperationNode& op = *output.op.get();
        if (!op.is_compute() || op.is_reduction() || output.recomputes_elements()) return false;
        for (const ir::Expr& body : op.body)
            if (!reads_at_identity(body, op)) return false;
        return true;
    }

private:
    const StageNode* stage(const ir::Object* op) const {
        auto it = stage_of_.find(op);
        return it == stage_of_.end() ? nullptr : it->second;
    }

    // Whether the operation `op` reads the input, directly or through any stage.
    bool reads_input(const ir::Object* op) {
        if (op == input_) return true;
        if (auto it = reads_.find(op); it != reads_.end()) return it->second;
        reads_[op] = false;  // a computation is a DAG: no cycle comes back here
        bool reads = false;
        for (const ir::Expr& body : static_cast<const te::OperationNode*>(op)->body)
            ir::post_order_visit(body, [&](const ir::Object* n) {
                if (!reads && n->kind == ir::NodeKind::ProducerLoad)
                    reads = reads_input(static_cast<const ir::ProducerLoad*>(n)->producer.get());
            });
        return reads_[op] = reads;
    }

    // Whether every read of the input in `e` (the body of compute op `consumer`) is at
    // `consumer`'s own axes, following stages inlined into it.
    bool reads_at_identity(const ir::Expr& e, const te::OperationNode& consumer) {
        bool ok = true;
        ir::post_order_visit(e, [&](const ir::Object* n) {
            if (!ok || n->kind != ir::NodeKind::ProducerLoad) return;
            auto* load = static_cast<const ir::ProducerLoad*>(n);
            const ir::Object* producer = load->producer.get();
            if (!reads_input(producer)) return;
            const StageNode* st = stage(producer);
            const bool inlined = st && st->attach == AttachType::Inline;
            // A stage computed whole before the output may read the input anywhere.
            if (producer != input_ && !inlined) {
                ok = st && st->attach == AttachType::Root && !st->with_stage.lock() && !st->is_output;
                return;
            }
            ok = at_identity(load->indices, consumer) &&
                 (producer == input_ || identity_only(*static_cast<const te::OperationNode*>(producer)));
        });
        return ok;
    }

    static bool at_identity(const std::vector<ir::Expr>& indices, const te::OperationNode& consumer) {
        if (indices.size() != consumer.axis.size()) return false;
        for (size_t d = 0; d < indices.size(); ++d)
            if (indices[d].get() != consumer.axis[d]->var.get()) return false;
        return true;
    }

    // An inlined stage read at the consumer's own indices: its reads of the input are at its own.
    bool identity_only(const te::OperationNode& inlined) {
        if (auto it = identity_.find(&inlined); it != identity_.end()) return it->second;
        bool ok = !inlined.is_reduction();
        for (const ir::Expr& body : inlined.body) ok = ok && reads_at_identity(body, inlined);
        return identity_[&inlined] = ok;
    }

    const StageOf& stage_of_;
    const ir::Object* input_;
    std::unordered_map<const ir::Object*, bool> reads_, identity_;
};

inline bool same_shape(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t d = 0; d < a.size(); ++d)
        if (!ir::structural_equal(a[d], b[d])) return false;
    return true;
}

// Sets KernelArg::is_output and ::may_overwrite of f's tensor arguments (in args' order).
inline void mark_argument_access(const Schedule& s, const std::vector<Argument>& args,
                                 const ElementwiseReads::StageOf& stage_of, ir::PrimFunc& f) {
    auto stage = [&](const te::Tensor& t) -> const StageNode* {
        auto it = stage_of.find(t.op().get());
        return it == stage_of.end() ? nullptr : it->second;
    };
    int output_ops = 0;
    for (auto& st : s.stages()) output_ops += st.node()->is_output;
    for (size_t o = 0; o < args.size(); ++o) {
        auto* out = std::get_if<te::Tensor>(&args[o].value);
        const StageNode* out_stage = out ? stage(*out) : nullptr;
        if (!out_stage || !out_stage->is_output) continue;
        f.args[o].is_output = true;
        if (output_ops != 1) continue;
        for (size_t i = 0; i < args.size(); ++i) {
            auto* in = std::get_if<te::Tensor>(&args[i].value);
            if (!in || !in->op()->is_placeholder() || in->dtype().bytes() != out->dtype().bytes()) continue;
            if (!same_shape(in->shape(), out->shape())) continue;
            if (ElementwiseReads(stage_of, in->op().get()).of(*out_stage)) f.args[o].may_overwrite.push_back(int(i));
        }
    }
}

}  // namespace weft::lower_passes
