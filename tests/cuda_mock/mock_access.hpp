// A test binary's access to the mock driver (mock_libcuda.cpp): use_mock() makes the runtime
// load the mock (call it in a global's initializer, before any test: the runtime opens its
// driver once, at first use), and mock_function reads the mock's own entry points (counters,
// the launch hook) through the handle the runtime opened. The binary defines
// WEFT_MOCK_LIBCUDA (the mock's path; see tests/CMakeLists.txt).
#pragma once
#include <dlfcn.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "weft/runtime/cuda/cuda.hpp"

namespace weft_mock {

inline bool use_mock() { return setenv("WEFT_LIBCUDA", WEFT_MOCK_LIBCUDA, 1) == 0; }

template <class Fn>
Fn mock_function(const char* name) {
    weft::cuda::device_count();  // the runtime opens the driver at first use
    void* lib = dlopen(WEFT_MOCK_LIBCUDA, RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(lib != nullptr);
    auto fn = reinterpret_cast<Fn>(dlsym(lib, name));
    dlclose(lib);
    REQUIRE(static_cast<bool>(fn));  // doctest cannot print function pointers
    return fn;
}
inline std::string last_launch() { return mock_function<const char* (*)()>("weft_mock_last_launch")(); }
inline size_t live_allocations() { return mock_function<size_t (*)()>("weft_mock_live_allocations")(); }
inline int launches() { return mock_function<int (*)()>("weft_mock_launches")(); }

}  // namespace weft_mock
