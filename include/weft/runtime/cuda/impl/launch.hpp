// Definitions for runtime/cuda/launch.hpp: loading a module's PTX once per device, launching.
#pragma once
#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

#include "weft/runtime/cuda/impl/context.hpp"
#include "weft/runtime/cuda/launch.hpp"

namespace weft::cuda::detail {

namespace {

// A module's code loaded into one device's context. `owner` is held weakly: the entry is
// keyed by the module's address, which a later module may reuse once this one is freed.
struct LoadedModule {
    std::weak_ptr<const KernelModule> owner;
    DeviceState* state = nullptr;
    CUmodule module = nullptr;
    CUfunction function = nullptr;
};

struct ModuleCache {
    std::mutex mutex;
    std::map<std::pair<const KernelModule*, int>, LoadedModule> loaded;
};

ModuleCache& module_cache() {
    static ModuleCache* cache = new ModuleCache;  // never destroyed: modules may die at exit
    return *cache;
}

void unload(const LoadedModule& m) {
    release_in_context(m.state, [&](const DriverApi& api) { api.cuModuleUnload(m.module); });
}

// 90 for "sm_90", "sm_90a", "compute_90"; -1 when there are no digits.
int arch_number(const std::string& arch) {
    size_t i = 0;
    while (i < arch.size() && !std::isdigit(static_cast<unsigned char>(arch[i]))) ++i;
    if (i == arch.size()) return -1;
    return std::atoi(arch.c_str() + i);
}

std::string trimmed(const char* log) {
    std::string s(log);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
    return s;
}

LoadedModule load(const DeviceCode& code, DeviceState& state, const std::string& kname) {
    const char* what = "loading a CUDA kernel";
    const DriverApi& api = enter(state, what);
    const DeviceProperties& props = state.properties;
    const int device_arch = props.compute_major * 10 + props.compute_minor;
    const int code_arch = arch_number(code.arch);
    WEFT_CHECK(code_arch <= device_arch, "kernel '", kname, "' was compiled for ", code.arch, " but CUDA device cuda(",
               state.ordinal, ") (", props.name, ") is ", props.arch(), ": build it with Target::cuda(\"", props.arch(),
               "\")");
    WEFT_CHECK(!code.ptx.empty(), "kernel '", kname, "' has no PTX to load; build it with Target::cuda()");
    WEFT_CHECK(code.dynamic_shared_bytes <= props.max_shared_bytes_per_block, "kernel '", kname, "' needs ",
               code.dynamic_shared_bytes, " bytes of dynamic shared memory but CUDA device cuda(", state.ordinal, ") (",
               props.name, ") allows at most ", props.max_shared_bytes_per_block,
               " per block; use smaller shared tiles in the schedule");

    // The PTX is JIT-compiled by the driver here; its log says why when that fails.
    constexpr size_t kLogBytes = 16 * 1024;
    std::string error_log(kLogBytes, '\0'), info_log(kLogBytes, '\0');
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                     CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error_log.data(), reinterpret_cast<void*>(kLogBytes - 1), info_log.data(),
                      reinterpret_cast<void*>(kLogBytes - 1)};
    LoadedModule m;
    m.state = &state;
    CUresult rc = api.cuModuleLoadDataEx(&m.module, code.ptx.c_str(), 4, options, values);
    check(api, rc, [&] {
        std::string log = trimmed(error_log.c_str());
        return ::weft::detail::concat("loading the PTX of kernel '", kname, "' (", code.arch, ") on CUDA device cuda(",
                                      state.ordinal, ") (", props.name, ", ", props.arch(), ") failed",
                                      log.empty() ? "" : "; the driver's JIT log:\n" + log + "\n");
    });
    rc = api.cuModuleGetFunction(&m.function, m.module, code.kernel_name.c_str());
    if (rc != CUDA_SUCCESS) {
        api.cuModuleUnload(m.module);
        check(api, rc, [&] {
            return ::weft::detail::concat("kernel '", kname, "': its PTX has no kernel named '", code.kernel_name, "'");
        });
    }
    // Above 48 KiB, dynamic shared memory must be asked for per function.
    if (code.dynamic_shared_bytes > 48 * 1024) {
        rc = api.cuFuncSetAttribute(m.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    static_cast<int>(code.dynamic_shared_bytes));
        if (rc != CUDA_SUCCESS) {
            api.cuModuleUnload(m.module);
            check(api, rc, [&] {
                return ::weft::detail::concat("kernel '", kname, "': allowing ", code.dynamic_shared_bytes,
                                              " bytes of dynamic shared memory");
            });
        }
    }
    return m;
}

// The loaded function of `module` on `state`'s device, loading it on first use.
CUfunction function_for(const std::shared_ptr<const KernelModule>& module, const DeviceCode& code, DeviceState& state,
                        const std::string& kname) {
    ModuleCache& cache = module_cache();
    std::lock_guard lock(cache.mutex);
    const auto key = std::make_pair(module.get(), state.ordinal);
    auto it = cache.loaded.find(key);
    if (it != cache.loaded.end() && !it->second.owner.expired()) return it->second.function;
    // Unload what belongs to modules that are gone (including a stale entry at this key).
    for (auto i = cache.loaded.begin(); i != cache.loaded.end();) {
        if (i->second.owner.expired()) {
            unload(i->second);
            i = cache.loaded.erase(i);
        } else {
            ++i;
        }
    }
    LoadedModule m = load(code, state, kname);
    m.owner = module;
    return cache.loaded.insert_or_assign(key, m).first->second.function;
}

std::string dims_string(const std::array<int64_t, 3>& d) {
    return ::weft::detail::concat("(", d[0], ", ", d[1], ", ", d[2], ")");
}

}  // namespace

