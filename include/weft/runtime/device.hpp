// Device: where a buffer's memory lives and where a kernel runs: the host CPU, or CUDA
// device n (its ordinal as the driver counts them, 0 first).
//
//   Buffer<float> a({1024}, Device::cuda(0));   // device memory
//   a.device() == Device::cuda(0)
#pragma once
#include <cstdint>
#include <string>

namespace weft {

struct Device {
    enum class Kind : uint8_t { CPU, CUDA };
    Kind kind = Kind::CPU;
    int index = 0;  // the CUDA device ordinal; 0 for the CPU

    static constexpr Device cpu() { return Device{}; }
    static constexpr Device cuda(int ordinal = 0) { return Device{Kind::CUDA, ordinal}; }

    constexpr bool is_cpu() const { return kind == Kind::CPU; }
    constexpr bool is_cuda() const { return kind == Kind::CUDA; }
    // "cpu", "cuda(0)": what a user would write after Device::, for messages.
    std::string str() const { return is_cpu() ? "cpu" : "cuda(" + std::to_string(index) + ")"; }

    constexpr bool operator==(const Device&) const = default;
};

}  // namespace weft
