// CUDA kernels and device buffers used wrongly. Kernel's call checks the arguments of a
// CUDA kernel on the host before anything reaches the driver, so these run on every
// machine: the device buffers here are made-up addresses that only the checks see. The
// last tests (bad PTX, a missing kernel) need the driver, and a GPU.
#include <doctest/doctest.h>

#include <string>

#include "cuda_runtime/ptx_kernels.hpp"
#include "weft/weft.hpp"

using namespace weft;
using test::fake_device_buffer;

TEST_CASE("a host buffer passed to a CUDA kernel says to copy it to the device") {
    Kernel axpy = test::make_axpy();
    Buffer<float> x({8}), y({8});
    CHECK_THROWS_WITH_AS(axpy(x, y, 1.f, int64_t(8)),
                         doctest::Contains("kernel 'axpy' runs on a CUDA device but argument 'X' is a host buffer; "
                                           "copy it to the device first with copy_to(Device::cuda(0))"),
                         Error);
    auto xd = fake_device_buffer<float>({8});
    CHECK_THROWS_WITH_AS(axpy(xd, y, 1.f, int64_t(8)), doctest::Contains("argument 'Y' is a host buffer"), Error);
}

TEST_CASE("a CUDA kernel's buffer of the wrong dtype or shape names the argument") {
    Kernel axpy = test::make_axpy();
    auto x = fake_device_buffer<float>({8});
    auto y_int = fake_device_buffer<int32_t>({8});
    CHECK_THROWS_WITH_AS(axpy(x, y_int, 1.f, int64_t(8)),
                         doctest::Contains("argument 'Y' has dtype float32 but a Buffer<int32_t> was passed"), Error);
    auto y9 = fake_device_buffer<float>({9});
    CHECK_THROWS_WITH_AS(axpy(x, y9, 1.f, int64_t(8)),
                         doctest::Contains("argument 'Y' dimension 0 is 'n', which argument 'X' dimension 0 set to 8, "
                                           "but here it is 9"),
                         Error);
    auto y8 = fake_device_buffer<float>({8});
    CHECK_THROWS_WITH_AS(axpy(x, y8, 1.f, int64_t(7)), doctest::Contains("scalar argument 'n' is 'n'"), Error);
    auto x2 = fake_device_buffer<float>({2, 4});
    CHECK_THROWS_WITH_AS(axpy(x2, y8, 1.f, int64_t(8)), doctest::Contains("argument 'X' has 1 dimensions"), Error);
    CHECK_THROWS_WITH_AS(axpy(x, y8, 1.f), doctest::Contains("kernel 'axpy' takes 4 arguments (X, Y, alpha, n)"), Error);
    CHECK_THROWS_WITH_AS(axpy(x, y8, 1.f, 2.5), doctest::Contains("argument 'n' is a scalar of int64 but a double"),
                         Error);
    // A constant dimension.
    Kernel reverse = test::make_block_reverse(512, 256);
    auto in = fake_device_buffer<float>({512}), out = fake_device_buffer<float>({500});
    CHECK_THROWS_WITH_AS(reverse(out, in), doctest::Contains("argument 'Out' dimension 0 must be 512"), Error);
}

TEST_CASE("a CUDA kernel's buffers must be compact and on one device") {
    Kernel axpy = test::make_axpy();
    auto x = fake_device_buffer<float>({8});
    auto strided = fake_device_buffer<float>({8}, Device::cuda(0), {2});
    CHECK_THROWS_WITH_AS(axpy(x, strided, 1.f, int64_t(8)),
                         doctest::Contains("argument 'Y' has strides {2} for shape {8}; a CUDA kernel takes compact"),
                         Error);
    auto other = fake_device_buffer<float>({8}, Device::cuda(1));
    CHECK_THROWS_WITH_AS(axpy(x, other, 1.f, int64_t(8)),
                         doctest::Contains("argument 'Y' is on cuda(1) but the arguments before it are on cuda(0)"),
                         Error);
}

