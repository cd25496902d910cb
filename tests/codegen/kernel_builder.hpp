// Test helpers for the LLVM backend: hand-built PrimFuncs with the argument-binding
// prologue that lowering would generate, and argument packs for calling their entry.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "weft/codegen/llvm/codegen_llvm.hpp"
#include "weft/ir/abi.hpp"
#include "weft/ir/op.hpp"

namespace weft::test {

inline ir::Expr intrinsic(DataType t, const char* name, std::vector<ir::Expr> args) {
    return ir::Call::make(t, name, std::move(args), ir::Call::CallKind::Intrinsic);
}

// Declares arguments in order; finish() wraps a body in `assert(num_args == n)` and one
// LetStmt per argument (buffer = weft.arg_data(i), scalar = weft.arg_int(i) / arg_float(i)).
class KernelBuilder {
public:
    explicit KernelBuilder(std::string name) { f_.name = std::move(name); }

    ir::Var tensor(const std::string& name, DataType element) {
        ir::Var v(name, DataType::handle());
        bind(v, intrinsic(DataType::handle(), "weft.arg_data", {position()}));
        f_.args.push_back({ir::KernelArg::Kind::Tensor, name, v, element, {}});
        return v;
    }
    ir::Var scalar(const std::string& name, DataType t) {
        ir::Var v(name, t);
        ir::Expr read = t.is_float() ? intrinsic(f64, "weft.arg_float", {position()})
                                     : intrinsic(i64, "weft.arg_int", {position()});
        bind(v, ir::cast(t, read));
        f_.args.push_back({ir::KernelArg::Kind::Scalar, name, v, t, {}});
        return v;
    }

    ir::PrimFunc finish(ir::Stmt body, bool fast_math = false) {
        for (auto it = lets_.rbegin(); it != lets_.rend(); ++it) body = ir::LetStmt::make(it->first, it->second, body);
        ir::Expr n = intrinsic(i32, "weft.num_args", {});
        body = ir::AssertStmt::make(ir::EQ::make(n, ir::make_int(int64_t(lets_.size()), i32)),
                                    f_.name + ": wrong number of arguments", body);
        f_.body = body;
        f_.fast_math = fast_math;
        return f_;
    }

private:
    ir::Expr position() { return ir::make_int(int64_t(lets_.size()), i64); }
    void bind(ir::Var v, ir::Expr value) { lets_.emplace_back(std::move(v), std::move(value)); }

    ir::PrimFunc f_;
    std::vector<std::pair<ir::Var, ir::Expr>> lets_;
};

// The arguments of one call of a kernel's entry, in ABI form.
class CallArgs {
public:
    template <class T>
    CallArgs& tensor(std::vector<T>& data) {
        return tensor(data.data(), int64_t(data.size()));
    }
    // n elements at `data` (which need not be aligned).
    template <class T>
    CallArgs& tensor(T* data, int64_t n) {
        auto& t = tensors_.emplace_back();
        t.shape = n;
        t.arg = WeftTensorArg{data, &t.shape, &t.stride, 1, uint8_t(dtype_of<T>::value.code),
                              dtype_of<T>::value.bits, 1};
        slots_.push_back({WEFT_ARG_TENSOR, int(tensors_.size() - 1), {}});
        return *this;
    }
    CallArgs& scalar(int64_t v) {
        WeftValue value;
        value.v_int = v;
        slots_.push_back({WEFT_ARG_INT, -1, value});
        return *this;
    }
    CallArgs& scalar_float(double v) {
        WeftValue value;
        value.v_float = v;
        slots_.push_back({WEFT_ARG_FLOAT, -1, value});
        return *this;
    }

    int32_t call(WeftKernelFn fn) {
        std::vector<WeftValue> values;
        std::vector<int32_t> codes;
        for (auto& s : slots_) {
            WeftValue v = s.value;
            if (s.tensor >= 0) v.v_handle = &tensors_[size_t(s.tensor)].arg;
            values.push_back(v);
            codes.push_back(s.code);
        }
        return fn(values.data(), codes.data(), int32_t(values.size()));
    }

private:
    struct Tensor {
        WeftTensorArg arg{};
        int64_t shape = 0;
        int64_t stride = 1;
    };
    struct Slot {
        int32_t code;
        int tensor;
        WeftValue value;
    };
    std::deque<Tensor> tensors_;  // a deque: pointers into it stay valid as it grows
    std::vector<Slot> slots_;
};

inline int count_occurrences(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

// How many call instructions in x86 assembly text call exactly `function`.
inline int count_calls_to(const std::string& assembly, const std::string& function) {
    int n = 0;
    size_t line_start = 0;
    while (line_start < assembly.size()) {
        size_t line_end = assembly.find('\n', line_start);
        if (line_end == std::string::npos) line_end = assembly.size();
        std::string line = assembly.substr(line_start, line_end - line_start);
        line_start = line_end + 1;
        size_t call = line.find("call");
        if (call == std::string::npos) continue;
        size_t target = line.find_first_not_of(" \t*", line.find_first_of(" \t", call));
        if (target == std::string::npos) continue;
        std::string name = line.substr(target, line.find_first_of("@( \t", target) - target);
        if (name == function) ++n;
    }
    return n;
}

inline bool host_has_avx512() { return Target::host().has_feature("avx512f"); }

}  // namespace weft::test