void launch(const std::shared_ptr<const KernelModule>& module, Device device, const LaunchDims& dims, void** params,
            const std::string& kname) {
    const DeviceCode* code = module->device_code();
    WEFT_ICHECK(code != nullptr, "launch of kernel '", kname, "', which has no device code");
    // Without a driver, say which kernel needed it (the message is only built then: a
    // launch allocates nothing on the heap once the kernel's code is loaded).
    if (!global_driver().api) driver(("launching CUDA kernel '" + kname + "'").c_str());
    DeviceState& state = device_state(device, "launching a CUDA kernel");
    CUfunction function = function_for(module, *code, state, kname);
    const DeviceProperties& props = state.properties;

    auto config = [&] {
        return ::weft::detail::concat("grid ", dims_string(dims.grid), ", block ", dims_string(dims.block));
    };
    const int64_t grid_limit[3] = {(int64_t(1) << 31) - 1, 65535, 65535};
    for (int d = 0; d < 3; ++d) {
        WEFT_CHECK(dims.grid[d] >= 1 && dims.grid[d] <= grid_limit[d], "kernel '", kname, "': launch ", config(),
                   ": grid dimension ", "xyz"[d], " must be in [1, ", grid_limit[d], "]");
        WEFT_CHECK(dims.block[d] >= 1, "kernel '", kname, "': launch ", config(), ": block dimension ", "xyz"[d],
                   " must be at least 1");
    }
    const int64_t threads = dims.block[0] * dims.block[1] * dims.block[2];
    WEFT_CHECK(threads <= props.max_threads_per_block, "kernel '", kname, "': launch ", config(), " has ", threads,
               " threads per block but CUDA device ", device.str(), " (", props.name, ") allows at most ",
               props.max_threads_per_block, "; bind smaller thread extents in the schedule");

    const DriverApi& api = enter(state, "a CUDA kernel launch");
    CUresult rc = api.cuLaunchKernel(function, static_cast<unsigned>(dims.grid[0]), static_cast<unsigned>(dims.grid[1]),
                                     static_cast<unsigned>(dims.grid[2]), static_cast<unsigned>(dims.block[0]),
                                     static_cast<unsigned>(dims.block[1]), static_cast<unsigned>(dims.block[2]),
                                     static_cast<unsigned>(code->dynamic_shared_bytes),
                                     static_cast<CUstream>(current_stream_handle(device.index)), params, nullptr);
    // A failure may be an earlier kernel's fault surfacing here: the note names that kernel.
    check(api, rc, [&] {
        return ::weft::detail::concat("launching kernel '", kname, "' on CUDA device ", device.str(), " with ", config(),
                                      " and ", code->dynamic_shared_bytes, " bytes of dynamic shared memory failed",
                                      last_kernel_note(state));
    });
    std::lock_guard lock(state.last_kernel_mutex);
    const size_t n = std::min(kname.size(), sizeof(state.last_kernel) - 1);
    std::memcpy(state.last_kernel, kname.data(), n);
    state.last_kernel[n] = '\0';
    state.launched = true;
}

size_t loaded_module_count() {
    ModuleCache& cache = module_cache();
    std::lock_guard lock(cache.mutex);
    size_t n = 0;
    for (const auto& [key, m] : cache.loaded) n += !m.owner.expired();
    return n;
}

}  // namespace weft::cuda::detail
