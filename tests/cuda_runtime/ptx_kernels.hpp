// Hand-written CUDA kernels (PTX text, checked with ptxas for sm_75 and sm_90) wrapped as
// KernelModules with DeviceCode, the way the CUDA backend hands its kernels to the runtime:
// the runtime's tests launch them through Kernel without depending on the code generator.
// Also: a buffer that claims to live on a CUDA device without any memory behind it, for
// the checks that run before anything reaches the driver.
#pragma once
#include <iostream>
#include <memory>
#include <string>

#include "weft/ir/op.hpp"
#include "weft/runtime/cuda/cuda.hpp"
#include "weft/runtime/kernel.hpp"

namespace weft::test {

// True when a CUDA device is there; otherwise prints the skip marker CTest looks for.
inline bool have_cuda_device() {
    if (cuda::device_count() > 0) return true;
    std::cout << "skipped: no CUDA device (" << cuda::unavailable_reason() << ")\n";
    return false;
}

// The message of the weft::Error f() throws, or "(no error)".
inline std::string error_of(auto&& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "(no error)";
}

// A module with device code only, as codegen/cuda makes them.
class PtxModule : public KernelModule {
public:
    explicit PtxModule(DeviceCode code) : code_(std::move(code)) {}
    WeftKernelFn entry() const override { return nullptr; }
    const DeviceCode* device_code() const override { return &code_; }

private:
    DeviceCode code_;
};

// extern "C" __global__ void weft_axpy(const float* x, float* y, float alpha, int64_t n) {
//     int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
//     if (i < n) y[i] = fmaf(alpha, x[i], y[i]);
// }
inline const char* axpy_ptx = R"(
.version 7.0
.target sm_75
.address_size 64

.visible .entry weft_axpy(
    .param .u64 p_x,
    .param .u64 p_y,
    .param .f32 p_alpha,
    .param .s64 p_n
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;

    ld.param.u64 %rd1, [p_x];
    ld.param.u64 %rd2, [p_y];
    ld.param.f32 %f1, [p_alpha];
    ld.param.s64 %rd3, [p_n];
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.s64 %rd4, %rd4, %rd5;
    setp.ge.s64 %p1, %rd4, %rd3;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    shl.b64 %rd6, %rd4, 2;
    add.s64 %rd7, %rd1, %rd6;
    ld.global.f32 %f2, [%rd7];
    add.s64 %rd7, %rd2, %rd6;
    ld.global.f32 %f3, [%rd7];
    fma.rn.f32 %f3, %f1, %f2, %f3;
    st.global.f32 [%rd7], %f3;
DONE:
    ret;
}
)";

// extern "C" __global__ void weft_block_reverse(float* out, const float* in) {
//     extern __shared__ float smem[];                       // 64 KiB dynamic
//     float* tile = smem + 61440 / 4;                       // the last KiB: beyond 48 KiB
//     int i = blockIdx.x * blockDim.x + threadIdx.x;
//     tile[threadIdx.x] = in[i];
//     __syncthreads();
//     out[i] = tile[blockDim.x - 1 - threadIdx.x];
// }
inline const char* block_reverse_ptx = R"(
.version 7.0
.target sm_75
.address_size 64

.extern .shared .align 16 .b8 weft_dynamic_shared[];

.visible .entry weft_block_reverse(
    .param .u64 p_out,
    .param .u64 p_in
)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    .reg .f32 %f<2>;

    ld.param.u64 %rd1, [p_out];
    ld.param.u64 %rd2, [p_in];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.s32 %r4, %r1, %r2, %r3;
    mul.wide.s32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f1, [%rd4];
    mov.u32 %r5, weft_dynamic_shared;
    add.s32 %r5, %r5, 61440;
    shl.b32 %r6, %r3, 2;
    add.s32 %r6, %r5, %r6;
    st.shared.f32 [%r6], %f1;
    bar.sync 0;
    sub.s32 %r7, %r2, %r3;
    sub.s32 %r7, %r7, 1;
    shl.b32 %r7, %r7, 2;
    add.s32 %r7, %r5, %r7;
    ld.shared.f32 %f1, [%r7];
    add.s64 %rd5, %rd1, %rd3;
    st.global.f32 [%rd5], %f1;
    ret;
}
)";

inline ir::KernelArg tensor_arg(const std::string& name, DataType t, std::vector<ir::Expr> shape) {
    return ir::KernelArg{ir::KernelArg::Kind::Tensor, name, ir::Var(name, DataType::handle()), t, std::move(shape)};
}

inline ir::KernelArg scalar_arg(const ir::Var& v, DataType t) {
    return ir::KernelArg{ir::KernelArg::Kind::Scalar, v.name(), v, t, {}};
}

// Y = alpha * X + Y over n elements: X, Y float32 [n], alpha float32, n int64 (the same
// variable as the tensors' dimension, as the CUDA backend passes symbolic extents).
// gridDim.x = (n + 255) / 256, blockDim.x = 256.
inline Kernel make_axpy(std::string ptx = axpy_ptx, std::string kernel_name = "weft_axpy") {
    ir::Var n("n", i64);
    ir::PrimFunc f;
    f.name = "axpy";
    f.args = {tensor_arg("X", f32, {n}), tensor_arg("Y", f32, {n}), scalar_arg(ir::Var("alpha", f32), f32),
              scalar_arg(n, i64)};
    DeviceCode code;
    code.kernel_name = std::move(kernel_name);
    code.ptx = std::move(ptx);
    code.arch = "sm_75";
    code.grid = {(ir::Expr(n) + 255) / 256, ir::make_int(1), ir::make_int(1)};
    code.block = {ir::make_int(256), ir::make_int(1), ir::make_int(1)};
    return Kernel(std::make_shared<PtxModule>(std::move(code)), f);
}

// out[i] = in[block start + block size - 1 - (i - block start)]: each block of `block`
// elements reversed through 64 KiB of dynamic shared memory. [n] float32 buffers, n a
// multiple of `block` (at most 256), both constants.
inline Kernel make_block_reverse(int64_t n, int64_t block) {
    ir::PrimFunc f;
    f.name = "block_reverse";
    f.args = {tensor_arg("Out", f32, {ir::make_int(n)}), tensor_arg("In", f32, {ir::make_int(n)})};
    DeviceCode code;
    code.kernel_name = "weft_block_reverse";
    code.ptx = block_reverse_ptx;
    code.arch = "sm_75";
    code.grid = {ir::make_int(n / block), ir::make_int(1), ir::make_int(1)};
    code.block = {ir::make_int(block), ir::make_int(1), ir::make_int(1)};
    code.dynamic_shared_bytes = 64 * 1024;
    return Kernel(std::make_shared<PtxModule>(std::move(code)), f);
}

// A buffer that says it is on `device` but has no memory behind it (a made-up address):
// for the argument checks, which must reject it before anything touches the address.
template <class T>
Buffer<T> fake_device_buffer(std::vector<int64_t> shape, Device device = Device::cuda(0),
                             std::vector<int64_t> strides = {}) {
    return Buffer<T>(reinterpret_cast<T*>(uintptr_t(0x7f0000001000)), std::move(shape), std::move(strides), device);
}

}  // namespace weft::test
