// Runs generated CUDA C on the CPU, to check what the kernels compute on machines without a
// GPU. The source is compiled as C++ with a small prelude (threadIdx/blockIdx are
// thread_local, __shared__ arrays are static locals, so all threads of a block see one copy,
// __syncthreads() is a std::barrier, float4 & co. are plain structs) into a shared library;
// each block of the grid then runs with one std::thread per CUDA thread. A missing barrier
// shows up as a race (not reliably: it is a real race on real threads), a wrong index or
// bound inference as wrong numbers. float16/bfloat16 kernels are not emulated.
//
// Needs a C++ compiler at test time ($CXX, else clang++-19, clang++, g++); without one the
// tests report "skipped: ".
#pragma once
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "weft/ir/arith/simplify.hpp"
#include "weft/ir/visitor.hpp"
#include "weft/weft.hpp"

namespace weft_cuda_test {

inline const char* emulator_prelude() {
    return R"(
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <barrier>
struct weft_dim3 { unsigned x = 0, y = 0, z = 0; };
thread_local weft_dim3 threadIdx, blockIdx;
std::barrier<>* weft_block_barrier;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static
inline void __syncthreads() { weft_block_barrier->arrive_and_wait(); }
inline void __trap() { abort(); }
template <class A, class B> inline auto min(A a, B b) { return a < b ? a : b; }
template <class A, class B> inline auto max(A a, B b) { return a < b ? b : a; }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float __int_as_float(unsigned v) { float f; memcpy(&f, &v, 4); return f; }
inline int __float_as_int(float f) { int v; memcpy(&v, &f, 4); return v; }
inline double __longlong_as_double(unsigned long long v) { double d; memcpy(&d, &v, 8); return d; }
inline long long __double_as_longlong(double d) { long long v; memcpy(&v, &d, 8); return v; }
#define WEFT_VEC(T, N2, N4)                                                              \
    struct N2 { T x, y; };                                                               \
    struct N4 { T x, y, z, w; };                                                         \
    inline N2 make_##N2(T x, T y) { return {x, y}; }                                     \
    inline N4 make_##N4(T x, T y, T z, T w) { return {x, y, z, w}; }
WEFT_VEC(float, float2, float4)
WEFT_VEC(int, int2, int4)
WEFT_VEC(unsigned, uint2, uint4)
)";
}

class EmulatedKernel {
public:
    // Compiles `dc.source` for the CPU; `ok()` is false (with the reason in why()) when no
    // compiler works.
    EmulatedKernel(const weft::DeviceCode& dc, const weft::ir::PrimFunc& f) : dc_(dc) {
        std::string dir = temp_dir();
        std::string src = dir + "/kernel.cpp", lib = dir + "/kernel.so";
        std::ofstream(src) << emulator_prelude() << dc.source << launcher(f);
        std::string cxx;
        for (const char* c : {static_cast<const char*>(std::getenv("CXX")), "clang++-19", "clang++", "g++"}) {
            if (!c || !*c) continue;
            std::string cmd = std::string(c) + " -std=c++20 -O1 -w -shared -fPIC -o " + lib + " " + src + " 2> " + dir + "/log";
            if (std::system(cmd.c_str()) == 0) {
                cxx = c;
                break;
            }
        }
        if (cxx.empty()) {
            std::ifstream log(dir + "/log");
            why_ = "no C++ compiler could build the emulated kernel: " +
                   std::string(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>()).substr(0, 2000);
            std::filesystem::remove_all(dir);
            return;
        }
        handle_ = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
        std::filesystem::remove_all(dir);  // a loaded library needs no file
        if (!handle_) {
            why_ = dlerror();
            return;
        }
        launch_ = reinterpret_cast<void (*)(void**)>(dlsym(handle_, "weft_emulated_launch"));
        set_barrier_ = reinterpret_cast<void (*)(void*)>(dlsym(handle_, "weft_set_barrier"));
        set_index_ = reinterpret_cast<void (*)(unsigned, unsigned, unsigned, unsigned, unsigned, unsigned)>(
            dlsym(handle_, "weft_set_index"));
        make_barrier_ = reinterpret_cast<void* (*)(long)>(dlsym(handle_, "weft_make_barrier"));
        free_barrier_ = reinterpret_cast<void (*)(void*)>(dlsym(handle_, "weft_free_barrier"));
        if (!launch_ || !set_barrier_ || !set_index_ || !make_barrier_) why_ = "emulated kernel lacks its entry points";
    }
    ~EmulatedKernel() {
        if (handle_) dlclose(handle_);
    }
    bool ok() const { return why_.empty(); }
    const std::string& why() const { return why_; }

