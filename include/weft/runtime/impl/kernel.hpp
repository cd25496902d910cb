// Definitions for runtime/kernel.hpp: the signature digest and the checked call.
#pragma once
#include <algorithm>
#include <limits>
#include <unordered_map>
#include <vector>

#include "weft/runtime/c_runtime.hpp"
#include "weft/runtime/impl/c_runtime.hpp"
#include "weft/runtime/impl/kernel_cuda.hpp"
#include "weft/runtime/impl/kernel_plan.hpp"
#include "weft/runtime/kernel.hpp"

namespace weft {

Kernel::Kernel(std::shared_ptr<const KernelModule> module, ir::PrimFunc signature) : module_(std::move(module)) {
    WEFT_ICHECK(module_ != nullptr, "a Kernel needs a compiled module");
    plan_ = runtime::detail::make_plan(std::move(signature), module_->device_code());
}

const std::string& Kernel::name() const {
    static const std::string empty;
    return plan_ ? plan_->func.name : empty;
}

const ir::PrimFunc& Kernel::signature() const {
    WEFT_CHECK(plan_ != nullptr, "signature() of an empty Kernel; get a kernel from weft::build(...) first");
    return plan_->func;
}

namespace {

using runtime::detail::KernelPlan;

// Where a symbolic dimension first got its value in this call (for the mismatch message).
std::string first_setter(const KernelPlan& plan, int slot) {
    for (size_t i = 0; i < plan.args.size(); ++i) {
        const auto& arg = plan.args[i];
        const std::string& name = plan.func.args[i].name;
        if (arg.scalar_slot == slot) return "scalar argument '" + name + "'";
        for (size_t d = 0; d < arg.dims.size(); ++d)
            if (arg.dims[d].slot == slot) return detail::concat("argument '", name, "' dimension ", d);
    }
    WEFT_ICHECK(false, "symbol slot ", slot, " is set by no argument");
}

[[noreturn]] void throw_strided_buffer(const std::string& kernel, const std::string& arg, size_t i, const BufferRef& b) {
    const std::vector<int64_t> compact = BufferRef::compact_strides(b.shape());
    for (size_t d = 0; d < compact.size(); ++d)
        if (b.strides()[d] != compact[d] && b.shape()[d] != 1)
            detail::throw_user_error(detail::concat(
                "kernel '", kernel, "': argument '", arg, "' (#", i + 1, ") must be compact (row-major); its stride ", d,
                " must be ", compact[d], ", got ", b.strides()[d], "; pass buffer.copy() (a compact copy)"));
    WEFT_ICHECK(false, "a buffer that is not compact has compact strides");
}

bool fits_scalar(DataType t, int64_t v) {
    if (t.is_bool()) return v == 0 || v == 1;
    if (t.bits >= 64) return t.is_int() || v >= 0;
    int64_t lo = t.is_int() ? -(int64_t(1) << (t.bits - 1)) : 0;
    int64_t hi = t.is_int() ? (int64_t(1) << (t.bits - 1)) - 1 : (int64_t(1) << t.bits) - 1;
    return v >= lo && v <= hi;
}

// The bytes [first, last) a buffer's elements occupy (any strides).
std::pair<uintptr_t, uintptr_t> byte_span(const BufferRef& b) {
    int64_t lo = 0, hi = 0;  // element offsets of the first and last element
    for (int d = 0; d < b.ndim(); ++d) {
        const int64_t reach = (b.shape()[size_t(d)] - 1) * b.strides()[size_t(d)];
        (reach < 0 ? lo : hi) += reach;
    }
    const auto base = reinterpret_cast<uintptr_t>(b.data());
    const int64_t bytes = b.dtype().bytes();
    return {base + uintptr_t(lo * bytes), base + uintptr_t((hi + 1) * bytes)};
}

// An output of the kernel must not share bytes with another tensor argument, except an
// input the kernel reads element-wise (KernelArg::may_overwrite) passed as the very same
// bytes: writing over anything else computes wrong numbers without a word.
void check_no_aliasing(const std::string& kname, const ir::PrimFunc& sig, std::span<const KernelArgValue> args) {
    for (size_t o = 0; o < args.size(); ++o) {
        if (!sig.args[o].is_output) continue;
        const BufferRef& out = args[o].buffer();
        const auto [olo, ohi] = byte_span(out);
        for (size_t i = 0; i < args.size(); ++i) {
            if (i == o || args[i].kind() != KernelArgValue::Kind::Tensor) continue;
            const BufferRef& in = args[i].buffer();
            const auto [ilo, ihi] = byte_span(in);
            if (ihi <= olo || ohi <= ilo) continue;  // apart
            const ir::KernelArg &os = sig.args[o], &is = sig.args[i];
            const bool allowed = std::find(os.may_overwrite.begin(), os.may_overwrite.end(), int(i)) !=
                                 os.may_overwrite.end();
            if (allowed && ilo == olo && ihi == ohi) continue;  // element-wise, in place
            const char* what = is.is_output ? "output" : "input";
            if (i < o && is.is_output) continue;  // the pair is reported from its first output
            detail::throw_user_error(detail::concat(
                "kernel '", kname, "': output '", os.name, "' (#", o + 1, ") shares memory with ", what, " '", is.name,
                "' (#", i + 1, "); ",
                is.is_output ? "two outputs must not overlap"
                : allowed    ? "it may write over that input only in place: the very same bytes (same start and size)"
                             : "the kernel reads that input at other elements than the one it writes, so writing over "
                               "it would compute wrong numbers",
                "; pass separate buffers"));
        }
    }
}

}  // namespace

void Kernel::call(std::span<const KernelArgValue> args) const {
    WEFT_CHECK(defined(), "calling an empty (default-constructed) Kernel; get one from weft::build(...)");
    const KernelPlan& plan = *plan_;
    const std::string& kname = plan.func.name;
    const size_t n = args.size();
    WEFT_CHECK(n == plan.args.size(), "kernel '", kname, "' takes ", plan.args.size(), " arguments (", plan.arg_list,
               ") but ", n, " were passed");

    runtime::detail::SmallArray<WeftValue, 16> values(n);
    runtime::detail::SmallArray<int32_t, 16> codes(n);
    runtime::detail::SmallArray<WeftTensorArg, 16> tensors(n);
    const size_t nsym = plan.symbol_names.size();
    runtime::detail::SmallArray<int64_t, 16> symbol(nsym);
    runtime::detail::SmallArray<bool, 16> symbol_set(nsym);
    for (size_t s = 0; s < nsym; ++s) symbol_set[s] = false;
    // A CUDA kernel (device code, no host entry) takes device buffers, all on one device.
    const bool on_cuda = plan.launch.has_value();
    // A generated CPU kernel has an entry without its argument checks: the one those below do
    // not make already (compact strides) is made here instead. A hand-written module's entry
    // checks what it needs itself (and may take strides).
    const WeftKernelFn unchecked = on_cuda ? nullptr : module_->unchecked_entry();
    const bool skip_entry_checks = unchecked != nullptr && unchecked != module_->entry();
    Device device = Device::cuda(0);
    bool device_seen = false;

    // Binds a symbol on first sight; afterwards the value must agree. `dim` < 0 means the
    // scalar argument itself. (The message is only built on failure: no allocation here.)
    auto bind = [&](int slot, int64_t value, size_t arg, int64_t dim) {
        if (!symbol_set[slot]) {
            symbol_set[slot] = true;
            symbol[slot] = value;
            return;
        }
        if (symbol[slot] == value) return;
        const std::string& arg_name = plan.func.args[arg].name;
        std::string where = dim < 0 ? "scalar argument '" + arg_name + "'"
                                    : detail::concat("argument '", arg_name, "' dimension ", dim);
        detail::throw_user_error(detail::concat("kernel '", kname, "': ", where, " is '", plan.symbol_names[slot],
                                                "', which ", first_setter(plan, slot), " set to ", symbol[slot],
                                                ", but here it is ", value, "; every use of '",
                                                plan.symbol_names[slot], "' must have the same size"));
    };

    for (size_t i = 0; i < n; ++i) {
        const ir::KernelArg& sig = plan.func.args[i];
        const KernelPlan::Arg& arg = plan.args[i];
        const KernelArgValue& v = args[i];
        const bool want_tensor = sig.kind == ir::KernelArg::Kind::Tensor;
        if (want_tensor) {
            WEFT_CHECK(v.kind() == KernelArgValue::Kind::Tensor, "kernel '", kname, "': argument '", sig.name,
                       "' (#", i + 1, ") is a tensor of ", sig.type.str(), " but a scalar (", v.cpp_type(),
                       ") was passed; pass a ", cpp_buffer_type_name(sig.type));
            const BufferRef& b = v.buffer();
            WEFT_CHECK(b.defined(), "kernel '", kname, "': argument '", sig.name,
                       "' is an undefined (default-constructed) buffer; give it a shape");
            if (on_cuda)
                runtime::detail::check_cuda_tensor(plan, i, b, device, device_seen);
            else if (!b.device().is_cpu())
                runtime::detail::throw_device_buffer_for_cpu_kernel(plan, i, b);
            WEFT_CHECK(b.dtype() == sig.type, "kernel '", kname, "': argument '", sig.name, "' has dtype ", sig.type.str(),
                       " but a ", cpp_buffer_type_name(b.dtype()), " was passed; pass a ",
                       cpp_buffer_type_name(sig.type));
            WEFT_CHECK(b.ndim() == static_cast<int>(arg.dims.size()), "kernel '", kname, "': argument '", sig.name,
                       "' has ", arg.dims.size(), " dimensions but the buffer passed has ", b.ndim(), " (shape ",
                       detail::shape_string(b.shape()), ")");
            for (size_t d = 0; d < arg.dims.size(); ++d) {
                const KernelPlan::Dim& dim = arg.dims[d];
                const int64_t extent = b.shape()[d];
                if (dim.kind == KernelPlan::Dim::Kind::Constant) {
                    WEFT_CHECK(extent == dim.value, "kernel '", kname, "': argument '", sig.name, "' dimension ", d,
                               " must be ", dim.value, " but the buffer passed has ", extent, " (shape ",
                               detail::shape_string(b.shape()), ")");
                } else if (dim.kind == KernelPlan::Dim::Kind::Symbol) {
                    bind(dim.slot, extent, i, static_cast<int64_t>(d));  // positive: a buffer has no empty dimension
                }
            }
            // Generated code indexes row-major: a strided view must be copied first.
            if (skip_entry_checks && !b.is_compact()) throw_strided_buffer(kname, sig.name, i, b);
            if (!on_cuda && sig.alignment > 1) {
                // A mask, not a division, on every call: lowering accepts powers of two only.
                const auto misalignment = int64_t(reinterpret_cast<uintptr_t>(b.data()) & uint64_t(sig.alignment - 1));
                WEFT_CHECK(misalignment == 0, "kernel '", kname, "': argument '", sig.name, "' must be aligned to ",
                           sig.alignment, " bytes (the kernel was built with argument_alignment = ", sig.alignment,
                           ") but its data starts ", misalignment, " bytes past such a boundary; pass a weft::Buffer "
                           "(64-byte aligned) or a view that starts at an aligned element");
            }
            if (on_cuda) {
                values[i].v_handle = b.data();  // the __global__ function takes the element pointer
            } else {
                tensors[i] = b.tensor_arg();
                values[i].v_handle = &tensors[i];
            }
            codes[i] = WEFT_ARG_TENSOR;
        } else {
            WEFT_CHECK(v.kind() != KernelArgValue::Kind::Tensor, "kernel '", kname, "': argument '", sig.name, "' (#",
                       i + 1, ") is a scalar of ", sig.type.str(), " but a ", cpp_buffer_type_name(v.buffer().dtype()),
                       " was passed");
            if (sig.type.is_float()) {
                // An integer converts to a float parameter without loss of meaning.
                values[i].v_float = v.kind() == KernelArgValue::Kind::Float ? v.float_value()
                                                                           : static_cast<double>(v.int_value());
                codes[i] = WEFT_ARG_FLOAT;
            } else {
                WEFT_CHECK(sig.type.is_integer() && sig.type.is_scalar(), "kernel '", kname, "': argument '", sig.name,
                           "' has type ", sig.type.str(), ", which cannot be passed from C++");
                WEFT_CHECK(v.kind() == KernelArgValue::Kind::Int, "kernel '", kname, "': argument '", sig.name,
                           "' is a scalar of ", sig.type.str(), " but a ", v.cpp_type(),
                           " was passed; pass an integer (a float is not rounded silently)");
                WEFT_CHECK(fits_scalar(sig.type, v.int_value()), "kernel '", kname, "': argument '", sig.name,
                           "' is ", sig.type.str(), " but the value passed, ", v.int_value(), ", does not fit in it");
                if (arg.scalar_slot >= 0) bind(arg.scalar_slot, v.int_value(), i, -1);
                values[i].v_int = v.int_value();
                codes[i] = WEFT_ARG_INT;
            }
        }
    }

    check_no_aliasing(kname, plan.func, args);
    if (module_->runs_on_host()) return module_->call_host(args);
    if (on_cuda) {
        runtime::detail::launch_cuda(module_, plan, args, values.data(), symbol.data(), symbol_set.data(), device);
        return;
    }
    // Everything the entry would check first was checked above (the dimensions that are
    // expressions of symbols, such as n * 2, the kernel still asserts itself).
    WeftKernelFn entry = unchecked;
    WEFT_ICHECK(entry != nullptr, "kernel '", kname, "' has no entry point");
    runtime::detail::last_error_slot().clear();  // a stale message must not be blamed on this call
    const int32_t rc = entry(values.data(), codes.data(), static_cast<int32_t>(n));
    if (rc != 0) {
        std::string message = detail::unprefixed(runtime::take_last_error());
        if (message.empty()) message = detail::concat("error code ", rc, " (the kernel gave no message)");
        // The generated argument checks already name the kernel; don't say it twice.
        if (message.rfind("kernel '" + kname + "': ", 0) == 0)
            detail::throw_user_error(message);
        detail::throw_user_error(detail::concat("kernel '", kname, "' failed: ", message));
    }
}

}  // namespace weft
