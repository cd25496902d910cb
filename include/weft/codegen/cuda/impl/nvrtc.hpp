// NVRTC, opened with dlopen at the first compile (nothing links libnvrtc, so a weft binary
// starts on machines without the CUDA toolkit and says clearly what is missing when asked
// to compile for a GPU).
//
// Where libnvrtc is looked for, in order: $WEFT_NVRTC_LIBRARY (a file; when set, only it), $CUDA_PATH/lib64,
// the toolkit found at configure time (WEFT_CUDA_TOOLKIT_LIB_DIR), then the loader's path
// (libnvrtc.so, libnvrtc.so.13, libnvrtc.so.12). The include directory that cuda_fp16.h and
// cuda_bf16.h come from: $WEFT_CUDA_INCLUDE, $CUDA_PATH/include, the configure-time toolkit's.
#pragma once
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "weft/ir/error.hpp"
#include "weft/runtime/cuda/impl/driver_api.hpp"

#ifndef WEFT_CUDA_TOOLKIT_LIB_DIR
#define WEFT_CUDA_TOOLKIT_LIB_DIR ""
#endif
#ifndef WEFT_CUDA_TOOLKIT_INCLUDE_DIR
#define WEFT_CUDA_TOOLKIT_INCLUDE_DIR ""
#endif

namespace weft::codegen::cuda_detail {

// The slice of nvrtc.h weft uses (declared here: no CUDA header is needed to build weft).
struct Nvrtc {
    using Program = struct _nvrtcProgram*;
    using Result = int;
    Result (*create_program)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
    Result (*compile_program)(Program, int, const char* const*) = nullptr;
    Result (*get_ptx_size)(Program, size_t*) = nullptr;
    Result (*get_ptx)(Program, char*) = nullptr;
    Result (*get_log_size)(Program, size_t*) = nullptr;
    Result (*get_log)(Program, char*) = nullptr;
    Result (*destroy_program)(Program*) = nullptr;
    const char* (*error_string)(Result) = nullptr;
    Result (*version)(int*, int*) = nullptr;
    std::string error;  // why it could not be loaded; empty when loaded
    std::string path;   // the library that was loaded

    static const Nvrtc& get() {
        // NVRTC initializes the CUDA driver of the process it runs in (libnvrtc calls
        // cuInit): this process's children can no longer use CUDA (cuda::fork_safe()).
        cuda::detail::note_driver_used_by_nvrtc();
        static Nvrtc n = load();
        return n;
    }

private:
    static Nvrtc load() {
        Nvrtc n;
        std::vector<std::string> candidates;
        if (const char* f = std::getenv("WEFT_NVRTC_LIBRARY"); f && *f) {
            candidates.push_back(f);  // asked for by name: that one or none
        } else {
            if (const char* p = std::getenv("CUDA_PATH"); p && *p) candidates.push_back(std::string(p) + "/lib64/libnvrtc.so");
            if (*WEFT_CUDA_TOOLKIT_LIB_DIR) candidates.push_back(std::string(WEFT_CUDA_TOOLKIT_LIB_DIR) + "/libnvrtc.so");
            for (const char* name : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}) candidates.push_back(name);
        }
        void* h = nullptr;
        std::string tried;
        for (auto& c : candidates) {
            h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (h) {
                n.path = c;
                break;
            }
            tried += (tried.empty() ? "" : ", ") + c;
        }
        if (!h) {
            n.error = "libnvrtc (NVIDIA's runtime compiler, part of the CUDA toolkit) was not found; tried " + tried +
                      ". Install the CUDA toolkit, or set CUDA_PATH or WEFT_NVRTC_LIBRARY";
            return n;
        }
        auto sym = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
            if (!fn && n.error.empty()) n.error = std::string(n.path) + " has no symbol " + name;
        };
        sym(n.create_program, "nvrtcCreateProgram");
        sym(n.compile_program, "nvrtcCompileProgram");
        sym(n.get_ptx_size, "nvrtcGetPTXSize");
        sym(n.get_ptx, "nvrtcGetPTX");
        sym(n.get_log_size, "nvrtcGetProgramLogSize");
        sym(n.get_log, "nvrtcGetProgramLog");
        sym(n.destroy_program, "nvrtcDestroyProgram");
        sym(n.error_string, "nvrtcGetErrorString");
        sym(n.version, "nvrtcVersion");
        return n;
    }
};

inline std::string cuda_include_dir() {
    if (const char* p = std::getenv("WEFT_CUDA_INCLUDE"); p && *p) return p;
    if (const char* p = std::getenv("CUDA_PATH"); p && *p) return std::string(p) + "/include";
    return WEFT_CUDA_TOOLKIT_INCLUDE_DIR;
}

// "sm_90" -> "compute_90": PTX for the architecture (the driver JIT-compiles it for the device).
inline std::string virtual_arch(const std::string& arch) {
    WEFT_CHECK(arch.rfind("sm_", 0) == 0 && arch.size() > 3, "CUDA target: architecture '", arch,
               "' is not of the form sm_XY (e.g. Target::cuda(\"sm_90\") for H100/H200)");
    return "compute_" + arch.substr(3);
}

inline std::string compile_to_ptx(const std::string& source, const std::string& kernel_name, const std::string& arch) {
    const Nvrtc& nv = Nvrtc::get();
    WEFT_CHECK(nv.error.empty(), "CUDA kernel '", kernel_name, "': cannot compile: ", nv.error);
    std::string arch_opt = "--gpu-architecture=" + virtual_arch(arch);
    std::vector<std::string> opts = {arch_opt, "--std=c++17"};
    if (std::string inc = cuda_include_dir(); !inc.empty()) opts.push_back("-I" + inc);
    std::vector<const char*> argv;
    for (auto& o : opts) argv.push_back(o.c_str());
    Nvrtc::Program prog = nullptr;
    Nvrtc::Result r = nv.create_program(&prog, source.c_str(), (kernel_name + ".cu").c_str(), 0, nullptr, nullptr);
    WEFT_CHECK(r == 0, "CUDA kernel '", kernel_name, "': nvrtcCreateProgram failed: ", nv.error_string(r));
    struct Destroy {
        const Nvrtc& nv;
        Nvrtc::Program* p;
        ~Destroy() { nv.destroy_program(p); }
    } destroy{nv, &prog};
    r = nv.compile_program(prog, int(argv.size()), argv.data());
    if (r != 0) {
        size_t n = 0;
        nv.get_log_size(prog, &n);
        std::string log(n, '\0');
        if (n) nv.get_log(prog, log.data());
        while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
        detail::throw_user_error(detail::concat("CUDA kernel '", kernel_name, "': NVRTC failed to compile it for ",
                                                arch, " (", nv.error_string(r), "):\n", log,
                                                "\n(see the generated source with Kernel::source() or codegen::generate_cuda)"));
    }
    size_t n = 0;
    nv.get_ptx_size(prog, &n);
    std::string ptx(n, '\0');
    nv.get_ptx(prog, ptx.data());
    while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
    return ptx;
}

}  // namespace weft::codegen::cuda_detail
