// The CUDA half of Kernel's call (impl/kernel.hpp): the device checks of tensor arguments,
// the launch dimensions evaluated from the arguments, the parameters packed the way the
// generated __global__ function takes them, and the launch.
//
// A CUDA kernel has no host entry to check its arguments again (the CPU entry does, see
// ir/abi.hpp), so everything is checked here: on top of the CPU checks, every tensor is
// compact (the kernel gets only its element pointer), on one CUDA device, and every
// dimension the signature gives as an expression (n * 2) matches.
#pragma once
#include <cstring>
#include <span>
#include <unordered_map>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/op.hpp"
#include "weft/ir/printer.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/runtime/cuda/launch.hpp"
#include "weft/runtime/impl/kernel_plan.hpp"
#include "weft/runtime/kernel.hpp"

namespace weft::runtime::detail {

// A buffer on a CUDA device passed to a CPU kernel.
[[noreturn]] inline void throw_device_buffer_for_cpu_kernel(const KernelPlan& plan, size_t i, const BufferRef& b) {
    const ir::KernelArg& sig = plan.func.args[i];
    ::weft::detail::throw_user_error(::weft::detail::concat(
        "kernel '", plan.func.name, "' runs on the CPU but argument '", sig.name, "' is a buffer on ", b.device().str(),
        "; copy it to the host first with copy_to(Device::cpu()), or build the kernel for Target::cuda()"));
}

// Tensor argument i of a CUDA kernel: on a CUDA device (the same as the earlier tensors':
// `device`, set by the first), and compact.
inline void check_cuda_tensor(const KernelPlan& plan, size_t i, const BufferRef& b, Device& device, bool& device_seen) {
    const std::string& kname = plan.func.name;
    const ir::KernelArg& sig = plan.func.args[i];
    WEFT_CHECK(b.device().is_cuda(), "kernel '", kname, "' runs on a CUDA device but argument '", sig.name,
               "' is a host buffer; copy it to the device first with copy_to(Device::cuda(0)) (auto x_gpu = "
               "x.copy_to(Device::cuda(0));), and results back with copy_to(Device::cpu())");
    if (!device_seen) {
        device = b.device();
        device_seen = true;
    } else {
        WEFT_CHECK(b.device() == device, "kernel '", kname, "': argument '", sig.name, "' is on ", b.device().str(),
                   " but the arguments before it are on ", device.str(),
                   "; all buffers of one CUDA kernel call must be on the same device (copy_to moves them)");
    }
    WEFT_CHECK(b.is_compact(), "kernel '", kname, "': argument '", sig.name, "' has strides ",
               ::weft::detail::shape_string(b.strides()), " for shape ", ::weft::detail::shape_string(b.shape()),
               "; a CUDA kernel takes compact (row-major) buffers: pass a compact copy (", sig.name, ".copy())");
}

namespace {

using Bindings = std::unordered_map<ir::Var, ir::Expr, ir::VarHash, ir::VarEq>;

// The value of `e` once the symbols this call bound are substituted; `what` describes e
// for the message when it does not reduce to a constant.
template <class What>
int64_t evaluate(const ir::Expr& e, const Bindings& bindings, const std::string& kname, What&& what) {
    const ir::Expr folded = ir::arith::simplify(ir::substitute(e, bindings));
    int64_t value = 0;
    if (!ir::as_const_int(folded, &value))
        ::weft::detail::throw_user_error(::weft::detail::concat(
            "kernel '", kname, "': ", what(), " is ", e, ", which the arguments of this call do not determine (it "
            "reduces to ", folded, "); give every variable in it a value through a scalar argument or a dimension"));
    return value;
}

// The kernel parameter for a scalar argument, in its own type (what the __global__
// function declares), in the low bytes of `slot` (little-endian, as the driver reads it).
void pack_scalar(const KernelPlan& plan, size_t i, const WeftValue& v, uint64_t& slot) {
    const ir::KernelArg& sig = plan.func.args[i];
    const DataType t = sig.type;
    slot = 0;
    if (t == f32) {
        const float f = static_cast<float>(v.v_float);
        std::memcpy(&slot, &f, sizeof f);
    } else if (t == f64) {
        std::memcpy(&slot, &v.v_float, sizeof v.v_float);
    } else {
        WEFT_CHECK(t.is_integer() && t.is_scalar() && t.bits <= 64, "kernel '", plan.func.name, "': scalar argument '",
                   sig.name, "' has type ", t.str(),
                   ", which a CUDA kernel cannot take from C++ (int, uint, bool, float32 and float64 can)");
        // Two's complement truncation to the parameter's width: the value was checked to fit.
        const uint64_t bits = static_cast<uint64_t>(v.v_int);
        const int bytes = t.bits <= 8 ? 1 : t.bytes();
        std::memcpy(&slot, &bits, static_cast<size_t>(bytes));
    }
}

}  // namespace

// After the argument loop of Kernel::call has checked every argument and filled `values`
// (a tensor's v_handle is its device pointer) and the symbols: checks the dimensions the
// signature gives as expressions, evaluates grid and block, and launches.
inline void launch_cuda(const std::shared_ptr<const KernelModule>& module, const KernelPlan& plan,
                        std::span<const KernelArgValue> args, const WeftValue* values, const int64_t* symbol,
                        const bool* symbol_set, Device device) {
    const std::string& kname = plan.func.name;
    const size_t n = args.size();
    Bindings bindings;
    auto bind_all = [&] {
        if (!bindings.empty()) return;
        for (size_t s = 0; s < plan.symbol_vars.size(); ++s)
            if (symbol_set[s])
                bindings.emplace(plan.symbol_vars[s], ir::make_int(symbol[s], plan.symbol_vars[s].type()));
    };

    for (size_t i = 0; i < n; ++i) {
        const KernelPlan::Arg& arg = plan.args[i];
        for (size_t d = 0; d < arg.dims.size(); ++d) {
            if (arg.dims[d].kind != KernelPlan::Dim::Kind::Unchecked) continue;
            bind_all();
            const ir::KernelArg& sig = plan.func.args[i];
            const int64_t want = evaluate(sig.shape[d], bindings, kname, [&] {
                return ::weft::detail::concat("argument '", sig.name, "' dimension ", d);
            });
            const BufferRef& b = args[i].buffer();
            WEFT_CHECK(b.shape()[d] == want, "kernel '", kname, "': argument '", sig.name, "' dimension ", d, " must be ",
                       sig.shape[d], " = ", want, " but the buffer passed has ", b.shape()[d], " (shape ",
                       ::weft::detail::shape_string(b.shape()), ")");
        }
    }

    const KernelPlan::Launch& launch = *plan.launch;
    cuda::detail::LaunchDims dims;
    for (int d = 0; d < 6; ++d) {
        int64_t value = launch.constant[d];
        if (!launch.all_constant && !launch.dims[d].as<ir::IntImm>()) {
            bind_all();
            value = evaluate(launch.dims[d], bindings, kname, [&] {
                return ::weft::detail::concat(d < 3 ? "gridDim." : "blockDim.", "xyz"[d % 3]);
            });
        }
        (d < 3 ? dims.grid : dims.block)[d % 3] = value;
    }

    SmallArray<uint64_t, 16> storage(n);
    SmallArray<void*, 16> params(n);
    for (size_t i = 0; i < n; ++i) {
        if (plan.func.args[i].kind == ir::KernelArg::Kind::Tensor)
            storage[i] = reinterpret_cast<uintptr_t>(values[i].v_handle);
        else
            pack_scalar(plan, i, values[i], storage[i]);
        params[i] = &storage[i];
    }
    cuda::detail::launch(module, device, dims, params.data(), kname);
}

}  // namespace weft::runtime::detail
