// KernelPlan: what Kernel's call checks need from the signature, digested once per Kernel
// (argument dims as constants or symbol slots; for a CUDA kernel, its launch dimensions).
#pragma once
#include <array>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "weft/ir/function.hpp"
#include "weft/runtime/module.hpp"

namespace weft::runtime::detail {

// What the call checks need from the signature, computed once per Kernel.
struct KernelPlan {
    struct Dim {
        enum class Kind : uint8_t { Constant, Symbol, Unchecked } kind;
        int64_t value = 0;  // Constant: the extent
        int slot = -1;      // Symbol: index into the call's symbol values
    };
    struct Arg {
        std::vector<Dim> dims;
        int scalar_slot = -1;  // a scalar argument that is also a symbolic dimension
    };
    // A CUDA kernel's gridDim x, y, z then blockDim x, y, z: constants, or expressions of
    // the symbols that Kernel's call substitutes and simplifies.
    struct Launch {
        std::array<ir::Expr, 6> dims;
        std::array<int64_t, 6> constant{};
        bool all_constant = true;
    };
    ir::PrimFunc func;
    std::vector<Arg> args;
    std::vector<std::string> symbol_names;
    std::vector<ir::Var> symbol_vars;  // per slot, for substituting values into expressions
    std::string arg_list;              // "A, B, C"
    std::optional<Launch> launch;      // set for a CUDA kernel (its module has device code)
};

// Fixed inline storage for the common case, the heap only for unusually long argument lists.
template <class T, size_t N>
class SmallArray {
public:
    explicit SmallArray(size_t n) : ptr_(n <= N ? inline_ : (heap_ = std::make_unique<T[]>(n)).get()) {}
    T& operator[](size_t i) { return ptr_[i]; }
    T* data() { return ptr_; }

private:
    T inline_[N];
    std::unique_ptr<T[]> heap_;
    T* ptr_;
};

inline std::shared_ptr<const KernelPlan> make_plan(ir::PrimFunc func, const DeviceCode* device_code) {
    auto plan = std::make_shared<KernelPlan>();
    std::unordered_map<const ir::VarNode*, int> slots;
    auto slot_of = [&](const ir::Expr& var) {
        const auto* v = var.as<ir::VarNode>();
        auto [it, fresh] = slots.emplace(v, static_cast<int>(plan->symbol_names.size()));
        if (fresh) {
            plan->symbol_names.push_back(v->name);
            plan->symbol_vars.push_back(ir::Var(var.ptr()));
        }
        return it->second;
    };
    for (const ir::KernelArg& a : func.args) {
        KernelPlan::Arg arg;
        if (a.kind == ir::KernelArg::Kind::Tensor) {
            for (const ir::Expr& e : a.shape) {
                KernelPlan::Dim d{KernelPlan::Dim::Kind::Unchecked};
                if (const auto* imm = e.as<ir::IntImm>()) {
                    d.kind = KernelPlan::Dim::Kind::Constant;
                    d.value = imm->value;
                } else if (e.as<ir::VarNode>()) {
                    d.kind = KernelPlan::Dim::Kind::Symbol;
                    d.slot = slot_of(e);
                }
                // Any other expression (n * 2, say) is left to the entry's own checks.
                arg.dims.push_back(d);
            }
        } else if (a.type.is_integer() && a.var.defined()) {
            arg.scalar_slot = slot_of(a.var);
        }
        if (!plan->arg_list.empty()) plan->arg_list += ", ";
        plan->arg_list += a.name;
        plan->args.push_back(std::move(arg));
    }
    plan->func = std::move(func);
    if (device_code) {
        KernelPlan::Launch launch;
        for (int d = 0; d < 3; ++d) {
            launch.dims[d] = device_code->grid[d];
            launch.dims[d + 3] = device_code->block[d];
        }
        for (int d = 0; d < 6; ++d) {
            WEFT_ICHECK(launch.dims[d].defined(), "kernel '", plan->func.name, "': launch dimension ", d, " is undefined");
            if (const auto* imm = launch.dims[d].as<ir::IntImm>())
                launch.constant[d] = imm->value;
            else
                launch.all_constant = false;
        }
        plan->launch = std::move(launch);
    }
    return plan;
}

}  // namespace weft::runtime::detail