TEST_CASE("a CUDA kernel's dimensions given as expressions are checked") {
    // Out[2 * n] from In[n]: the dimension 2 * n has no host entry to check it.
    ir::Var n("n", i64);
    ir::PrimFunc f;
    f.name = "widen";
    f.args = {test::tensor_arg("Out", f32, {ir::Expr(n) * 2}), test::tensor_arg("In", f32, {n}),
              test::scalar_arg(n, i64)};
    DeviceCode code;
    code.kernel_name = "widen";
    code.ptx = "(not loaded: the checks fail first)";
    code.arch = "sm_75";
    code.grid = {ir::Expr(n), ir::make_int(1), ir::make_int(1)};
    code.block = {ir::make_int(1), ir::make_int(1), ir::make_int(1)};
    Kernel widen(std::make_shared<test::PtxModule>(code), f);
    auto out = fake_device_buffer<float>({15}), in = fake_device_buffer<float>({8});
    CHECK_THROWS_WITH_AS(widen(out, in, int64_t(8)),
                         doctest::Contains("kernel 'widen': argument 'Out' dimension 0 must be n * 2 = 16 but the "
                                           "buffer passed has 15"),
                         Error);
}

TEST_CASE("launch dimensions the arguments do not determine are an error") {
    ir::Var n("n", i64), m("m", i64);
    ir::PrimFunc f;
    f.name = "unbound_grid";
    f.args = {test::tensor_arg("A", f32, {n})};
    DeviceCode code;
    code.kernel_name = "unbound_grid";
    code.ptx = "(not loaded)";
    code.arch = "sm_75";
    code.grid = {ir::Expr(m) + 1, ir::make_int(1), ir::make_int(1)};
    code.block = {ir::make_int(32), ir::make_int(1), ir::make_int(1)};
    Kernel k(std::make_shared<test::PtxModule>(code), f);
    auto a = fake_device_buffer<float>({8});
    CHECK_THROWS_WITH_AS(k(a), doctest::Contains("kernel 'unbound_grid': gridDim.x is m + 1, which the arguments"),
                         Error);
}

TEST_CASE("a device buffer passed to a CPU kernel says to copy it to the host") {
    Tensor A = placeholder({6}, f32, "A");
    Tensor B = compute({6}, [&](Expr i) { return A(i) * 2.f; }, "B");
    Kernel k = build(create_schedule(B), {A, B});
    Buffer<float> b({6});
    auto a = fake_device_buffer<float>({6});
    CHECK_THROWS_WITH_AS(k(a, b), doctest::Contains("runs on the CPU but argument 'A' is a buffer on cuda(0); copy it "
                                                    "to the host first with copy_to(Device::cpu())"),
                         Error);
}

TEST_CASE("copy_from refuses buffers of another dtype or shape") {
    Buffer<float> a({2, 3}), b({3, 2});
    Buffer<double> c({2, 3});
    CHECK_THROWS_WITH_AS(a.copy_from(b), doctest::Contains("the source has shape {3, 2} but the destination {2, 3}"),
                         Error);
    CHECK_THROWS_WITH_AS(a.copy_from(c),
                         doctest::Contains("the source is a Buffer<double> but the destination a Buffer<float>"), Error);
    CHECK_THROWS_WITH_AS(a.copy_from(BufferRef()), doctest::Contains("undefined"), Error);
    // A strided device buffer (wrapped device memory) cannot be copied.
    auto strided = fake_device_buffer<float>({2, 3}, Device::cuda(0), {6, 2});
    CHECK_THROWS_WITH_AS(a.copy_from(strided), doctest::Contains("only compact device buffers can be copied"), Error);
}

TEST_CASE("element access on a device buffer says to copy it to the host") {
    auto d = fake_device_buffer<int32_t>({4});
    CHECK_THROWS_WITH_AS(d(0), doctest::Contains("element access on a buffer of shape {4} on cuda(0): the host "
                                                 "cannot access device memory; copy it to the host with "
                                                 "copy_to(Device::cpu())"),
                         Error);
}

