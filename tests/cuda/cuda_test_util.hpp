// Helpers for the CUDA compile-only tests: build for Target::cuda() (CUDA C + NVRTC, no GPU
// needed), read the generated source, count what it contains.
#pragma once
#include <doctest/doctest.h>

#include <string>

#include "weft/codegen/cuda/codegen_cuda.hpp"
#include "weft/weft.hpp"

namespace weft_cuda_test {

// True when NVRTC can be loaded; otherwise the test reports itself skipped.
inline bool have_nvrtc() {
    std::string why;
    if (weft::codegen::nvrtc_available(&why)) return true;
    MESSAGE("skipped: " << why);
    return false;
}

inline size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + what.size())) ++n;
    return n;
}
inline bool contains(const std::string& text, const std::string& what) { return count(text, what) > 0; }

// Builds for CUDA and returns the device code (source, PTX, launch shape).
inline const weft::DeviceCode& build_cuda(weft::Kernel& k, const weft::Schedule& s, const std::vector<weft::Argument>& args,
                                          const weft::LowerOptions& options = {}) {
    k = weft::build(s, args, weft::Target::cuda("sm_90"), options);
    const weft::DeviceCode* dc = k.module()->device_code();
    REQUIRE(dc != nullptr);
    if (std::getenv("WEFT_PRINT_CUDA")) MESSAGE(dc->source);
    CHECK(weft::ir::to_string(dc->grid[0]).size() > 0);
    CHECK(dc->ptx.find(".entry " + dc->kernel_name) != std::string::npos);
    CHECK(dc->arch == "sm_90");
    return *dc;
}

inline int64_t const_of(const weft::ir::Expr& e) {
    int64_t v = -1;
    REQUIRE(weft::ir::as_const_int(e, &v));
    return v;
}

}  // namespace weft_cuda_test
