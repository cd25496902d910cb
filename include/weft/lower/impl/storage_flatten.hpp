// Storage flattening: multi-dimensional tensors become flat buffers. A realize becomes an
// Allocate of the product of its extents; reads and writes become Load/Store at
// sum((index_d - min_d) * stride_d) with compact row-major strides. Kernel arguments are
// flat buffers of their full shape (origin 0).
#pragma once
#include <unordered_map>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/visitor.hpp"

namespace weft::lower_passes {

struct FlatBuffer {
    Var data;  // handle var
    DataType type;
    std::vector<Expr> min, strides;
};

// Compact row-major strides of a shape.
inline std::vector<Expr> compact_strides(const std::vector<Expr>& shape) {
    std::vector<Expr> strides(shape.size());
    Expr s = make_int(1);
    for (size_t d = shape.size(); d-- > 0;) {
        strides[d] = s;
        s = ir::arith::simplify(s * shape[d]);
    }
    return strides;
}

class StorageFlattener : public ir::IRMutator {
    using Stmt = ir::Stmt;
public:
    // `resolve` maps a producer object (any alias of a stage) + value index to a key
    // identifying the tensor; arguments are registered up front with add_argument.
    using Resolve = std::function<const void*(const ir::Object* producer, int value_index)>;
    explicit StorageFlattener(Resolve r) : resolve_(std::move(r)) {}

    void add_argument(const void* key, const Var& data, DataType t, const std::vector<Expr>& shape) {
        buffers_[key] = FlatBuffer{data, t, std::vector<Expr>(shape.size(), make_int(0)), compact_strides(shape)};
    }

    using IRMutator::mutate;

protected:
    Stmt visit_(const ir::ProducerRealize* op, const Stmt&) override {
        const void* key = resolve_(op->producer.get(), op->value_index);
        std::vector<Expr> shape, mins;
        for (auto& r : op->bounds) {
            mins.push_back(r.min);
            shape.push_back(r.extent);
        }
        Var data(op->name, DataType::handle());
        buffers_[key] = FlatBuffer{data, op->type, mins, compact_strides(shape)};
        Stmt body = mutate(op->body);
        buffers_.erase(key);
        Expr total = make_int(1);
        for (auto& e : shape) total = total * e;
        return ir::Allocate::make(data, op->type, {ir::arith::simplify(total)}, op->scope, body);
    }
    Stmt visit_(const ir::ProducerStore* op, const Stmt&) override {
        auto& b = buffer(op->producer.get(), op->value_index, op->name);
        Expr value = mutate(op->value);
        return ir::Store::make(b.data, value, flat_index(b, mutate_all(op->indices)));
    }
    Expr visit_(const ir::ProducerLoad* op, const Expr&) override {
        auto& b = buffer(op->producer.get(), op->value_index, op->name);
        return ir::Load::make(op->type, b.data, flat_index(b, mutate_all(op->indices)));
    }

private:
    Resolve resolve_;
    std::unordered_map<const void*, FlatBuffer> buffers_;

    std::vector<Expr> mutate_all(const std::vector<Expr>& v) {
        bool changed = false;
        return IRMutator::mutate_all(v, &changed);
    }
    const FlatBuffer& buffer(const ir::Object* producer, int vi, const std::string& name) {
        auto it = buffers_.find(resolve_(producer, vi));
        WEFT_CHECK(it != buffers_.end(), "tensor '", name,
                   "' is used by the computation but is neither an argument of the kernel nor computed by it; "
                   "add it to the argument list");
        return it->second;
    }
    static Expr flat_index(const FlatBuffer& b, const std::vector<Expr>& idx) {
        Expr flat;
        for (size_t d = 0; d < idx.size(); ++d) {
            Expr term = (idx[d] - b.min[d]) * b.strides[d];
            flat = flat.defined() ? flat + term : term;
        }
        return ir::arith::simplify(flat);
    }
};

}  // namespace weft::lower_passes
