// Shared by the tests of topi's GPU schedules: build for Target::cuda() (NVRTC, no GPU
// needed), check the generated CUDA C's structure, and, with a GPU, run the kernel on random
// data against the same computation built for the CPU.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "../cuda/cuda_emulator.hpp"
#include "weft/codegen/cuda/codegen_cuda.hpp"
#include "weft/runtime/cuda/cuda.hpp"
#include "weft/topi/cuda.hpp"
#include "weft/topi/topi.hpp"
#include "weft/weft.hpp"

namespace cuda_topi_test {

using namespace weft;

inline int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

struct Compiled {
    Kernel kernel;
    std::string source, ptx;
};

// build(s, args, Target::cuda()): the CUDA C NVRTC compiled for sm_90, with its PTX.
inline Compiled compile(const Schedule& s, const std::vector<Argument>& args) {
    Compiled c{build(s, args, Target::cuda("sm_90")), {}, {}};
    const DeviceCode* dc = c.kernel.module()->device_code();
    REQUIRE(dc != nullptr);
    c.source = dc->source;
    c.ptx = dc->ptx;
    CHECK(dc->arch == "sm_90");
    CHECK(c.ptx.find(".entry") != std::string::npos);
    if (std::getenv("WEFT_TEST_PRINT_CUDA")) std::cout << c.source << "\n";
    return c;
}

inline bool have_gpu() { return weft::cuda::device_count() > 0; }

// For kernels nothing else can run here: reports the GPU part skipped.
inline void report_no_gpu() {
    std::cout << "skipped: no CUDA device (" << weft::cuda::unavailable_reason() << "); the kernel compiled but did not run\n";
}

inline void compare(const Buffer<float>& want, const Buffer<float>& have, double rtol, double atol) {
    double worst = 0;
    int64_t bad = 0;
    for (int64_t i = 0; i < want.size(); ++i) {
        double w = want.data()[i], h = have.data()[i];
        double err = std::abs(w - h), allowed = atol + rtol * std::abs(w);
        worst = std::max(worst, err);
        bad += !(err <= allowed);
    }
    INFO("elements out of tolerance: " << bad << " of " << want.size() << "; worst absolute error " << worst);
    CHECK(bad == 0);
}

// Runs `gpu` on copies of `inputs` on the device and `reference` (built for the CPU) on the
// host, and compares the last argument of each (the output) within rtol/atol.
inline void run_against_cpu(const Kernel& gpu, const Kernel& reference, const std::vector<BufferRef>& inputs,
                            const BufferRef& out_host, double rtol, double atol) {
    std::vector<BufferRef> dev;
    for (auto& b : inputs) dev.push_back(b.copy_to(Device::cuda(0)));
    BufferRef out_dev = BufferRef::allocate(out_host.dtype(), out_host.shape(), Device::cuda(0));
    std::vector<KernelArgValue> gargs(dev.begin(), dev.end()), cargs(inputs.begin(), inputs.end());
    gargs.push_back(out_dev);
    cargs.push_back(out_host);
    gpu.call(gargs);
    reference.call(cargs);
    BufferRef got = BufferRef::allocate(out_host.dtype(), out_host.shape());
    got.copy_from(out_dev);
    compare(Buffer<float>(out_host), Buffer<float>(got), rtol, atol);
}

inline Buffer<float> random_buffer(const Tensor& t, uint64_t seed) {
    std::vector<int64_t> shape;
    for (auto& e : t.shape()) {
        int64_t v = 0;
        REQUIRE(ir::as_const_int(e, &v));
        shape.push_back(v);
    }
    return Buffer<float>::random(shape, -1.0f, 1.0f, seed);
}

inline Buffer<float> output_buffer(const Tensor& t) {
    std::vector<int64_t> shape;
    for (auto& e : t.shape()) {
        int64_t v = 0;
        REQUIRE(ir::as_const_int(e, &v));
        shape.push_back(v);
    }
    return Buffer<float>(shape);
}

// The whole check for float32 computations: build the GPU schedule (already applied to s),
// check it compiled; then run it on random inputs against the computation's default CPU
// build: on the GPU when there is one, else the generated CUDA C in tests/cuda's CPU
// emulator (one thread per CUDA thread, real barriers), which checks indices, bounds and
// barriers (races not reliably).
inline Compiled check_float_kernel(const Schedule& s, const std::vector<Tensor>& inputs, const Tensor& out,
                                   double rtol = 1e-4, double atol = 1e-5) {
    std::vector<Argument> args(inputs.begin(), inputs.end());
    args.push_back(out);
    Compiled c = compile(s, args);
    Kernel cpu = build(create_schedule(out), args);
    std::vector<BufferRef> host;
    uint64_t seed = 11;
    for (auto& t : inputs) host.push_back(random_buffer(t, seed++));
    if (have_gpu()) {
        run_against_cpu(c.kernel, cpu, host, output_buffer(out), rtol, atol);
        return c;
    }
    auto emu = weft_cuda_test::emulate(c.kernel);  // reports the test skipped when it cannot
    if (!emu) return c;
    Buffer<float> want = output_buffer(out), got = output_buffer(out);
    std::vector<KernelArgValue> cargs(host.begin(), host.end());
    cargs.push_back(want);
    cpu.call(cargs);
    std::vector<void*> ptrs;
    for (auto& b : host) ptrs.push_back(b.data());
    ptrs.push_back(got.data());
    emu->run(ptrs);
    compare(want, got, rtol, atol);
    return c;
}

}  // namespace cuda_topi_test
