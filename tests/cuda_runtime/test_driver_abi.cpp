// runtime/cuda/impl/driver_api.hpp declares the driver's types, constants and functions by
// hand (weft needs no CUDA header to build). Here they are checked against the toolkit's
// cuda.h, where it is installed: the constants' values, the types' sizes, and that every
// symbol weft looks up is the one cuda.h's API macros map to (cuMemAlloc -> cuMemAlloc_v2).
#include <doctest/doctest.h>

#include "weft/runtime/cuda/impl/driver_api.hpp"

#if defined(WEFT_TEST_HAVE_CUDA_H)
#include <cuda.h>

#include <string>
#include <type_traits>

namespace weft_abi = weft::cuda::detail;

static_assert(CUDA_VERSION >= 12000, "the driver declarations were written against CUDA 12/13");
static_assert(weft_abi::CUDA_SUCCESS == ::CUDA_SUCCESS);
static_assert(weft_abi::CUDA_ERROR_DEINITIALIZED == ::CUDA_ERROR_DEINITIALIZED);
static_assert(weft_abi::CUDA_ERROR_STUB_LIBRARY == ::CUDA_ERROR_STUB_LIBRARY);
static_assert(weft_abi::CUDA_ERROR_NO_DEVICE == ::CUDA_ERROR_NO_DEVICE);
static_assert(weft_abi::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK == ::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
static_assert(weft_abi::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == ::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(weft_abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(weft_abi::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(weft_abi::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ==
              ::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
static_assert(weft_abi::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ==
              ::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
static_assert(weft_abi::CU_JIT_INFO_LOG_BUFFER == ::CU_JIT_INFO_LOG_BUFFER);
static_assert(weft_abi::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES == ::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
static_assert(weft_abi::CU_JIT_ERROR_LOG_BUFFER == ::CU_JIT_ERROR_LOG_BUFFER);
static_assert(weft_abi::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES == ::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
static_assert(weft_abi::CU_STREAM_DEFAULT == ::CU_STREAM_DEFAULT);
static_assert(weft_abi::CU_EVENT_DEFAULT == ::CU_EVENT_DEFAULT);
static_assert(std::is_same_v<weft_abi::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<weft_abi::CUdevice, ::CUdevice>);
static_assert(sizeof(weft_abi::CUresult) == sizeof(::CUresult));
static_assert(sizeof(int) == sizeof(::CUjit_option));  // cuModuleLoadDataEx's option array

// A driver type of weft's in the position of cuda.h's: the same shape, with weft's opaque
// handle structs standing for cuda.h's.
template <class T>
struct Canonical {
    using type = T;
};
#define WEFT_CANONICAL(cuda_type, weft_type) \
    template <>                              \
    struct Canonical<cuda_type> {            \
        using type = weft_type;              \
    };
WEFT_CANONICAL(::CUcontext, weft_abi::CUcontext)
WEFT_CANONICAL(::CUmodule, weft_abi::CUmodule)
WEFT_CANONICAL(::CUfunction, weft_abi::CUfunction)
WEFT_CANONICAL(::CUstream, weft_abi::CUstream)
WEFT_CANONICAL(::CUevent, weft_abi::CUevent)
WEFT_CANONICAL(::CUevent*, weft_abi::CUevent*)
WEFT_CANONICAL(::CUcontext*, weft_abi::CUcontext*)
WEFT_CANONICAL(::CUmodule*, weft_abi::CUmodule*)
WEFT_CANONICAL(::CUfunction*, weft_abi::CUfunction*)
WEFT_CANONICAL(::CUstream*, weft_abi::CUstream*)
WEFT_CANONICAL(::CUjit_option*, int*)
WEFT_CANONICAL(::CUresult, weft_abi::CUresult)
WEFT_CANONICAL(::CUdevice_attribute, int)
WEFT_CANONICAL(::CUfunction_attribute, int)
#undef WEFT_CANONICAL

template <class F>
struct CanonicalFn;
template <class R, class... A>
struct CanonicalFn<R (*)(A...)> {
    using type = typename Canonical<R>::type (*)(typename Canonical<A>::type...);
};

// The function cuda.h declares under weft's symbol name has weft's signature (expanded in
// weft's namespace, where the list's type names mean weft's declarations).
namespace weft::cuda::detail {
#define WEFT_CHECK_DRIVER_SIGNATURE(name, weft_type)                                                     \
    static_assert(std::is_same_v<CanonicalFn<decltype(&::name)>::type, std::type_identity_t<weft_type>>,  \
                  #name " differs from cuda.h");
WEFT_CUDA_DRIVER_FUNCTIONS(WEFT_CHECK_DRIVER_SIGNATURE)
#undef WEFT_CHECK_DRIVER_SIGNATURE
// Not in the list: looked up as cuEventElapsedTime_v2, or the original on older drivers.
static_assert(std::is_same_v<CanonicalFn<decltype(&::cuEventElapsedTime_v2)>::type, CUresult (*)(float*, CUevent, CUevent)>);
}  // namespace weft::cuda::detail

// The symbol weft looks up is the one a program compiled with cuda.h calls (the macros'
// targets), for the functions that have versioned names.
#define WEFT_STRINGIFY_(x) #x
#define WEFT_STRINGIFY(x) WEFT_STRINGIFY_(x)

TEST_CASE("the hand-written driver declarations match cuda.h") {
    CHECK(std::string(WEFT_STRINGIFY(cuMemAlloc)) == "cuMemAlloc_v2");
    CHECK(std::string(WEFT_STRINGIFY(cuMemFree)) == "cuMemFree_v2");
    CHECK(std::string(WEFT_STRINGIFY(cuMemGetInfo)) == "cuMemGetInfo_v2");
    CHECK(std::string(WEFT_STRINGIFY(cuMemcpyHtoD)) == "cuMemcpyHtoD_v2");
    CHECK(std::string(WEFT_STRINGIFY(cuMemcpyDtoH)) == "cuMemcpyDtoH_v2");
    CHECK(std::string(WEFT_STRINGIFY(cuMemcpyDtoD)) == "cuMemcpyDtoD_v2");
    CHECK(std::string(WEFT_STRINGIFY(cuMemsetD8)) == "cuMemsetD8_v2");
    CHECK(std::string(WEFT_STRINGIFY(cuDeviceTotalMem)) == "cuDeviceTotalMem_v2");
    CHECK(std::string(WEFT_STRINGIFY(cuStreamDestroy)) == "cuStreamDestroy_v2");
    CHECK(std::string(WEFT_STRINGIFY(cuLaunchKernel)) == "cuLaunchKernel");
    CHECK(std::string(WEFT_STRINGIFY(cuStreamSynchronize)) == "cuStreamSynchronize");
    CHECK(std::string(WEFT_STRINGIFY(cuMemcpyPeer)) == "cuMemcpyPeer");
    CHECK(std::string(WEFT_STRINGIFY(cuEventDestroy)) == "cuEventDestroy_v2");
    CHECK(std::string(WEFT_STRINGIFY(cuEventElapsedTime)) == "cuEventElapsedTime_v2");
    CHECK(std::string(WEFT_STRINGIFY(cuEventRecord)) == "cuEventRecord");
}

#else

TEST_CASE("the hand-written driver declarations match cuda.h") {
    MESSAGE("skipped: no cuda.h (CUDA toolkit) to check the driver declarations against");
}

#endif
