// The CUDA driver API, loaded from libcuda.so.1 with dlopen at first use.
//
// Why dlopen and not -lcuda: a binary linked against libcuda does not even start on a
// machine without the NVIDIA driver (and the toolkit's stub library only says
// CUDA_ERROR_STUB_LIBRARY), while weft must run everywhere and say clearly that no device
// is there. So the few driver types and functions weft uses are declared here by hand,
// with the ABI-versioned symbol names cuda.h maps its macros to (cuMemAlloc ->
// cuMemAlloc_v2, ...). tests/cuda_runtime checks these declarations against cuda.h when
// the toolkit is installed.
#pragma once
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "weft/ir/error.hpp"

namespace weft::cuda::detail {

// Driver types (cuda.h: CUresult, CUdevice, CUdeviceptr_v2, CUcontext, ...).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;

// The enumerators weft passes (cuda.h's names and values).
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_DEINITIALIZED = 4;
inline constexpr CUresult CUDA_ERROR_STUB_LIBRARY = 34;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
inline constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
inline constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
inline constexpr unsigned CU_STREAM_DEFAULT = 0;
inline constexpr unsigned CU_EVENT_DEFAULT = 0;

// The driver functions weft calls, by the symbol each is looked up under.
#define WEFT_CUDA_DRIVER_FUNCTIONS(X)                                                                        \
    X(cuInit, CUresult (*)(unsigned))                                                                        \
    X(cuGetErrorName, CUresult (*)(CUresult, const char**))                                                  \
    X(cuGetErrorString, CUresult (*)(CUresult, const char**))                                                \
    X(cuDeviceGetCount, CUresult (*)(int*))                                                                  \
    X(cuDeviceGet, CUresult (*)(CUdevice*, int))                                                             \
    X(cuDeviceGetName, CUresult (*)(char*, int, CUdevice))                                                   \
    X(cuDeviceGetAttribute, CUresult (*)(int*, int, CUdevice))                                               \
    X(cuDeviceTotalMem_v2, CUresult (*)(size_t*, CUdevice))                                                  \
    X(cuDevicePrimaryCtxRetain, CUresult (*)(CUcontext*, CUdevice))                                          \
    X(cuCtxSetCurrent, CUresult (*)(CUcontext))                                                              \
    X(cuCtxSynchronize, CUresult (*)())                                                                      \
    X(cuMemGetInfo_v2, CUresult (*)(size_t*, size_t*))                                                       \
    X(cuMemAlloc_v2, CUresult (*)(CUdeviceptr*, size_t))                                                     \
    X(cuMemFree_v2, CUresult (*)(CUdeviceptr))                                                               \
    X(cuMemsetD8_v2, CUresult (*)(CUdeviceptr, unsigned char, size_t))                                      \
    X(cuMemcpyHtoD_v2, CUresult (*)(CUdeviceptr, const void*, size_t))                                       \
    X(cuMemcpyDtoH_v2, CUresult (*)(void*, CUdeviceptr, size_t))                                             \
    X(cuMemcpyDtoD_v2, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t))                                       \
    X(cuMemcpyPeer, CUresult (*)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t))                   \
    X(cuStreamCreate, CUresult (*)(CUstream*, unsigned))                                                     \
    X(cuStreamDestroy_v2, CUresult (*)(CUstream))                                                            \
    X(cuStreamSynchronize, CUresult (*)(CUstream))                                                           \
    X(cuEventCreate, CUresult (*)(CUevent*, unsigned))                                                       \
    X(cuEventRecord, CUresult (*)(CUevent, CUstream))                                                        \
    X(cuEventSynchronize, CUresult (*)(CUevent))                                                             \
    X(cuEventDestroy_v2, CUresult (*)(CUevent))                                                              \
    X(cuModuleLoadDataEx, CUresult (*)(CUmodule*, const void*, unsigned, int*, void**))                      \
    X(cuModuleUnload, CUresult (*)(CUmodule))                                                                \
    X(cuModuleGetFunction, CUresult (*)(CUfunction*, CUmodule, const char*))                                 \
    X(cuFuncSetAttribute, CUresult (*)(CUfunction, int, int))                                                \
    X(cuLaunchKernel, CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,  \
                                   unsigned, CUstream, void**, void**))

struct DriverApi {
#define WEFT_DECLARE_DRIVER_FUNCTION(name, type) std::type_identity_t<type> name = nullptr;
    WEFT_CUDA_DRIVER_FUNCTIONS(WEFT_DECLARE_DRIVER_FUNCTION)
#undef WEFT_DECLARE_DRIVER_FUNCTION
    // cuEventElapsedTime_v2 (CUDA 12.8+, what cuda.h 13 calls) or, from older drivers, the
    // original of the same signature.
    CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
    void* library = nullptr;
};

// The outcome of loading a driver library: the functions and the device count, or why
// there is no usable device.
struct DriverLoad {
    std::unique_ptr<DriverApi> api;  // null when unusable
    int device_count = 0;
    std::string why;                 // empty when usable
    bool survives_fork = false;      // it exports weft_driver_survives_fork (a test double)
};

// Loads `library` (a name for dlopen's search, or a path) and initializes the driver.
// Never throws. The process-wide driver is load_driver("libcuda.so.1"), done once; tests
// call this with other paths (the toolkit's stub) to check the messages.
DriverLoad load_driver(const char* library);

// The process-wide driver, loaded on first call: libcuda.so.1, or the library the
// environment variable WEFT_LIBCUDA names.
const DriverLoad& global_driver();

// Whether this process has started loading the process-wide driver (global_driver() was
// called): after that a forked child cannot use CUDA (autotune measures GPU kernels in
// children, which the tuner's process must not spoil).
bool driver_loaded();
// NVRTC was used here: it initializes the driver too (libnvrtc calls cuInit).
void note_driver_used_by_nvrtc();
bool driver_used_by_nvrtc();

// The driver, or weft::Error "no CUDA device: <why>; needed for <what>".
const DriverApi& driver(const char* what);

// "CUDA_ERROR_OUT_OF_MEMORY: out of memory" (the driver's name and description of a code).
std::string describe_error(const DriverApi* api, CUresult rc);

// Throws weft::Error "<context()>: <CUDA error name>: <description>" when rc is not
// CUDA_SUCCESS; `context` is only called then.
template <class F>
void check(const DriverApi& api, CUresult rc, F&& context) {
    if (rc != CUDA_SUCCESS) ::weft::detail::throw_user_error(context() + ": " + describe_error(&api, rc));
}

}  // namespace weft::cuda::detail
