// A mock NVIDIA driver: the driver API functions weft's CUDA runtime calls, on host memory,
// with two "devices". The runtime loads it through WEFT_LIBCUDA, so its GPU code paths
// (contexts, allocation, copies, freeing, streams, module loading and caching, parameter
// packing, launch configuration, error reporting) run on a machine without a GPU.
//
// It is strict where a real driver is: memory calls need a current context, device
// pointers must be live allocations (of the current context's device for the same-device
// copies), more than 48 KiB of dynamic shared memory needs the function attribute. It runs
// two kernels for real, by name (weft_axpy and weft_block_reverse of
// tests/cuda_runtime/ptx_kernels.hpp, computed in C++), hands the others to a hook a test
// may set (weft_mock_set_launch_hook, below), and records every launch.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kNotInitialized = 3, kInvalidContext = 201,
                   kInvalidPtx = 218, kNotFound = 500, kInvalidDevice = 101;
constexpr int kDevices = 2;
constexpr size_t kTotalMemory = size_t(1) << 30;

struct Context {
    int device;
};
Context g_contexts[kDevices] = {{0}, {1}};

struct Allocation {
    size_t bytes;
    int device;
};

struct Function;
struct Module {
    std::string ptx;
    int device;
    std::vector<std::unique_ptr<Function>> functions;  // freed with the module, as the driver's are
};
struct Function {
    Module* module;
    std::string name;
    int max_dynamic_shared = 48 * 1024;
};

struct State {
    std::mutex mutex;
    bool initialized = false;
    std::map<uintptr_t, Allocation> allocations;
    size_t allocated[kDevices] = {};
    int module_loads = 0;
    int launches = 0;
    // "name grid gx,gy,gz block bx,by,bz smem S stream P device D", written without
    // allocating (tests count the runtime's heap allocations around a launch).
    char last_launch[256] = {};
    int streams_live = 0;
    int events_live = 0;
};

struct Event {
    int device;
    bool recorded = false;
    std::chrono::steady_clock::time_point when;
};
State& state() {
    static State s;
    return s;
}
thread_local Context* t_current = nullptr;

// The allocation holding [p, p + bytes), or null.
const Allocation* find(uintptr_t p, size_t bytes) {
    auto& a = state().allocations;
    auto it = a.upper_bound(p);
    if (it == a.begin()) return nullptr;
    --it;
    if (p + bytes > it->first + it->second.bytes) return nullptr;
    return &it->second;
}

// A device pointer of the current context's device, or an error code.
CUresult check_device_ptr(unsigned long long p, size_t bytes) {
    if (!t_current) return kInvalidContext;
    const Allocation* a = find(uintptr_t(p), bytes);
    if (!a) return kInvalidValue;
    return a->device == t_current->device ? kSuccess : kInvalidValue;
}

const char* error_name(CUresult rc) {
    switch (rc) {
        case kSuccess: return "CUDA_SUCCESS";
        case kInvalidValue: return "CUDA_ERROR_INVALID_VALUE";
        case kOutOfMemory: return "CUDA_ERROR_OUT_OF_MEMORY";
        case kNotInitialized: return "CUDA_ERROR_NOT_INITIALIZED";
        case kInvalidContext: return "CUDA_ERROR_INVALID_CONTEXT";
        case kInvalidDevice: return "CUDA_ERROR_INVALID_DEVICE";
        case kInvalidPtx: return "CUDA_ERROR_INVALID_PTX";
        case kNotFound: return "CUDA_ERROR_NOT_FOUND";
        default: return nullptr;
    }
}

template <class T>
T param(void** params, int i) {
    T v;
    std::memcpy(&v, params[i], sizeof v);
    return v;
}

}  // namespace

