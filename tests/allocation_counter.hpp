// Counts the heap allocations this thread makes while counting is on, to check that a
// kernel call allocates nothing (tests/runtime/test_kernel.cpp for CPU kernels,
// tests/cuda_mock/test_mock_driver.cpp for CUDA ones). It replaces the global operator new
// and delete, so include it in ONE source file of a test binary. Every form that ends in the
// plain deletes allocates with malloc too: a library that pairs a nothrow or array new with
// a plain delete (LLVM's verifier does) must not mix AddressSanitizer's operator new with
// this free. TSan links its own operator new: there the counting is off.
#pragma once
#include <cstdlib>
#include <new>

#if defined(__SANITIZE_THREAD__)
#define WEFT_TEST_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define WEFT_TEST_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef WEFT_TEST_COUNT_ALLOCATIONS
#define WEFT_TEST_COUNT_ALLOCATIONS 1
#endif

#if WEFT_TEST_COUNT_ALLOCATIONS
namespace weft_test_alloc {
inline thread_local bool counting = false;
inline thread_local int allocations = 0;
}  // namespace weft_test_alloc

void* operator new(std::size_t size) {
    if (weft_test_alloc::counting) ++weft_test_alloc::allocations;
    if (void* p = std::malloc(size ? size : 1)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    if (weft_test_alloc::counting) ++weft_test_alloc::allocations;
    return std::malloc(size ? size : 1);
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new[](std::size_t size, const std::nothrow_t& t) noexcept { return operator new(size, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#endif