    // Runs the grid. `args`: one pointer per kernel argument (a tensor's data, or a pointer
    // to a scalar's value); `scalars` give the values of the launch extents' variables.
    void run(std::vector<void*> args, const std::vector<std::pair<weft::Var, int64_t>>& scalars = {}) {
        auto eval = [&](const weft::Expr& e) {
            std::unordered_map<weft::Var, weft::Expr, weft::ir::VarHash, weft::ir::VarEq> m;
            for (auto& [v, x] : scalars) m[v] = weft::ir::make_int(x);
            int64_t value = 0;
            REQUIRE(weft::ir::as_const_int(weft::ir::arith::simplify(weft::ir::substitute(e, m)), &value));
            return unsigned(value);
        };
        unsigned g[3], b[3];
        for (int d = 0; d < 3; ++d) {
            g[d] = eval(dc_.grid[size_t(d)]);
            b[d] = eval(dc_.block[size_t(d)]);
        }
        long threads = long(b[0]) * b[1] * b[2];
        for (unsigned bz = 0; bz < g[2]; ++bz)
            for (unsigned by = 0; by < g[1]; ++by)
                for (unsigned bx = 0; bx < g[0]; ++bx) {
                    void* barrier = make_barrier_(threads);
                    set_barrier_(barrier);
                    std::vector<std::thread> pool;
                    for (unsigned tz = 0; tz < b[2]; ++tz)
                        for (unsigned ty = 0; ty < b[1]; ++ty)
                            for (unsigned tx = 0; tx < b[0]; ++tx)
                                pool.emplace_back([&, tx, ty, tz] {
                                    set_index_(tx, ty, tz, bx, by, bz);
                                    launch_(args.data());
                                });
                    for (auto& t : pool) t.join();
                    free_barrier_(barrier);
                }
    }

private:
    const weft::DeviceCode& dc_;
    void* handle_ = nullptr;
    void (*launch_)(void**) = nullptr;
    void (*set_barrier_)(void*) = nullptr;
    void (*set_index_)(unsigned, unsigned, unsigned, unsigned, unsigned, unsigned) = nullptr;
    void* (*make_barrier_)(long) = nullptr;
    void (*free_barrier_)(void*) = nullptr;
    std::string why_;

    static std::string temp_dir() {
        std::string t = (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + std::string("/weft_cuda_emu_XXXXXX");
        std::vector<char> buf(t.begin(), t.end());
        buf.push_back('\0');
        REQUIRE(mkdtemp(buf.data()) != nullptr);
        return buf.data();
    }
    static std::string c_type(weft::DataType t) {
        if (t == weft::f32) return "float";
        if (t == weft::f64) return "double";
        if (t == weft::i32) return "int";
        if (t == weft::i64) return "long long";
        if (t == weft::i8) return "signed char";
        if (t == weft::u8) return "unsigned char";
        FAIL("emulator: unsupported type " << t.str());
        return {};
    }
    std::string launcher(const weft::ir::PrimFunc& f) const {
        std::string call = dc_.kernel_name + "(";
        for (size_t i = 0; i < f.args.size(); ++i) {
            auto& a = f.args[i];
            std::string t = c_type(a.type);
            call += (i ? ", " : "") + (a.kind == weft::ir::KernelArg::Kind::Tensor
                                           ? "(" + t + "*)args[" + std::to_string(i) + "]"
                                           : "*(" + t + "*)args[" + std::to_string(i) + "]");
        }
        return "\nextern \"C\" void weft_emulated_launch(void** args) { " + call + "); }\n"
               "extern \"C\" void weft_set_barrier(void* b) { weft_block_barrier = (std::barrier<>*)b; }\n"
               "extern \"C\" void* weft_make_barrier(long n) { return new std::barrier<>(n); }\n"
               "extern \"C\" void weft_free_barrier(void* b) { delete (std::barrier<>*)b; }\n"
               "extern \"C\" void weft_set_index(unsigned tx, unsigned ty, unsigned tz, unsigned bx, unsigned by, "
               "unsigned bz) { threadIdx = {tx, ty, tz}; blockIdx = {bx, by, bz}; }\n";
    }
};

// The emulated kernel, or null after reporting the test skipped.
inline std::unique_ptr<EmulatedKernel> emulate(const weft::Kernel& k) {
    auto e = std::make_unique<EmulatedKernel>(*k.module()->device_code(), k.signature());
    if (e->ok()) return e;
    MESSAGE("skipped: " << e->why());
    return nullptr;
}

}  // namespace weft_cuda_test