extern "C" {

// What the tests read back (through dlsym on the same library).
int weft_mock_module_loads() { return state().module_loads; }
int weft_mock_launches() { return state().launches; }
const char* weft_mock_last_launch() { return state().last_launch; }
size_t weft_mock_live_allocations() { return state().allocations.size(); }
int weft_mock_live_streams() { return state().streams_live; }
int weft_mock_live_events() { return state().events_live; }

CUresult cuInit(unsigned flags) {
    if (flags != 0) return kInvalidValue;
    state().initialized = true;
    return kSuccess;
}
CUresult cuGetErrorName(CUresult rc, const char** out) {
    *out = error_name(rc);
    return *out ? kSuccess : kInvalidValue;
}
CUresult cuGetErrorString(CUresult rc, const char** out) {
    *out = rc == kOutOfMemory ? "out of memory (mock)" : rc == kInvalidPtx ? "a PTX JIT compilation failed (mock)"
                                                                           : error_name(rc) ? "mock error" : nullptr;
    return *out ? kSuccess : kInvalidValue;
}
CUresult cuDeviceGetCount(int* n) {
    if (!state().initialized) return kNotInitialized;
    *n = kDevices;
    return kSuccess;
}
CUresult cuDeviceGet(int* d, int ordinal) {
    if (ordinal < 0 || ordinal >= kDevices) return kInvalidDevice;
    *d = ordinal;
    return kSuccess;
}
CUresult cuDeviceGetName(char* name, int len, int d) {
    std::snprintf(name, size_t(len), "weft mock GPU %d", d);
    return kSuccess;
}
CUresult cuDeviceGetAttribute(int* v, int attr, int) {
    switch (attr) {
        case 1: *v = 1024; return kSuccess;          // max threads per block
        case 16: *v = 132; return kSuccess;          // multiprocessors
        case 75: *v = 9; return kSuccess;            // compute capability
        case 76: *v = 0; return kSuccess;
        case 97: *v = 227 * 1024; return kSuccess;   // shared memory per block, opt-in
        default: return kInvalidValue;
    }
}
CUresult cuDeviceTotalMem_v2(size_t* bytes, int) {
    *bytes = kTotalMemory;
    return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(Context** ctx, int d) {
    if (d < 0 || d >= kDevices) return kInvalidDevice;
    *ctx = &g_contexts[d];
    return kSuccess;
}
CUresult cuCtxSetCurrent(Context* ctx) {
    t_current = ctx;
    return kSuccess;
}
CUresult cuCtxSynchronize() { return t_current ? kSuccess : kInvalidContext; }
CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
    if (!t_current) return kInvalidContext;
    std::lock_guard lock(state().mutex);
    *total = kTotalMemory;
    *free_bytes = kTotalMemory - state().allocated[t_current->device];
    return kSuccess;
}
CUresult cuMemAlloc_v2(unsigned long long* p, size_t bytes) {
    if (!t_current) return kInvalidContext;
    std::lock_guard lock(state().mutex);
    State& s = state();
    if (bytes == 0) return kInvalidValue;
    if (s.allocated[t_current->device] + bytes > kTotalMemory) return kOutOfMemory;
    void* mem = std::malloc(bytes);
    std::memset(mem, 0xAB, bytes);  // garbage, as real device memory is: weft must zero it
    s.allocations[uintptr_t(mem)] = Allocation{bytes, t_current->device};
    s.allocated[t_current->device] += bytes;
    *p = uintptr_t(mem);
    return kSuccess;
}
CUresult cuMemFree_v2(unsigned long long p) {
    if (!t_current) return kInvalidContext;
    std::lock_guard lock(state().mutex);
    State& s = state();
    auto it = s.allocations.find(uintptr_t(p));
    if (it == s.allocations.end()) return kInvalidValue;
    s.allocated[it->second.device] -= it->second.bytes;
    s.allocations.erase(it);
    std::free(reinterpret_cast<void*>(p));
    return kSuccess;
}
CUresult cuMemsetD8_v2(unsigned long long p, unsigned char v, size_t n) {
    std::lock_guard lock(state().mutex);
    if (CUresult rc = check_device_ptr(p, n)) return rc;
    std::memset(reinterpret_cast<void*>(p), v, n);
    return kSuccess;
}
CUresult cuMemcpyHtoD_v2(unsigned long long dst, const void* src, size_t n) {
    std::lock_guard lock(state().mutex);
    if (CUresult rc = check_device_ptr(dst, n)) return rc;
    std::memcpy(reinterpret_cast<void*>(dst), src, n);
    return kSuccess;
}
CUresult cuMemcpyDtoH_v2(void* dst, unsigned long long src, size_t n) {
    std::lock_guard lock(state().mutex);
    if (CUresult rc = check_device_ptr(src, n)) return rc;
    std::memcpy(dst, reinterpret_cast<const void*>(src), n);
    return kSuccess;
}
CUresult cuMemcpyDtoD_v2(unsigned long long dst, unsigned long long src, size_t n) {
    std::lock_guard lock(state().mutex);
    if (CUresult rc = check_device_ptr(dst, n)) return rc;
    if (CUresult rc = check_device_ptr(src, n)) return rc;
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
    return kSuccess;
}
CUresult cuMemcpyPeer(unsigned long long dst, Context* dst_ctx, unsigned long long src, Context* src_ctx, size_t n) {
    std::lock_guard lock(state().mutex);
    const Allocation* d = find(uintptr_t(dst), n);
    const Allocation* s = find(uintptr_t(src), n);
    if (!d || !s || d->device != dst_ctx->device || s->device != src_ctx->device) return kInvalidValue;
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
    return kSuccess;
}
CUresult cuStreamCreate(void** stream, unsigned flags) {
    if (!t_current || flags != 0) return t_current ? kInvalidValue : kInvalidContext;
    *stream = new Context{t_current->device};  // a stream remembers its device
    ++state().streams_live;
    return kSuccess;
}
CUresult cuStreamDestroy_v2(void* stream) {
    delete static_cast<Context*>(stream);
    --state().streams_live;
    return kSuccess;
}
CUresult cuStreamSynchronize(void*) { return t_current ? kSuccess : kInvalidContext; }
CUresult cuEventCreate(Event** e, unsigned flags) {
    if (!t_current || flags != 0) return t_current ? kInvalidValue : kInvalidContext;
    *e = new Event{t_current->device};
    ++state().events_live;
    return kSuccess;
}
CUresult cuEventRecord(Event* e, void* stream) {
    if (!t_current || t_current->device != e->device) return kInvalidContext;
    if (stream && static_cast<Context*>(stream)->device != e->device) return kInvalidValue;
    e->recorded = true;
    e->when = std::chrono::steady_clock::now();
    return kSuccess;
}
CUresult cuEventSynchronize(Event*) { return t_current ? kSuccess : kInvalidContext; }
CUresult cuEventDestroy_v2(Event* e) {
    delete e;
    --state().events_live;
    return kSuccess;
}
CUresult cuEventElapsedTime_v2(float* ms, Event* start, Event* end) {
    if (!start->recorded || !end->recorded || start->device != end->device) return kInvalidValue;
    *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
    return kSuccess;
}
CUresult cuModuleLoadDataEx(Module** module, const void* image, unsigned n, int* options, void** values) {
    if (!t_current) return kInvalidContext;
    std::string ptx = static_cast<const char*>(image);
    if (ptx.find(".entry") == std::string::npos || ptx.find("fma.rn.q32") != std::string::npos) {
        for (unsigned i = 0; i < n; ++i)
            if (options[i] == 5)  // CU_JIT_ERROR_LOG_BUFFER, its size in the option after it
                std::snprintf(static_cast<char*>(values[i]), 100, "ptxas application ptx input, line 1; error   : "
                                                                  "mock: not a PTX the mock accepts");
        return kInvalidPtx;
    }
    *module = new Module{ptx, t_current->device, {}};
    ++state().module_loads;
    return kSuccess;
}
CUresult cuModuleUnload(Module* m) {
    delete m;
    return kSuccess;
}
CUresult cuModuleGetFunction(Function** f, Module* m, const char* name) {
    if (m->ptx.find(std::string(".entry ") + name + "(") == std::string::npos) return kNotFound;
    m->functions.push_back(std::make_unique<Function>(Function{m, name}));
    *f = m->functions.back().get();
    return kSuccess;
}
CUresult cuFuncSetAttribute(Function* f, int attr, int value) {
    if (attr != 8 || value > 227 * 1024) return kInvalidValue;
    f->max_dynamic_shared = value;
    return kSuccess;
}
// A test's hook, called at every launch that passed the checks above with the kernel's name,
// its module's PTX, grid, block and kernel parameters (as cuLaunchKernel got them); returning
// true means it ran the kernel. tests/cuda_graph/mock runs generated CUDA C in tests/cuda's CPU emulator
// through it, so whole networks run on the mock's memory.
using LaunchHook = bool (*)(const char* name, const char* ptx, const unsigned* grid, const unsigned* block,
                           void** params);
LaunchHook g_launch_hook = nullptr;
void weft_mock_set_launch_hook(LaunchHook hook) { g_launch_hook = hook; }
// The mock's state is this process's memory: a forked child keeps a working copy of it
// (cuda::fork_safe() reads this symbol), so graph::tune can measure on the mock.
void weft_driver_survives_fork() {}

CUresult cuLaunchKernel(Function* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned smem, void* stream, void** params, void** extra) {
    if (!t_current || t_current->device != f->module->device) return kInvalidContext;
    if (stream && static_cast<Context*>(stream)->device != t_current->device) return kInvalidValue;
    if (extra || bx * by * bz > 1024 || int(smem) > f->max_dynamic_shared) return kInvalidValue;
    State& s = state();
    {
        std::lock_guard lock(s.mutex);
        ++s.launches;
        std::snprintf(s.last_launch, sizeof s.last_launch, "%s grid %u,%u,%u block %u,%u,%u smem %u stream %s device %d",
                      f->name.c_str(), gx, gy, gz, bx, by, bz, smem, stream ? "created" : "default", t_current->device);
    }
    if (g_launch_hook) {
        const unsigned grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
        if (g_launch_hook(f->name.c_str(), f->module->ptx.c_str(), grid, block, params)) return kSuccess;
    }
    const uint64_t threads = uint64_t(gx) * gy * gz * bx * by * bz;
    if (f->name == "weft_axpy") {
        auto* x = reinterpret_cast<const float*>(param<uint64_t>(params, 0));
        auto* y = reinterpret_cast<float*>(param<uint64_t>(params, 1));
        const float alpha = param<float>(params, 2);
        const int64_t n = param<int64_t>(params, 3);
        if (threads < uint64_t(n)) return kInvalidValue;  // the grid must cover n
        std::lock_guard lock(s.mutex);
        if (!find(uintptr_t(x), size_t(n) * 4) || !find(uintptr_t(y), size_t(n) * 4)) return 700;
        for (int64_t i = 0; i < n; ++i) y[i] = __builtin_fmaf(alpha, x[i], y[i]);
    } else if (f->name == "weft_block_reverse") {
        auto* out = reinterpret_cast<float*>(param<uint64_t>(params, 0));
        auto* in = reinterpret_cast<const float*>(param<uint64_t>(params, 1));
        if (smem < 61440 + bx * 4) return 700;
        for (unsigned b = 0; b < gx; ++b)
            for (unsigned t = 0; t < bx; ++t) out[b * bx + t] = in[b * bx + bx - 1 - t];
    }
    return kSuccess;
}

}  // extern "C"
