// GPU schedules that cannot run as one CUDA kernel: lowering for Target::cuda() refuses each
// with a weft::Error naming the kernel, the stage and the loop, and saying what to do.
// (Lowering needs no GPU and no NVRTC; the last test compiles and skips without NVRTC.)
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

#include "weft/codegen/cuda/codegen_cuda.hpp"
#include "weft/weft.hpp"

using namespace weft;

namespace {

LowerOptions for_cuda() {
    LowerOptions o;
    o.target = Target::cuda();
    return o;
}

// B[i, j] = A[i, j] * 2 over rows x cols.
struct Scale {
    Tensor A, B;
    Schedule s;
    Scale(int64_t rows, int64_t cols) {
        A = placeholder({rows, cols}, f32, "A");
        B = compute({rows, cols}, [&](Expr i, Expr j) { return A(i, j) * 2.0f; }, "B");
        s = create_schedule(B);
    }
    void lower_it() { lower(s, {A, B}, for_cuda()); }
    // One block per row, one thread per column: a schedule the GPU checks accept.
    void bind_rows_and_columns() {
        s[B].bind(B.axis(0), block_x());
        s[B].bind(B.axis(1), thread_x());
    }
};

}  // namespace

TEST_CASE("cuda a loop outside every bound loop names the stage and the loop") {
    Scale k(64, 256);
    k.s[k.B].bind(k.B.axis(1), thread_x());  // rows left as a serial loop around the kernel
    CHECK_THROWS_WITH_AS(k.lower_it(), doctest::Contains("loop 'i' of stage 'B' is outside every blockIdx/threadIdx loop"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(k.lower_it(), doctest::Contains("bind it to block_x()"), weft::Error);
    Scale none(64, 256);
    CHECK_THROWS_WITH_AS(none.lower_it(), doctest::Contains("loop 'i' of stage 'B'"), weft::Error);
}

TEST_CASE("cuda a parallel loop is refused with bind as the fix") {
    Scale k(64, 256);
    k.s[k.B].bind(k.B.axis(0), block_x());
    k.s[k.B].parallel(k.B.axis(1));
    CHECK_THROWS_WITH_AS(k.lower_it(), doctest::Contains("loop 'j' of stage 'B' is parallel(), which is for CPU threads"),
                         weft::Error);
}

TEST_CASE("cuda a prefetch is refused with shared memory as the fix") {
    Scale k(64, 256);
    k.bind_rows_and_columns();
    k.s[k.B].prefetch(k.A, k.B.axis(0), 1);
    CHECK_THROWS_WITH_AS(k.lower_it(), doctest::Contains("stage 'B' has a prefetch(), which is a CPU schedule primitive"),
                         weft::Error);
}

TEST_CASE("cuda a kernel lowered for the GPU is not built for the CPU") {
    Scale k(64, 256);
    k.bind_rows_and_columns();
    ir::PrimFunc f = lower(k.s, {k.A, k.B}, for_cuda());
    CHECK_THROWS_WITH_AS(build(f, Target::host()), doctest::Contains("kernel 'B' was lowered for a GPU"), weft::Error);
}

TEST_CASE("cuda a thread block over 1024 threads is refused") {
    Scale k(64, 2048);
    k.bind_rows_and_columns();
    CHECK_THROWS_WITH_AS(k.lower_it(), doctest::Contains("threadIdx.x has extent 2048, over the device limit of 1024"),
                         weft::Error);
    Scale k2(64, 64);
    k2.s[k2.B].bind(k2.B.axis(0), thread_y());
    k2.s[k2.B].bind(k2.B.axis(1), thread_x());
    CHECK_THROWS_WITH_AS(k2.lower_it(), doctest::Contains("a block has 4096 threads"), weft::Error);
}

TEST_CASE("cuda a grid over the device limit is refused") {
    Scale k(70000, 32);
    k.s[k.B].bind(k.B.axis(0), block_y());
    k.s[k.B].bind(k.B.axis(1), thread_x());
    CHECK_THROWS_WITH_AS(k.lower_it(), doctest::Contains("blockIdx.y has extent 70000, over the device's grid limit of 65535"),
                         weft::Error);
}

TEST_CASE("cuda one thread axis bound with two different extents names both") {
    Scale k(64, 256);
    Tensor AS = k.s.cache_read(k.A, "shared", {k.B});
    auto [jo, ji] = k.s[k.B].split(k.B.axis(1), 64);
    k.s[k.B].bind(k.B.axis(0), block_x());
    k.s[k.B].bind(ji, thread_x());  // 64 threads
    k.s[AS].compute_at(k.s[k.B], jo);
    auto [o, fx] = k.s[AS].split(AS.op()->axis[1], 32);
    k.s[AS].bind(fx, thread_x());  // 32
    CHECK_THROWS_WITH_AS(k.lower_it(),
                         doctest::Contains("loop 'j.inner' of stage 'B' is bound to threadIdx.x with extent 64, but loop "
                                           "'ax1.shared.inner' of stage 'A.shared' is bound to threadIdx.x with extent 32"),
                         weft::Error);
}

TEST_CASE("cuda shared memory over 48 KiB is refused with the buffers' sizes") {
    Scale k(256, 16384);
    Tensor AS = k.s.cache_read(k.A, "shared", {k.B});
    auto [jo, ji] = k.s[k.B].split(k.B.axis(1), 16384);
    k.s[k.B].bind(k.B.axis(0), block_x());
    k.s[k.B].bind(jo, block_y());
    auto [jio, jii] = k.s[k.B].split(ji, 256);
    k.s[k.B].bind(jii, thread_x());
    k.s[AS].compute_at(k.s[k.B], jo);  // a 16384-float row in shared memory: 64 KiB
    CHECK_THROWS_WITH_AS(k.lower_it(), doctest::Contains("its shared buffers need 65536 bytes (A.shared 65536 B)"),
                         weft::Error);
}

TEST_CASE("cuda an intermediate stage in global memory is refused") {
    Tensor A = placeholder({1024}, f32, "A");
    Tensor T = compute({1024}, [&](Expr i) { return A(i) + 1.0f; }, "T");
    Tensor B = compute({1024}, [&](Expr i) { return T(i) * 2.0f; }, "B");
    Schedule s = create_schedule(B);
    auto [bx, tx] = s[B].split(B.axis(0), 128);
    s[B].bind(bx, block_x());
    s[B].bind(tx, thread_x());
    s[T].compute_at(s[B], tx);  // scope left "global"
    CHECK_THROWS_WITH_AS(lower(s, {A, B}, for_cuda()), doctest::Contains("stage 'T' is stored in global memory"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(lower(s, {A, B}, for_cuda()), doctest::Contains("set_scope(\"local\")"), weft::Error);
}

TEST_CASE("cuda double_buffer needs a shared stage computed at a loop") {
    Scale k(64, 256);
    Tensor AL = k.s.cache_read(k.A, "local", {k.B});
    k.bind_rows_and_columns();
    CHECK_THROWS_WITH_AS(k.s[k.B].double_buffer(), doctest::Contains("double_buffer: 'B' is not an intermediate stage"),
                         weft::Error);
    k.s[AL].compute_at(k.s[k.B], k.B.axis(1));
    k.s[AL].double_buffer();
    CHECK_THROWS_WITH_AS(k.lower_it(), doctest::Contains("double_buffer on stage 'A.local' needs a \"shared\" stage"),
                         weft::Error);
}

TEST_CASE("cuda a thread extent that is not a constant is refused") {
    Var n("n");
    Tensor A = placeholder({n}, f32, "A");
    Tensor B = compute({n}, [&](Expr i) { return A(i) + 1.0f; }, "B");
    Schedule s = create_schedule(B);
    auto [bx, tx] = s[B].split_nparts(B.axis(0), 64);
    s[B].bind(bx, block_x());
    s[B].bind(tx, thread_x());
    CHECK_THROWS_WITH_AS(lower(s, {A, B, n}, for_cuda()), doctest::Contains("which is not a constant"), weft::Error);
    // A symbolic dimension that is not passed as a scalar.
    Schedule s2 = create_schedule(B);
    auto [bx2, tx2] = s2[B].split(B.axis(0), 64);
    s2[B].bind(bx2, block_x());
    s2[B].bind(tx2, thread_x());
    CHECK_THROWS_WITH_AS(lower(s2, {A, B}, for_cuda()), doctest::Contains("pass the variable 'n' as a scalar argument"),
                         weft::Error);
}

TEST_CASE("cuda an NVRTC compile error carries the kernel name and NVRTC's log") {
    if (!codegen::nvrtc_available()) {
        MESSAGE("skipped: NVRTC is not available");
        return;
    }
    Tensor A = placeholder({256}, f32, "A");
    Tensor B = compute({256}, [&](Expr i) { return call_extern(f32, "no_such_device_function", {A(i)}); }, "B");
    Schedule s = create_schedule(B);
    auto [bx, tx] = s[B].split(B.axis(0), 64);
    s[B].bind(bx, block_x());
    s[B].bind(tx, thread_x());
    CHECK_THROWS_WITH_AS(build(s, {A, B}, Target::cuda()), doctest::Contains("CUDA kernel 'B': NVRTC failed to compile it"),
                         weft::Error);
    CHECK_THROWS_WITH_AS(build(s, {A, B}, Target::cuda()), doctest::Contains("no_such_device_function"), weft::Error);
    CHECK_THROWS_WITH_AS(build(s, {A, B}, Target::cuda("compute90")), doctest::Contains("is not of the form sm_XY"),
                         weft::Error);
}

// NVRTC is opened once per process, so the missing-library case runs in a child process:
// this test binary again, with WEFT_NVRTC_LIBRARY naming a file that does not exist.
TEST_CASE("cuda without libnvrtc building for CUDA says what is missing") {
    const char* child = std::getenv("WEFT_TEST_NVRTC_CHILD");
    if (child) {
        Tensor A = placeholder({256}, f32, "A");
        Tensor B = compute({256}, [&](Expr i) { return A(i) + 1.0f; }, "B");
        Schedule s = create_schedule(B);
        auto [bx, tx] = s[B].split(B.axis(0), 64);
        s[B].bind(bx, block_x());
        s[B].bind(tx, thread_x());
        std::string why;
        CHECK(!codegen::nvrtc_available(&why));
        try {
            build(s, {A, B}, Target::cuda());
            std::ofstream(child) << "no error";
        } catch (const weft::Error& e) {
            std::ofstream(child) << e.what();
        }
        return;
    }
    if (!codegen::nvrtc_available()) {
        MESSAGE("skipped: NVRTC is not available");
        return;
    }
    std::string out = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/weft_nvrtc_child_" +
                      std::to_string(::getpid()) + ".txt";
    char self[4096] = {};
    REQUIRE(::readlink("/proc/self/exe", self, sizeof(self) - 1) > 0);
    std::string cmd = "WEFT_NVRTC_LIBRARY=/nonexistent/libnvrtc.so WEFT_TEST_NVRTC_CHILD=" + out + " '" +
                      std::string(self) + "' -tc='cuda without libnvrtc*' > /dev/null 2>&1";
    CHECK(std::system(cmd.c_str()) == 0);
    std::ifstream in(out);
    std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::remove(out.c_str());
    CHECK(message.find("CUDA kernel 'B': cannot compile: libnvrtc") != std::string::npos);
    CHECK(message.find("was not found; tried /nonexistent/libnvrtc.so") != std::string::npos);
    CHECK(message.find("set CUDA_PATH or WEFT_NVRTC_LIBRARY") != std::string::npos);
}