TEST_CASE("a device that does not exist is an error, not a crash") {
    const std::string expect = cuda::device_count() == 0 ? "no CUDA device" : "does not exist";
    CHECK_THROWS_WITH_AS(Buffer<float>({4}, Device::cuda(64)), doctest::Contains(expect.c_str()), Error);
    CHECK_THROWS_WITH_AS(cuda::Stream::create(Device::cuda(64)), doctest::Contains(expect.c_str()), Error);
}

TEST_CASE("PTX the driver cannot compile reports the JIT log and the kernel name") {
    if (!test::have_cuda_device()) return;
    std::string bad = test::axpy_ptx;
    bad.replace(bad.find("fma.rn.f32"), 10, "fma.rn.q32");  // no such instruction type
    Kernel axpy = test::make_axpy(bad);
    Buffer<float> x({4}, Device::cuda(0)), y({4}, Device::cuda(0));
    try {
        axpy(x, y, 1.f, int64_t(4));
        FAIL("bad PTX was loaded");
    } catch (const Error& e) {
        const std::string message = e.what();
        INFO(message);
        CHECK(message.find("loading the PTX of kernel 'axpy'") != std::string::npos);
        CHECK(message.find("CUDA_ERROR_") != std::string::npos);
        CHECK(message.find("JIT log") != std::string::npos);
    }
}

TEST_CASE("a kernel name the PTX does not define is an error") {
    if (!test::have_cuda_device()) return;
    Kernel axpy = test::make_axpy(test::axpy_ptx, "weft_no_such_kernel");
    Buffer<float> x({4}, Device::cuda(0)), y({4}, Device::cuda(0));
    CHECK_THROWS_WITH_AS(axpy(x, y, 1.f, int64_t(4)),
                         doctest::Contains("its PTX has no kernel named 'weft_no_such_kernel'"), Error);
}

TEST_CASE("a launch over the thread limit is an error naming the kernel") {
    if (!test::have_cuda_device()) return;
    ir::PrimFunc f;
    f.name = "too_wide";
    f.args = {test::tensor_arg("X", f32, {ir::make_int(4)}), test::tensor_arg("Y", f32, {ir::make_int(4)}),
              test::scalar_arg(ir::Var("alpha", f32), f32), test::scalar_arg(ir::Var("n", i64), i64)};
    DeviceCode code;
    code.kernel_name = "weft_axpy";
    code.ptx = test::axpy_ptx;
    code.arch = "sm_75";
    code.grid = {ir::make_int(1), ir::make_int(1), ir::make_int(1)};
    code.block = {ir::make_int(2048), ir::make_int(1), ir::make_int(1)};
    Kernel k(std::make_shared<test::PtxModule>(code), f);
    Buffer<float> x({4}, Device::cuda(0)), y({4}, Device::cuda(0));
    CHECK_THROWS_WITH_AS(k(x, y, 1.f, int64_t(4)),
                         doctest::Contains("kernel 'too_wide': launch grid (1, 1, 1), block (2048, 1, 1) has 2048 "
                                           "threads per block"),
                         Error);
}

TEST_CASE("a graph given a device buffer copies it, or says there is no CUDA device") {
    if (cuda::device_count() > 0) {
        MESSAGE("skipped: the made-up device address would reach the driver on a machine with a GPU");
        return;
    }
    graph::Graph g;
    graph::Value x = g.input("x", {4});
    g.output(g.relu(x), "y");
    graph::Module m = graph::build(g);
    CHECK_THROWS_WITH_AS(m.set_input("x", fake_device_buffer<float>({4})), doctest::Contains("no CUDA device"), Error);
    graph::Graph g2;
    CHECK_THROWS_WITH_AS(g2.constant("w", fake_device_buffer<float>({4})), doctest::Contains("no CUDA device"), Error);
    CHECK_THROWS_WITH_AS(g2.constant_shared("w", fake_device_buffer<float>({4})), doctest::Contains("no CUDA device"),
                         Error);
}
