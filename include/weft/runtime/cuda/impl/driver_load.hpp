// Definitions for impl/driver_api.hpp: finding libcuda, initializing it, naming its errors.
#pragma once
#include <atomic>
#include <cstdlib>

#include "weft/runtime/cuda/impl/driver_api.hpp"

namespace weft::cuda::detail {

namespace {

// Names for the codes a user meets most, for when the driver cannot name them itself (the
// stub library's cuGetErrorName fails like everything else in it).
const char* fallback_error_name(CUresult rc) {
    switch (rc) {
        case 1: return "CUDA_ERROR_INVALID_VALUE";
        case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
        case 3: return "CUDA_ERROR_NOT_INITIALIZED";
        case 4: return "CUDA_ERROR_DEINITIALIZED";
        case 34: return "CUDA_ERROR_STUB_LIBRARY";
        case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
        case 100: return "CUDA_ERROR_NO_DEVICE";
        case 101: return "CUDA_ERROR_INVALID_DEVICE";
        case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
        case 218: return "CUDA_ERROR_INVALID_PTX";
        case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
        case 500: return "CUDA_ERROR_NOT_FOUND";
        case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
        case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
        case 702: return "CUDA_ERROR_LAUNCH_TIMEOUT";
        case 719: return "CUDA_ERROR_LAUNCH_FAILED";
        default: return nullptr;
    }
}

// Why a cuInit / cuDeviceGetCount failure means "no device", in words.
std::string init_failure(const DriverApi& api, const char* library, CUresult rc) {
    if (rc == CUDA_ERROR_STUB_LIBRARY)
        return ::weft::detail::concat("CUDA_ERROR_STUB_LIBRARY: ", library,
                              " is the CUDA toolkit's stub library, not an NVIDIA driver (install the driver, or "
                              "run on a machine with a GPU)");
    if (rc == CUDA_ERROR_NO_DEVICE) return "CUDA_ERROR_NO_DEVICE: the NVIDIA driver found no CUDA-capable device";
    return "cuInit failed: " + describe_error(&api, rc);
}

}  // namespace

std::string describe_error(const DriverApi* api, CUresult rc) {
    const char* name = nullptr;
    const char* text = nullptr;
    if (api && api->cuGetErrorName && api->cuGetErrorName(rc, &name) != CUDA_SUCCESS) name = nullptr;
    if (api && api->cuGetErrorString && api->cuGetErrorString(rc, &text) != CUDA_SUCCESS) text = nullptr;
    if (!name) name = fallback_error_name(rc);
    std::string out = name ? std::string(name) : ::weft::detail::concat("CUDA error ", rc);
    if (text) out += std::string(": ") + text;
    return out;
}

DriverLoad load_driver(const char* library) {
    DriverLoad out;
    try {
        void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* err = dlerror();
            out.why = ::weft::detail::concat(library, " not found: the NVIDIA driver is not installed or not on the "
                                             "library path (dlopen: ", err ? err : "failed", ")");
            return out;
        }
        auto api = std::make_unique<DriverApi>();
        api->library = lib;
#define WEFT_LOOK_UP_DRIVER_FUNCTION(name, type)                                                            \
        api->name = reinterpret_cast<type>(dlsym(lib, #name));                                              \
        if (!api->name) {                                                                                   \
            out.why = ::weft::detail::concat(library, " has no function " #name                             \
                                             " (a driver too old for weft? it needs CUDA 12 or newer)");    \
            dlclose(lib);                                                                                   \
            return out;                                                                                     \
        }
        WEFT_CUDA_DRIVER_FUNCTIONS(WEFT_LOOK_UP_DRIVER_FUNCTION)
#undef WEFT_LOOK_UP_DRIVER_FUNCTION
        void* elapsed = dlsym(lib, "cuEventElapsedTime_v2");
        if (!elapsed) elapsed = dlsym(lib, "cuEventElapsedTime");
        api->cuEventElapsedTime = reinterpret_cast<decltype(api->cuEventElapsedTime)>(elapsed);
        if (!elapsed) {
            out.why = ::weft::detail::concat(library, " has no function cuEventElapsedTime");
            dlclose(lib);
            return out;
        }
        out.survives_fork = dlsym(lib, "weft_driver_survives_fork") != nullptr;
        if (CUresult rc = api->cuInit(0); rc != CUDA_SUCCESS) {
            out.why = init_failure(*api, library, rc);
            dlclose(lib);
            return out;
        }
        int count = 0;
        if (CUresult rc = api->cuDeviceGetCount(&count); rc != CUDA_SUCCESS) {
            out.why = init_failure(*api, library, rc);
            dlclose(lib);
            return out;
        }
        if (count <= 0) {
            out.why = "the NVIDIA driver reports no CUDA device";
            dlclose(lib);
            return out;
        }
        out.device_count = count;
        out.api = std::move(api);
    } catch (const std::exception& e) {
        out.api.reset();
        out.device_count = 0;
        out.why = std::string("loading the CUDA driver failed: ") + e.what();
    }
    return out;
}

namespace {
std::atomic<bool> g_driver_loaded{false}, g_nvrtc_used{false};
}

bool driver_loaded() { return g_driver_loaded.load(std::memory_order_relaxed); }
void note_driver_used_by_nvrtc() { g_nvrtc_used.store(true, std::memory_order_relaxed); }
bool driver_used_by_nvrtc() { return g_nvrtc_used.load(std::memory_order_relaxed); }

const DriverLoad& global_driver() {
    // Loaded once and never unloaded: device memory and modules may be freed during static
    // destruction, after which the functions must still be there.
    // WEFT_LIBCUDA names another driver library (a driver outside the library path; the
    // mock driver of tests/cuda_mock).
    static const DriverLoad* load = [] {
        g_driver_loaded.store(true, std::memory_order_relaxed);
        const char* library = std::getenv("WEFT_LIBCUDA");
        return new DriverLoad(load_driver(library && *library ? library : "libcuda.so.1"));
    }();
    return *load;
}

const DriverApi& driver(const char* what) {
    const DriverLoad& load = global_driver();
    if (!load.api) ::weft::detail::throw_user_error(::weft::detail::concat("no CUDA device: ", load.why, "; needed for ", what));
    return *load.api;
}

}  // namespace weft::cuda::detail
