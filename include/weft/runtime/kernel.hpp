// Kernel: a compiled kernel plus its signature, called like a function with checked
// arguments:
//
//   Kernel mm = build(s, {A, B, C}, Target::host());
//   mm(a, b, c);   // Buffer<T> (any T), BufferRef, or arithmetic scalars
//
// Before the generated entry runs, the C++ side checks what the signature says: the
// argument count, tensor vs scalar, each tensor's dtype and rank, every dimension that is a
// constant, and that a symbolic dimension (a Var in the signature) has the same size
// wherever it appears (and equals a scalar argument that is the same Var). The messages
// name the kernel and the argument. The entry itself checks again (strides included; see
// ir/abi.hpp) because it can also be called from C. A call allocates nothing on the heap
// for up to 16 arguments.
//
// A CUDA kernel (its module has device_code()) is called the same way, with buffers on a
// CUDA device: the call also checks that every buffer is on one CUDA device and compact,
// evaluates the launch dimensions from the arguments and launches it on the device's
// current stream (runtime/impl/kernel_cuda.hpp; docs/cuda.md). A buffer on the wrong side
// (host for a CUDA kernel, device for a CPU one) is a weft::Error that says how to copy it.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "weft/ir/function.hpp"
#include "weft/runtime/buffer.hpp"
#include "weft/runtime/module.hpp"

namespace weft {

// One argument of Kernel::call: a buffer (referred to, not copied: it must outlive the
// call) or a scalar.
class KernelArgValue {
public:
    enum class Kind : uint8_t { Tensor, Int, Float };

    KernelArgValue(const BufferRef& buffer) : kind_(Kind::Tensor), buffer_(&buffer) {}

    template <class T>
        requires std::is_arithmetic_v<T>
    KernelArgValue(T value) : cpp_type_(scalar_type_name<T>()) {
        if constexpr (std::is_floating_point_v<T>) {
            kind_ = Kind::Float;
            float_ = static_cast<double>(value);
        } else {
            kind_ = Kind::Int;
            int_ = static_cast<int64_t>(value);
        }
    }

    Kind kind() const { return kind_; }
    const BufferRef& buffer() const { return *buffer_; }
    int64_t int_value() const { return int_; }
    double float_value() const { return float_; }
    // The C++ type of a scalar, e.g. "double", "int32_t" (for messages).
    const char* cpp_type() const { return cpp_type_; }

private:
    template <class T>
    static constexpr const char* scalar_type_name() {
        if constexpr (std::is_same_v<T, bool>) return "bool";
        else if constexpr (std::is_same_v<T, float>) return "float";
        else if constexpr (std::is_same_v<T, double>) return "double";
        else if constexpr (std::is_floating_point_v<T>) return "long double";
        else if constexpr (std::is_signed_v<T>) {
            constexpr const char* names[] = {"int8_t", "int16_t", "int32_t", "int64_t"};
            return names[sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3];
        } else {
            constexpr const char* names[] = {"uint8_t", "uint16_t", "uint32_t", "uint64_t"};
            return names[sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3];
        }
    }

    Kind kind_;
    const BufferRef* buffer_ = nullptr;
    int64_t int_ = 0;
    double float_ = 0;
    const char* cpp_type_ = "buffer";
};

namespace runtime::detail {
struct KernelPlan;  // the signature, pre-digested for the call checks (impl/kernel.hpp)
}

class Kernel {
public:
    // An empty kernel; calling it throws weft::Error.
    Kernel() = default;
    // `signature` is the lowered function the module was compiled from (its args drive the
    // call checks; its body is kept for printing).
    Kernel(std::shared_ptr<const KernelModule> module, ir::PrimFunc signature);

    bool defined() const { return module_ != nullptr; }
    const std::string& name() const;
    const ir::PrimFunc& signature() const;
    const std::shared_ptr<const KernelModule>& module() const { return module_; }
    std::string llvm_ir() const { return module_ ? module_->llvm_ir() : std::string(); }
    std::string assembly() const { return module_ ? module_->assembly() : std::string(); }
    double compile_ms() const { return module_ ? module_->compile_ms() : 0.0; }

    template <class... Args>
    void operator()(Args&&... args) const {
        static_assert(((std::is_base_of_v<BufferRef, std::remove_cvref_t<Args>> ||
                        std::is_arithmetic_v<std::remove_cvref_t<Args>>) && ...),
                      "a Kernel takes Buffer<T>, BufferRef and arithmetic scalars as arguments");
        const std::array<KernelArgValue, sizeof...(Args)> values{KernelArgValue(args)...};
        call(std::span<const KernelArgValue>(values.data(), values.size()));
    }

    // The same call, with the arguments in a run-time list (graph executor, tools).
    void call(std::span<const KernelArgValue> args) const;

private:
    std::shared_ptr<const KernelModule> module_;
    std::shared_ptr<const runtime::detail::KernelPlan> plan_;
};

}  // namespace weft
