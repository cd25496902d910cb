// weft_runtime_check_arguments (ir/abi.hpp): a kernel entry's argument checks, read from
// the table ir/argument_spec.hpp makes of its signature. The checks run on every call and
// allocate nothing; a message is only built for the failure.
#pragma once
#include <cstring>
#include <string>

#include "weft/ir/abi.hpp"
#include "weft/ir/error.hpp"
#include "weft/ir/type.hpp"

namespace weft::runtime::detail {

// Reads the argument table of ir/argument_spec.hpp in order.
class ArgumentChecker {
public:
    ArgumentChecker(const WeftValue* args, const int32_t* codes, int32_t n, const int64_t* spec, const char* names)
        : args_(args), codes_(codes), n_(n), spec_(spec), names_(names) {}

    bool run() {
        const int64_t expected = next();
        if (n_ != expected) return fail(kernel(), "expected ", expected, " arguments, got ", n_);
        for (int64_t i = 0; i < expected; ++i) {
            const int64_t code = next();
            if (code == WEFT_ARG_TENSOR ? !tensor(i) : !scalar(i, code)) return false;
        }
        return true;
    }

private:
    int64_t next() { return *spec_++; }

    bool scalar(int64_t i, int64_t code) {
        const int64_t rule = next(), a = next(), b = next();
        if (codes_[i] != code)
            return fail(who(i), " must be a", code == WEFT_ARG_FLOAT ? " floating-point" : "n integer", " scalar");
        if (rule != WEFT_DIM_SAME_AS_DIM) return true;
        const int64_t want = tensor_arg(a)->shape[b], got = args_[i].v_int;
        if (got != want)
            return fail(who(i), " must be ", want, " (the size of argument '", name(a), "' dimension ", b, "), got ", got);
        return true;
    }

    bool tensor(int64_t i) {
        const int64_t ndim = next(), code = next(), bits = next(), lanes = next(), alignment = next();
        const WeftTensorArg* t = codes_[i] == WEFT_ARG_TENSOR ? tensor_arg(i) : nullptr;
        if (!t) return fail(who(i), codes_[i] == WEFT_ARG_TENSOR ? " is a null tensor pointer" : " must be a tensor");
        if (t->ndim != ndim)
            return fail(who(i), " must have ", ndim, ndim == 1 ? " dimension" : " dimensions", ", got ", t->ndim);
        if (t->dtype_code != code || t->dtype_bits != bits || t->dtype_lanes != lanes)
            return fail(who(i), " must have dtype ", dtype(code, bits, lanes).str(), ", got ",
                        dtype(t->dtype_code, t->dtype_bits, t->dtype_lanes).str());
        if (ndim > 0 && (!t->shape || !t->strides)) return fail(who(i), " has no shape or strides");
        for (int64_t d = 0; d < ndim; ++d) {
            const int64_t rule = next(), a = next(), b = next(), got = t->shape[d];
            if (rule == WEFT_DIM_IS_CONSTANT && got != a)
                return fail(who(i), ": dimension ", d, " must be ", a, ", got ", got);
            if (rule == WEFT_DIM_BINDS_SYMBOL && got < 1)
                return fail(who(i), ": dimension ", d, " must be positive, got ", got);
            if (rule == WEFT_DIM_SAME_AS_DIM && got != tensor_arg(a)->shape[b])
                return fail(who(i), ": dimension ", d, " must be ", tensor_arg(a)->shape[b], " (the size of argument '",
                            name(a), "' dimension ", b, "), got ", got);
            if (rule == WEFT_DIM_SAME_AS_SCALAR && got != args_[a].v_int)
                return fail(who(i), ": dimension ", d, " must be ", args_[a].v_int, " (scalar argument '", name(a),
                            "'), got ", got);
        }
        int64_t compact = 1;  // row-major: each stride is the product of the extents after it
        for (int64_t d = ndim - 1; d >= 0; --d) {
            if (t->strides[d] != compact && t->shape[d] != 1)
                return fail(who(i), " must be compact (row-major); its stride ", d, " must be ", compact, ", got ",
                            t->strides[d]);
            compact *= t->shape[d];
        }
        // A mask, not a division (tens of cycles per call): lowering accepts powers of two only.
        const auto misalignment = reinterpret_cast<uintptr_t>(t->data) & uint64_t(alignment - 1);
        if (misalignment != 0)
            return fail(who(i), "'s data must be aligned to ", alignment,
                        " bytes (the kernel was built with argument_alignment = ", alignment, ")");
        return true;
    }

    // Only for arguments already checked to be tensors (the spec refers back, never ahead).
    const WeftTensorArg* tensor_arg(int64_t i) const { return static_cast<const WeftTensorArg*>(args_[i].v_handle); }

    static DataType dtype(int64_t code, int64_t bits, int64_t lanes) {
        return DataType(DataType::Code(code), int(bits), int(lanes));
    }

    // The i-th name after the kernel's (names_ is '\0'-separated).
    std::string name(int64_t i) const {
        const char* p = names_;
        for (int64_t k = 0; k <= i; ++k) p += std::strlen(p) + 1;
        return p;
    }
    std::string kernel() const { return weft::detail::concat("kernel '", names_, "': "); }
    std::string who(int64_t i) const { return weft::detail::concat(kernel(), "argument '", name(i), "' (#", i, ")"); }

    // Out of line and cold: the checks that pass, every call, keep a small frame.
    template <typename... Parts>
    [[gnu::noinline, gnu::cold]] bool fail(const Parts&... parts) {
        weft_runtime_set_error(weft::detail::concat(parts...).c_str());
        return false;
    }

    const WeftValue* args_;
    const int32_t* codes_;
    int32_t n_;
    const int64_t* spec_;
    const char* names_;
};

}  // namespace weft::runtime::detail

extern "C" int32_t weft_runtime_check_arguments(const WeftValue* args, const int32_t* type_codes, int32_t num_args,
                                                const int64_t* spec, const char* names) {
    try {
        return weft::runtime::detail::ArgumentChecker(args, type_codes, num_args, spec, names).run() ? 1 : 0;
    } catch (...) {  // out of memory building a message: still a failed check
        return 0;
    }
}
