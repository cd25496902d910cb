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

// A symbol is bound where it is first seen (a tensor dimension or an integer scalar) and
// compared with that place afterwards; an extent that is an expression of symbols is left to
// an assert in the kernel (make_entry).
inline ArgumentSpec argument_spec(const std::string& kernel, const std::vector<KernelArg>& args) {
    struct Rule {
        WeftDimRule rule;
        int64_t a = 0, b = 0;
    };
    std::unordered_map<const void*, Rule> first_sight;
    // BINDS_SYMBOL where `symbol` is seen first (recording `here` as its place), else the rule
    // comparing with that place.
    auto bind_or_compare = [&](const void* symbol, Rule here) {
        auto [it, first] = first_sight.try_emplace(symbol, here);
        return first ? Rule{WEFT_DIM_BINDS_SYMBOL} : it->second;
    };
    ArgumentSpec spec;
    auto push = [&](const Rule& r) { spec.words.insert(spec.words.end(), {r.rule, r.a, r.b}); };
    spec.words.push_back(int64_t(args.size()));
    spec.names.append(kernel).push_back('\0');
    for (size_t i = 0; i < args.size(); ++i) {
        const KernelArg& arg = args[i];
        spec.names.append(arg.name).push_back('\0');
        if (arg.kind == KernelArg::Kind::Scalar) {
            const bool is_float = arg.type.is_float();
            spec.words.push_back(is_float ? WEFT_ARG_FLOAT : WEFT_ARG_INT);
            push(is_float ? Rule{WEFT_DIM_BINDS_SYMBOL}
                          : bind_or_compare(arg.var.get(), {WEFT_DIM_SAME_AS_SCALAR, int64_t(i)}));
            continue;
        }
        spec.words.insert(spec.words.end(), {WEFT_ARG_TENSOR, int64_t(arg.shape.size()), int64_t(arg.type.code),
                                             int64_t(arg.type.bits), int64_t(arg.type.lanes),
                                             std::max<int64_t>(arg.alignment, 1)});
        for (size_t d = 0; d < arg.shape.size(); ++d) {
            const Expr& extent = arg.shape[d];
            if (auto* c = extent.as<IntImm>()) push({WEFT_DIM_IS_CONSTANT, c->value});
            else if (auto* v = extent.as<VarNode>()) push(bind_or_compare(v, {WEFT_DIM_SAME_AS_DIM, int64_t(i), int64_t(d)}));
            else push({WEFT_DIM_CHECKED_IN_KERNEL});
        }
    }
    return spec;
}

}  // namespace weft::ir
