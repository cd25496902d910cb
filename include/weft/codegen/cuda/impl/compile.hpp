// Definitions for codegen/cuda/codegen_cuda.hpp.
#pragma once
#include <chrono>

#include "weft/codegen/cuda/codegen_cuda.hpp"
#include "weft/codegen/cuda/impl/codegen.hpp"
#include "weft/codegen/cuda/impl/emit_expr.hpp"
#include "weft/codegen/cuda/impl/emit_kernel.hpp"
#include "weft/codegen/cuda/impl/emit_memory.hpp"
#include "weft/codegen/cuda/impl/emit_stmt.hpp"
#include "weft/codegen/cuda/impl/names.hpp"
#include "weft/codegen/cuda/impl/nvrtc.hpp"

namespace weft::codegen {
namespace cuda_detail {

class CudaModule : public KernelModule {
public:
    CudaModule(DeviceCode code, double ms) : code_(std::move(code)), ms_(ms) {}
    WeftKernelFn entry() const override { return nullptr; }  // no host entry: see device_code()
    std::string assembly() const override { return code_.ptx; }
    double compile_ms() const override { return ms_; }
    const DeviceCode* device_code() const override { return &code_; }

private:
    DeviceCode code_;
    double ms_;
};

}  // namespace cuda_detail

DeviceCode generate_cuda(const ir::PrimFunc& func, const Target& target) {
    WEFT_CHECK(target.is_cuda(), "generate_cuda: kernel '", func.name, "' target is not CUDA (", target.str(), ")");
    return cuda_detail::CodeGenCUDA(func, target).generate();
}

std::string nvrtc_compile_to_ptx(const std::string& source, const std::string& kernel_name, const std::string& arch) {
    return cuda_detail::compile_to_ptx(source, kernel_name, arch);
}

bool nvrtc_available(std::string* why) {
#ifndef WEFT_CUDA_ENABLED
    if (why) *why = "weft was built without CUDA support (WEFT_CUDA=OFF)";
    return false;
#endif
    const auto& nv = cuda_detail::Nvrtc::get();
    if (why) *why = nv.error;
    return nv.error.empty();
}

std::shared_ptr<const KernelModule> compile_cuda(const ir::PrimFunc& func, const Target& target) {
#ifndef WEFT_CUDA_ENABLED
    detail::throw_user_error(detail::concat("kernel '", func.name,
                                            "': weft was built without CUDA support (WEFT_CUDA=OFF: CMake did not find "
                                            "the CUDA toolkit); reconfigure with the toolkit installed"));
#endif
    auto start = std::chrono::steady_clock::now();
    DeviceCode code = generate_cuda(func, target);
    code.ptx = nvrtc_compile_to_ptx(code.source, code.kernel_name, code.arch);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return std::make_shared<cuda_detail::CudaModule>(std::move(code), ms);
}

}  // namespace weft::codegen
