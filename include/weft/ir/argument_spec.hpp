// The table a kernel's entry hands to weft_runtime_check_arguments (layout in ir/abi.hpp):
// what each argument of a kernel's signature must be, made from the signature alone, so
// that lowering (which decides what is left for in-kernel asserts) and code generation
// (which emits the table) agree on it.
#pragma once
#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "weft/ir/abi.hpp"
#include "weft/ir/function.hpp"

namespace weft::ir {

struct ArgumentSpec {
    std::vector<int64_t> words;
    std::string names;  // the kernel's, then each argument's, each followed by '\0'
};

namespace detail {

struct DimRule {
    WeftDimRule rule;
    int64_t a = 0, b = 0;
};

// A symbol is bound where it is first seen (a tensor dimension or an integer scalar) and
// compared with that place afterwards.
class ArgumentSpecBuilder {
public:
    ArgumentSpec build(const std::string& kernel, const std::vector<KernelArg>& args) {
        ArgumentSpec spec;
        spec.words.push_back(int64_t(args.size()));
        spec.names.append(kernel).push_back('\0');
        for (size_t i = 0; i < args.size(); ++i) {
            const KernelArg& arg = args[i];
            spec.names.append(arg.name).push_back('\0');
            if (arg.kind == KernelArg::Kind::Scalar) {
                bool is_float = arg.type.is_float();
                spec.words.push_back(is_float ? WEFT_ARG_FLOAT : WEFT_ARG_INT);
                push(spec, is_float ? DimRule{WEFT_DIM_BINDS_SYMBOL}
                                    : bind_or_compare(arg.var.get(), {WEFT_DIM_SAME_AS_SCALAR, int64_t(i)}));
                continue;
            }
            spec.words.insert(spec.words.end(), {WEFT_ARG_TENSOR, int64_t(arg.shape.size()), int64_t(arg.type.code),
                                                 int64_t(arg.type.bits), int64_t(arg.type.lanes),
                                                 std::max<int64_t>(arg.alignment, 1)});
            for (size_t d = 0; d < arg.shape.size(); ++d) push(spec, dim_rule(arg.shape[d], i, d));
        }
        return spec;
    }

private:
    // A constant, a symbol, or an expression of symbols (left to an assert in the kernel).
    DimRule dim_rule(const Expr& extent, size_t arg, size_t dim) {
        if (auto* c = extent.as<IntImm>()) return {WEFT_DIM_IS_CONSTANT, c->value};
        if (auto* v = extent.as<VarNode>()) return bind_or_compare(v, {WEFT_DIM_SAME_AS_DIM, int64_t(arg), int64_t(dim)});
        return {WEFT_DIM_CHECKED_IN_KERNEL};
    }

    // BINDS_SYMBOL where `symbol` is seen first (recording `here` as its place), else the
    // rule comparing with that place.
    DimRule bind_or_compare(const void* symbol, DimRule here) {
        auto [it, first] = first_.try_emplace(symbol, here);
        return first ? DimRule{WEFT_DIM_BINDS_SYMBOL} : it->second;
    }

    static void push(ArgumentSpec& spec, const DimRule& r) { spec.words.insert(spec.words.end(), {r.rule, r.a, r.b}); }

    std::unordered_map<const void*, DimRule> first_;
};

}  // namespace detail

inline ArgumentSpec argument_spec(const std::string& kernel, const std::vector<KernelArg>& args) {
    return detail::ArgumentSpecBuilder().build(kernel, args);
}

}  // namespace weft::ir
